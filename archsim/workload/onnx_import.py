"""Import an ONNX model as an :class:`~archsim.workload.graph.OpGraph` (needs the ``onnx`` extra).

``from_onnx(path_or_model)`` returns an OpGraph whose ``coverage`` attribute is an
:class:`ImportReport`: how many nodes and what share of the FLOP were mapped to archsim's own ops.

* Shapes come from onnx's own shape inference (``onnx.shape_inference.infer_shapes``, strict mode);
  symbolic dimensions are bound with ``dims={"batch": 8}`` (or ``batch=8`` for every input's first
  symbolic dimension).
* Mapped natively: Conv, Gemm, MatMul, activations, BatchNormalization, LayerNormalization,
  RMSNormalization, Softmax, pooling, Add/Mul/..., reductions, Gather of a weight (an embedding),
  Concat, ONNX ``Attention``, and data movement (Reshape, Transpose, Flatten, Slice, ... as copies).
  The unfused attention pattern ``MatMul(Q, K^T) -> [scale] -> [mask add] -> Softmax -> MatMul(P, V)``
  becomes one :class:`~archsim.workload.ops.Attention` (unfused), with the scale and mask kept as
  elementwise ops, so its FLOP equal the node-by-node mapping.
* Shape and constant computations (Shape, Constant, ...) are folded: counted in the report, no ops.
* Any other node is never dropped: it becomes a memory-bound ``Elementwise(fn="opaque")`` over its
  largest tensor, and a :class:`OnnxImportWarning` names its op type.
* Parameters are those of ops that own weights (Conv, Gemm, MatMul by an initializer, normalisations,
  embeddings); an initializer read by another node (a separate bias ``Add``) is not counted.
* A file that is not a valid ONNX model raises :class:`~archsim.errors.WorkloadError`.
"""

from __future__ import annotations

import math
import os
import warnings
from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from archsim.errors import WorkloadError
from archsim.workload.dtypes import DType, as_int
from archsim.workload.graph import Edge, OpGraph
from archsim.workload.onnx_mapping import FOLDED, MAPPERS, Context, Unmapped
from archsim.workload.ops import Attention, Elementwise, Op

__all__ = ["from_onnx", "ImportReport", "OnnxImportWarning"]


class OnnxImportWarning(UserWarning):
    """An ONNX node was imported approximately (as a memory-bound op)."""


@dataclass(frozen=True)
class ImportReport:
    """Coverage of an ONNX import.

    Attributes:
        nodes_total: nodes in the ONNX graph.
        nodes_native: nodes mapped to archsim ops or folded (shape/constant computations).
        nodes_folded: of those, folded nodes (no ops).
        flop_total, flop_native: FLOP of all imported ops / of natively mapped ones.
        unmapped_op_types: op type -> number of nodes imported as memory-bound fallbacks.
        reasons: op type -> why it was not mapped (first occurrence).
    """

    nodes_total: int
    nodes_native: int
    nodes_folded: int
    flop_total: int
    flop_native: int
    unmapped_op_types: dict[str, int] = field(default_factory=dict)
    reasons: dict[str, str] = field(default_factory=dict)

    @property
    def node_share_native(self) -> float:
        return self.nodes_native / self.nodes_total if self.nodes_total else 1.0

    @property
    def flop_share_native(self) -> float:
        return self.flop_native / self.flop_total if self.flop_total else 1.0


_ONNX_DTYPES = {1: DType.fp32, 2: DType.int8, 3: DType.int8, 10: DType.fp16, 11: DType.fp64, 16: DType.bf16,
                17: DType.fp8_e4m3, 19: DType.fp8_e5m2, 22: DType.int4}


def _one_line(exc: BaseException, limit: int = 400) -> str:
    # onnx's checker and shape inference print node protos over several lines.
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= limit else text[:limit] + " ..."


def _onnx() -> Any:
    try:
        import onnx
    except ImportError as exc:  # pragma: no cover - onnx is installed in the test environment
        raise WorkloadError("from_onnx needs the 'onnx' extra: pip install 'archsim[onnx]'") from exc
    return onnx


def _load(onnx: Any, model: Any) -> Any:
    if isinstance(model, onnx.ModelProto):
        return model
    if isinstance(model, str | os.PathLike):
        try:
            return onnx.load(os.fspath(model))
        except FileNotFoundError as exc:
            raise WorkloadError(f"from_onnx: no such file {os.fspath(model)!r}") from exc
        except Exception as exc:  # protobuf's DecodeError and friends
            raise WorkloadError(f"from_onnx: {os.fspath(model)!r} is not a readable ONNX model "
                                f"({_one_line(exc)})") from exc
    raise WorkloadError(f"from_onnx: expected a path or an onnx.ModelProto, got {type(model).__name__}")


