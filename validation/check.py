"""Correctness of a kernel's output against its numpy reference.

The error measure is the inf-norm relative error ``max|actual - expected| / max|expected|``: it is
scale-free, does not blow up on outputs that cross zero (relu, gelu, softmax tails), and fails on any
NaN or infinity. Outputs are poisoned (NaN for floats, a sentinel for integers) before the checked run,
so an element the kernel never writes is an error, not a stale value that happens to be right.
"""

from __future__ import annotations

import numpy as np

__all__ = ["CorrectnessError", "RTOL_BY_DTYPE", "rtol_for", "poison_value", "relative_error", "check"]

# Default bounds per dtype. fp32 allows accumulation over K ~ 10^4 terms (error ~ sqrt(K) * eps with
# eps = 1.2e-7) with a margin; fp16/bf16 inputs with fp32 accumulation are bounded by the input rounding.
RTOL_BY_DTYPE: dict[str, float] = {
    "float64": 1e-10,
    "float32": 1e-4,
    "float16": 1e-2,
    "bfloat16": 3e-2,
    "int32": 0.0,
    "int64": 0.0,
}


class CorrectnessError(RuntimeError):
    """A kernel's output differs from its reference by more than the case's bound."""


def rtol_for(dtype: str | np.dtype) -> float:
    """The default relative error bound of ``dtype`` (a numpy name such as ``"float32"``)."""
    name = dtype if isinstance(dtype, str) else np.dtype(dtype).name
    if name not in RTOL_BY_DTYPE:
        raise ValueError(f"dtype: no error bound for {name!r}; known: {sorted(RTOL_BY_DTYPE)}")
    return RTOL_BY_DTYPE[name]


def poison_value(dtype: np.dtype) -> float | int:
    """The value outputs are filled with before a checked run: NaN, or the most negative integer."""
    dtype = np.dtype(dtype)
    if np.issubdtype(dtype, np.floating):
        return float("nan")
    if np.issubdtype(dtype, np.integer):
        return int(np.iinfo(dtype).min)
    raise ValueError(f"dtype: cannot poison {dtype}; floating or integer arrays only")


def relative_error(actual: np.ndarray, expected: np.ndarray) -> float:
    """Inf-norm relative error; ``inf`` for a shape mismatch or any non-finite output."""
    actual = np.asarray(actual)
    expected = np.asarray(expected)
    if actual.shape != expected.shape:
        return float("inf")
    if not np.all(np.isfinite(actual)):
        return float("inf")
    a = actual.astype(np.float64)
    e = expected.astype(np.float64)
    diff = float(np.max(np.abs(a - e))) if a.size else 0.0
    scale = float(np.max(np.abs(e))) if e.size else 0.0
    if scale == 0.0:
        return 0.0 if diff == 0.0 else float("inf")
    return diff / scale


def check(name: str, actual: np.ndarray, expected: np.ndarray, rtol: float) -> float:
    """The relative error; raises :class:`CorrectnessError` naming the case if it exceeds ``rtol``."""
    err = relative_error(actual, expected)
    if not err <= rtol:
        raise CorrectnessError(
            f"{name}: relative error {err:.3g} exceeds bound {rtol:.3g} "
            f"(shape {np.shape(actual)} vs expected {np.shape(expected)})"
        )
    return err
