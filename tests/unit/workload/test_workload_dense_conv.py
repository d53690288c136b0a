"""Hand-computed FLOP and bytes for Gemm, Gemv, Conv2d and Pool."""

import pytest

from archsim.errors import WorkloadError
from archsim.ops import Conv2d, Gemm, Gemv, Pool, Reduce


def test_gemm_flop_bytes_backward():
    g = Gemm(128, 256, 64, dtype="fp16", batch=2)
    # 2 * batch * m * n * k = 2 * 2 * 128 * 256 * 64
    assert g.flop() == 8_388_608
    assert g.flop_breakdown() == {"matmul": 8_388_608, "vector": 0, "special": 0}
    # A 2x128x64, B 2x64x256, C 2x128x256 fp16: (16384 + 32768 + 65536) * 2 B
    assert g.min_bytes() == 229_376
    dx, dw = g.backward()
    assert dx.flop() + dw.flop() == 2 * g.flop()
    assert (dx.m, dx.n, dx.k) == (128, 64, 256) and (dw.m, dw.n, dw.k) == (64, 256, 128)
    assert {dx.phase, dw.phase} == {"backward"}


def test_linear_layer_params_and_bias():
    fc = Gemm(32, 10, 512, weight=True, bias=True, name="fc")
    assert fc.param_count() == 512 * 10 + 10
    # matmul 2*32*10*512 = 327680; bias adds 32*10 = 320 vector
    assert fc.flop_breakdown() == {"matmul": 327_680, "vector": 320, "special": 0}
    # shared weight 512x10 read once: A 32*512 + W 5120 + b 10 + C 320, fp32
    assert fc.min_bytes() == (16384 + 5120 + 10 + 320) * 4
    ops = fc.backward()
    assert [o.name for o in ops] == ["fc.dX", "fc.dW", "fc.db"]
    assert isinstance(ops[2], Reduce) and ops[2].flop() == 31 * 10  # column sums: (32-1) adds * 10
    assert all(o.param_count() == 0 for o in ops)


def test_gemm_rejects_bad_sizes():
    with pytest.raises(WorkloadError, match="Gemm.k"):
        Gemm(4, 4, 0)
    with pytest.raises(WorkloadError, match="Gemm.batch"):
        Gemm(4, 4, 4, batch=-1)
    with pytest.raises(WorkloadError, match="dtype"):
        Gemm(4, 4, 4, dtype="fp7")


def test_gemv():
    v = Gemv(4096, 1024, "fp16")
    assert v.flop() == 2 * 4096 * 1024
    # matrix 4096*1024 + x 1024 + y 4096, fp16
    assert v.min_bytes() == (4096 * 1024 + 1024 + 4096) * 2
    dx, da = v.backward()
    assert dx.flop() + da.flop() == 2 * v.flop()


def test_conv_3x3_64ch_56x56():
    c = Conv2d(1, 64, 64, 56, 56, kernel=(3, 3), padding=(1, 1))
    assert (c.out_height, c.out_width) == (56, 56)
    assert c.flop() == 2 * 64 * 64 * 9 * 56 * 56  # = 231,211,008
    # x 64*56*56 + w 64*64*9 + y 64*56*56 = 200704 + 36864 + 200704 elements, fp32
    assert c.min_bytes() == (200_704 + 36_864 + 200_704) * 4
    assert c.param_count() == 36_864
    g = c.as_gemm()
    assert (g.m, g.n, g.k, g.batch) == (56 * 56, 64, 576, 1) and g.flop() == c.flop()


def test_conv_backward_passes():
    c = Conv2d(8, 32, 64, 28, 28, kernel=3, stride=2, padding=1, name="c")
    assert (c.out_height, c.out_width) == (14, 14)  # floor((28 + 2 - 2 - 1)/2) + 1
    bd, bw = c.backward()
    assert (bd.pass_, bw.pass_) == ("backward_data", "backward_weight")
    assert bd.flop() == bw.flop() == c.flop()
    # backward-data reads dy and w, writes dx
    assert bd.min_bytes() == (8 * 64 * 14 * 14 + 64 * 32 * 9 + 8 * 32 * 28 * 28) * 4
    for conv in (c, bd, bw):
        assert conv.as_gemm().flop() == conv.flop()
    assert (bw.as_gemm().m, bw.as_gemm().n, bw.as_gemm().k) == (64, 32 * 9, 8 * 14 * 14)


def test_depthwise_conv_is_vector_work():
    dw = Conv2d(1, 32, 32, 112, 112, kernel=3, padding=1, groups=32)
    # 2 * K * P * Q * (C/g) * R * S = 2 * 32 * 112 * 112 * 1 * 9
    assert dw.flop_breakdown() == {"matmul": 0, "vector": 7_225_344, "special": 0}
    assert dw.param_count() == 32 * 9
    assert dw.as_gemm().batch == 32 and dw.as_gemm().flop() == dw.flop()


def test_conv_dilation_and_errors():
    c = Conv2d(1, 1, 1, 10, 10, kernel=3, dilation=2)
    assert c.out_height == 6  # (10 - 2*2 - 1)//1 + 1
    with pytest.raises(WorkloadError, match="groups"):
        Conv2d(1, 6, 4, 8, 8, groups=4)
    with pytest.raises(WorkloadError, match="Conv2d.height"):
        Conv2d(1, 1, 1, 2, 2, kernel=5)
    with pytest.raises(WorkloadError, match="Conv2d.padding"):
        Conv2d(1, 1, 1, 8, 8, padding=-1)


def test_pool():
    p = Pool(1, 64, 112, 112, kernel=3, stride=2, padding=1, mode="max")
    assert (p.out_height, p.out_width) == (56, 56)
    assert p.flop() == 64 * 56 * 56 * 8  # 9 - 1 compares per output
    a = Pool(2, 512, 7, 7, kernel=7, mode="avg")  # global average pooling
    assert a.flop() == 2 * 512 * 49  # 48 adds + 1 multiply per output
    assert a.min_bytes() == (2 * 512 * 49 + 2 * 512) * 4
    (b,) = p.backward()
    assert b.flop() == 64 * 56 * 56 * 9
    with pytest.raises(WorkloadError, match="mode"):
        Pool(1, 1, 4, 4, mode="median")