def _bind_dims(onnx: Any, proto: Any, dims: Any, batch: Any) -> Any:
    if not isinstance(dims, Mapping):
        raise WorkloadError(f"from_onnx: dims must be a table {{name: int}}, got {dims!r}")
    # Sizes are ints >= 1: a float (2.7) or a string ("abc") is an error, never truncated.
    values = {str(k): as_int(v, f"from_onnx: dims[{k!r}]", minimum=1) for k, v in dims.items()}
    batch = None if batch is None else as_int(batch, "from_onnx: batch", minimum=1)
    proto = onnx.ModelProto.FromString(proto.SerializeToString())  # never mutate the caller's model
    inits = {i.name for i in proto.graph.initializer}
    symbols: set[str] = set()
    for inp in proto.graph.input:
        if inp.name in inits or not inp.type.HasField("tensor_type"):
            continue
        for pos, d in enumerate(inp.type.tensor_type.shape.dim):
            if d.HasField("dim_param"):
                symbols.add(d.dim_param)
                if d.dim_param in values:
                    d.dim_value = values[d.dim_param]
                elif batch is not None and pos == 0:
                    d.dim_value = batch
    unknown = sorted(set(values) - symbols)
    if unknown:
        raise WorkloadError(f"from_onnx: dims {unknown} name no symbolic dimension of the model's inputs; "
                            f"its symbols: {', '.join(sorted(symbols)) or '(none)'}")
    return proto


def _context(onnx: Any, proto: Any) -> Context:
    g = proto.graph
    shapes: dict[str, tuple[int, ...]] = {}
    dtypes: dict[str, DType] = {}
    for vi in list(g.input) + list(g.value_info) + list(g.output):
        if not vi.type.HasField("tensor_type"):
            continue
        tt = vi.type.tensor_type
        if tt.elem_type in _ONNX_DTYPES and tt.elem_type != 2:  # uint8 is data (images), not arithmetic
            dtypes[vi.name] = _ONNX_DTYPES[tt.elem_type]
        if tt.HasField("shape") and all(d.HasField("dim_value") and d.dim_value > 0 for d in tt.shape.dim):
            shapes[vi.name] = tuple(int(d.dim_value) for d in tt.shape.dim)
    inits = {}
    for t in g.initializer:
        arr = onnx.numpy_helper.to_array(t)
        inits[t.name] = arr
        shapes[t.name] = tuple(int(d) for d in arr.shape)
        if t.data_type in _ONNX_DTYPES and t.data_type != 2:
            dtypes.setdefault(t.name, _ONNX_DTYPES[t.data_type])
    float_inputs = [dtypes[i.name] for i in g.input if i.name in dtypes and i.name not in inits]
    opset = max((o.version for o in proto.opset_import if o.domain in ("", "ai.onnx")), default=13)
    return Context(shapes, dtypes, inits, float_inputs[0] if float_inputs else DType.fp32, opset)


def _attention_patterns(nodes: list[Any], ctx: Context) -> dict[int, tuple[list[int], list[int]]]:
    """Final MatMul index -> (absorbed node indices, kept scale/mask node indices) of each pattern."""
    producer = {o: i for i, n in enumerate(nodes) for o in n.output}
    consumers: dict[str, list[int]] = defaultdict(list)
    for i, n in enumerate(nodes):
        for t in n.input:
            consumers[t].append(i)
    found: dict[int, tuple[list[int], list[int]]] = {}
    for si, s in enumerate(nodes):
        if s.op_type != "Softmax" or len(consumers[s.output[0]]) != 1:
            continue
        m2 = consumers[s.output[0]][0]
        if nodes[m2].op_type != "MatMul" or nodes[m2].input[0] != s.output[0] or nodes[m2].input[1] in ctx.initializers:
            continue
        kept: list[int] = []
        t = s.input[0]
        while t in producer and nodes[producer[t]].op_type in ("Div", "Mul", "Add") and len(consumers[t]) == 1:
            p = nodes[producer[t]]
            kept.append(producer[t])
            out = ctx.shapes.get(p.output[0])
            t = p.input[0] if ctx.shapes.get(p.input[0]) == out else p.input[1]
        if t not in producer or nodes[producer[t]].op_type != "MatMul" or len(consumers[t]) != 1:
            continue
        m1 = producer[t]
        if any(i in ctx.initializers for i in nodes[m1].input):
            continue
        found[m2] = ([m1, *kept, si], list(reversed(kept)))
    return found


def _pattern_attention(nodes: list[Any], m1: int, m2: int, ctx: Context) -> Attention:
    q, kt, v = ctx.shape(nodes[m1].input[0]), ctx.shape(nodes[m1].input[1]), ctx.shape(nodes[m2].input[1])
    if len(q) < 3 or len(q) > 4 or len(kt) != len(q) or len(v) != len(q):
        raise Unmapped("attention pattern with operands that are not 3-d or 4-d")
    sq, d, skv = q[-2], q[-1], kt[-1]
    batch, heads = (q[0], q[1]) if len(q) == 4 else (q[0], 1)
    kv_heads = kt[1] if len(q) == 4 else 1
    if heads % kv_heads:
        raise Unmapped("attention pattern with a head count that does not group")
    return Attention(batch, heads, sq, skv, d, kv_heads=kv_heads, dtype=ctx.dtype_of(nodes[m2]),
                     name=nodes[m2].name or "attention")


