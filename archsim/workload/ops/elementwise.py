"""Elementwise functions (activations, arithmetic, dropout; costs from :mod:`.costs`) and reductions.

They share a module because each one's gradient is made of the other: the gradient of a broadcast
operand is a sum-reduction, and the gradient of a reduction is an elementwise broadcast.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from archsim.errors import WorkloadError
from archsim.workload.dtypes import DType, TensorSpec
from archsim.workload.ops.base import Op, breakdown, check_choice, shape_tuple
from archsim.workload.ops.costs import ELEMENTWISE_COSTS, ElementwiseCost

__all__ = ["Elementwise", "Reduce", "REDUCE_OPS", "broadcast_axes"]


def broadcast_axes(out_shape: tuple[int, ...], in_shape: tuple[int, ...]) -> tuple[int, ...]:
    """Axes of ``out_shape`` over which ``in_shape`` is broadcast (numpy rules, right-aligned)."""
    if len(in_shape) > len(out_shape):
        raise WorkloadError(f"operand shape {in_shape} has more dimensions than the output {out_shape}")
    pad = len(out_shape) - len(in_shape)
    axes = list(range(pad))
    for i, d in enumerate(in_shape):
        o = out_shape[pad + i]
        if d == o:
            continue
        if d != 1:
            raise WorkloadError(f"operand shape {in_shape} does not broadcast to {out_shape}")
        axes.append(pad + i)
    return tuple(axes)


@dataclass(frozen=True)
class Elementwise(Op):
    """An elementwise function ``fn`` producing a tensor of ``shape``.

    Attributes:
        shape: output shape (an int is a flat element count).
        fn: a key of :data:`~archsim.workload.ops.costs.ELEMENTWISE_COSTS` (``"relu"``, ``"gelu"``,
            ``"add"``, ``"dropout"``...); the number of inputs follows from it.
        dtype: element type.
        operand_shapes: shapes of the inputs when they differ from ``shape`` (numpy broadcasting),
            e.g. a bias ``(n,)`` added to ``(m, n)``; ``None`` means every input has ``shape``.

    FLOP: ``numel * (vector + special)`` from the cost table. Bytes: each input once (at its own
    shape), each output once.
    """

    kind = "elementwise"
    shape: tuple[int, ...]
    fn: str = "relu"
    dtype: DType = DType.fp32
    operand_shapes: tuple[tuple[int, ...], ...] | None = None
    name: str = ""
    phase: str = "forward"

    def __post_init__(self) -> None:
        self._common_post_init()
        object.__setattr__(self, "shape", shape_tuple(self.shape, "Elementwise.shape"))
        if self.fn not in ELEMENTWISE_COSTS:
            raise WorkloadError(
                f"Elementwise.fn: unknown function {self.fn!r}; allowed: {', '.join(sorted(ELEMENTWISE_COSTS))}"
            )
        if self.operand_shapes is not None:
            shapes = tuple(shape_tuple(s, "Elementwise.operand_shapes") for s in self.operand_shapes)
            if len(shapes) != self.cost.n_inputs:
                raise WorkloadError(
                    f"Elementwise.operand_shapes: {self.fn!r} takes {self.cost.n_inputs} inputs, got {len(shapes)}"
                )
            for s in shapes:
                broadcast_axes(self.shape, s)
            object.__setattr__(self, "operand_shapes", shapes)

    @property
    def cost(self) -> ElementwiseCost:
        return ELEMENTWISE_COSTS[self.fn]

    @property
    def n_inputs(self) -> int:
        return self.cost.n_inputs

    @property
    def numel(self) -> int:
        return math.prod(self.shape)

    def flop_breakdown(self) -> dict[str, int]:
        c = self.cost
        return breakdown(vector=self.numel * c.vector, special=self.numel * c.special)

    def _operand_shapes(self) -> tuple[tuple[int, ...], ...]:
        return self.operand_shapes or (self.shape,) * self.cost.n_inputs

    def inputs(self) -> tuple[TensorSpec, ...]:
        specs = [TensorSpec(s, self.dtype) for s in self._operand_shapes()]
        if self.fn == "dropout_grad":  # the saved dropout mask is 1 byte per element
            specs[1] = TensorSpec(specs[1].shape, DType.int8)
        return tuple(specs)

    def outputs(self) -> tuple[TensorSpec, ...]:
        outs = tuple(TensorSpec(self.shape, self.dtype) for _ in range(self.cost.n_outputs))
        if self.cost.mask_output:
            outs += (TensorSpec(self.shape, DType.int8),)
        return outs

    def backward(self) -> tuple[Op, ...]:
        self._require_forward()
        c = self.cost
        shapes = self._operand_shapes()
        ops: list[Op] = []
        if not c.passthrough:
            if c.grad is None:
                raise WorkloadError(f"Elementwise({self.fn!r}) ({self.label}): its gradient is not modelled")
            grad_cost = ELEMENTWISE_COSTS[c.grad]
            # A gradient function with one output serves one input; binary ops then need one per input.
            count = c.n_inputs if grad_cost.n_outputs == 1 else 1
            for i in range(count):
                ops.append(Elementwise(self.shape, c.grad, self.dtype, name=self._bwd_name(f"d{i}"), phase="backward"))
        for i, s in enumerate(shapes):
            axes = broadcast_axes(self.shape, s)
            if axes:  # a broadcast operand's gradient is dy summed over the broadcast axes
                ops.append(Reduce(self.shape, axes=axes, op="sum", dtype=self.dtype,
                                  name=self._bwd_name(f"d{i}.reduce"), phase="backward"))
        return tuple(ops)


REDUCE_OPS = ("sum", "mean", "max", "min")


def _norm_axes(axes: tuple[int, ...] | int, ndim: int, field: str) -> tuple[int, ...]:
    axes = (axes,) if isinstance(axes, int) else tuple(axes)
    out = []
    for a in axes:
        if not -ndim <= a < ndim:
            raise WorkloadError(f"{field}: axis {a} out of range for a {ndim}-d shape")
        out.append(a % ndim)
    if len(set(out)) != len(out) or not out:
        raise WorkloadError(f"{field}: axes must be distinct and non-empty, got {axes!r}")
    return tuple(sorted(out))


@dataclass(frozen=True)
class Reduce(Op):
    """Reduce ``shape`` over ``axes`` with ``op`` (sum, mean, max, min).

    FLOP: combining ``L`` elements into one costs ``L - 1`` vector ops, so the total is
    ``numel_in - numel_out``; ``mean`` adds one multiply (by ``1/L``) per output.
    Backward: sum/mean broadcast ``dy`` back (an ``identity`` elementwise, mean with a multiply);
    max/min route ``dy`` to the arg-extremum (a ``select`` elementwise reading x and dy).
    """

    kind = "reduce"
    shape: tuple[int, ...]
    axes: tuple[int, ...] = (-1,)
    op: str = "sum"
    dtype: DType = DType.fp32
    name: str = ""
    phase: str = "forward"

    def __post_init__(self) -> None:
        self._common_post_init()
        object.__setattr__(self, "shape", shape_tuple(self.shape, "Reduce.shape"))
        object.__setattr__(self, "axes", _norm_axes(self.axes, len(self.shape), "Reduce.axes"))
        check_choice(self, "op", REDUCE_OPS)

    @property
    def out_shape(self) -> tuple[int, ...]:
        kept = tuple(d for i, d in enumerate(self.shape) if i not in self.axes)
        return kept or (1,)

    def flop_breakdown(self) -> dict[str, int]:
        n_in, n_out = math.prod(self.shape), math.prod(self.out_shape)
        return breakdown(vector=n_in - n_out + (n_out if self.op == "mean" else 0))

    def inputs(self) -> tuple[TensorSpec, ...]:
        return (TensorSpec(self.shape, self.dtype),)

    def outputs(self) -> tuple[TensorSpec, ...]:
        return (TensorSpec(self.out_shape, self.dtype),)

    def backward(self) -> tuple[Op, ...]:
        self._require_forward()
        if self.op in ("sum", "mean"):
            fn = "identity" if self.op == "sum" else "scale"
            return (Elementwise(self.shape, fn, self.dtype, operand_shapes=(self.out_shape,),
                                name=self._bwd_name("dX"), phase="backward"),)
        return (Elementwise(self.shape, "select", self.dtype, operand_shapes=(self.shape, self.out_shape),
                            name=self._bwd_name("dX"), phase="backward"),)
