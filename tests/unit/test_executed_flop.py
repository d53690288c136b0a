"""Executed vs nominal FLOP: Winograd and Tensor-Core channel padding (hand-computed cases)."""

from __future__ import annotations

import pytest

import archsim
from archsim import ops, zoo


def test_winograd_reports_its_executed_flop():
    # VGG-16 conv3_1 shape, fp32 on a GTX 1080 Ti: the model picks Winograd F(4x4, 3x3) when faster.
    gpu = archsim.load_preset("gpu/gtx-1080-ti")
    op = ops.Conv2d(8, 256, 256, 56, 56, kernel=3, padding=1)
    r = archsim.estimate(op, gpu).ops[0]
    assert r.extra["winograd"] == 1.0
    # Nominal: 2 x 8 x 256 x 56 x 56 x 256 x 9 = 29.6 GFLOP. Executed: the 36 batched GEMMs of
    # 8 x 14 x 14 = 1568 tiles x 256 x 256 (2 x 1568 x 256 x 256 x 36 = 7.40 GFLOP) plus the three
    # transforms' 36 FLOP per transformed element (input 1568 x 256 x 36, filter 256 x 256 x 36, output
    # 1568 x 256 x 36 elements): 0.52 + 0.085 + 0.52 GFLOP.
    assert r.flop_nominal == 2 * 8 * 256 * 56 * 56 * 256 * 9
    gemm = 2 * 1568 * 256 * 256 * 36
    transforms = 36 * (1568 * 256 * 36 + 256 * 256 * 36 + 1568 * 256 * 36)
    assert r.flop == pytest.approx(gemm + transforms)
    # At executed FLOP the op sits under the compute roof; at nominal FLOP it would not.
    assert r.flop / r.latency_s <= gpu.best_peak_flop_per_s("fp32")
    assert r.flop_nominal / r.latency_s > gpu.best_peak_flop_per_s("fp32")


def test_winograd_5x5_runs_f2x2_on_6x6_tiles():
    # DeepBench's N16 C512 14x14 K48 5x5 stride-1 layer, fp32 on a V100 (cuDNN chose WINOGRAD_NONFUSED).
    # F(2x2, 5x5): 14 / 2 = 7 x 7 output tiles per image, 16 x 49 = 784 tiles; 36 batched GEMMs of
    # 784 x 48 x 512 = 2 x 784 x 48 x 512 x 36 = 1.387 GFLOP, plus 36 FLOP per transformed element of the
    # input (784 x 512 x 36), filter (48 x 512 x 36) and output (784 x 48 x 36) transforms = 0.601 GFLOP;
    # nominal 2 x 16 x 14 x 14 x 48 x 512 x 25 = 3.854 GFLOP.
    v100 = archsim.load_preset("gpu/v100-sxm2-16gb")
    r = archsim.estimate(ops.Conv2d(16, 512, 48, 14, 14, kernel=5, padding=2), v100).ops[0]
    assert r.extra["winograd"] == 1.0
    assert r.flop_nominal == 2 * 16 * 14 * 14 * 48 * 512 * 25
    gemm = 2 * 784 * 48 * 512 * 36
    transforms = 36 * (784 * 512 * 36 + 48 * 512 * 36 + 784 * 48 * 36)
    assert r.flop == pytest.approx(gemm + transforms)
    # Stride 2: no Winograd (cuDNN's WINOGRAD_NONFUSED is stride 1 only).
    strided = archsim.estimate(ops.Conv2d(16, 512, 48, 14, 14, kernel=5, padding=2, stride=2), v100).ops[0]
    assert strided.extra.get("winograd") != 1.0


def test_tensor_core_channel_padding_is_executed():
    # C = 3 input channels on a V100 in fp16: padded to 8 for the Tensor Cores, so 8/3 of the MACs run.
    v100 = archsim.load_preset("gpu/v100-sxm2-16gb")
    op = ops.Conv2d(16, 3, 64, 224, 224, kernel=7, stride=2, padding=3, dtype="fp16")
    r = archsim.estimate(op, v100).ops[0]
    assert r.flop == pytest.approx(r.flop_nominal * 8 / 3)


def test_whole_run_not_below_its_flop_floor():
    gpu = archsim.load_preset("gpu/gtx-580")
    run = archsim.estimate(zoo.vgg16(batch=8, dtype="fp32"), gpu)
    assert run.latency_s >= run.flop / gpu.best_peak_flop_per_s("fp32")
    assert run.flop < sum(o.flop_nominal for o in run.ops)  # Winograd layers multiply less
