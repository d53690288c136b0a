"""Data movement: embedding gathers, copies and concatenations, host-device transfers."""

from __future__ import annotations

import math
from dataclasses import dataclass

from archsim.errors import WorkloadError
from archsim.workload.dtypes import DType, TensorSpec
from archsim.workload.ops.base import Op, breakdown, check_choice, check_positive, shape_tuple

__all__ = ["Embedding", "Copy", "Concat", "HostToDevice", "DeviceToHost"]


@dataclass(frozen=True)
class Embedding(Op):
    """A table lookup: ``lookups`` rows of ``dim`` elements gathered from a ``num_embeddings x dim`` table.

    FLOP 0. ``min_bytes`` = the gathered rows read + the output written = ``2*lookups*dim*bytes``; the
    integer indices (4 bytes per lookup, ``< 1/dim`` of the traffic) are not counted.
    ``pass_="backward"`` is the sparse gradient scatter-add into the touched rows: ``lookups*dim``
    vector adds; reads dy and the gradient rows, writes the gradient rows (``3*lookups*dim*bytes``).
    """

    kind = "embedding"
    num_embeddings: int
    dim: int
    lookups: int
    dtype: DType = DType.fp32
    pass_: str = "forward"
    name: str = ""
    phase: str = "forward"

    def __post_init__(self) -> None:
        self._common_post_init()
        check_positive(self, "num_embeddings", "dim", "lookups")
        check_choice(self, "pass_", ("forward", "backward"))

    def flop_breakdown(self) -> dict[str, int]:
        return breakdown(vector=self.lookups * self.dim if self.pass_ == "backward" else 0)

    def inputs(self) -> tuple[TensorSpec, ...]:
        rows = TensorSpec((self.lookups, self.dim), self.dtype)  # the rows actually touched
        return (rows,) if self.pass_ == "forward" else (rows, rows)

    def outputs(self) -> tuple[TensorSpec, ...]:
        return (TensorSpec((self.lookups, self.dim), self.dtype),)

    def param_count(self) -> int:
        return self.num_embeddings * self.dim if (self.phase == "forward" and self.pass_ == "forward") else 0

    def backward(self) -> tuple[Op, ...]:
        self._require_forward()
        if self.pass_ != "forward":
            raise WorkloadError("Embedding: only the forward pass has a backward pass")
        return (Embedding(self.num_embeddings, self.dim, self.lookups, self.dtype, pass_="backward",
                          name=self._bwd_name("dW"), phase="backward"),)


@dataclass(frozen=True)
class Copy(Op):
    """A device-memory copy of a tensor of ``shape`` (also transposes and layout changes). FLOP 0."""

    kind = "copy"
    shape: tuple[int, ...]
    dtype: DType = DType.fp32
    name: str = ""
    phase: str = "forward"

    def __post_init__(self) -> None:
        self._common_post_init()
        object.__setattr__(self, "shape", shape_tuple(self.shape, "Copy.shape"))

    def flop_breakdown(self) -> dict[str, int]:
        return breakdown()

    def inputs(self) -> tuple[TensorSpec, ...]:
        return (TensorSpec(self.shape, self.dtype),)

    def outputs(self) -> tuple[TensorSpec, ...]:
        return (TensorSpec(self.shape, self.dtype),)

    def backward(self) -> tuple[Op, ...]:
        self._require_forward()
        return (Copy(self.shape, self.dtype, name=self._bwd_name("dX"), phase="backward"),)


@dataclass(frozen=True)
class Concat(Op):
    """Concatenate tensors along ``axis`` (all other dimensions equal). FLOP 0; backward is a split (a copy)."""

    kind = "concat"
    input_shapes: tuple[tuple[int, ...], ...]
    axis: int = 0
    dtype: DType = DType.fp32
    name: str = ""
    phase: str = "forward"

    def __post_init__(self) -> None:
        self._common_post_init()
        shapes = tuple(shape_tuple(s, "Concat.input_shapes") for s in self.input_shapes)
        if not shapes:
            raise WorkloadError("Concat.input_shapes: needs at least one input")
        ndim = len(shapes[0])
        if not -ndim <= self.axis < ndim:
            raise WorkloadError(f"Concat.axis: {self.axis} out of range for {ndim}-d inputs")
        ax = self.axis % ndim
        for s in shapes:
            if len(s) != ndim or any(a != b for i, (a, b) in enumerate(zip(s, shapes[0], strict=True)) if i != ax):
                raise WorkloadError(f"Concat.input_shapes: {s} does not match {shapes[0]} outside axis {self.axis}")
        object.__setattr__(self, "input_shapes", shapes)
        object.__setattr__(self, "axis", ax)

    @property
    def out_shape(self) -> tuple[int, ...]:
        first = self.input_shapes[0]
        return first[: self.axis] + (sum(s[self.axis] for s in self.input_shapes),) + first[self.axis + 1:]

    def flop_breakdown(self) -> dict[str, int]:
        return breakdown()

    def inputs(self) -> tuple[TensorSpec, ...]:
        return tuple(TensorSpec(s, self.dtype) for s in self.input_shapes)

    def outputs(self) -> tuple[TensorSpec, ...]:
        return (TensorSpec(self.out_shape, self.dtype),)

    def backward(self) -> tuple[Op, ...]:
        self._require_forward()
        return (Copy(self.out_shape, self.dtype, name=self._bwd_name("split"), phase="backward"),)


@dataclass(frozen=True)
class _Transfer(Op):
    nbytes: int | TensorSpec = 0
    tensor: TensorSpec | None = None
    dtype: DType = DType.int8
    name: str = ""
    phase: str = "forward"

    def __post_init__(self) -> None:
        if isinstance(self.nbytes, TensorSpec):
            object.__setattr__(self, "tensor", self.nbytes)
        if self.tensor is not None:
            object.__setattr__(self, "nbytes", int(math.ceil(self.tensor.bytes)))
            object.__setattr__(self, "dtype", self.tensor.dtype)
        self._common_post_init()
        check_positive(self, "nbytes")

    def _spec(self) -> TensorSpec:
        return self.tensor if self.tensor is not None else TensorSpec((self.nbytes,), DType.int8)

    def flop_breakdown(self) -> dict[str, int]:
        return breakdown()

    def inputs(self) -> tuple[TensorSpec, ...]:
        return (self._spec(),)

    def outputs(self) -> tuple[TensorSpec, ...]:
        return (self._spec(),)

    def min_bytes(self) -> int:
        """Bytes crossing the link (each byte is read on one side and written on the other)."""
        return self.nbytes

    def backward(self) -> tuple[Op, ...]:
        self._require_forward()
        return ()  # input data and results carry no gradient across the link


@dataclass(frozen=True)
class HostToDevice(_Transfer):
    """Copy ``nbytes`` (or a tensor) from host memory to the device over the host link. FLOP 0."""

    kind = "h2d"


@dataclass(frozen=True)
class DeviceToHost(_Transfer):
    """Copy ``nbytes`` (or a tensor) from the device to host memory over the host link. FLOP 0."""

    kind = "d2h"
