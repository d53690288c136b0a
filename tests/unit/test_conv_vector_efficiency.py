"""``efficiency.conv_vector_efficiency``: the CUDA-core efficiency of the convolution library's
implicit-GEMM kernels.

An implicit GEMM computes the im2col address of every input element it gathers with integer
instructions. A Pascal SM issues them on its FP32 cores, between the FFMAs; Volta and later have
INT32 cores of their own (NVIDIA Volta Tuning Guide 4.1.1). So the P100 preset's convolutions run at
0.76 of the CUDA-core peak (its DeepBench maximum) where its cuBLAS GEMMs reach 0.86, and a preset
that leaves the field unset runs its convolutions at ``vector_efficiency``.
"""

from __future__ import annotations

import pytest

import archsim
from archsim import ops
from archsim.errors import SchemaError


def _with(gpu, **fields):
    return gpu.model_copy(update={"efficiency": gpu.efficiency.model_copy(update=fields)})


# A compute-bound forward convolution that Winograd does not apply to (stride 2): implicit GEMM
# M = 32 x 28 x 28 = 25088, N = 256, K = 256 x 9 = 2304.
CONV = ops.Conv2d(32, 256, 256, 56, 56, kernel=(3, 3), stride=(2, 2), padding=(1, 1), dtype="fp32")


def test_presets():
    assert archsim.load_preset("gpu/p100-16gb").efficiency.conv_vector_efficiency == 0.76
    assert archsim.load_preset("gpu/p100-pcie-16gb").efficiency.conv_vector_efficiency == 0.76
    assert archsim.load_preset("gpu/v100-sxm2-16gb").efficiency.conv_vector_efficiency is None
    assert archsim.load_preset("gpu/t4").efficiency.conv_vector_efficiency is None


def test_rejects_a_fraction_above_one():
    eff = archsim.load_preset("gpu/p100-16gb").efficiency
    with pytest.raises(SchemaError, match="conv_vector_efficiency"):
        type(eff).model_validate({**eff.model_dump(), "conv_vector_efficiency": 1.2})


def test_unset_is_vector_efficiency():
    # None and an explicit vector_efficiency (0.86 on the P100) give the same floats.
    p100 = archsim.load_preset("gpu/p100-16gb")
    unset = archsim.estimate(CONV, _with(p100, conv_vector_efficiency=None)).ops[0]
    same = archsim.estimate(CONV, _with(p100, conv_vector_efficiency=0.86)).ops[0]
    assert unset.latency_s == same.latency_s
    assert unset.time_by_unit_s == same.time_by_unit_s


def test_compute_time_scales_with_the_fraction():
    # The same tile either way (the compute term of every candidate scales alike and dominates):
    # compute time = FLOP of the tiles the busiest SM runs / (128 FLOP/cycle x 1.48 GHz x efficiency),
    # so 0.86 / 0.76 = 1.1316 longer at 0.76.
    p100 = archsim.load_preset("gpu/p100-16gb")
    slow = archsim.estimate(CONV, p100).ops[0]
    fast = archsim.estimate(CONV, _with(p100, conv_vector_efficiency=None)).ops[0]
    assert slow.bound == fast.bound == "compute:vector"
    assert (slow.extra["tile_m"], slow.extra["tile_n"]) == (fast.extra["tile_m"], fast.extra["tile_n"])
    ratio = slow.time_by_unit_s["compute:vector"] / fast.time_by_unit_s["compute:vector"]
    assert ratio == pytest.approx(0.86 / 0.76, rel=1e-9)
    # Hand-computed: 128 x 128 tiles, 2 per SM: 196 x 2 = 392 blocks on 56 x 2 = 112 slots, three
    # full waves and a tail of 56 blocks, one per SM, so the busiest SM runs 3 x 2 + 1 = 7 blocks of
    # 2 x 128 x 128 x 2304 = 75,497,472 FLOP at 128 FLOP/cycle x 1.48 GHz x 0.76 = 143.97 GFLOP/s:
    # 7 x 75,497,472 / 143.97e9 = 3.671 ms.
    assert (slow.extra["tile_m"], slow.extra["tile_n"], slow.extra["blocks"]) == (128, 128, 392)
    assert slow.extra["blocks_per_sm"] == 2
    expected = 7 * 2 * 128 * 128 * 2304 / (128 * 1.48e9 * 0.76)
    assert slow.time_by_unit_s["compute:vector"] == pytest.approx(expected, rel=1e-9)
    assert expected == pytest.approx(3.671e-3, rel=1e-4)


def test_gemm_library_keeps_vector_efficiency():
    # A cuBLAS GEMM of the convolution's implicit shape is untouched by the field.
    p100 = archsim.load_preset("gpu/p100-16gb")
    gemm = ops.Gemm(25088, 256, 2304, dtype="fp32")
    a = archsim.estimate(gemm, p100).ops[0]
    b = archsim.estimate(gemm, _with(p100, conv_vector_efficiency=None)).ops[0]
    assert a.latency_s == b.latency_s


def test_weight_gradient_uses_it_backward_data_does_not():
    # The weight-gradient pass runs the convolution library's implicit GEMM (an im2col operand);
    # backward data is priced as a GEMM-library product dY W^T followed by col2im, so it keeps
    # vector_efficiency.
    p100 = archsim.load_preset("gpu/p100-16gb")
    times = {}
    for op in CONV.backward():
        slow = archsim.estimate(op, p100).ops[0]
        fast = archsim.estimate(op, _with(p100, conv_vector_efficiency=None)).ops[0]
        times[op.pass_] = (slow.latency_s, fast.latency_s)
    assert times["backward_weight"][0] > times["backward_weight"][1]
    assert times["backward_data"][0] == times["backward_data"][1]


def test_tensor_core_convolutions_keep_tensor_efficiency():
    # On a V100, fp16 convolutions run on the Tensor Cores: a CUDA-core fraction does not touch them.
    v100 = archsim.load_preset("gpu/v100-sxm2-16gb")
    op = ops.Conv2d(32, 256, 256, 56, 56, kernel=(3, 3), stride=(2, 2), padding=(1, 1), dtype="fp16")
    a = archsim.estimate(op, v100).ops[0]
    b = archsim.estimate(op, _with(v100, conv_vector_efficiency=0.5)).ops[0]
    assert a.latency_s == b.latency_s


def test_graph_path_matches_single_ops():
    # The stacked path of a whole graph prices each convolution as estimating it alone does.
    p100 = archsim.load_preset("gpu/p100-16gb")
    graph = archsim.zoo.resnet18(batch=8, dtype="fp32")
    whole = archsim.estimate(graph, p100)
    convs = [o for o in graph.ops if o.kind == "conv2d"]
    assert convs
    by_name = {r.name: r for r in whole.ops}
    for op in convs[:4]:
        alone = archsim.estimate(op, p100).ops[0]
        assert by_name[op.label].latency_s == pytest.approx(alone.latency_s, rel=1e-12)
