"""ONNX node -> archsim ops: the per-operator mapping used by :mod:`archsim.workload.onnx_import`.

Each mapper takes a node and the import context (inferred shapes, initializers) and returns the ops
it becomes. A mapper raises :class:`Unmapped` when it cannot express a node (e.g. a 3-D convolution);
the importer then falls back to a memory-bound op and warns.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from archsim.workload.dtypes import DType
from archsim.workload.ops import (
    Attention,
    BatchNorm,
    Concat,
    Conv2d,
    Copy,
    Elementwise,
    Embedding,
    Gemm,
    LayerNorm,
    Op,
    Pool,
    Reduce,
    Softmax,
)

__all__ = ["Unmapped", "Context", "MAPPERS", "FOLDED"]


class Unmapped(Exception):  # noqa: N818 - a control-flow signal inside the importer, never raised to users
    """This node cannot be expressed with archsim's ops."""


# Nodes that compute shapes or constants: runtimes fold them; they move no tensor data.
FOLDED = frozenset({"Constant", "Shape", "Size", "ConstantOfShape", "Range", "NonZero"})

_UNARY = {"Relu": "relu", "Sigmoid": "sigmoid", "Tanh": "tanh", "Exp": "exp", "Log": "log", "Sqrt": "sqrt",
          "Reciprocal": "reciprocal", "Neg": "neg", "Abs": "abs", "Erf": "erf", "Clip": "clip",
          "LeakyRelu": "leaky_relu", "Identity": "identity", "Cast": "cast", "Dropout": "identity"}
_BINARY = {"Add": "add", "Sub": "sub", "Mul": "mul", "Div": "div", "Pow": "pow", "Max": "max", "Min": "min"}
_MOVEMENT = frozenset({"Reshape", "Transpose", "Flatten", "Squeeze", "Unsqueeze", "Split", "Slice", "Expand",
                       "Tile", "Pad", "DepthToSpace", "SpaceToDepth"})
_REDUCE = {"ReduceSum": "sum", "ReduceMean": "mean", "ReduceMax": "max", "ReduceMin": "min"}


@dataclass
class Context:
    """What mappers may read: tensor shapes and types, initializer names and values, default dtype."""

    shapes: dict[str, tuple[int, ...]]
    dtypes: dict[str, DType]
    initializers: dict[str, Any]  # name -> numpy array
    default_dtype: DType
    opset: int = 13

    def shape(self, name: str) -> tuple[int, ...]:
        if name not in self.shapes:
            raise Unmapped(f"no inferred shape for tensor {name!r}")
        return self.shapes[name]

    def dtype_of(self, node: Any) -> DType:
        for name in list(node.output) + list(node.input):
            if name in self.dtypes:
                return self.dtypes[name]
        return self.default_dtype


def attrs(node: Any) -> dict[str, Any]:
    import onnx

    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def _flat(shape: tuple[int, ...]) -> tuple[int, ...]:
    return shape if shape else (1,)


def _conv(node: Any, ctx: Context) -> list[Op]:
    x, w = ctx.shape(node.input[0]), ctx.shape(node.input[1])
    if len(x) != 4:
        raise Unmapped(f"Conv on a {len(x)}-d input (only 2-D convolutions are modelled)")
    a = attrs(node)
    kernel = tuple(a.get("kernel_shape", w[2:]))
    strides = tuple(a.get("strides", (1, 1)))
    dil = tuple(a.get("dilations", (1, 1)))
    pads = _pads(a, x[2:], kernel, strides, dil, ctx.shape(node.output[0])[2:])
    bias = len(node.input) > 2 and bool(node.input[2])
    return [Conv2d(x[0], x[1], w[0], x[2], x[3], kernel=kernel, stride=strides, padding=pads, dilation=dil,
                   groups=int(a.get("group", 1)), dtype=ctx.dtype_of(node), bias=bias, name=node.name)]