def _fallback(node: Any, ctx: Context) -> Op:
    sizes = [math.prod(ctx.shapes[t]) for t in list(node.input) + list(node.output) if t in ctx.shapes]
    if not sizes:
        raise WorkloadError(f"from_onnx: node {node.name or node.op_type!r} ({node.op_type}) has no tensor of known "
                            "shape; bind symbolic dimensions with dims={...}")
    return Elementwise(max(max(sizes), 1), "opaque", ctx.dtype_of(node), name=node.name or node.op_type)


def from_onnx(path_or_model: Any, *, dims: dict[str, int] | None = None, batch: int | None = None,
              name: str | None = None) -> OpGraph:
    """Import an ONNX model (a path or an ``onnx.ModelProto``) as an OpGraph with ``.coverage`` set."""
    onnx = _onnx()
    proto = _bind_dims(onnx, _load(onnx, path_or_model), dims or {}, batch)
    try:
        onnx.checker.check_model(proto)
        proto = onnx.shape_inference.infer_shapes(proto, check_type=True, strict_mode=True, data_prop=True)
    except Exception as exc:  # onnx raises ValidationError, InferenceError and others
        raise WorkloadError(f"from_onnx: invalid ONNX model: {_one_line(exc)}") from exc
    ctx = _context(onnx, proto)
    nodes = list(proto.graph.node)
    for idx, node in enumerate(nodes):
        if not node.name:  # exporters name their nodes; an unnamed one gets its type and position, so no two
            node.name = f"{node.op_type}_{idx}"  # ops share a name ("gemm", "gemm") in tables and figures
    patterns = _attention_patterns(nodes, ctx)
    absorbed = {i for members, _ in patterns.values() for i in members}
    ops: list[Op] = []
    native: list[bool] = []
    edges: list[Edge] = []
    producer: dict[str, int] = {}
    unmapped: Counter[str] = Counter()
    reasons: dict[str, str] = {}
    folded = 0
    for idx, node in enumerate(nodes):
        if idx in absorbed:
            continue
        group: list[Op]
        is_native = True
        inputs = list(node.input)
        if node.op_type in FOLDED and node.domain in ("", "ai.onnx"):
            folded += 1
            continue
        try:
            if idx in patterns:
                members, kept = patterns[idx]
                group = [op for k in kept for op in MAPPERS[nodes[k].op_type](nodes[k], ctx)]
                group.append(_pattern_attention(nodes, members[0], idx, ctx))
                inputs = [t for k in [*members, idx] for t in nodes[k].input]
            elif node.domain in ("", "ai.onnx") and node.op_type in MAPPERS:
                group = MAPPERS[node.op_type](node, ctx)
            else:
                raise Unmapped(f"no archsim mapping for {node.domain + '.' if node.domain else ''}{node.op_type}")
        except (ValueError, IndexError, KeyError, TypeError, ZeroDivisionError, OverflowError) as exc:
            # A node the checker accepts but whose attributes make no sense here (a zero stride, a
            # missing input): report it by name instead of failing somewhere inside a mapper.
            if isinstance(exc, WorkloadError):
                raise
            raise WorkloadError(f"from_onnx: node {node.name or idx!r} ({node.op_type}): cannot be mapped: "
                                f"{type(exc).__name__}: {exc}") from None
        except Unmapped as why:
            group, is_native = [_fallback(node, ctx)], False
            unmapped[node.op_type] += 1
            reasons.setdefault(node.op_type, str(why))
        first = len(ops)
        for k, op in enumerate(group):
            ops.append(op)
            native.append(is_native)
            if k:
                edges.append(Edge(first + k - 1, first + k))
        srcs = sorted({producer[t] for t in inputs if t in producer})
        edges.extend(Edge(s, first) for s in srcs)
        for o in node.output:
            producer[o] = len(ops) - 1
    for op_type, count in unmapped.items():
        warnings.warn(f"from_onnx: {count} node(s) of op type {op_type!r} are not modelled ({reasons[op_type]}); "
                      "imported as memory-bound elementwise ops", OnnxImportWarning, stacklevel=2)
    flops = [op.flop() for op in ops]
    report = ImportReport(
        nodes_total=len(nodes),
        nodes_native=len(nodes) - sum(unmapped.values()),
        nodes_folded=folded,
        flop_total=sum(flops),
        flop_native=sum(f for f, n in zip(flops, native, strict=True) if n),
        unmapped_op_types=dict(unmapped),
        reasons=reasons,
    )
    first_input = next((ctx.shapes[i.name] for i in proto.graph.input if i.name in ctx.shapes
                        and i.name not in ctx.initializers), (1,))
    return OpGraph(name or proto.graph.name or "onnx", tuple(ops), tuple(edges), batch=first_input[0],
                   dtype=ctx.default_dtype, coverage=report)
