"""Operator graphs: a DAG of ops joined by tensors, a builder, and the training-step transformation.

An :class:`OpGraph` keeps its ops in a topological order (every edge goes from a lower to a higher
index), so engines walk ``graph.ops`` front to back. An :class:`Edge` carries the tensor that flows
(``None`` for a pure dependency, as between backward ops) and ``parts`` when the tensor is one of
``parts`` equal slices of the producer's output (e.g. Q, K, V out of one fused projection).
"Shapes agree" means element counts agree: a reshape or flatten between ops is a free view.

Training (:func:`training_step`): for each forward op, in reverse order, its :meth:`Op.backward` ops;
then the optimizer update. For matrix products the backward pass is two products of the forward's
size (data gradient and weight gradient, see :class:`~archsim.workload.ops.Gemm` and
:class:`~archsim.workload.ops.Conv2d`), so a training step costs about **3x** the forward FLOP (the
"6N FLOP per token" rule of Kaplan et al., "Scaling Laws for Neural Language Models", 2020, sec. 2.1,
is the same 2N forward + 4N backward). The data gradient of a layer fed only by graph inputs (the
first convolution of an image model, conv1.dX) is left out, as frameworks skip it (nothing consumes
it; for ResNet-50 it was ~3% of the forward FLOP). The seed gradient of the loss is not modelled.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from archsim.errors import WorkloadError
from archsim.workload.dtypes import DType, TensorSpec
from archsim.workload.ops import Elementwise, Op, OptimizerStep
from archsim.workload.ops.optimizer import OPTIMIZERS

__all__ = ["Edge", "OpGraph", "GraphBuilder", "Value", "training_step"]


@dataclass(frozen=True)
class Edge:
    """``src`` must run before ``dst``; ``tensor`` (one of ``parts`` equal slices of an output of
    ``src``) is an input of ``dst``; ``tensor=None`` is a dependency only."""

    src: int
    dst: int
    tensor: TensorSpec | None = None
    parts: int = 1


@dataclass(frozen=True)
class OpGraph:
    """A DAG of ops in topological order.

    Attributes:
        name: model name.
        ops: the ops, each edge going from a lower to a higher index.
        edges: data and dependency edges.
        inputs: the graph's external input tensors.
        batch: samples per step (informational; the ops already carry their sizes).
        dtype: the model's element type.
        training: the graph contains backward and update ops.
        coverage: for an imported graph, the importer's report (see ``archsim.workload.from_onnx``).
    """

    name: str
    ops: tuple[Op, ...]
    edges: tuple[Edge, ...] = ()
    inputs: tuple[TensorSpec, ...] = ()
    batch: int = 1
    dtype: DType = DType.fp32
    training: bool = False
    coverage: Any = field(default=None, compare=False, repr=False)
    _preds: tuple[tuple[int, ...], ...] = field(default=(), repr=False, compare=False)
    _succs: tuple[tuple[int, ...], ...] = field(default=(), repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "ops", tuple(self.ops))
        object.__setattr__(self, "edges", tuple(self.edges))
        object.__setattr__(self, "dtype", DType.parse(self.dtype, "OpGraph.dtype"))
        n = len(self.ops)
        for i, op in enumerate(self.ops):
            if not isinstance(op, Op):
                raise WorkloadError(f"OpGraph.ops[{i}]: expected an op, got {type(op).__name__}")
        preds: list[set[int]] = [set() for _ in range(n)]
        succs: list[set[int]] = [set() for _ in range(n)]
        for e in self.edges:
            if not (0 <= e.src < n and 0 <= e.dst < n):
                raise WorkloadError(f"OpGraph.edges: edge {e.src}->{e.dst} names an op outside 0..{n - 1}")
            if e.src >= e.dst:
                raise WorkloadError(
                    f"OpGraph.edges: edge {e.src}->{e.dst} ({self.ops[e.src].label} -> {self.ops[e.dst].label}) "
                    "is not in topological order (build with OpGraph.from_edges to sort, which detects cycles)"
                )
            if e.tensor is not None:
                _check_edge_tensor(self.ops[e.src], self.ops[e.dst], e)
            preds[e.dst].add(e.src)
            succs[e.src].add(e.dst)
        object.__setattr__(self, "_preds", tuple(tuple(sorted(p)) for p in preds))
        object.__setattr__(self, "_succs", tuple(tuple(sorted(s)) for s in succs))

    # --- construction ---------------------------------------------------------------------------
    @classmethod
    def from_edges(cls, name: str, ops: list[Op] | tuple[Op, ...], edges: list[Edge] | tuple[Edge, ...] = (),
                   **kwargs: object) -> OpGraph:
        """Build a graph from ops in any order: sort topologically (Kahn, stable), reject cycles."""
        n = len(ops)
        indeg = [0] * n
        out: dict[int, list[int]] = defaultdict(list)
        for e in edges:
            if not (0 <= e.src < n and 0 <= e.dst < n):
                raise WorkloadError(f"OpGraph.edges: edge {e.src}->{e.dst} names an op outside 0..{n - 1}")
            out[e.src].append(e.dst)
            indeg[e.dst] += 1
        ready = sorted(i for i in range(n) if indeg[i] == 0)
        order: list[int] = []
        while ready:
            i = ready.pop(0)
            order.append(i)
            for j in out[i]:
                indeg[j] -= 1
                if indeg[j] == 0:
                    ready.append(j)
            ready.sort()
        if len(order) < n:
            stuck = [ops[i].label for i in range(n) if indeg[i] > 0]
            raise WorkloadError(f"OpGraph: the edges form a cycle through {', '.join(stuck[:8])}")
        pos = {old: new for new, old in enumerate(order)}
        new_edges = tuple(Edge(pos[e.src], pos[e.dst], e.tensor, e.parts) for e in edges)
        return cls(name, tuple(ops[i] for i in order), new_edges, **kwargs)  # type: ignore[arg-type]

    @classmethod
    def chain(cls, name: str, ops: list[Op] | tuple[Op, ...], **kwargs: object) -> OpGraph:
        """A sequential graph: each op depends on the previous one."""
        edges = tuple(Edge(i, i + 1) for i in range(len(ops) - 1))
        return cls(name, tuple(ops), edges, **kwargs)  # type: ignore[arg-type]

    # --- structure ------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.ops)

    def __iter__(self):  # noqa: ANN204 - iterator over ops
        return iter(self.ops)

    def predecessors(self, i: int) -> tuple[int, ...]:
        """Indices of the ops that must finish before op ``i``."""
        return self._preds[i]

    def successors(self, i: int) -> tuple[int, ...]:
        """Indices of the ops that depend on op ``i``."""
        return self._succs[i]

    def phase_indices(self, phase: str) -> tuple[int, ...]:
        """Indices of the ops of one phase (``"forward"``, ``"backward"``, ``"update"``)."""
        return tuple(i for i, op in enumerate(self.ops) if op.phase == phase)

    # --- totals ---------------------------------------------------------------------------------
    def total_flop(self, phase: str | None = None) -> int:
        """FLOP of all ops (or of one phase)."""
        return sum(op.flop() for op in self.ops if phase is None or op.phase == phase)

    def flop_breakdown(self) -> dict[str, int]:
        """FLOP by class summed over ops."""
        out = {"matmul": 0, "vector": 0, "special": 0}
        for op in self.ops:
            for k, v in op.flop_breakdown().items():
                out[k] += v
        return out

    def macs(self, phase: str | None = "forward") -> int:
        """Multiply-accumulates of conv/linear/matmul ops (the count papers publish), forward by default."""
        return sum(op.macs() for op in self.ops if phase is None or op.phase == phase)

    def min_bytes(self) -> int:
        """Sum of every op's compulsory bytes (ops run one after another, nothing kept on chip), in bytes."""
        return sum(op.min_bytes() for op in self.ops)

    def param_count(self) -> int:
        """Learnable parameters (owned by forward ops; a tied weight is counted once)."""
        return sum(op.param_count() for op in self.ops)

    def activation_bytes(self) -> int:
        """Bytes of every forward op's outputs: what training keeps for the backward pass (no
        recomputation, no in-place reuse); for inference an upper bound on live activations."""
        return int(math.ceil(sum(t.bytes for op in self.ops if op.phase == "forward" for t in op.outputs())))

    def count_by_kind(self) -> dict[str, int]:
        counts: dict[str, int] = defaultdict(int)
        for op in self.ops:
            counts[op.kind] += 1
        return dict(counts)

    def summary(self) -> dict[str, float | int | str]:
        """Headline numbers with unit-suffixed keys."""
        return {"name": self.name, "ops": len(self.ops), "flop": self.total_flop(), "macs": self.macs(),
                "params": self.param_count(), "activation_bytes": self.activation_bytes(),
                "min_bytes": self.min_bytes()}


