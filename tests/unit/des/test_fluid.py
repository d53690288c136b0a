"""The fluid bandwidth share against hand-computed schedules and a brute-force oracle."""

import math

import pytest
import simpy
from hypothesis import given, settings
from hypothesis import strategies as st

from archsim.engines.desim.fluid import FluidShare

C = 100.0  # capacity, B/s


def _run(flows: list[tuple[float, float, float]], capacity: float = C) -> tuple[list[float], FluidShare]:
    """Start each (arrival_s, solo_s, demand) flow; return the finish times."""
    env = simpy.Environment()
    share = FluidShare(env, "dram", capacity)
    ends = [math.nan] * len(flows)

    def proc(i, arrival, solo, demand):
        yield env.timeout(arrival)
        yield share.flow(solo, demand)
        ends[i] = env.now

    for i, f in enumerate(flows):
        env.process(proc(i, *f))
    env.run()
    return ends, share


def test_one_flow_takes_its_solo_time():
    ends, share = _run([(0.0, 2.5, 80.0)])
    assert ends[0] == pytest.approx(2.5, rel=1e-12)
    assert share.moved_bytes == pytest.approx(2.5 * 80.0)


def test_two_saturating_flows_share_equally():
    # Each alone needs all of C for 1 s: together each gets C/2 and both finish at 2 s.
    ends, _ = _run([(0.0, 1.0, C), (0.0, 1.0, C)])
    assert ends == pytest.approx([2.0, 2.0])


def test_flows_that_fit_do_not_slow_each_other():
    ends, _ = _run([(0.0, 1.0, 40.0), (0.0, 3.0, 60.0)])
    assert ends == pytest.approx([1.0, 3.0])


def test_max_min_fair_split():
    # Demands 25 and 100 (sum 125 > 100): the small one gets 25 (full speed), the big one 75 (rate 0.75).
    # Small finishes at 1 s; big has done 0.75 s of work, then runs alone: 1 + 0.25 = 1.25 s.
    ends, share = _run([(0.0, 1.0, 25.0), (0.0, 1.0, 100.0)])
    assert ends == pytest.approx([1.0, 1.25])
    assert share.moved_bytes == pytest.approx(125.0)


def test_staggered_arrival():
    # A alone for 0.5 s (half done), then A and B at half speed: A ends at 1.5 s with B half done;
    # B alone for its last 0.5 s: 2.0 s.
    ends, _ = _run([(0.0, 1.0, C), (0.5, 1.0, C)])
    assert ends == pytest.approx([1.5, 2.0])


def _oracle(flows, capacity):
    """Brute force: at each change, max-min rates by raising a common level until each demand or C binds."""
    t = 0.0
    left = {i: f[1] for i, f in enumerate(flows)}
    ends = {}
    pending = sorted(range(len(flows)), key=lambda i: (flows[i][0], i))
    active: list[int] = []
    while pending or active:
        while pending and flows[pending[0]][0] <= t + 1e-15:
            active.append(pending.pop(0))
        rates = {}
        if active:
            # bisection on the water level L: allocation min(demand, L) sums to min(capacity, total)
            total = sum(flows[i][2] for i in active)
            target = min(capacity, total)
            lo, hi = 0.0, max(flows[i][2] for i in active)
            for _ in range(200):
                mid = (lo + hi) / 2
                if sum(min(flows[i][2], mid) for i in active) < target:
                    lo = mid
                else:
                    hi = mid
            rates = {i: min(flows[i][2], hi) / flows[i][2] for i in active}
        nxt_arr = flows[pending[0]][0] if pending else math.inf
        nxt_end = min((left[i] / rates[i] for i in active), default=math.inf)
        dt = min(nxt_arr - t, nxt_end)
        for i in active:
            left[i] -= rates[i] * dt
        t += dt
        for i in list(active):
            if left[i] <= 1e-9 * flows[i][1]:
                ends[i] = t
                active.remove(i)
    return [ends[i] for i in range(len(flows))]


flow_st = st.tuples(st.floats(0.0, 2.0), st.floats(0.01, 2.0), st.floats(1.0, 100.0))


@settings(max_examples=60, deadline=None)
@given(st.lists(flow_st, min_size=1, max_size=6))
def test_matches_brute_force_oracle(flows):
    ends, share = _run(flows)
    expected = _oracle(flows, C)
    assert ends == pytest.approx(expected, rel=1e-6, abs=1e-9)
    # Conservation: every flow delivers demand x solo bytes.
    assert share.moved_bytes == pytest.approx(sum(s * d for _, s, d in flows), rel=1e-6)
    # Nobody finishes before its solo time after arrival.
    for (a, s, _), e in zip(flows, ends, strict=True):
        assert e >= a + s - 1e-9
