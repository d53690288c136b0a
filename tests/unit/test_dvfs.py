"""Power limits and DVFS: hand-computed solver cases, invariants, and the governor on presets."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import archsim
from archsim.energy import PowerTerms, VFCurve, op_time, solve_clock, total_power, voltage
from archsim.presets import load_preset


def _terms(clock_s=1.0, memory_s=0.0, onchip=100.0, board=10.0, v_min=1.0, fixed_s=0.0, leak=0.0, clk=0.0):
    a = lambda x: np.atleast_1d(np.asarray(x, dtype=np.float64))  # noqa: E731
    curve = VFCurve(v_min=a(v_min), v_max=a(1.0), knee_hz=a(0.5e9), vmax_hz=a(1e9))
    return PowerTerms(nominal_hz=a(1e9), fixed_s=a(fixed_s), clock_s=a(clock_s), memory_s=a(memory_s),
                      excess_s=a(0.0), onchip_j=a(onchip), offchip_j=a(0.0), board_w=a(board), leakage_w=a(leak),
                      clock_w=a(clk), leakage_exponent=a(3.0), curve=curve)


def test_voltage_curve():
    # Floor 0.8 V up to 0.5 GHz, then linear to 1.0 V at 1 GHz: 0.75 GHz is halfway, 0.9 V.
    c = VFCurve(np.array([0.8]), np.array([1.0]), np.array([0.5e9]), np.array([1e9]))
    assert voltage(c, np.array([0.2e9, 0.5e9, 0.75e9, 1e9]))[:4] == pytest.approx([0.8, 0.8, 0.9, 1.0])


def test_compute_bound_solve():
    # Flat curve (V = 1 V everywhere), 1 s of compute at 1 GHz, 100 J dynamic, 10 W board:
    # P(r) = 10 + 100 / (1 / r) = 10 + 100 r. A 60 W limit gives r = 0.5 and t = 2 s.
    t = _terms()
    r = solve_clock(t, np.array([60.0]), np.array([0.1]))
    assert r[0] == pytest.approx(0.5, abs=1e-6)
    assert op_time(t, r)[0] == pytest.approx(2.0, rel=1e-5)
    assert total_power(t, r)[0] <= 60.0


def test_memory_bound_solve_costs_no_time():
    # 0.2 s of compute under 1 s of DRAM; curve 0.8 V at 0.5 GHz .. 1.0 V at 1 GHz (0.4 V per GHz).
    # P(r) = 10 + 100 V(r)^2 / 1 s while r >= 0.2. An 80 W limit needs V^2 = 0.7, V = 0.83666 V:
    # r = 0.5 + (0.83666 - 0.8) / 0.4 = 0.59165, and the op still takes 1 s.
    t = _terms(clock_s=0.2, memory_s=1.0, v_min=0.8)
    r = solve_clock(t, np.array([80.0]), np.array([0.1]))
    assert r[0] == pytest.approx(0.5 + (np.sqrt(0.7) - 0.8) / 0.4, abs=1e-6)
    assert op_time(t, r)[0] == pytest.approx(1.0)


def test_no_fit_sits_at_min_clock():
    # Board power alone (10 W) is above a 5 W limit: the governor stays at its lowest clock.
    t = _terms()
    assert solve_clock(t, np.array([5.0]), np.array([0.25]))[0] == 0.25


@settings(max_examples=60, deadline=None)
@given(st.floats(1e-3, 2.0), st.floats(0.0, 2.0), st.floats(0.0, 500.0), st.floats(0.5, 1.0),
       st.floats(0.0, 1e-3), st.floats(0.0, 100.0), st.floats(0.0, 100.0), st.floats(20.0, 400.0))
def test_power_monotone_and_solution_is_highest_fitting_clock(c, m, e, vmin, fixed, leak, clk, limit):
    t = _terms(clock_s=c, memory_s=m, onchip=e, v_min=vmin, fixed_s=fixed, leak=leak, clk=clk)
    ratios = np.linspace(0.1, 1.0, 50)
    p = np.array([total_power(t, np.array([x]))[0] for x in ratios])
    assert np.all(np.diff(p) >= -1e-9 * np.abs(p[1:]))
    r = solve_clock(t, np.array([limit]), np.array([0.1]))[0]
    if r < 1.0 and r > 0.1:
        assert total_power(t, np.array([r]))[0] <= limit
        assert total_power(t, np.array([min(1.0, r + 1e-4)]))[0] > limit


def test_t4_sustained_sgemm_is_power_limited():
    # A T4 (70 W) running a sustained fp32 GEMM: the boost-clock power is far above 70 W, so the
    # governor lowers the clock until the board draws 70 W.
    t4 = load_preset("gpu/t4")
    r = archsim.estimate(archsim.ops.Gemm(4096, 4096, 4096, dtype="fp32"), t4)
    o = r.ops[0]
    assert o.bound == "power" and o.extra["power_limited"] == 1.0
    assert r.average_power_w == pytest.approx(70.0, rel=1e-4)
    assert o.extra["clock_hz"] < 0.7 * t4.clock_hz


def test_power_limit_sweep_trades_time_for_power():
    # Limits below the ~295 W this GEMM draws at boost: lower limits, lower clocks, longer runs; the
    # breakdown always sums to the total.
    v100 = load_preset("gpu/v100-sxm2-16gb")
    op = archsim.ops.Gemm(8192, 8192, 8192, dtype="fp16")
    limits = [150.0, 200.0, 250.0, 280.0]
    runs = [archsim.estimate(op, v100.model_copy(update={"power_limit_w": f"{w} W"})) for w in limits]
    clocks = [r.ops[0].extra["clock_hz"] for r in runs]
    assert clocks == sorted(clocks) and [r.latency_s for r in runs] == sorted((r.latency_s for r in runs), reverse=True)
    for w, r in zip(limits, runs, strict=True):
        assert r.average_power_w == pytest.approx(w, rel=1e-4)
        assert sum(r.energy_breakdown_j.values()) == pytest.approx(r.energy_j, rel=1e-12)


def test_memory_bound_op_keeps_its_time_under_a_tight_limit():
    # A DRAM-bound copy on the A40 at a limit below its boost-clock power: the clock falls, the time
    # (set by DRAM) does not, and the bound stays memory:dram.
    a40 = load_preset("gpu/a40-48gb")
    op = archsim.ops.Elementwise((1 << 28,), "relu", dtype="fp32")
    free = archsim.estimate(op, a40)
    tight = archsim.estimate(op, a40.model_copy(update={"power_limit_w": f"{0.9 * free.average_power_w!r} W"}))
    assert tight.ops[0].extra["power_limited"] == 1.0 and tight.ops[0].bound == "memory:dram"
    assert tight.latency_s == pytest.approx(free.latency_s, rel=1e-9)
    assert tight.energy_j < free.energy_j


def test_device_without_power_model_is_unchanged():
    # power = None: no governor, static power only (the ledger's old behaviour), clock at boost.
    v100 = load_preset("gpu/v100-sxm2-16gb").model_copy(update={"power": None})
    r = archsim.estimate(archsim.ops.Gemm(4096, 4096, 4096, dtype="fp16"), v100)
    assert "clock_hz" not in r.ops[0].extra and "leakage" not in r.energy_breakdown_j


def test_governor_clock_is_the_same_alone_or_together_and_is_the_highest_that_fits():
    # solve_clock bisects every over-limit point in one compiled loop (archsim.energy.governor): a
    # point's clock is the same float solved alone (a lone estimate) or with others (a sweep), and
    # it is the bisection's answer to total_power(r) <= limit (the numpy definition of the model).
    from archsim.energy import dvfs

    rng = np.random.default_rng(7)
    n = 24
    u = lambda lo, hi: rng.uniform(lo, hi, n)  # noqa: E731
    t = PowerTerms(nominal_hz=u(0.5e9, 2e9), fixed_s=u(0, 1e-6), clock_s=u(1e-6, 1e-3), memory_s=u(0, 1e-3),
                   excess_s=u(0, 1e-5), onchip_j=u(0, 0.5), offchip_j=u(0, 0.1), board_w=u(10, 60),
                   leakage_w=u(5, 50), clock_w=u(5, 50), leakage_exponent=np.where(u(0, 1) < 0.5, 3.0, 2.5),
                   curve=VFCurve(u(0.6, 0.8), u(0.9, 1.1), u(0.3e9, 0.9e9), u(1.5e9, 2.5e9)))
    limit, floor = u(50, 400), u(0.05, 0.3)
    together = solve_clock(t, limit, floor)  # every over-limit point in one pass
    assert 8 < np.count_nonzero(together < 1.0) < n
    step = 2.0 ** -dvfs.BISECTION_STEPS
    for i in range(n):
        one = PowerTerms(**{k: (v if k == "curve" else v[i:i + 1]) for k, v in vars(t).items() if k != "curve"},
                         curve=VFCurve(*(getattr(t.curve, f)[i:i + 1] for f in ("v_min", "v_max", "knee_hz",
                                                                                 "vmax_hz"))))
        r = together[i]
        assert solve_clock(one, limit[i:i + 1], floor[i:i + 1])[0] == r, i
        if r < 1.0:  # within one bisection step of the highest ratio that fits (or at the floor)
            if r > floor[i]:
                assert total_power(one, np.array([r]))[0] <= limit[i] * (1 + 1e-12), i
            assert total_power(one, np.array([r + step]))[0] > limit[i] * (1 - 1e-12), i


def test_power_at_the_nominal_clock_per_point_equals_per_op_and_point():
    # solve_clock tests the nominal clock with a ratio of the points' shape (the clock's factors
    # once per point): every (op, point) gets the bits a ratio of the full (ops, points) shape gives,
    # and the solved clocks are those of the governor run on each op alone.
    rng = np.random.default_rng(11)
    ops_, n = 5, 30
    u = lambda lo, hi, shape=(n,): rng.uniform(lo, hi, shape)  # noqa: E731
    full = (ops_, n)
    t = PowerTerms(nominal_hz=u(0.5e9, 2e9), fixed_s=u(0, 1e-6, full), clock_s=u(1e-6, 1e-3, full),
                   memory_s=u(0, 1e-3, full), excess_s=u(0, 1e-5, full), onchip_j=u(0, 0.5, full),
                   offchip_j=u(0, 0.1, full), board_w=u(10, 60), leakage_w=u(5, 50, full), clock_w=u(5, 50),
                   leakage_exponent=np.where(u(0, 1) < 0.5, 3.0, 2.5),
                   curve=VFCurve(u(0.6, 0.8), u(0.9, 1.1), u(0.3e9, 0.9e9), u(1.5e9, 2.5e9)))
    per_point = total_power(t, np.ones(n))
    assert per_point.shape == full
    assert np.array_equal(per_point, total_power(t, np.ones(full)))
    limit, floor = u(50, 400), u(0.05, 0.3)
    together = solve_clock(t, limit, floor)
    assert 0 < np.count_nonzero(together < 1.0) < together.size
    for i in range(ops_):
        alone = PowerTerms(**{k: (v[i] if np.ndim(v) == 2 else v) for k, v in vars(t).items() if k != "curve"},
                           curve=t.curve)
        assert np.array_equal(solve_clock(alone, limit, floor), together[i]), i


def test_clocked_power_is_op_powers_constant_terms_and_the_voltage_factor():
    # power.apply takes the clock, V(f)^2 / v_max^2 and the constant powers from clocked_power
    # alone: the same floats as op_power's terms and the formulas written out.
    from archsim.energy import clocked_power, op_power

    rng = np.random.default_rng(5)
    t = _terms(clock_s=rng.uniform(1e-6, 1e-3, 9), onchip=rng.uniform(0, 1, 9), leak=20.0, clk=30.0, v_min=0.7)
    ratio = rng.uniform(0.2, 1.0, 9)
    got, ref = clocked_power(t, ratio), op_power(t, ratio)
    for name in ("board", "leakage", "clock"):
        assert np.array_equal(getattr(got, f"{name}_w"), ref[name]), name
    assert np.array_equal(got.clock_hz, t.nominal_hz * ratio)
    assert np.array_equal(got.v2, (voltage(t.curve, t.nominal_hz * ratio) / t.curve.v_max) ** 2)