def _check_edge_tensor(src: Op, dst: Op, e: Edge) -> None:
    numel = e.tensor.numel if e.tensor is not None else 0
    if e.parts < 1 or not any(t.numel == numel * e.parts for t in src.outputs()):
        raise WorkloadError(
            f"OpGraph: edge {src.label} -> {dst.label}: tensor {e.tensor.shape} (x{e.parts}) is not an output of "
            f"{src.label} (outputs {[t.shape for t in src.outputs()]})"
        )
    if not any(t.numel == numel for t in dst.inputs()):
        raise WorkloadError(
            f"OpGraph: edge {src.label} -> {dst.label}: tensor {e.tensor.shape} does not match any input of "
            f"{dst.label} (inputs {[t.shape for t in dst.inputs()]})"
        )


@dataclass(frozen=True)
class Value:
    """A tensor produced inside a :class:`GraphBuilder` (``producer`` is ``None`` for a graph input)."""

    tensor: TensorSpec
    producer: int | None
    parts: int = 1

    @property
    def shape(self) -> tuple[int, ...]:
        return self.tensor.shape


class GraphBuilder:
    """Wires ops into an :class:`OpGraph` in program order (which is a topological order).

    ``x = b.input((n, 3, 224, 224)); y = b.add(Conv2d(...), x)``: each :class:`Value` passed to
    :meth:`add` must match an activation input of the op by element count, else a WorkloadError.
    """

    def __init__(self, name: str, batch: int = 1, dtype: DType | str = DType.fp32) -> None:
        self.name = name
        self.batch = batch
        self.dtype = DType.parse(dtype)
        self._ops: list[Op] = []
        self._edges: list[Edge] = []
        self._inputs: list[TensorSpec] = []

    def input(self, shape: tuple[int, ...], dtype: DType | str | None = None) -> Value:
        spec = TensorSpec(tuple(shape), dtype or self.dtype)
        self._inputs.append(spec)
        return Value(spec, None)

    def add(self, op: Op, *inputs: Value, output: int = 0, after: tuple[Value, ...] = ()) -> Value:
        """Append ``op`` consuming ``inputs`` (and ordered after the producers of ``after``, e.g. a
        KV-cache write read through memory); return its ``output``-th output."""
        free = [t.numel for t in op.inputs()]
        idx = len(self._ops)
        for v in inputs:
            if v.tensor.numel not in free:
                raise WorkloadError(
                    f"{self.name}: {op.label} gets a tensor of shape {v.shape} that matches none of its inputs "
                    f"{[t.shape for t in op.inputs()]}"
                )
            free.remove(v.tensor.numel)
            if v.producer is not None:
                self._edges.append(Edge(v.producer, idx, v.tensor, v.parts))
        for v in after:
            if v.producer is not None:
                self._edges.append(Edge(v.producer, idx))
        self._ops.append(op)
        return Value(op.outputs()[output], idx)

    def slice(self, value: Value, shape: tuple[int, ...]) -> Value:
        """A view of part of ``value`` (e.g. the last token of each sequence) whose element count divides it."""
        spec = TensorSpec(tuple(shape), value.tensor.dtype)
        if value.tensor.numel % spec.numel:
            raise WorkloadError(f"{self.name}: a slice {shape} must divide the element count of {value.shape}")
        return Value(spec, value.producer, value.parts * (value.tensor.numel // spec.numel))

    def split(self, value: Value, parts: int) -> tuple[Value, ...]:
        """``parts`` equal slices of ``value`` (a free view, e.g. Q, K, V of one projection)."""
        if value.tensor.numel % parts:
            raise WorkloadError(f"{self.name}: cannot split {value.shape} into {parts} equal parts")
        spec = TensorSpec((value.tensor.numel // parts,), value.tensor.dtype)
        return tuple(Value(spec, value.producer, value.parts * parts) for _ in range(parts))

    def op_label(self, index: int) -> str:
        """The label of the ``index``-th op added so far."""
        return self._ops[index].label

    def build(self) -> OpGraph:
        return OpGraph(self.name, tuple(self._ops), tuple(self._edges), tuple(self._inputs), self.batch, self.dtype)


def training_step(graph: OpGraph, optimizer: str = "adam", *, fused_optimizer: bool = False,
                  weight_decay: bool = False) -> OpGraph:
    """The graph of one training step: forward ops, backward ops in reverse order, parameter updates.

    Each backward op depends on its forward op (saved tensors) and on the ops producing the gradient
    of that op's output. An output consumed by ``k > 1`` ops gets ``k - 1`` gradient-accumulation adds.
    ``fused_optimizer=False`` adds one :class:`OptimizerStep` per op that owns parameters (per-tensor
    kernels); ``True`` adds one step over all parameters (a multi-tensor "foreach"/fused kernel).
    Master weights follow :class:`OptimizerStep`'s default for the op's dtype.
    """
    if optimizer not in OPTIMIZERS:
        raise WorkloadError(f"training_step.optimizer: {optimizer!r} is not one of {', '.join(OPTIMIZERS)}")
    if graph.training or any(op.phase != "forward" for op in graph.ops):
        raise WorkloadError(f"training_step: {graph.name} already contains backward or update ops")
    n = len(graph.ops)
    ops: list[Op] = list(graph.ops)
    edges: list[Edge] = list(graph.edges)
    grad_of_input: dict[int, list[int]] = {}  # forward op -> backward nodes that produce its input gradient
    bwd_nodes: dict[int, list[int]] = {}

    for i in range(n - 1, -1, -1):
        op = graph.ops[i]
        consumers = [j for j in graph.successors(i) if j < n]
        dy: list[int] = []
        for j in consumers:
            dy.extend(grad_of_input.get(j, []))
        if len(consumers) > 1:  # gradients of several consumers are summed
            shape = op.outputs()[0].shape
            for k in range(len(consumers) - 1):
                acc = len(ops)
                ops.append(Elementwise(shape, "add", op.dtype, name=f"{op.label}.grad_acc{k}", phase="backward"))
                edges.extend(Edge(s, acc) for s in dy)
                dy = [acc]
        mine = []
        # An op fed only by graph inputs (the first layer) needs no gradient of its input: nothing consumes
        # it, and frameworks skip it (PyTorch: the image tensor has requires_grad=False). Data gradients
        # are the backward ops labelled "<op>.dX".
        first = not graph.predecessors(i)
        for b in op.backward():
            if first and b.label == f"{op.label}.dX" and op.param_count():
                continue
            idx = len(ops)
            ops.append(b)
            mine.append(idx)
            edges.append(Edge(i, idx))
            edges.extend(Edge(s, idx) for s in dy)
        bwd_nodes[i] = mine
        grad_of_input[i] = mine if mine else dy  # an op without backward kernels passes dy through

    if fused_optimizer:
        total = graph.param_count()
        if total:
            idx = len(ops)
            ops.append(OptimizerStep(total, optimizer, graph.dtype, weight_decay=weight_decay,
                                     name=f"{graph.name}.update"))
            edges.extend(Edge(b, idx) for nodes in bwd_nodes.values() for b in nodes)
    else:
        for i, op in enumerate(graph.ops):
            if op.param_count():
                idx = len(ops)
                ops.append(OptimizerStep(op.param_count(), optimizer, op.dtype, weight_decay=weight_decay,
                                         name=f"{op.label}.update"))
                edges.extend(Edge(b, idx) for b in bwd_nodes[i])
    return OpGraph(f"{graph.name}.train", tuple(ops), tuple(edges), graph.inputs, graph.batch, graph.dtype,
                   training=True)
