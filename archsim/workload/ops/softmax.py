"""The row-wise softmax."""

from __future__ import annotations

import math
from dataclasses import dataclass

from archsim.errors import WorkloadError
from archsim.workload.dtypes import DType, TensorSpec
from archsim.workload.ops.base import Op, breakdown, check_choice, shape_tuple

__all__ = ["Softmax"]


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
