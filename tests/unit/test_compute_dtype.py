"""Math precision apart from storage precision (``compute_dtype``) and the Tensor Core clock.

Hand-computed cases: the arithmetic is in the comments.
"""

from __future__ import annotations

import pytest

import archsim
from archsim import ops
from archsim.errors import ArchsimError


def _gemm(gpu: object, **kw: object) -> archsim.OpResult:
    return archsim.estimate(ops.Gemm(4096, 4096, 4096, **kw), gpu).ops[0]


def test_fp16_storage_fp32_math_runs_at_fp32_rate_on_p100():
    # at the boost clock: the power limit (DVFS) is held off so the rate arithmetic below is exact
    p100 = archsim.load_preset("gpu/p100-16gb")
    p100 = p100.model_copy(update={"power_limit_w": "1 MW"})
    fp32 = _gemm(p100, dtype="fp32")
    mixed = _gemm(p100, dtype="fp16", compute_dtype="fp32")
    half = _gemm(p100, dtype="fp16")
    # 2 x 4096^3 = 137.44 GFLOP on 32 x 32 tiles: 16384 blocks over 56 SMs x 8 = 36 full waves of 8 and
    # ceil(256 / 56) = 5 more blocks on the busiest SM: 293 blocks of 2 x 32 x 32 x 4096 = 8.389 MFLOP,
    # at 64 fp32 lanes x 2 x 1.48 GHz x 0.86 (vector_efficiency) = 162.9 GFLOP/s per SM: 15.086 ms.
    assert mixed.extra["tile_m"] == 32 and mixed.extra["tile_n"] == 32
    assert mixed.time_by_unit_s["compute:vector"] == pytest.approx(293 * 2 * 32 * 32 * 4096 / (128 * 1.48e9 * 0.86))
    assert mixed.time_by_unit_s["compute:vector"] == pytest.approx(15.086e-3, rel=1e-4)
    assert mixed.time_by_unit_s["compute:vector"] == fp32.time_by_unit_s["compute:vector"]
    # The fp16 math (half2 lanes, 128 per SM) would take half as long; fp32 math must not.
    assert half.time_by_unit_s["compute:vector"] == pytest.approx(mixed.time_by_unit_s["compute:vector"] / 2)
    # Storage stays fp16: the bytes of the fp16 GEMM at every level.
    assert mixed.bytes_by_level == half.bytes_by_level


def test_compute_dtype_carries_to_backward_and_views():
    g = ops.Gemm(64, 32, 16, dtype="fp16", compute_dtype="fp32", weight=True)
    assert all(b.compute_dtype == "fp32" for b in g.backward() if isinstance(b, ops.Gemm))
    c = ops.Conv2d(2, 8, 16, 9, 9, dtype="fp16", compute_dtype="fp32")
    assert c.as_gemm().compute_dtype == "fp32"
    assert all(b.compute_dtype == "fp32" for b in c.backward())
    a = ops.Attention(1, 2, 16, 16, 8, dtype="bf16", compute_dtype="fp32")
    assert {o.compute_dtype for o in a.decompose() if isinstance(o, ops.Gemm)} == {"fp32"}
    assert ops.Gemm(4, 4, 4, dtype="fp16").math_dtype == "fp16"
    with pytest.raises(ArchsimError, match="compute_dtype"):
        ops.Gemm(4, 4, 4, compute_dtype="fp17")


@pytest.mark.parametrize("op", [
    ops.Gemm(1024, 1024, 1024, dtype="fp16"),
    ops.Conv2d(8, 64, 64, 56, 56, dtype="fp16"),
    ops.Attention(1, 8, 512, 512, 64, dtype="bf16", fused=True),
])
def test_unsupported_math_precision_is_a_clear_error(op):
    gtx580 = archsim.load_preset("gpu/gtx-580")  # Fermi: fp64 and fp32 lanes only, no Tensor Cores
    with pytest.raises(ArchsimError) as err:
        archsim.estimate(op, gtx580)
    msg = str(err.value)
    assert "\n" not in msg and "compute_dtype" in msg and "allowed: fp64, fp32" in msg


