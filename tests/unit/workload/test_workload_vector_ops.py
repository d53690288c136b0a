"""Hand-computed costs of elementwise, reduction, softmax and normalisation ops."""

import pytest

from archsim.errors import WorkloadError
from archsim.ops import ELEMENTWISE_COSTS, BatchNorm, Elementwise, LayerNorm, Reduce, Softmax


def test_relu_and_gelu_costs():
    r = Elementwise((4, 1000), "relu")
    assert r.flop() == 4000 and r.min_bytes() == 2 * 4000 * 4
    g = Elementwise(1000, "gelu", "fp16")
    assert g.flop_breakdown() == {"matmul": 0, "vector": 8000, "special": 1000}
    (gg,) = g.backward()
    assert gg.fn == "gelu_grad" and gg.min_bytes() == 3 * 1000 * 2  # reads dy, x; writes dx


def test_exp_counts_one_multiply_and_one_special():
    assert Elementwise(10, "exp").flop_breakdown() == {"matmul": 0, "vector": 10, "special": 10}


def test_binary_broadcast_bias_add():
    b = Elementwise((32, 128), "bias_add", operand_shapes=((32, 128), (128,)))
    assert b.n_inputs == 2 and b.flop() == 4096
    assert b.min_bytes() == (4096 + 128 + 4096) * 4
    (red,) = b.backward()  # dx passes through; db sums dy over the batch axis
    assert isinstance(red, Reduce) and red.axes == (0,) and red.out_shape == (128,)


def test_mul_backward_and_dropout_mask():
    assert len(Elementwise(8, "mul").backward()) == 2
    d = Elementwise(100, "dropout", "fp16")
    assert d.min_bytes() == 100 * 2 + 100 * 2 + 100  # x, y, 1-byte mask
    (dg,) = d.backward()
    assert dg.min_bytes() == 100 * 2 + 100 + 100 * 2
    assert Elementwise(8, "residual_add").backward() == ()


def test_elementwise_errors():
    with pytest.raises(WorkloadError, match="Elementwise.fn.*relu"):
        Elementwise(8, "frobnicate")
    with pytest.raises(WorkloadError, match="broadcast"):
        Elementwise((4, 5), "add", operand_shapes=((4, 5), (3,)))
    assert all(c.n_inputs >= 1 for c in ELEMENTWISE_COSTS.values())


def test_reduce():
    r = Reduce((8, 100), axes=(1,), op="mean")
    assert r.out_shape == (8,) and r.flop() == 8 * 99 + 8  # 99 adds per row + 1 multiply
    assert Reduce((8, 100), axes=(0, 1), op="max").flop() == 799


def test_softmax_costs():
    s = Softmax((2, 10))
    # per row L=10: vector 5L-2 = 48, special L+1 = 11
    assert s.flop_breakdown() == {"matmul": 0, "vector": 96, "special": 22}
    (b,) = s.backward()
    assert b.flop() == 2 * (4 * 10 - 1) and b.min_bytes() == 3 * 20 * 4


def test_layernorm_and_rmsnorm():
    ln = LayerNorm((4, 768))
    assert ln.flop_breakdown() == {"matmul": 0, "vector": 4 * (7 * 768 + 1), "special": 4}
    assert ln.param_count() == 1536
    assert ln.min_bytes() == (2 * 4 * 768 + 1536) * 4
    rms = LayerNorm((4, 768), rms=True)
    assert rms.param_count() == 768 and rms.flop() == 4 * (4 * 768 + 1) + 4
    (b,) = ln.backward()
    assert b.flop() == 4 * (13 * 768 + 2) and b.param_count() == 0
    with pytest.raises(WorkloadError, match="norm_size"):
        LayerNorm((4, 10), norm_size=3)


def test_batchnorm():
    bn = BatchNorm(2, 64, 56, 56)
    n = 2 * 64 * 56 * 56
    assert bn.flop_breakdown() == {"matmul": 0, "vector": 2 * n + 4 * 64, "special": 64}
    assert bn.param_count() == 128
    assert bn.min_bytes() == (2 * n + 4 * 64) * 4
    train = BatchNorm(2, 64, 56, 56, batch_stats=True)
    assert train.flop() == 6 * n + 6 * 64 + 64
    (b,) = bn.backward()
    assert b.flop() == 9 * n
