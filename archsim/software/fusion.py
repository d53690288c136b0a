"""Operator fusion as a graph pass: workload -> workload, fused ops whose intermediates never touch DRAM.

Rules (each a field of :class:`~archsim.software.profile.FusionRules`):

* ``conv_bn_act``: an inference convolution whose only consumer is a batch norm (running
  statistics), optionally followed by a unary activation, becomes one :class:`FusedConv2d`: the
  batch norm folds into the convolution's weights and bias (TensorRT "layer fusion"; cuDNN's
  conv-bias-activation), the activation runs in the epilogue on the accumulator. The intermediate
  tensors are never written: the fused op moves the convolution's bytes only and adds the
  epilogue's vector FLOP.
* ``gemm_epilogue``: a GEMM whose only consumer is a unary activation or a broadcast bias add becomes
  one :class:`FusedGemm` (cuBLASLt / CUTLASS epilogues).
* ``elementwise_chains``: a chain of same-shape elementwise ops, each the only consumer of the one
  before, becomes one :class:`FusedElementwise` that reads the chain's external inputs once and
  writes its last output once (XLA / TorchInductor / TensorRT pointwise fusion).
* ``attention``: an unfused :class:`~archsim.workload.ops.Attention` becomes the fused
  (FlashAttention-style) one.

Only inference graphs are fused (a training graph's forward activations are inputs of its backward
pass, so they are written anyway); the attention rule applies to both. Every fused op records the
names of the ops it replaced in ``fused`` (shown as ``fused_from`` by ``RunResult.to_frame()``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from archsim.software.profile import FusionRules
from archsim.workload import OpGraph
from archsim.workload.dtypes import DType, TensorSpec
from archsim.workload.graph import Edge
from archsim.workload.ops import BatchNorm, Conv2d, Elementwise, Gemm
from archsim.workload.ops.attention import Attention
from archsim.workload.ops.base import Op, breakdown

__all__ = ["fuse", "FusedConv2d", "FusedGemm", "FusedElementwise", "fused_names"]


@dataclass(frozen=True)
class _Epilogue:
    """The fields and FLOP of an epilogue fused onto a matrix op (mixed in before the op's class, so
    its fields follow the op's and ``super().flop_breakdown()`` is the op's own)."""

    epilogue_vector_flop: int = 0
    epilogue_special_flop: int = 0
    fused: tuple[str, ...] = ()

    def flop_breakdown(self) -> dict[str, int]:
        b = super().flop_breakdown()  # type: ignore[misc]
        return breakdown(b["matmul"], b["vector"] + self.epilogue_vector_flop,
                         b["special"] + self.epilogue_special_flop)


@dataclass(frozen=True)
class FusedConv2d(_Epilogue, Conv2d):
    """A convolution with a fused epilogue (folded batch norm, activation).

    Attributes (beyond :class:`Conv2d`'s): ``epilogue_vector_flop`` and ``epilogue_special_flop``,
    the epilogue's FLOP on the output tile (from the absorbed ops' own counts); ``fused``, the names
    of the absorbed ops, the convolution first.
    """


@dataclass(frozen=True)
class FusedGemm(_Epilogue, Gemm):
    """A GEMM with a fused epilogue (bias, activation); fields as :class:`FusedConv2d`."""


@dataclass(frozen=True)
class FusedElementwise(Op):
    """One kernel running a chain of elementwise ops: reads ``input_specs``, writes ``output_specs``.

    FLOP are the sum of the chain's; bytes are the chain's external inputs (each once) and its last
    output: the intermediates stay in registers.
    """

    kind = "elementwise"
    input_specs: tuple[TensorSpec, ...]
    output_specs: tuple[TensorSpec, ...]
    flop_vector: int = 0
    flop_special: int = 0
    fused: tuple[str, ...] = ()
    dtype: DType = DType.fp32
    name: str = ""
    phase: str = "forward"

    def __post_init__(self) -> None:
        self._common_post_init()

    def flop_breakdown(self) -> dict[str, int]:
        return breakdown(vector=self.flop_vector, special=self.flop_special)

    def inputs(self) -> tuple[TensorSpec, ...]:
        return self.input_specs

    def outputs(self) -> tuple[TensorSpec, ...]:
        return self.output_specs


def fused_names(op: Any) -> tuple[str, ...]:
    """The names of the ops ``op`` replaced (empty for an op no rule produced)."""
    return tuple(getattr(op, "fused", ()) or ())


def _unary(op: Any) -> bool:
    return isinstance(op, Elementwise) and op.n_inputs == 1 and op.cost.n_outputs == 1 and not op.cost.mask_output


def _epilogue_flop(ops: list[Any]) -> tuple[int, int]:
    v = s = 0
    for o in ops:
        b = o.flop_breakdown()
        v, s = v + b["vector"], s + b["special"]
    return v, s


class _Pass:
    """Walks a graph in order, grouping each op with the followers a rule absorbs."""

    def __init__(self, graph: OpGraph, rules: FusionRules) -> None:
        self.g, self.rules = graph, rules
        self.absorbed: set[int] = set()

    def sole_next(self, i: int) -> int | None:
        """The only consumer of op i, when op i is also that consumer's only producer."""
        succ = self.g.successors(i)
        if len(succ) != 1:
            return None
        j = succ[0]
        if j in self.absorbed or self.g.predecessors(j) != (i,) or self.g.ops[j].phase != self.g.ops[i].phase:
            return None
        return j

    def group(self, i: int) -> tuple[list[int], Any]:
        op = self.g.ops[i]
        training = self.g.training
        if self.rules.attention and isinstance(op, Attention) and not op.fused and op.pass_ == "forward":
            return [i], dataclasses.replace(op, fused=True)
        if training:
            return [i], op
        if self.rules.conv_bn_act and type(op) is Conv2d and op.pass_ == "forward":
            j = self.sole_next(i)
            if j is not None and isinstance(self.g.ops[j], BatchNorm) and not self.g.ops[j].batch_stats:
                members = [i, j]
                k = self.sole_next(j)
                if k is not None and _unary(self.g.ops[k]):
                    members.append(k)
                return members, self._fused(FusedConv2d, op, members)
        if self.rules.gemm_epilogue and type(op) is Gemm:
            j = self.sole_next(i)
            if j is not None and isinstance(self.g.ops[j], Elementwise) and (
                    _unary(self.g.ops[j]) or (self.g.ops[j].fn == "add" and self.g.ops[j].operand_shapes)):
                return [i, j], self._fused(FusedGemm, op, [i, j])
        if self.rules.elementwise_chains and isinstance(op, Elementwise):
            members = [i]
            while (j := self.sole_next(members[-1])) is not None and isinstance(self.g.ops[j], Elementwise) \
                    and self.g.ops[j].shape == op.shape:
                members.append(j)
            if len(members) > 1:
                return members, self._chain(members)
        return [i], op

    def _fused(self, cls: type, anchor: Any, members: list[int]) -> Any:
        v, s = _epilogue_flop([self.g.ops[m] for m in members[1:]])
        names = tuple(self.g.ops[m].label for m in members)
        fields = {f.name: getattr(anchor, f.name) for f in dataclasses.fields(anchor) if f.init}
        return cls(**fields, epilogue_vector_flop=v, epilogue_special_flop=s, fused=names)

    def _chain(self, members: list[int]) -> FusedElementwise:
        ops = [self.g.ops[m] for m in members]
        first, last = ops[0], ops[-1]
        inputs = list(first.inputs())
        for o in ops[1:]:
            # the chain's previous output is one operand; the others come from outside the chain
            inputs.extend(o.inputs()[1:])
        v, s = _epilogue_flop(ops)
        return FusedElementwise(input_specs=tuple(inputs), output_specs=last.outputs(), flop_vector=v,
                                flop_special=s, fused=tuple(o.label for o in ops), dtype=last.dtype,
                                name="+".join(o.label for o in ops), phase=first.phase)

    def run(self) -> OpGraph:
        n = len(self.g.ops)
        new_index = [-1] * n
        out_ops: list[Any] = []
        for i in range(n):
            if i in self.absorbed:
                continue
            members, op = self.group(i)
            for m in members:
                new_index[m] = len(out_ops)
            self.absorbed.update(members[1:])
            out_ops.append(op)
        if len(out_ops) == n and all(a is b for a, b in zip(out_ops, self.g.ops, strict=True)):
            return self.g  # no rule applied
        edges: dict[tuple[int, int], Edge] = {}
        for e in self.g.edges:
            s, d = new_index[e.src], new_index[e.dst]
            if s == d:
                continue
            keep = out_ops[s] is self.g.ops[e.src] and out_ops[d] is self.g.ops[e.dst]
            edges.setdefault((s, d), Edge(s, d, e.tensor if keep else None, e.parts if keep else 1))
        return dataclasses.replace(self.g, ops=tuple(out_ops), edges=tuple(edges.values()))


def fuse(work: Any, rules: FusionRules) -> Any:
    """``work`` with ``rules`` applied: an OpGraph rewritten, a lone op returned as is (a lone
    Attention is fused when the attention rule is on)."""
    if not rules.any:
        return work
    if isinstance(work, Attention):
        return dataclasses.replace(work, fused=True) if rules.attention and work.pass_ == "forward" else work
    if not isinstance(work, OpGraph):
        return work
    return _Pass(work, rules).run()