def test_emulated_fp16_is_never_faster_than_fp32_compute():
    gtx580 = archsim.load_preset("gpu/gtx-580")
    fp32 = _gemm(gtx580, dtype="fp32")
    mixed = _gemm(gtx580, dtype="fp16", compute_dtype="fp32")
    assert mixed.time_by_unit_s["compute:vector"] >= fp32.time_by_unit_s["compute:vector"]


def test_tensor_clock_prices_tensor_cores():
    # A compute-bound fp16 GEMM on H100: Tensor-Core time is FLOP / (SMs x tensor_clock x 4096 x 0.75),
    # so it scales as 1 / tensor_clock and does not move with the SM clock.
    sweep = archsim.Sweep("gpu/h100-sxm5-80gb", {"tensor_clock": ["100 MHz", "200 MHz", "1830 MHz"]})
    table = sweep.run(ops.Gemm(8192, 8192, 8192, dtype="fp16"))
    lat = table[table.metric == "latency_s"].set_index("point").value
    assert lat[0] / lat[1] == pytest.approx(2.0, rel=0.01)  # compute-bound at 100 and 200 MHz
    assert lat[1] > 5 * lat[2]
    h100 = archsim.load_preset("gpu/h100-sxm5-80gb")
    slow = h100.model_copy(update={"tensor_clock_hz": 915e6})
    r_slow = archsim.estimate(ops.Gemm(8192, 8192, 8192, dtype="fp16"), slow).ops[0]
    r = archsim.estimate(ops.Gemm(8192, 8192, 8192, dtype="fp16"), h100).ops[0]
    blocks, per_sm = r.extra["blocks"], r.extra["blocks_per_sm"]
    waves = r.extra["waves"]
    # Busiest SM: (waves - 1) full rounds of blocks_per_sm plus ceil(tail / SMs) blocks.
    tail = blocks - (waves - 1) * 132 * per_sm
    in_turn = (waves - 1) * per_sm + -(-tail // 132)
    flop_cta = 2 * r.extra["tile_m"] * r.extra["tile_n"] * 8192
    assert r.time_by_unit_s["compute:tensor"] == pytest.approx(in_turn * flop_cta / (4096 * 1.83e9 * 0.75))
    if r_slow.extra["tile_m"] == r.extra["tile_m"] and r_slow.extra["tile_n"] == r.extra["tile_n"]:
        assert r_slow.time_by_unit_s["compute:tensor"] == pytest.approx(2 * r.time_by_unit_s["compute:tensor"])


def test_hopper_cluster_multicast_halves_b_tile_l2_traffic():
    # H100 fp16 8192^3 on 128 x 256 tiles: per block and k element, A brings 128 x 2 B and B 256 x 2 B
    # through L2; a 2 x 1 cluster multicasts B, so (256 + 512 / 2) / (256 + 512) = 2/3 of the operand
    # traffic (the C writes, 128 x 256 x 2 B per block, are not shared).
    h100 = archsim.load_preset("gpu/h100-sxm5-80gb")
    assert h100.efficiency.gemm_cluster_size == 2
    solo = h100.model_copy(update={"efficiency": h100.efficiency.model_copy(update={"gemm_cluster_size": 1})})
    op = ops.Gemm(8192, 8192, 8192, dtype="fp16")
    with_cluster, without = archsim.estimate(op, h100).ops[0], archsim.estimate(op, solo).ops[0]
    assert with_cluster.extra["tile_m"] == without.extra["tile_m"] == 128
    assert with_cluster.extra["tile_n"] == without.extra["tile_n"] == 256
    blocks = 64 * 32
    operand = blocks * 8192 * (128 * 2 + 256 * 2)
    out = blocks * 128 * 256 * 2
    assert without.bytes_by_level["l2"] == pytest.approx(operand + out)
    assert with_cluster.bytes_by_level["l2"] == pytest.approx(operand * 2 / 3 + out)
    assert with_cluster.bound == "compute:tensor"
