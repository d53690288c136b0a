"""The operator protocol shared by every op, and validation helpers.

An op is a frozen dataclass describing one kernel-sized piece of work. It knows its FLOP by
operation class, the minimum bytes it must move (each input read once, each output written once,
weights read once: the compulsory traffic of a perfect cache), its operand tensors, its learnable
parameters and the ops of its backward pass. It knows nothing about hardware.

FLOP classes (keys of :meth:`Op.flop_breakdown`):

* ``"matmul"``: multiply-accumulate work that can run on matrix/tensor units (a MAC is 2 FLOP);
* ``"vector"``: other adds, multiplies, compares and max on vector/SIMD ALUs;
* ``"special"``: transcendental and division-like work (exp, tanh, rsqrt, reciprocal) that runs on
  special-function units; each evaluation counts 1 FLOP (one SFU instruction, e.g. ``MUFU.EX2``).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable
from typing import Any, ClassVar, Literal

from archsim.errors import WorkloadError
from archsim.workload.dtypes import DType, TensorSpec, as_int

__all__ = ["Op", "Phase", "PHASES", "FLOP_CLASSES", "ACCUMULATE_DTYPES", "breakdown", "pair", "check_positive",
           "check_choice", "as_int"]

Phase = Literal["forward", "backward", "update"]
PHASES: tuple[str, ...] = ("forward", "backward", "update")
FLOP_CLASSES: tuple[str, ...] = ("matmul", "vector", "special")

ACCUMULATE_DTYPES: dict[str, tuple[str, ...]] = {
    "fp64": ("fp64",), "fp32": ("fp32",), "tf32": ("fp32",), "bf16": ("fp32",),
    "fp16": ("fp32", "fp16"), "fp8": ("fp32", "fp16"), "int8": ("int32",), "int4": ("int32",),
}
"""Accumulator precisions a matrix product of each math precision may ask for, the default first.

