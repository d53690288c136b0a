"""``efficiency.gemm_max_split_k``: the largest split-K factor the GEMM library launches.

With 1 (the P100 preset: its DeepBench K = 500000 GEMMs take the same time at M = 512 and 1024), a
GEMM with few output tiles and a long K runs each tile's whole K loop in one thread block, so its
time is that block's latency-bound operand stream, not the bytes over the DRAM bandwidth.
"""

from __future__ import annotations

import pytest

import archsim
from archsim import ops
from archsim.errors import SchemaError


def _with_max_split(gpu, value):
    return gpu.model_copy(update={"efficiency": gpu.efficiency.model_copy(update={"gemm_max_split_k": value})})


def test_defaults_allow_every_split_and_p100_allows_none():
    assert archsim.load_preset("gpu/v100-sxm2-16gb").efficiency.gemm_max_split_k == 16
    assert archsim.load_preset("gpu/t4").efficiency.gemm_max_split_k == 16
    assert archsim.load_preset("gpu/p100-16gb").efficiency.gemm_max_split_k == 1
    assert archsim.load_preset("gpu/p100-pcie-16gb").efficiency.gemm_max_split_k == 1


def test_rejects_a_split_below_one():
    eff = archsim.load_preset("gpu/v100-sxm2-16gb").efficiency
    with pytest.raises(SchemaError, match="gemm_max_split_k"):
        type(eff).model_validate({**eff.model_dump(), "gemm_max_split_k": 0})


def test_one_block_k_loop_hand_computed():
    # P100, fp32 C[32, 8] = A[32, 500000] B[500000, 8] without split-K: one 32 x 32 tile, one block.
    # Per block and k element the tile brings 32 x 4 B of A and 32 x 4 B of B (n = 8 padded to the
    # tile) through L2, plus the 32 x 32 x 4 B output once:
    #   L2 bytes = 256 x 500000 + 4096 = 128,004,096.
    # DRAM bytes (A, B and C once) = 32 x 500000 x 4 + 8 x 500000 x 4 + 32 x 8 x 4 = 80,001,024,
    # so the L2 miss share is 80,001,024 / 128,004,096 = 0.625 and the loaded latency
    #   216 cycles / 1.48 GHz + 0.625 x 350 ns = 145.9 + 218.8 = 364.7 ns.
    # In flight: (2 stages - 1) x (32 + 32) x 4 B x 16 (a 64-byte k-slice) = 4096 B per block, so
    # Little's law gives 4096 B / 364.7 ns = 11.23 GB/s, combined harmonically with the L2's
    # 1.6 TB/s x 0.9: L2 time = 128,004,096 x (1 / 1.44e12 + 1 / 11.23e9) = 11.49 ms (the DRAM term,
    # 80 MB at the same Little's-law rate, is shorter). Plus the fill (145.9 + 350 ns) and the 5 us launch.
    gpu = archsim.load_preset("gpu/p100-16gb")
    r = archsim.estimate(ops.Gemm(32, 8, 500000, dtype="fp32"), gpu).ops[0]
    assert r.extra["split_k"] == 1
    assert (r.extra["tile_m"], r.extra["tile_n"], r.extra["blocks"]) == (32, 32, 1)
    assert r.bytes_by_level["l2"] == pytest.approx(128_004_096)
    assert r.bytes_by_level["dram"] == pytest.approx(80_001_024)
    l2_lat, dram_lat = 216 / 1.48e9, 350e-9
    latency = l2_lat + 80_001_024 / 128_004_096 * dram_lat
    little = 4096 / latency
    expected = 128_004_096 * (1 / (1.6e12 * 0.9) + 1 / little) + (l2_lat + dram_lat) + 5e-6
    assert r.bound == "memory:l2"
    assert r.latency_s == pytest.approx(expected, rel=1e-3)
    assert r.latency_s == pytest.approx(11.49e-3, rel=2e-3)


def test_unsplit_long_k_time_does_not_follow_m():
    # The mechanism's signature: with the K loop in one block per tile, doubling M doubles the blocks
    # (16 -> 32 on 56 SMs, one wave) and their bytes in flight, so the time stays near one block's
    # K loop (DeepBench P100 fp32 NN, N = 8: 10.2 and 10.9 ms). With split-K (16 slices, the
    # default elsewhere) the grid fills the GPU and the time follows the bytes: about x 2.
    p100 = archsim.load_preset("gpu/p100-16gb")
    split = _with_max_split(p100, 16)

    def t(gpu, m):
        return archsim.estimate(ops.Gemm(m, 8, 500000, dtype="fp32"), gpu).ops[0].latency_s

    assert t(p100, 1024) / t(p100, 512) < 1.15
    assert t(split, 1024) / t(split, 512) > 1.7
    assert t(p100, 512) > 4 * t(split, 512)


def test_limit_never_changes_a_gemm_that_does_not_split():
    # A large square GEMM runs unsplit anyway: the limit leaves it bit-identical.
    p100 = archsim.load_preset("gpu/p100-16gb")
    op = ops.Gemm(4096, 4096, 4096, dtype="fp32")
    a, b = archsim.estimate(op, p100).ops[0], archsim.estimate(op, _with_max_split(p100, 16)).ops[0]
    assert b.extra["split_k"] == 1
    assert a.latency_s == b.latency_s


def test_convolution_backward_weight_still_splits_on_the_p100():
    # The limit describes the GEMM library (cuBLAS): cuDNN's weight-gradient kernels split their NPQ
    # reduction themselves. dW of a 3x3 convolution, 32 -> 64 channels on 128 x 26 x 26 inputs, is a
    # GEMM of (CRS, K, NPQ) = (288, 64, 128 x 24 x 24 = 73728): few output tiles, a long reduction.
    p100 = archsim.load_preset("gpu/p100-16gb")
    conv = ops.Conv2d(128, 32, 64, 26, 26, kernel=(3, 3), dtype="fp32")
    (dw,) = [o for o in conv.backward() if o.pass_ == "backward_weight"]
    a = archsim.estimate(dw, p100).ops[0]
    b = archsim.estimate(dw, _with_max_split(p100, 16)).ops[0]
    assert a.extra["split_k"] > 1
    assert a.latency_s == b.latency_s
