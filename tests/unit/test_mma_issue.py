"""Instruction issue of Tensor-Core MMAs: one issue per SASS instruction, ``tensor_core.flop_per_instruction``
FLOP each (Volta HMMA.884 steps 512, Turing HMMA.1688 2048, sm_80+ HMMA.16816 4096).

Hand-computed cases: the arithmetic is in the comments.
"""

from __future__ import annotations

import pytest

import archsim
import archsim.presets as presets
from archsim import ops

N = 4096
FLOP = 2 * N**3  # 1.374e11


def _unlimited(name: str, **tensor_core):
    # at the boost clock (no DVFS), so issue energies are at v_max and comparable
    gpu = presets.load_preset(name)
    if tensor_core:
        gpu = gpu.model_copy(update={"tensor_core": gpu.tensor_core.model_copy(update=tensor_core)})
    return gpu.model_copy(update={"power_limit_w": "1 MW"})


@pytest.mark.parametrize(("name", "per"), [("gpu/v100-sxm2-16gb", 512.0), ("gpu/t4", 2048.0),
                                           ("gpu/a100-sxm4-40gb", 4096.0)])
def test_presets_state_their_sass_mma_shape(name, per):
    assert presets.load_preset(name).tensor_core.flop_per_instruction == per


def test_v100_mma_issue_energy_is_per_hmma884_step():
    base = _unlimited("gpu/v100-sxm2-16gb")
    ampere_like = _unlimited("gpu/v100-sxm2-16gb", flop_per_instruction=4096.0)
    a = archsim.estimate(ops.Gemm(N, N, N, dtype="fp16"), base).ops[0]
    b = archsim.estimate(ops.Gemm(N, N, N, dtype="fp16"), ampere_like).ops[0]
    # Only the MMA count differs: FLOP / 512 - FLOP / 4096 = 1.374e11 x 7/4096 = 2.348e8 more warp
    # instructions, each the preset's issue_energy 732 pJ at v_max: 0.1719 J.
    extra = FLOP * (1 / 512 - 1 / 4096) * 732e-12
    assert a.energy_breakdown_j["issue"] - b.energy_breakdown_j["issue"] == pytest.approx(extra, rel=1e-9)
    assert a.latency_s == b.latency_s  # issue energy does not change the time at a fixed clock


def test_power_limit_slows_the_finer_grained_issue():
    # With the 300 W limit, the 8x more MMA issues of Volta's HMMA.884 cost clock: never faster.
    stock = presets.load_preset("gpu/v100-sxm2-16gb")
    tc = stock.tensor_core.model_copy(update={"flop_per_instruction": 4096.0})
    coarse = stock.model_copy(update={"tensor_core": tc})
    op = ops.Gemm(8192, 8192, 8192, dtype="fp16")
    fine_op, coarse_op = archsim.estimate(op, stock).ops[0], archsim.estimate(op, coarse).ops[0]
    assert fine_op.extra["clock_hz"] <= coarse_op.extra["clock_hz"]
    assert fine_op.latency_s >= coarse_op.latency_s
