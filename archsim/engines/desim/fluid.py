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

from heapq import heappush

import simpy
from simpy.events import NORMAL

__all__ = ["FluidShare"]

_REL_TOL = 1e-9  # a flow whose remaining solo time is below this share of its own is finished


class _Flow(simpy.Event):
    """One flow, and the event its process waits on (one object, not two, per flow)."""

    def __init__(self, env: simpy.Environment, solo_s: float, demand: float) -> None:
        self.env = env
        self.callbacks = []
        self.remaining_s = solo_s
        self.solo_s = solo_s
        self.demand = demand
        self.rate = 1.0


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
        # Rounding can put a flow's own demand a hair above the capacity it was costed against.
        capacity = self.capacity_bytes_per_s
        demand = demand_bytes_per_s if 0.0 <= demand_bytes_per_s <= capacity else \
            min(max(demand_bytes_per_s, 0.0), capacity)
        flow = _Flow(env, solo_s, demand)
        if not self._flows:  # fast path: alone, at full speed until something else arrives
            self._last = env._now
            self._flows.append(flow)
            self._generation += 1
            _Wake(env, solo_s, self, self._generation)
            return flow
        self._advance()
        self._flows.append(flow)
        self._reallocate()
        self._arm()
        return flow

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
        _Wake(self.env, max(nxt, 0.0), self, self._generation)

    def _settle(self) -> None:
        """At a timer of several flows: advance them, finish those that are done, re-arm."""
        self._advance()
        now = self.env._now
        done, left = [], []
        for f in self._flows:
            (done if _finished(f, now) else left).append(f)
        if done:
            self._flows = left
            for f in done:
                f.succeed()
            if self._flows:
                self._reallocate()
        self._arm()


class _Wake(simpy.Timeout):
    """The share's timer, bound to the generation it was armed for: a timeout that is its own
    callback's data (one object per timer, not a timeout and a closure). Scheduled as
    ``env.timeout(delay)`` is (``simpy.events.Timeout``)."""

    def __init__(self, env: simpy.Environment, delay: float, share: FluidShare, generation: int) -> None:
        self.env = env
        self.callbacks = [_wake]
        self._value = None
        self._delay = delay
        self._ok = True
        self.share = share
        self.generation = generation
        heappush(env._queue, (env._now + delay, NORMAL, next(env._eid), self))  # Environment.schedule


def _wake(timer: _Wake) -> None:
    """The timer's callback: settle the share it was armed for, unless an arrival or a departure
    has re-armed it since."""
    share = timer.share
    if timer.generation != share._generation:
        return
    flows = share._flows
    if len(flows) != 1:
        share._settle()
        return
    # The common, uncontended case, written out (FluidShare._advance, _finished, Event.succeed).
    f = flows[0]
    env = share.env
    now = env._now
    dt = now - share._last
    share._last = now
    f.remaining_s -= f.rate * dt
    share.moved_bytes += f.rate * f.demand * dt
    if f.remaining_s <= _REL_TOL * f.solo_s or now + f.remaining_s / f.rate <= now:
        share._flows = []
        f._ok = True
        f._value = None
        heappush(env._queue, (now, NORMAL, next(env._eid), f))
        return
    share._arm()
