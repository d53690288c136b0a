"""power.apply's arithmetic after the governor in one compiled pass over a large block
(power._rescaled, archsim.energy.clocked.rescale) gives the numpy passes' floats to the last bit:
every (op, point) at the nominal clock or governed, several costs, costs stacking several ops
(power.apply's counts), CPU costs, zero, infinite and NaN times and energies, and the inputs left as
they were; blocks it does not take (a point without a power model, one point) take the numpy passes."""

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
from archsim.energy import clocked, dvfs
from archsim.workload.ops import Conv2d, Gemm, Softmax

GPUS = ("gpu/v100-sxm2-16gb", "gpu/t4", "gpu/a100-sxm4-40gb", "gpu/mi100", "gpu/h100-sxm5-80gb")
OPS = (Gemm(4096, 4096, 4096, dtype="fp16"), Gemm(64, 64, 64, dtype="fp32"), Softmax((64, 1024), dtype="fp16"),
       Conv2d(8, 64, 64, 56, 56, kernel=(3, 3), padding=(1, 1), dtype="fp16"))
SPECIAL = (0.0, -0.0, np.inf, np.nan, 1e-300)


@pytest.fixture(scope="module")
def pack():
    return GPUParams.from_devices([archsim.load_preset(pid) for pid in GPUS] * 3)


def _varied(c: CostArrays, energy: float, rng: np.random.Generator, special: float | None) -> CostArrays:
    """``c`` with its energies times ``energy`` and, where ``special`` is given, a few entries of its
    times and energies set to it."""

    def vary(a: np.ndarray, scale: float) -> np.ndarray:
        a = a * scale
        if special is not None:
            a[rng.random(a.shape) < 0.2] = special
        return a

    return CostArrays.from_fields({**vars(c), "energy_breakdown_j": {k: vary(v, energy)
                                                                     for k, v in c.energy_breakdown_j.items()},
                                   "time_by_unit_s": {k: vary(v, 1.0) for k, v in c.time_by_unit_s.items()}})


def _both(costs, p, counts=None, gpu=True):
    """power.apply's costs with the compiled pass, and with the numpy passes; whether it ran."""
    ran = []
    kernel = clocked.rescale

    def spy(*args):
        ran.append(True)
        return kernel(*args)

    with pytest.MonkeyPatch.context() as m, np.errstate(all="ignore"):
        m.setattr(dvfs, "INPLACE_MIN", 1)
        m.setattr(power, "INPLACE_MIN", 1)
        m.setattr(clocked, "rescale", spy)
        got = power.apply(costs, p, gpu=gpu, counts=counts)
        m.setattr(power, "_rescaled", lambda *a, **k: None)
        want = power.apply(costs, p, gpu=gpu, counts=counts)
    return got, want, bool(ran)


@settings(max_examples=40, deadline=None)
@given(which=st.lists(st.integers(0, len(OPS) - 1), min_size=1, max_size=4),
       energy=st.sampled_from([0.0, 1e-3, 1.0, 10.0, 1e4]), seed=st.integers(0, 2**32 - 1),
       special=st.sampled_from((None, *SPECIAL)))
def test_compiled_pass_is_the_numpy_passes(pack, which, energy, seed, special):
    rng = np.random.default_rng(seed)
    costs = [_varied(gpu_cost.cost(OPS[i], pack), energy, rng, special) for i in which]
    before = [_varied(c, 1.0, rng, None) for c in costs]
    got, want, ran = _both(costs, pack)
    assert ran
    for a, b in zip(got, want, strict=True):
        assert_same(a, b)
    for a, b in zip(costs, before, strict=True):  # the inputs are left as they were
        assert_same(a, b)


@pytest.mark.parametrize("energy", [1e-3, 1e4])
def test_stacked_costs_in_the_compiled_pass(pack, energy):
    rng = np.random.default_rng(0)
    ops = (OPS[0], Gemm(64, 64, 64, dtype="fp16"), Gemm(256, 512, 1024, dtype="fp16"))
    gemms = [_varied(gpu_cost.cost(op, pack), energy, rng, None) for op in ops]
    costs = [stacked(gemms), _varied(gpu_cost.cost(OPS[2], pack), energy, rng, None)]
    got, want, ran = _both(costs, pack, counts=[3, 1])
    assert ran
    for a, b in zip(got, want, strict=True):
        assert_same(a, b)


def test_cpu_costs_in_the_compiled_pass():
    p = CPUParams.from_devices([archsim.load_preset(pid) for pid in ("cpu/epyc-genoa-9654", "cpu/skylake-16vcpu")])
    rng = np.random.default_rng(1)
    for energy in (1e-3, 1.0, 1e4):
        costs = [_varied(cpu_cost.cost(op, p, None), energy, rng, None)
                 for op in (Gemm(512, 512, 512, dtype="fp32"), Softmax((64, 1024), dtype="fp32"))]
        got, want, ran = _both(costs, p, gpu=False)
        assert ran
        for a, b in zip(got, want, strict=True):
            assert_same(a, b)


def test_governed_and_nominal_blocks_both_reach_the_compiled_pass(pack):
    limited = []
    for energy in (1.0, 1e4):
        costs = [gpu_cost.cost(op, pack) for op in OPS[1:3]]
        costs = [CostArrays.from_fields({**vars(c), "energy_breakdown_j": {k: v * energy for k, v in
                                                                           c.energy_breakdown_j.items()}})
                 for c in costs]
        got, want, ran = _both(costs, pack)
        assert ran
        for a, b in zip(got, want, strict=True):
            assert_same(a, b)
        limited.append(any(bool(c.extra["power_limited"].any()) for c in got))
    assert limited == [False, True]


def test_blocks_the_pass_does_not_take(pack):
    some = dataclasses.replace(pack, has_power=np.where(np.arange(pack.n) % 2 == 0, 1.0, 0.0))
    one_point = GPUParams.from_devices([archsim.load_preset(GPUS[0])])
    for p in (some, one_point):
        costs = [CostArrays.from_fields({**vars(c), "energy_breakdown_j": {k: v * 1e4 for k, v in
                                                                           c.energy_breakdown_j.items()}})
                 for c in (gpu_cost.cost(op, p) for op in OPS)]
        got, want, ran = _both(costs, p)
        assert not ran
        for a, b in zip(got, want, strict=True):
            assert_same(a, b)


def test_costs_whose_kept_arrays_are_not_their_rows(pack):
    # A float32 off-chip energy and time: the kept block is float64 rows the outputs are cut from (not
    # the costs' own arrays), read by the compiled pass and never written into.
    costs = [gpu_cost.cost(op, pack) for op in OPS]
    first = costs[0]
    odd = CostArrays.from_fields({**vars(first), "energy_breakdown_j": {
        k: (v.astype(np.float32) if k in power.OFFCHIP else v * 1e4) for k, v in first.energy_breakdown_j.items()},
        "time_by_unit_s": {k: (v.astype(np.float32) if not power._clocked(k) else v)
                           for k, v in first.time_by_unit_s.items()}})
    costs[0] = odd
    assert not power._alone(costs, [1] * len(costs), pack.n, [k for k in power.OFFCHIP
                                                              if k in odd.energy_breakdown_j],
                            [k for k in odd.time_by_unit_s if not power._clocked(k)])
    got, want, ran = _both(costs, pack)
    assert ran
    for a, b in zip(got, want, strict=True):
        assert_same(a, b)
