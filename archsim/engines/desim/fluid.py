"""A bandwidth shared by concurrent transfers: a fluid (processor-sharing) model on SimPy.

Each *flow* is a piece of work that alone would take ``solo_s`` seconds while drawing
``demand_bytes_per_s`` from the shared resource (a kernel's DRAM bytes over its solo kernel time,
a copy's bytes over its solo transfer time). While the flows' demands sum to no more than the
capacity every flow runs at full speed; beyond it the capacity is split max-min fairly (progressive
filling: flows that ask less than an equal share get what they ask, the rest share the remainder
equally; Bertsekas & Gallager, *Data Networks*, 2nd ed., sec. 6.5.2), and a flow granted
``a < demand`` progresses at rate ``a / demand`` of its solo speed. Rates change only when a
flow arrives or finishes, so the simulation advances from change to change with one pending
timer: the events per flow are O(1) and no time is discretised (a fluid, not a chunked, model).

A flow alone, or among flows whose demands fit, therefore takes exactly ``solo_s``: with no
contention the discrete-event engine reproduces the roofline's op times.
"""

from __future__ import annotations

from typing import Any

import simpy

__all__ = ["FluidShare"]

_REL_TOL = 1e-9  # a flow whose remaining solo time is below this share of its own is finished


class _Flow:
    __slots__ = ("remaining_s", "solo_s", "demand", "rate", "event")

    def __init__(self, solo_s: float, demand: float, event: simpy.Event) -> None:
        self.remaining_s = solo_s
        self.solo_s = solo_s
        self.demand = demand
        self.rate = 1.0
        self.event = event


def _finished(f: _Flow, now: float) -> bool:
    """True when ``f`` has nothing left that the clock can still resolve.

    The relative tolerance alone is not enough: the clock is a float, so at ``now`` a timer shorter
    than half an ulp of ``now`` fires at ``now`` itself (at 16 s one ulp is 3.6e-15 s). A flow left
    with such a remainder after rounding (a 1 us kernel left with 1.7e-15 s) would be woken at the
    same instant with ``dt = 0`` and re-armed for ever; it is finished instead (the work it loses
    is below the clock's resolution).
    """
    return f.remaining_s <= _REL_TOL * f.solo_s or now + f.remaining_s / f.rate <= now


class FluidShare:
    """A capacity (B/s) shared max-min fairly by concurrent flows.

    Attributes:
        name: resource name (for utilisation).
        capacity_bytes_per_s: achievable bandwidth.
        moved_bytes: bytes delivered so far (for utilisation = moved / (capacity x makespan)).
    """

    def __init__(self, env: simpy.Environment, name: str, capacity_bytes_per_s: float) -> None:
        self.env = env
        self.name = name
        self.capacity_bytes_per_s = float(capacity_bytes_per_s)
        self.moved_bytes = 0.0
        self._flows: list[_Flow] = []
        self._last = 0.0
        self._generation = 0
        self._saturated = False

    @property
    def active(self) -> int:
        """Flows in progress."""
        return len(self._flows)

    def flow(self, solo_s: float, demand_bytes_per_s: float) -> simpy.Event:
        """An event that fires when a flow of ``solo_s`` seconds alone at ``demand`` B/s completes."""
        env = self.env
        if solo_s <= 0.0:
            return env.timeout(0.0)
        event = env.event()
        # Rounding can put a flow's own demand a hair above the capacity it was costed against.
        demand = min(max(demand_bytes_per_s, 0.0), self.capacity_bytes_per_s)
        if not self._flows:  # fast path: alone, at full speed until something else arrives
            self._last = env.now
            self._flows.append(_Flow(solo_s, demand, event))
            self._generation += 1
            env.timeout(solo_s).callbacks.append(_Wake(self, self._generation))
            return event
        self._advance()
        self._flows.append(_Flow(solo_s, demand, event))
        self._reallocate()
        self._arm()
        return event

    # --- internals ------------------------------------------------------------------------------
    def _advance(self) -> None:
        now = self.env.now
        dt = now - self._last
        if dt > 0.0:
            moved = 0.0
            for f in self._flows:
                f.remaining_s -= f.rate * dt
                moved += f.rate * f.demand
            self.moved_bytes += moved * dt
        self._last = now

    def _reallocate(self) -> None:
        flows = self._flows
        total = 0.0
        for f in flows:
            total += f.demand
        if total <= self.capacity_bytes_per_s:
            if self._saturated:  # new flows start at rate 1; only a saturated set needs a reset
                for f in flows:
                    f.rate = 1.0
                self._saturated = False
            return
        # Progressive filling: serve the smallest demands in full while they fit an equal share.
        self._saturated = True
        left = self.capacity_bytes_per_s
        order = sorted(flows, key=lambda f: f.demand)
        n = len(order)
        for i, f in enumerate(order):
            share = left / (n - i)
            if f.demand <= share:
                f.rate = 1.0
                left -= f.demand
            else:
                for g in order[i:]:
                    g.rate = share / g.demand
                break

    def _arm(self) -> None:
        flows = self._flows
        if not flows:
            return
        if len(flows) == 1:
            f = flows[0]
            nxt = f.remaining_s / f.rate
        else:
            nxt = min(f.remaining_s / f.rate for f in flows)
        self._generation += 1
        timer = self.env.timeout(max(nxt, 0.0))
        timer.callbacks.append(_Wake(self, self._generation))

    def _wake(self, generation: int) -> None:
        if generation != self._generation:
            return  # superseded by a later arrival or departure
        flows = self._flows
        if len(flows) == 1:  # the common, uncontended case, inlined
            f = flows[0]
            now = self.env.now
            dt = now - self._last
            self._last = now
            f.remaining_s -= f.rate * dt
            self.moved_bytes += f.rate * f.demand * dt
            if _finished(f, now):
                self._flows = []
                f.event.succeed()
                return
        else:
            self._advance()
            now = self.env.now
            done, left = [], []
            for f in flows:
                (done if _finished(f, now) else left).append(f)
            if done:
                self._flows = left
                for f in done:
                    f.event.succeed()
                if self._flows:
                    self._reallocate()
        self._arm()


class _Wake:
    """Timer callback bound to the generation it was armed for (cheaper than a closure per timer)."""

    __slots__ = ("share", "generation")

    def __init__(self, share: FluidShare, generation: int) -> None:
        self.share = share
        self.generation = generation

    def __call__(self, _event: Any) -> None:
        self.share._wake(self.generation)