def _pads(a: dict[str, Any], size: tuple[int, ...], kernel: tuple[int, ...], strides: tuple[int, ...],
          dil: tuple[int, ...], out: tuple[int, ...]) -> tuple[int, int]:
    """Symmetric padding per spatial dim: begin+end halved (an odd total loses one row, documented)."""
    auto = a.get("auto_pad", b"NOTSET")
    auto = auto.decode() if isinstance(auto, bytes) else auto
    if auto in ("SAME_UPPER", "SAME_LOWER"):
        totals = [max((o - 1) * s + d * (k - 1) + 1 - n, 0) for o, s, d, k, n in zip(out, strides, dil, kernel, size,
                                                                                       strict=True)]
        return (totals[0] // 2, totals[1] // 2)
    pads = tuple(a.get("pads", (0, 0, 0, 0)))
    return ((pads[0] + pads[2]) // 2, (pads[1] + pads[3]) // 2)


def _gemm(node: Any, ctx: Context) -> list[Op]:
    a_shape, b_shape = ctx.shape(node.input[0]), ctx.shape(node.input[1])
    at = attrs(node)
    ta, tb = bool(at.get("transA", 0)), bool(at.get("transB", 0))
    m, k = (a_shape[1], a_shape[0]) if ta else a_shape
    n = b_shape[0] if tb else b_shape[1]
    bias = len(node.input) > 2 and bool(node.input[2])
    return [Gemm(m, n, k, ctx.dtype_of(node), trans_a=ta, trans_b=tb, weight=node.input[1] in ctx.initializers,
                 bias=bias, name=node.name)]


def _matmul(node: Any, ctx: Context) -> list[Op]:
    a_shape, b_shape = ctx.shape(node.input[0]), ctx.shape(node.input[1])
    if len(a_shape) < 2 or len(b_shape) < 2:
        raise Unmapped("MatMul with a 1-d operand")
    m, k, n = a_shape[-2], a_shape[-1], b_shape[-1]
    dt = ctx.dtype_of(node)
    if node.input[1] in ctx.initializers and len(b_shape) == 2:  # activations x weight: one GEMM over all rows
        return [Gemm(math.prod(a_shape[:-1]), n, k, dt, weight=True, name=node.name)]
    out = ctx.shape(node.output[0])
    return [Gemm(m, n, k, dt, batch=math.prod(out[:-2]) or 1, name=node.name)]


def _unary(node: Any, ctx: Context) -> list[Op]:
    fn = _UNARY[node.op_type]
    return [Elementwise(_flat(ctx.shape(node.output[0])), fn, ctx.dtype_of(node), name=node.name)]


def _gelu(node: Any, ctx: Context) -> list[Op]:
    approx = attrs(node).get("approximate", b"none")
    fn = "gelu" if (approx.decode() if isinstance(approx, bytes) else approx) == "tanh" else "gelu_erf"
    return [Elementwise(_flat(ctx.shape(node.output[0])), fn, ctx.dtype_of(node), name=node.name)]


def _binary(node: Any, ctx: Context) -> list[Op]:
    if len(node.input) != 2:
        raise Unmapped(f"{node.op_type} with {len(node.input)} inputs")
    out = _flat(ctx.shape(node.output[0]))
    shapes = tuple(_flat(ctx.shape(i)) for i in node.input)
    operand_shapes = None if all(s == out for s in shapes) else shapes
    return [Elementwise(out, _BINARY[node.op_type], ctx.dtype_of(node), operand_shapes=operand_shapes,
                        name=node.name)]


def _where(node: Any, ctx: Context) -> list[Op]:
    out = _flat(ctx.shape(node.output[0]))
    shapes = tuple(_flat(ctx.shape(i)) for i in node.input)
    return [Elementwise(out, "where", ctx.dtype_of(node), operand_shapes=shapes, name=node.name)]


def _batchnorm(node: Any, ctx: Context) -> list[Op]:
    x = ctx.shape(node.input[0])
    spatial = x[2:] + (1, 1)
    if len(x) > 4:
        raise Unmapped("BatchNormalization on a 5-d input")
    return [BatchNorm(x[0], x[1], spatial[0], spatial[1], ctx.dtype_of(node), name=node.name)]


def _layernorm(node: Any, ctx: Context, rms: bool = False) -> list[Op]:
    x = ctx.shape(node.input[0])
    axis = int(attrs(node).get("axis", -1)) % len(x)
    affine = len(node.input) > 1 and bool(node.input[1])
    return [LayerNorm(x, ctx.dtype_of(node), norm_size=math.prod(x[axis:]), affine=affine, rms=rms, name=node.name)]


def _softmax(node: Any, ctx: Context) -> list[Op]:
    x = _flat(ctx.shape(node.input[0]))
    # Before opset 13 Softmax flattens the input to 2-D at ``axis`` (default 1); from 13 on it is per axis.
    old = ctx.opset < 13
    axis = int(attrs(node).get("axis", 1 if old else -1)) % len(x)
    length = math.prod(x[axis:]) if old else x[axis]
    return [Softmax((math.prod(x) // length, length), ctx.dtype_of(node), name=node.name)]


def _pool(node: Any, ctx: Context) -> list[Op]:
    x = ctx.shape(node.input[0])
    if len(x) != 4:
        raise Unmapped(f"{node.op_type} on a {len(x)}-d input")
    mode = "max" if "Max" in node.op_type else "avg"
    if node.op_type.startswith("Global"):
        return [Pool(x[0], x[1], x[2], x[3], kernel=(x[2], x[3]), mode=mode, dtype=ctx.dtype_of(node),
                     name=node.name)]
    a = attrs(node)
    kernel = tuple(a["kernel_shape"])
    strides = tuple(a.get("strides", (1, 1)))
    pads = _pads(a, x[2:], kernel, strides, (1, 1), ctx.shape(node.output[0])[2:])
    return [Pool(x[0], x[1], x[2], x[3], kernel=kernel, stride=strides, padding=pads, mode=mode,
                 dtype=ctx.dtype_of(node), name=node.name)]


def _movement(node: Any, ctx: Context) -> list[Op]:
    return [Copy(_flat(ctx.shape(o)), ctx.dtype_of(node), name=node.name if i == 0 else f"{node.name}.{i}")
            for i, o in enumerate(node.output) if o]


def _concat(node: Any, ctx: Context) -> list[Op]:
    shapes = tuple(_flat(ctx.shape(i)) for i in node.input)
    return [Concat(shapes, axis=int(attrs(node).get("axis", 0)), dtype=ctx.dtype_of(node), name=node.name)]


def _gather(node: Any, ctx: Context) -> list[Op]:
    data = ctx.shape(node.input[0])
    if node.input[0] in ctx.initializers and len(data) == 2 and int(attrs(node).get("axis", 0)) == 0:
        lookups = math.prod(_flat(ctx.shape(node.input[1])))
        return [Embedding(data[0], data[1], lookups, ctx.dtype_of(node), name=node.name)]
    return _movement(node, ctx)


def _reduce(node: Any, ctx: Context) -> list[Op]:
    x = _flat(ctx.shape(node.input[0]))
    a = attrs(node)
    axes = a.get("axes")
    if axes is None and len(node.input) > 1 and node.input[1]:
        if node.input[1] not in ctx.initializers:
            raise Unmapped("reduction axes computed at run time")
        axes = [int(v) for v in ctx.initializers[node.input[1]].reshape(-1)]
    axes = tuple(axes) if axes else tuple(range(len(x)))
    return [Reduce(x, axes=axes, op=_REDUCE[node.op_type], dtype=ctx.dtype_of(node), name=node.name)]


def _attention(node: Any, ctx: Context) -> list[Op]:
    """The ONNX ``Attention`` operator (opset 23): Q, K, V of (B, H, S, D), or (B, S, H*D) with head attrs."""
    q, k = ctx.shape(node.input[0]), ctx.shape(node.input[1])
    a = attrs(node)
    if len(q) == 4:
        b, h, sq, d = q
        kvh, skv = k[1], k[2]
    elif len(q) == 3 and "q_num_heads" in a:
        h, kvh = int(a["q_num_heads"]), int(a.get("kv_num_heads", a["q_num_heads"]))
        b, sq, d = q[0], q[1], q[2] // h
        skv = k[1]
    else:
        raise Unmapped("Attention without 4-d inputs or head attributes")
    return [Attention(b, h, sq, skv, d, kv_heads=kvh, causal=bool(a.get("is_causal", 0)), dtype=ctx.dtype_of(node),
                      name=node.name)]


MAPPERS: dict[str, Callable[[Any, Context], list[Op]]] = {
    "Conv": _conv,
    "Gemm": _gemm,
    "MatMul": _matmul,
    "Gelu": _gelu,
    "Where": _where,
    "BatchNormalization": _batchnorm,
    "LayerNormalization": _layernorm,
    "RMSNormalization": lambda n, c: _layernorm(n, c, rms=True),
    "SimplifiedLayerNormalization": lambda n, c: _layernorm(n, c, rms=True),
    "Softmax": _softmax,
    "MaxPool": _pool,
    "AveragePool": _pool,
    "GlobalAveragePool": _pool,
    "GlobalMaxPool": _pool,
    "Concat": _concat,
    "Gather": _gather,
    "Attention": _attention,
    **{k: _unary for k in _UNARY},
    **{k: _binary for k in _BINARY},
    **{k: _movement for k in _MOVEMENT},
    **{k: _reduce for k in _REDUCE},
}

