"""The power model's array path over (ops, points) blocks gives the general path's floats to the last
bit: the energies and times scaled in their block (power._each), the ratio 1 in the points' shape
where every (op, point) fits at the nominal clock (dvfs.nominal_or_governed), over lone costs,
several costs and costs stacking several ops (power.apply's counts)."""

import dataclasses

import numpy as np
import pytest
from bit_compare import assert_same
from hypothesis import given, settings
from hypothesis import strategies as st
from stacked_costs import stacked

import archsim
from archsim.cost import cpu as cpu_cost
from archsim.cost import gpu as gpu_cost
from archsim.cost import power
from archsim.cost.params import CPUParams, GPUParams
from archsim.cost.types import CostArrays
from archsim.energy import dvfs
from archsim.workload.ops import Conv2d, Gemm, Softmax

GPUS = ("gpu/v100-sxm2-16gb", "gpu/t4", "gpu/a100-sxm4-40gb", "gpu/mi100", "gpu/h100-sxm5-80gb")
OPS = (Gemm(4096, 4096, 4096, dtype="fp16"), Gemm(64, 64, 64, dtype="fp32"), Softmax((64, 1024), dtype="fp16"),
       Conv2d(8, 64, 64, 56, 56, kernel=(3, 3), padding=(1, 1), dtype="fp16"))


def _threshold(m, threshold):
    """Arrays written into from ``threshold`` entries (1: every array, the block's spare rows too)."""
    m.setattr(dvfs, "INPLACE_MIN", threshold)
    m.setattr(power, "INPLACE_MIN", threshold)


def _general(t, limit_w, min_ratio, scratch=()):
    """dvfs.nominal_or_governed as the general path sees it: always a ratio array (no scratch)."""
    return dvfs.governed(t, limit_w, min_ratio)


def _scaled(c: CostArrays, energy: float) -> CostArrays:
    """``c`` with its energies times ``energy`` (below or above the power limits)."""
    return CostArrays.from_fields({**vars(c), "energy_breakdown_j": {k: v * energy
                                                                     for k, v in c.energy_breakdown_j.items()}})


@pytest.fixture(scope="module")
def pack():
    return GPUParams.from_devices([archsim.load_preset(pid) for pid in GPUS])


def _both(costs, p, counts=None, gpu=True):
    """power.apply's costs, and the general path's (restored afterwards)."""
    got = power.apply(costs, p, gpu=gpu, counts=counts)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(power, "nominal_or_governed", _general)
        want = power.apply(costs, p, gpu=gpu, counts=counts)
    return got, want


@settings(max_examples=40, deadline=None)
@given(which=st.lists(st.integers(0, len(OPS) - 1), min_size=1, max_size=4),
       energy=st.sampled_from([0.0, 1e-3, 0.1, 1.0, 10.0, 1e4]), threshold=st.sampled_from([1, 4096, 10**9]))
def test_block_path_is_the_general_path(pack, which, energy, threshold):
    costs = [_scaled(gpu_cost.cost(OPS[i], pack), energy) for i in which]
    before = [_scaled(c, 1.0) for c in costs]
    with pytest.MonkeyPatch.context() as m:
        _threshold(m, threshold)
        got, want = _both(costs, pack)
    with pytest.MonkeyPatch.context() as m:  # no array written into: new arrays throughout
        _threshold(m, 10**9)
        m.setattr(power, "nominal_or_governed", _general)
        plain = power.apply(costs, pack, gpu=True)
    for a, b, c in zip(got, want, plain, strict=True):
        assert_same(a, b)
        assert_same(a, c)
    for a, b in zip(costs, before, strict=True):  # the inputs are left as they were
        assert_same(a, b)


@pytest.mark.parametrize("threshold", [1, 10**9])
@pytest.mark.parametrize("energy", [1e-3, 1e4])
def test_stacked_costs_on_the_block_path_are_the_general_path(monkeypatch, pack, energy, threshold):
    _threshold(monkeypatch, threshold)
    ops = (OPS[0], Gemm(64, 64, 64, dtype="fp16"), Gemm(256, 512, 1024, dtype="fp16"))
    gemms = [_scaled(gpu_cost.cost(op, pack), energy) for op in ops]
    costs = [stacked(gemms), _scaled(gpu_cost.cost(OPS[2], pack), energy)]
    got, want = _both(costs, pack, counts=[3, 1])
    for a, b in zip(got, want, strict=True):
        assert_same(a, b)
    # The stacked cost is each of its ops governed alone.
    alone = power.apply(gemms, pack, gpu=True)
    for i, c in enumerate(alone):
        assert_same(got[0].latency_s[i * pack.n:(i + 1) * pack.n], c.latency_s)


def test_both_branches_of_the_ratio_are_taken(pack):
    seen = []

    def spy(t, limit_w, min_ratio, scratch=()):
        ratio, time = dvfs.nominal_or_governed(t, limit_w, min_ratio, scratch)
        seen.append(ratio is None)
        return ratio, time

    with pytest.MonkeyPatch.context() as m:
        m.setattr(power, "nominal_or_governed", spy)
        for op, energy in ((OPS[2], 1.0), (OPS[0], 1e4)):
            out = power.apply([_scaled(gpu_cost.cost(op, pack), energy)] * 2, pack, gpu=True)
            assert bool(out[0].extra["power_limited"].any()) is not seen[-1]
    assert seen == [True, False]


