"""ONNX import on models built with onnx.helper, a malformed file, and a zoo round trip."""

import math
import warnings

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import archsim.zoo as zoo
from archsim.errors import WorkloadError
from archsim.ops import Attention, Conv2d, Elementwise, Gemm, Pool, Softmax
from archsim.workload import OnnxImportWarning, from_onnx


def _init(name, shape, dtype=np.float32):
    return numpy_helper.from_array(np.zeros(shape, dtype=dtype), name)


def _model(nodes, inputs, outputs, inits, opset=20):
    g = helper.make_graph(nodes, "test", inputs, outputs, inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def _vi(name, shape, t=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, t, shape)


def small_cnn():
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1], name="conv"),
        helper.make_node("BatchNormalization", ["c", "g", "be", "mu", "var"], ["n"], name="bn"),
        helper.make_node("Relu", ["n"], ["r"], name="relu"),
        helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2], name="pool"),
        helper.make_node("GlobalAveragePool", ["p"], ["gap"], name="gap"),
        helper.make_node("Flatten", ["gap"], ["f"], name="flatten"),
        helper.make_node("Gemm", ["f", "fw", "fb"], ["y"], transB=1, name="fc"),
    ]
    inits = [_init("w", (16, 3, 3, 3)), _init("b", (16,)), *[_init(n, (16,)) for n in ("g", "be", "mu", "var")],
             _init("fw", (10, 16)), _init("fb", (10,))]
    return _model(nodes, [_vi("x", ["batch", 3, 32, 32])], [_vi("y", ["batch", 10])], inits)


def test_small_cnn_hand_computed():
    g = from_onnx(small_cnn(), batch=1)
    kinds = [type(op) for op in g.ops]
    assert kinds[:3] == [Conv2d, type(g.ops[1]), Elementwise] and Pool in kinds and kinds[-1] is Gemm
    # conv 2*16*32*32*27 + bias 16*32*32 = 901,120; BN 2*16384 + 4*16 + 16 special = 32,848;
    # relu 16,384; maxpool 16*16*16 outputs * 3 compares = 12,288; GAP 16 * (255 adds + 1 mul) = 4,096;
    # flatten 0; fc 2*10*16 + 10 bias = 330
    assert g.total_flop() == 901_120 + 32_848 + 16_384 + 12_288 + 4_096 + 330
    assert g.param_count() == 16 * 27 + 16 + 2 * 16 + 160 + 10
    rep = g.coverage
    assert rep.node_share_native == 1.0 and rep.flop_share_native == 1.0 and rep.unmapped_op_types == {}
    assert g.predecessors(len(g) - 1) == (len(g) - 2,)
    g8 = from_onnx(small_cnn(), dims={"batch": 8})
    assert g8.ops[0].batch == 8 and g8.batch == 8


def transformer_block(b=2, s=16, e=32, h=4):
    d = e // h
    shape4 = numpy_helper.from_array(np.array([b, s, h, d], dtype=np.int64), "shape4")
    shape3 = numpy_helper.from_array(np.array([b, s, e], dtype=np.int64), "shape3")
    scale = numpy_helper.from_array(np.array(math.sqrt(d), dtype=np.float32), "scale")
    nodes = []
    for p, perm in (("q", [0, 2, 1, 3]), ("k", [0, 2, 3, 1]), ("v", [0, 2, 1, 3])):
        nodes += [
            helper.make_node("MatMul", ["x", f"w{p}"], [f"{p}0"], name=f"{p}_proj"),
            helper.make_node("Add", [f"{p}0", f"b{p}"], [f"{p}1"], name=f"{p}_bias"),
            helper.make_node("Reshape", [f"{p}1", "shape4"], [f"{p}2"], name=f"{p}_reshape"),
            helper.make_node("Transpose", [f"{p}2"], [f"{p}3"], perm=perm, name=f"{p}_transpose"),
        ]
    nodes += [
        helper.make_node("MatMul", ["q3", "k3"], ["s"], name="qk"),
        helper.make_node("Div", ["s", "scale"], ["ss"], name="scale"),
        helper.make_node("Softmax", ["ss"], ["pr"], axis=-1, name="softmax"),
        helper.make_node("MatMul", ["pr", "v3"], ["o"], name="pv"),
        helper.make_node("Transpose", ["o"], ["ot"], perm=[0, 2, 1, 3], name="o_transpose"),
        helper.make_node("Reshape", ["ot", "shape3"], ["o3"], name="o_reshape"),
        helper.make_node("MatMul", ["o3", "wo"], ["a"], name="o_proj"),
        helper.make_node("Add", ["a", "x"], ["r1"], name="residual1"),
        helper.make_node("LayerNormalization", ["r1", "ln_g", "ln_b"], ["l1"], axis=-1, name="ln1"),
        helper.make_node("MatMul", ["l1", "w1"], ["f1"], name="ffn1"),
        helper.make_node("Gelu", ["f1"], ["f2"], name="gelu"),
        helper.make_node("MatMul", ["f2", "w2"], ["f3"], name="ffn2"),
        helper.make_node("Add", ["f3", "l1"], ["y"], name="residual2"),
    ]
    inits = [shape4, shape3, scale, _init("wo", (e, e)), _init("ln_g", (e,)), _init("ln_b", (e,)),
             _init("w1", (e, 4 * e)), _init("w2", (4 * e, e))]
    inits += [_init(f"w{p}", (e, e)) for p in "qkv"] + [_init(f"b{p}", (e,)) for p in "qkv"]
    return _model(nodes, [_vi("x", [b, s, e])], [_vi("y", [b, s, e])], inits)


