"""Roofline invariants: lower bounds, monotonicity in hardware resources, batch scaling."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import archsim.presets as presets
from archsim import ops
from archsim.engines import estimate

V100 = presets.load_preset("gpu/v100-sxm2-16gb")
DUMP = V100.model_dump()


def _variant(**changes):
    d = {**DUMP}
    for path, value in changes.items():
        head, _, tail = path.partition(".")
        d[head] = {**d[head], tail: value} if tail else value
    return presets.validate_hardware(d)


op_strategy = st.one_of(
    st.builds(lambda m, n, k, dt: ops.Gemm(m, n, k, dtype=dt), st.integers(1, 4096), st.integers(1, 4096),
              st.integers(1, 4096), st.sampled_from(["fp16", "fp32"])),
    st.builds(lambda n, c, k, hw, r, dt: ops.Conv2d(n, c, k, hw, hw, kernel=(r, r), padding=(r // 2, r // 2),
                                                   dtype=dt),
              st.integers(1, 16), st.integers(1, 256), st.integers(1, 256), st.integers(7, 56),
              st.sampled_from([1, 3]), st.sampled_from(["fp16", "fp32"])),
    st.builds(lambda n, dt: ops.Elementwise((n,), "gelu", dtype=dt), st.integers(1, 1 << 24),
              st.sampled_from(["fp16", "fp32"])),
)

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(op=op_strategy)
def test_time_above_peak_bounds(op):
    o = estimate(op, V100).ops[0]
    prec = op.dtype.precision
    peak = V100.best_peak_flop_per_s(prec) or V100.peak_flop_per_s("fp32")
    peak = max(peak, V100.peak_flop_per_s("fp32"))
    # Winograd F(4x4,3x3) executes 36/16 multiplies per output instead of 9: a 4x lower FLOP floor.
    flop = op.flop() / 4 if o.extra.get("winograd") == 1.0 else op.flop()
    assert o.latency_s >= flop / peak * (1 - 1e-12)
    assert o.latency_s >= op.min_bytes() / V100.dram.bandwidth_bytes_per_s * (1 - 1e-12)
    assert o.bytes_by_level["dram"] >= op.min_bytes() * (1 - 1e-12)
    assert o.latency_s >= max(v for k, v in o.time_by_unit_s.items() if k != "overhead")


@SETTINGS
@given(op=op_strategy, lo=st.sampled_from(["300 GB/s", "600 GB/s"]), sms=st.sampled_from([40, 60]),
       clock=st.sampled_from(["1000 MHz", "1200 MHz"]))
def test_more_resources_never_slower(op, lo, sms, clock):
    # At a fixed clock (power limit lifted): under a power cap, more DRAM bandwidth or more SMs draw
    # more power and the governor may take it back from the clock, so "never slower" is a claim about
    # the resources alone.
    free = {"power_limit": "1 MW"}
    base = estimate(op, _variant(**free)).latency_s
    assert estimate(op, _variant(**{"dram.bandwidth": lo}, **free)).latency_s >= base * (1 - 1e-12)
    assert estimate(op, _variant(sm_count=sms, **free)).latency_s >= base * (1 - 1e-12)
    assert estimate(op, _variant(clock=clock, **free)).latency_s >= base * (1 - 1e-12)


@SETTINGS
@given(op=op_strategy, limit=st.sampled_from(["150 W", "220 W"]))
def test_lower_power_limit_never_faster_nor_hungrier(op, limit):
    # The governor only ever lowers the clock: a tighter limit never shortens an op or raises its power.
    base = estimate(op, V100)
    tight = estimate(op, _variant(power_limit=limit))
    assert tight.latency_s >= base.latency_s * (1 - 1e-12)
    assert tight.ops[0].extra["clock_hz"] <= base.ops[0].extra["clock_hz"]
    assert tight.average_power_w <= max(base.average_power_w, float(limit.split()[0])) * (1 + 1e-6)


@SETTINGS
@given(n=st.integers(1, 8), c=st.sampled_from([16, 64, 256]), hw=st.sampled_from([14, 28, 56]))
def test_batch_scaling(n, c, hw):
    small = ops.Conv2d(n, c, c, hw, hw, kernel=(3, 3), padding=(1, 1), dtype="fp16")
    big = ops.Conv2d(2 * n, c, c, hw, hw, kernel=(3, 3), padding=(1, 1), dtype="fp16")
    rs, rb = estimate(small, V100), estimate(big, V100)
    # Nominal FLOP double; executed FLOP follow the algorithm each picks (Winograd multiplies less).
    assert rb.ops[0].flop_nominal == 2 * rs.ops[0].flop_nominal
    assert rb.flop <= rb.ops[0].flop_nominal and rs.flop <= rs.ops[0].flop_nominal
    # A larger batch reuses the shared weights more in L2, which lowers the miss share of the
    # load latency (Little's law) by a few percent; it never makes the op much faster.
    assert rs.latency_s <= rb.latency_s * 1.05
    # doubling the batch at most doubles the kernel time (plus one more fill per wave)
    assert rb.latency_s <= 2 * rs.latency_s * (1 + 1e-9)


def test_energy_sums_to_total_per_op():
    for op in (ops.Gemm(777, 333, 555, dtype="fp16"), ops.Elementwise((12345,), "exp", dtype="fp32")):
        r = estimate(op, V100)
        o = r.ops[0]
        assert sum(o.energy_breakdown_j.values()) == pytest.approx(o.energy_j, rel=1e-12)
        assert np.isclose(sum(r.energy_breakdown_j.values()), r.energy_j, rtol=1e-12)
        assert 0 < r.data_movement_fraction < 1
