"""Element types and tensor descriptions.

A :class:`DType` names the storage format of tensor elements and the hardware precision its
arithmetic runs in. ``tf32`` is stored as fp32 (4 bytes) but multiplied on tensor cores at TF32
precision (NVIDIA A100 whitepaper, 2020); both fp8 formats (E4M3 and E5M2, Micikevicius et al.,
"FP8 Formats for Deep Learning", 2022) map to one hardware precision key ``"fp8"``.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from archsim.errors import WorkloadError

__all__ = ["DType", "TensorSpec"]


class DType(StrEnum):
    """Element type of a tensor; the value is the canonical string (``DType("fp16")``)."""

    fp64 = "fp64"
    fp32 = "fp32"
    tf32 = "tf32"
    fp16 = "fp16"
    bf16 = "bf16"
    fp8_e4m3 = "fp8_e4m3"
    fp8_e5m2 = "fp8_e5m2"
    int8 = "int8"
    int4 = "int4"

    @property
    def bits(self) -> int:
        """Storage bits per element (tf32 is stored in a 32-bit container)."""
        return _BITS[self.value]

    @property
    def bytes(self) -> float:
        """Storage bytes per element (``int4`` is 0.5)."""
        return self.bits / 8

    @property
    def precision(self) -> str:
        """The hardware precision key used by compute-unit throughput tables."""
        return _PRECISION[self.value]

    @classmethod
    def parse(cls, value: DType | str, field: str = "dtype") -> DType:
        """Return the :class:`DType` named by ``value``; raise :class:`WorkloadError` naming ``field``."""
        if isinstance(value, DType):
            return value
        if isinstance(value, str):
            key = value.strip().lower()
            key = _ALIASES.get(key, key)
            try:
                return cls(key)
            except ValueError:
                pass
        allowed = ", ".join(d.value for d in cls)
        raise WorkloadError(f"{field}: unknown dtype {value!r}; allowed: {allowed}")


_BITS = {"fp64": 64, "fp32": 32, "tf32": 32, "fp16": 16, "bf16": 16, "fp8_e4m3": 8, "fp8_e5m2": 8, "int8": 8, "int4": 4}
_PRECISION = {
    "fp64": "fp64",
    "fp32": "fp32",
    "tf32": "tf32",
    "fp16": "fp16",
    "bf16": "bf16",
    "fp8_e4m3": "fp8",
    "fp8_e5m2": "fp8",
    "int8": "int8",
    "int4": "int4",
}
# Spellings seen in frameworks and ONNX; mapped to the canonical names.
_ALIASES = {
    "float64": "fp64",
    "double": "fp64",
    "float32": "fp32",
    "float": "fp32",
    "float16": "fp16",
    "half": "fp16",
    "bfloat16": "bf16",
    "fp8": "fp8_e4m3",
    "float8_e4m3fn": "fp8_e4m3",
    "float8_e5m2": "fp8_e5m2",
}


MAX_EXTENT = 1 << 40
"""Largest size, count or tensor extent an op accepts (2^40 ~ 1.1e12): beyond any real tensor, and small
enough that products of a few extents stay exact and convert to finite floats."""


def as_int(value: Any, field: str, minimum: int | None = None) -> int:
    """``value`` as an int, or a :class:`WorkloadError` naming ``field``.

    Accepts ints and numpy integers; a bool, a string or a float (even 3.0) is an error, never
    truncated. Also checks ``minimum <= value <= MAX_EXTENT``.
    """
    # numpy bools have no __index__; Python's bool is an int and must be refused by name.
    if isinstance(value, bool | float | str | bytes):
        raise WorkloadError(f"{field}: expected an int, got {value!r}")
    try:
        n = operator.index(value)
    except TypeError:
        raise WorkloadError(f"{field}: expected an int, got {value!r}") from None
    if minimum is not None and n < minimum:
        raise WorkloadError(f"{field}: must be >= {minimum}, got {n}")
    if n > MAX_EXTENT:
        raise WorkloadError(f"{field}: {n} exceeds the largest extent accepted, {MAX_EXTENT} (2^40)")
    return n


@dataclass(frozen=True)
class TensorSpec:
    """The shape and element type of a tensor (no data).

    Attributes:
        shape: extent of each dimension, all >= 1 (a scalar is ``()``).
        dtype: element type (a :class:`DType` or its name).
    """

    shape: tuple[int, ...]
    dtype: DType = DType.fp32

    def __post_init__(self) -> None:
        shape = self.shape
        # Ops build many specs from their own (already checked) int fields: a tuple of plain ints in
        # range is what the checks below would return, so it is kept as it is.
        if not (type(shape) is tuple and all(type(d) is int and 1 <= d <= MAX_EXTENT for d in shape)):
            if isinstance(shape, str | bytes) or not isinstance(shape, Iterable):
                raise WorkloadError(f"shape: expected a tuple of ints, got {shape!r}")
            shape = tuple(as_int(d, f"shape[{i}]", minimum=1) for i, d in enumerate(shape))
            object.__setattr__(self, "shape", shape)
        if type(self.dtype) is not DType:
            object.__setattr__(self, "dtype", DType.parse(self.dtype))

    @property
    def numel(self) -> int:
        """Number of elements."""
        return math.prod(self.shape)

    @property
    def bytes(self) -> float:
        """Storage size in bytes (a float only for sub-byte types with an odd element count)."""
        b = self.numel * self.dtype.bits / 8
        return int(b) if b == int(b) else b