def test_transformer_block_attention_pattern():
    g = from_onnx(transformer_block())
    att = [op for op in g.ops if isinstance(op, Attention)]
    assert len(att) == 1
    a = att[0]
    assert (a.batch, a.heads, a.seq_q, a.seq_kv, a.head_dim, a.fused) == (2, 4, 16, 16, 8, False)
    assert not any(isinstance(op, Softmax) for op in g.ops)  # absorbed into the attention op
    t, e = 32, 32
    # projections: 4 * 2*t*e*e; FFN 2 * 2*t*e*4e; attention 2 * 2*(2*4)*16*16*8
    matmul = 4 * 2 * t * e * e + 2 * 2 * t * e * 4 * e + 2 * 2 * 8 * 16 * 16 * 8
    assert g.flop_breakdown()["matmul"] == matmul
    assert g.coverage.node_share_native == 1.0
    # 4 projections e*e + 2 FFN weights e*4e + LayerNorm gamma/beta; the bias Adds own no parameters
    assert g.param_count() == 12 * e * e + 2 * e
    # the scale Div is kept as its own elementwise op over the scores
    assert any(isinstance(op, Elementwise) and op.fn == "div" and op.numel == 2 * 4 * 16 * 16 for op in g.ops)


def test_unknown_op_is_imported_with_a_warning():
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"),
             helper.make_node("Hardmax", ["r"], ["y"], name="hm")]
    m = _model(nodes, [_vi("x", [4, 100])], [_vi("y", [4, 100])], [])
    with pytest.warns(OnnxImportWarning, match="Hardmax"):
        g = from_onnx(m)
    assert len(g) == 2 and g.ops[1].fn == "opaque"
    rep = g.coverage
    assert rep.unmapped_op_types == {"Hardmax": 1} and rep.node_share_native == 0.5
    assert rep.flop_share_native == pytest.approx(400 / 800)  # relu 400 FLOP, opaque 1 per element


def test_malformed_inputs(tmp_path):
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"\x08\x07this is not a protobuf\xff\xff")
    with pytest.raises(WorkloadError, match="bad.onnx"):
        from_onnx(bad)
    with pytest.raises(WorkloadError, match="no such file"):
        from_onnx(tmp_path / "missing.onnx")
    dangling = _model([helper.make_node("Relu", ["nope"], ["y"])], [_vi("x", [4])], [_vi("y", [4])], [])
    with pytest.raises(WorkloadError, match="invalid ONNX model"):
        from_onnx(dangling)
    with pytest.raises(WorkloadError, match="ModelProto"):
        from_onnx(42)


def _export(graph):
    """Export a sequential zoo CNN to ONNX with onnx.helper (the tests' own exporter)."""
    nodes, inits = [], []
    cur, rank = "x", 4
    first = graph.ops[0]
    x_shape = list(first.x_spec().shape) if isinstance(first, Conv2d) else [first.m, first.k]
    rank = len(x_shape)
    for i, op in enumerate(graph.ops):
        out = f"t{i}"
        if isinstance(op, Conv2d):
            inits += [_init(f"w{i}", op.w_spec().shape), _init(f"b{i}", (op.out_channels,))]
            nodes.append(helper.make_node("Conv", [cur, f"w{i}", f"b{i}"], [out], kernel_shape=list(op.kernel),
                                          strides=list(op.stride), pads=list(op.padding) * 2))
        elif isinstance(op, Pool):
            nodes.append(helper.make_node("MaxPool" if op.mode == "max" else "AveragePool", [cur], [out],
                                          kernel_shape=list(op.kernel), strides=list(op.stride)))
        elif isinstance(op, Elementwise):
            nodes.append(helper.make_node({"relu": "Relu", "tanh": "Tanh"}[op.fn], [cur], [out]))
        elif isinstance(op, Gemm):
            if rank == 4:
                nodes.append(helper.make_node("Flatten", [cur], [f"flat{i}"]))
                cur, rank = f"flat{i}", 2
            inits += [_init(f"w{i}", (op.k, op.n)), _init(f"b{i}", (op.n,))]
            nodes.append(helper.make_node("Gemm", [cur, f"w{i}", f"b{i}"], [out]))
        elif isinstance(op, Softmax):
            nodes.append(helper.make_node("Softmax", [cur], [out], axis=-1))
        else:
            raise AssertionError(f"exporter: no ONNX node for {op}")
        cur = out
    out_shape = list(graph.ops[-1].outputs()[0].shape)
    return _model(nodes, [_vi("x", x_shape)], [_vi(cur, out_shape)], inits)


@pytest.mark.parametrize("name", ["mnist_cnn", "lenet5", "cifar10_cnn", "mlp"])
def test_zoo_round_trip_gives_the_same_flop(name):
    graph = zoo.get(name, batch=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a round trip must not need any fallback
        back = from_onnx(_export(graph))
    assert back.total_flop() == graph.total_flop()
    assert back.param_count() == graph.param_count()
    assert back.coverage.flop_share_native == 1.0


def test_saved_file_round_trip(tmp_path):
    path = tmp_path / "cnn.onnx"
    onnx.save(small_cnn(), path)
    assert from_onnx(path, batch=1).total_flop() == from_onnx(small_cnn(), batch=1).total_flop()
