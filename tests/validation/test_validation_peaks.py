"""No GPU case is predicted faster than the hardware its code can use.

For every GPU case at every size set, the predicted FLOP rate on ``gpu/h200-sxm-141gb`` must not exceed
the peak of the unit the kernel can issue to: the Tensor Cores only for the cuBLAS fp16 cases (the
library), the CUDA cores (FP32 / FP64 lanes) for everything numba compiles. Cases whose data exceed L2
must not be predicted above the peak DRAM bandwidth.

Peaks from the preset (hand-checked here):
  FP32 CUDA cores: 132 SMs x 128 lanes x 2 FLOP x 1.98 GHz = 66.9 TFLOP/s
  FP64 CUDA cores: 132 x 64 x 2 x 1.98 GHz = 33.5 TFLOP/s
  FP16 Tensor Cores: 132 x 4096 FLOP/clk x 1.83 GHz = 989.4 TFLOP/s
  DRAM: 4.8 TB/s; L2: 50 MiB (52,428,800 B)
"""

from __future__ import annotations

import functools

import pytest

import archsim
from validation.discover import discover
from validation.report import archsim_predict
from validation.workloads import DTYPE_NAMES

PRESET = "gpu/h200-sxm-141gb"


@functools.cache
def _gpu():
    return archsim.load_preset(PRESET)


def _cases():
    seen = {}
    for sizes in ("tiny", "quick", "full"):
        for case in discover("gpu", sizes, None):
            seen.setdefault(case.name, case)
    return list(seen.values())


CASES = _cases()


def _peaks(gpu) -> dict[str, float]:
    sm, clock, tclock = gpu.sm_count, gpu.clock_hz, gpu.tensor_clock_hz
    return {
        "vector:fp32": sm * gpu.sm.fma_lanes["fp32"] * 2 * clock,
        "vector:fp64": sm * gpu.sm.fma_lanes["fp64"] * 2 * clock,
        "tensor:fp16": sm * gpu.tensor_core.flop_per_cycle_per_sm["fp16"] * tclock,
    }


def test_peaks_hand_computed():
    p = _peaks(_gpu())
    assert p["vector:fp32"] == pytest.approx(132 * 128 * 2 * 1.98e9)  # 66.9e12
    assert p["vector:fp64"] == pytest.approx(132 * 64 * 2 * 1.98e9)  # 33.5e12
    assert p["tensor:fp16"] == pytest.approx(132 * 4096 * 1.83e9)  # 989.4e12
    assert _gpu().dram.bandwidth_bytes_per_s == pytest.approx(4.8e12)


def _unit(case) -> str:
    """The unit the kernel's code can use: Tensor Cores for the library's fp16 GEMM only."""
    dtype = DTYPE_NAMES[case.params["dtype"]] if "dtype" in case.params else "fp32"
    if case.family == "gemm-cublas" and dtype == "fp16":
        return "tensor:fp16"
    return "vector:fp64" if dtype == "fp64" else "vector:fp32"


def test_every_gpu_case_is_covered():
    families = {c.family for c in CASES}
    assert {"conv", "matmul-naive", "matmul-tiled", "gemm-cublas", "peak-compute", "bandwidth"} <= families


def test_numba_kernels_are_not_described_as_library_ops():
    # Library ops (Gemm, Conv2d) would be priced as cuBLAS / cuDNN would run them.
    for case in CASES:
        if case.family in ("conv", "matmul-naive", "matmul-tiled"):
            assert type(case.describe()).__name__ == "Kernel", case.name


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_predicted_rate_within_unit_peak(case):
    gpu = _gpu()
    seconds = archsim_predict(case, gpu)
    peak = _peaks(gpu)[_unit(case)]
    assert case.flop / seconds <= peak, f"{case.name}: {case.flop / seconds / 1e12:.1f} TFLOP/s > {peak / 1e12:.1f}"
    if case.bytes_moved > gpu.l2.size_bytes:
        rate = case.bytes_moved / seconds
        assert rate <= gpu.dram.bandwidth_bytes_per_s, f"{case.name}: {rate / 1e12:.2f} TB/s > DRAM peak"