@pytest.mark.parametrize("threshold", [1, 10**9])
def test_cpu_block_path_is_the_general_path(monkeypatch, threshold):
    _threshold(monkeypatch, threshold)
    p = CPUParams.from_devices([archsim.load_preset(pid) for pid in ("cpu/epyc-genoa-9654", "cpu/skylake-16vcpu")])
    for energy in (1e-3, 1.0, 1e4):
        costs = [_scaled(cpu_cost.cost(op, p, None), energy)
                 for op in (Gemm(512, 512, 512, dtype="fp32"), Softmax((64, 1024), dtype="fp32"))]
        got, want = _both(costs, p, gpu=False)
        for a, b in zip(got, want, strict=True):
            assert_same(a, b)


def test_spare_rows_are_given_once_and_only_float64():
    spare = power.Spare(True)
    row = np.zeros((3, 4))[0]
    spare.give(row, np.zeros(4, dtype=np.int64), 1.0)
    assert spare.take(False) is None
    assert spare.take() is row
    assert spare.take() is None
    assert power.Spare(False).take() is None
    like = np.ones((2, 4))
    spare.give(np.full((2, 4), 7.0))
    assert_same(spare.zeros(like), np.zeros_like(like))
    spare.give(np.full((2, 4), 7.0))
    assert_same(spare.copy(np.arange(4.0), like), np.broadcast_to(np.arange(4.0), (2, 4)).copy())
    assert_same(spare.copy(np.arange(4.0), like), np.broadcast_to(np.arange(4.0), (2, 4)).copy())


def test_times_and_energies_the_clock_leaves_alone_go_back_as_given(pack):
    costs = [gpu_cost.cost(op, pack) for op in OPS[1:3]]
    out = power.apply(costs, pack, gpu=True)
    for c, o in zip(costs, out, strict=True):
        for k, v in c.time_by_unit_s.items():
            if not power._clocked(k):
                assert o.time_by_unit_s[k] is v
        for k in power.OFFCHIP:
            if k in c.energy_breakdown_j and k not in power._ADDED:
                assert o.energy_breakdown_j[k] is c.energy_breakdown_j[k]
    # One not float64: every such array is the float64 row of the stacking, as the general path gives.
    odd = CostArrays.from_fields({**vars(costs[0]), "time_by_unit_s": {
        k: (v.astype(np.float32) if k == "overhead" else v) for k, v in costs[0].time_by_unit_s.items()}})
    got = power.apply([odd, costs[1]], pack, gpu=True)
    for c, o in zip((odd, costs[1]), got, strict=True):
        for k, v in c.time_by_unit_s.items():
            if not power._clocked(k):
                assert o.time_by_unit_s[k] is not v
                assert_same(o.time_by_unit_s[k], v.astype(np.float64))


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), ops=st.integers(1, 6), points=st.integers(1, 5),
       scratch=st.integers(0, 3))
def test_nominal_power_into_scratch_is_the_plain_one(seed, ops, points, scratch):
    rng = np.random.default_rng(seed)

    def a(shape, lo=0.0, hi=1.0):
        return rng.uniform(lo, hi, shape)

    full, pts = (ops, points), (points,)
    curve = dvfs.VFCurve(a(pts, 0.6, 0.7), a(pts, 0.9, 1.1), a(pts, 5e8, 8e8), a(pts, 1.2e9, 1.5e9))
    t = dvfs.PowerTerms(nominal_hz=a(pts, 1.3e9, 2e9), fixed_s=a(full, 0, 1e-6), clock_s=a(full, 0, 1e-3),
                        memory_s=a(full, 0, 1e-3), excess_s=a(full, 0, 1e-4), onchip_j=a(full, 0, 0.5),
                        offchip_j=a(full, 0, 0.2), board_w=a(pts, 30, 60), leakage_w=a(full, 10, 80),
                        clock_w=a(pts, 10, 50), leakage_exponent=rng.choice([2.0, 3.0], pts), curve=curve)
    limit, min_ratio = a(pts, 100, 400), a(pts, 0.3, 0.5)
    want_power, want_time = dvfs._nominal_power(t)
    want_ratio, _ = dvfs.governed(t, limit, min_ratio)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(dvfs, "INPLACE_MIN", 1)
        power_w, time = dvfs._nominal_power(t, [np.full(full, 7.0) for _ in range(scratch)])
        ratio, again = dvfs.nominal_or_governed(t, limit, min_ratio, [np.full(full, 7.0) for _ in range(scratch)])
    assert_same(power_w, want_power)
    assert_same(time, want_time)
    assert_same(again, want_time)
    assert_same(np.ones(full) if ratio is None else ratio, want_ratio)


@pytest.mark.parametrize("exponent", [2.0, 0.5, 3.0])
@pytest.mark.parametrize("devices", [GPUS[:1], GPUS[2:4]])
@pytest.mark.parametrize("energy", [1e-3, 1.0, 1e4])
@pytest.mark.parametrize("top", [1.0, 1.05, 1.1, 1.37])
def test_leakage_exponents_numpy_takes_apart_give_the_general_path(devices, exponent, energy, top):
    # One point of several ops: numpy's power over the ops with a scalar exponent (a square for 2,
    # a square root for 0.5); two points: over the points. The curve's top at ``top`` x the nominal
    # clock: voltage ratios under 1, some of whose powers and squares differ (a V100's at 1.05, 1.1).
    p = GPUParams.from_devices([archsim.load_preset(pid) for pid in devices])
    p = dataclasses.replace(p, leakage_exponent=np.full(p.n, exponent), max_voltage_clock_hz=p.clock_hz * top)
    for ops in (OPS, OPS[1:]):  # with the 4096^3 GEMM (over its limit) and without
        costs = [_scaled(gpu_cost.cost(op, p), energy) for op in ops]
        got, want = _both(costs, p)
        for a, b in zip(got, want, strict=True):
            assert_same(a, b)
