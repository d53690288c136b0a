"""The P100 preset's CUDA-core efficiency: the fastest fp32 GEMM of DeepBench's P100 workbook over peak."""

from __future__ import annotations

import pytest

import archsim
from archsim import ops


def test_p100_vector_efficiency_is_the_workbooks_fastest_sgemm_over_peak():
    # DeepBench P100, fp32 7680 x 48000 x 2560 NN in 206.884 ms: 2 x 7680 x 48000 x 2560 FLOP
    # / 206.884 ms = 9.123 TFLOP/s; peak 56 SMs x 128 FLOP/cycle x 1.48 GHz = 10.609 TFLOP/s; 0.860.
    gpu = archsim.load_preset("gpu/p100-16gb")
    assert 2 * 7680 * 48000 * 2560 / 206.884e-3 / (56 * 128 * 1.48e9) == pytest.approx(0.86, abs=0.001)
    assert gpu.efficiency.vector_efficiency == 0.86
    assert archsim.load_preset("gpu/p100-pcie-16gb").efficiency.vector_efficiency == 0.86


def test_one_wave_of_full_tiles_runs_at_the_efficiency():
    # fp32 1792 x 1024 x 4096 on the P100: 256 x 128 tiles, 7 x 8 = 56 blocks, one per SM, one wave
    # (below the 300 W limit: 1480 MHz). Each block computes 2 x 256 x 128 x 4096 = 268,435,456 FLOP
    # at 128 FLOP/cycle x 1.48 GHz x 0.86 = 162.92 GFLOP/s: 1.6477 ms of CUDA-core time.
    r = archsim.estimate(ops.Gemm(1792, 1024, 4096, dtype="fp32"), archsim.load_preset("gpu/p100-16gb")).ops[0]
    assert (r.extra["tile_m"], r.extra["tile_n"], r.extra["blocks"]) == (256, 128, 56)
    assert r.extra["clock_hz"] == pytest.approx(1.48e9)
    assert r.bound == "compute:vector"
    assert r.time_by_unit_s["compute:vector"] == pytest.approx(268_435_456 / (128 * 1.48e9 * 0.86), rel=1e-6)
    assert r.time_by_unit_s["compute:vector"] == pytest.approx(1.6477e-3, rel=1e-4)
