"""Reductions and the row-wise softmax."""

from __future__ import annotations

import math
from dataclasses import dataclass

from archsim.errors import WorkloadError
from archsim.workload.dtypes import DType, TensorSpec
from archsim.workload.ops.base import Op, breakdown, check_choice, shape_tuple

__all__ = ["Reduce", "Softmax", "REDUCE_OPS"]

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
        from archsim.workload.ops.elementwise import Elementwise

        self._require_forward()
        if self.op in ("sum", "mean"):
            fn = "identity" if self.op == "sum" else "scale"
            return (Elementwise(self.shape, fn, self.dtype, operand_shapes=(self.out_shape,),
                                name=self._bwd_name("dX"), phase="backward"),)
        return (Elementwise(self.shape, "select", self.dtype, operand_shapes=(self.shape, self.out_shape),
                            name=self._bwd_name("dX"), phase="backward"),)


@dataclass(frozen=True)
class Softmax(Op):
    """Numerically stable softmax over the last axis of ``shape`` (rows of length ``L = shape[-1]``).

    Per row (forward): max ``L-1`` compares; ``x - max`` ``L`` subtracts; ``exp`` ``L`` times
    (1 vector multiply by log2(e) + 1 special ``ex2`` each, as CUDA's ``__expf``); sum ``L-1`` adds;
    one reciprocal (special) and ``L`` multiplies. Vector ``5L - 2``, special ``L + 1``.

    ``pass_="backward"`` is the gradient ``dx = y * (dy - sum(dy * y))``: per row ``L`` multiplies,
    ``L-1`` adds, ``L`` subtracts, ``L`` multiplies = ``4L - 1`` vector; it reads y and dy and writes dx.
    """

    kind = "softmax"
    shape: tuple[int, ...]
    dtype: DType = DType.fp32
    pass_: str = "forward"
    name: str = ""
    phase: str = "forward"

    def __post_init__(self) -> None:
        self._common_post_init()
        object.__setattr__(self, "shape", shape_tuple(self.shape, "Softmax.shape"))
        check_choice(self, "pass_", ("forward", "backward"))

    @property
    def rows(self) -> int:
        return math.prod(self.shape[:-1])

    def flop_breakdown(self) -> dict[str, int]:
        length = self.shape[-1]
        if self.pass_ == "forward":
            return breakdown(vector=self.rows * (5 * length - 2), special=self.rows * (length + 1))
        return breakdown(vector=self.rows * (4 * length - 1))

    def inputs(self) -> tuple[TensorSpec, ...]:
        t = TensorSpec(self.shape, self.dtype)
        return (t,) if self.pass_ == "forward" else (t, t)

    def outputs(self) -> tuple[TensorSpec, ...]:
        return (TensorSpec(self.shape, self.dtype),)

    def backward(self) -> tuple[Op, ...]:
        self._require_forward()
        if self.pass_ != "forward":
            raise WorkloadError("Softmax: backward of the backward pass is not modelled")
        return (Softmax(self.shape, self.dtype, pass_="backward", name=self._bwd_name("dX"), phase="backward"),)