The default is the wide accumulator every framework uses (fp32 for floating inputs: cuBLAS
``CUBLAS_COMPUTE_32F`` for fp16 in PyTorch; int32 for integers). fp16 and fp8 inputs may also
accumulate in fp16 (cuBLAS ``CUBLAS_COMPUTE_16F``; the "FP16/FP8 Tensor TFLOPS with FP16
Accumulate" rows of NVIDIA's Turing, Ampere and Ada whitepapers): the only narrow accumulator the
Tensor Cores offer. tf32 and bf16 accumulate in fp32 only."""


def breakdown(matmul: int = 0, vector: int = 0, special: int = 0) -> dict[str, int]:
    """A FLOP breakdown dict with exactly the three class keys."""
    return {"matmul": int(matmul), "vector": int(vector), "special": int(special)}


def pair(value: Any, field: str) -> tuple[int, int]:
    """Normalise an int or a 2-sequence of ints to a pair (kernel sizes, strides, paddings).

    Floats, strings and bools are errors (never truncated: ``kernel=(2.7, 3)`` is not ``(2, 3)``).
    """
    if isinstance(value, int) and not isinstance(value, bool):
        n = as_int(value, field)
        return (n, n)
    if isinstance(value, str | bytes) or not isinstance(value, Iterable):
        raise WorkloadError(f"{field}: expected an int or a pair of ints, got {value!r}")
    items = tuple(value)
    if len(items) != 2:
        raise WorkloadError(f"{field}: expected an int or a pair of ints, got {value!r}")
    return (as_int(items[0], f"{field}[0]"), as_int(items[1], f"{field}[1]"))


def check_positive(op: Any, *fields: str, minimum: int = 1) -> None:
    """Raise :class:`WorkloadError` naming the first field of ``op`` below ``minimum``."""
    annotations = {f.name: str(f.type) for f in dataclasses.fields(op)} if dataclasses.is_dataclass(op) else {}
    for f in fields:
        v = getattr(op, f)
        # Only a field declared as a tuple (kernel, stride, ...) may hold one: Gemm(m=(1, 1)) is an error.
        values = v if isinstance(v, tuple) and "tuple" in annotations.get(f, "tuple") else (v,)
        for x in values:
            if isinstance(x, bool) or not isinstance(x, int):
                raise WorkloadError(f"{type(op).__name__}.{f}: expected an int, got {v!r}")
            if x < minimum:
                raise WorkloadError(f"{type(op).__name__}.{f}: must be >= {minimum}, got {v!r}")
            as_int(x, f"{type(op).__name__}.{f}")  # the upper bound


def check_choice(op: Any, field: str, allowed: Iterable[str]) -> None:
    """Raise :class:`WorkloadError` if ``op.field`` is not one of ``allowed``, listing them."""
    allowed = tuple(allowed)
    v = getattr(op, field)
    if v not in allowed:
        raise WorkloadError(f"{type(op).__name__}.{field}: {v!r} is not one of {', '.join(map(repr, allowed))}")


def shape_tuple(value: Any, field: str) -> tuple[int, ...]:
    """Normalise an int (a flat element count) or a sequence of ints to a shape tuple of ints >= 1."""
    if isinstance(value, int) and not isinstance(value, bool):
        value = (value,)
    if isinstance(value, str | bytes) or not isinstance(value, Iterable):
        raise WorkloadError(f"{field}: expected an int or a tuple of ints, got {value!r}")
    shape = tuple(as_int(d, f"{field}[{i}]", minimum=1) for i, d in enumerate(value))
    if not shape:
        raise WorkloadError(f"{field}: must have at least one dimension")
    return shape


class Op:
    """Base of every operator. Subclasses are frozen dataclasses with fields ``dtype``, ``name``, ``phase``.

    Subclasses implement :meth:`flop_breakdown`, :meth:`inputs` and :meth:`outputs`, and override
    :meth:`param_count`, :meth:`backward`, :meth:`min_bytes` and :meth:`macs` where they differ.
    """

    kind: ClassVar[str] = "op"
    dtype: DType
    name: str
    phase: str

    def _common_post_init(self) -> None:
        object.__setattr__(self, "dtype", DType.parse(self.dtype, f"{type(self).__name__}.dtype"))
        if getattr(self, "compute_dtype", None) is not None:
            object.__setattr__(self, "compute_dtype",
                               DType.parse(self.compute_dtype, f"{type(self).__name__}.compute_dtype"))
        if hasattr(self, "accumulate_dtype"):
            self._check_accumulate()
        check_choice(self, "phase", PHASES)
        if not isinstance(self.name, str):
            raise WorkloadError(f"{type(self).__name__}.name: expected a string, got {self.name!r}")

    @property
    def math_dtype(self) -> DType:
        """The precision the op's arithmetic runs in: ``compute_dtype`` where the op has one and it is
        set (GEMM, convolution, attention: the cuBLAS/cuDNN compute type), else the storage ``dtype``."""
        compute = getattr(self, "compute_dtype", None)
        return self.dtype if compute is None else compute

    def _check_accumulate(self) -> None:
        """Normalise ``accumulate_dtype`` (None or a string) and check it against the math precision."""
        acc = self.accumulate_dtype  # type: ignore[attr-defined]
        field = f"{type(self).__name__}.accumulate_dtype"
        allowed = ACCUMULATE_DTYPES[self.math_dtype.precision]
        if acc is None:
            return
        key = str(acc).strip().lower() if isinstance(acc, str) else None
        if key not in allowed:
            raise WorkloadError(f"{field}: {acc!r} is not allowed with {self.math_dtype.value} math; allowed: "
                                f"None, {', '.join(map(repr, allowed))}")
        object.__setattr__(self, "accumulate_dtype", key)

    @property
    def accumulate_precision(self) -> str:
        """The accumulator precision of the op's matrix products (``accumulate_dtype``, else the default
        of :data:`ACCUMULATE_DTYPES` for its math precision: fp32 for floating inputs, int32 for integers)."""
        acc = getattr(self, "accumulate_dtype", None)
        return ACCUMULATE_DTYPES[self.math_dtype.precision][0] if acc is None else acc

    # --- work -----------------------------------------------------------------------------------
    def flop_breakdown(self) -> dict[str, int]:
        """FLOP by class: ``{"matmul": ..., "vector": ..., "special": ...}``; sums to :meth:`flop`."""
        raise NotImplementedError

    def flop(self) -> int:
        """Total FLOP (a multiply-add counts 2)."""
        return sum(self.flop_breakdown().values())

    def macs(self) -> int:
        """Multiply-accumulates of convolution/linear/matmul work (the count model papers publish)."""
        return 0

    # --- data -----------------------------------------------------------------------------------
    def inputs(self) -> tuple[TensorSpec, ...]:
        """Tensors the op reads (activations, weights, saved tensors), each once."""
        raise NotImplementedError

    def outputs(self) -> tuple[TensorSpec, ...]:
        """Tensors the op writes, each once."""
        raise NotImplementedError

    def min_bytes(self) -> int:
        """Compulsory bytes: every input read once and every output written once, in bytes."""
        read, written = self.io_totals()
        return int(math.ceil(read + written))

    def io_totals(self) -> tuple[float, float]:
        """(bytes of :meth:`inputs`, bytes of :meth:`outputs`), each the plain sum of its tensors'
        bytes (an int, or a float for odd sub-byte tensors).

        Computed once per op object (a graph's ops are priced on every estimate and each pricing
        asks for them) and kept in the instance ``__dict__`` under a non-field key: the dataclass's
        ``==``, ``hash``, ``repr``, ``fields`` and ``replace`` see only fields, and the op is frozen.
        """
        cached = self.__dict__.get("_io_totals")
        if cached is None:
            cached = self.__dict__["_io_totals"] = (sum(t.bytes for t in self.inputs()),
                                                    sum(t.bytes for t in self.outputs()))
        return cached

    def param_count(self) -> int:
        """Learnable parameters this op owns (0 for backward and update ops)."""
        return 0

    def backward(self) -> tuple[Op, ...]:
        """The ops of this op's backward pass (phase ``"backward"``)."""
        raise WorkloadError(f"{type(self).__name__} ({self.label}): no backward pass is modelled")

    # --- naming ---------------------------------------------------------------------------------
    @property
    def label(self) -> str:
        """The op's name, or its kind when unnamed."""
        return self.name or self.kind

    def _bwd_name(self, suffix: str) -> str:
        return f"{self.label}.{suffix}"

    def _require_forward(self) -> None:
        if self.phase != "forward":
            raise WorkloadError(
                f"{type(self).__name__} ({self.label}): backward of a {self.phase}-phase op is not modelled"
            )
