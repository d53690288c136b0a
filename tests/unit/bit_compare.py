"""Bitwise comparison of arrays for the tests of bit-identical fast paths."""

from __future__ import annotations

import numpy as np


def same_bits(a, b) -> bool:
    """Equal shape, dtype and bits (the sign of zero included), NaN where the other is NaN: the
    payload of NaN + NaN is either operand's, as the machine code of the add picks (CPython's
    specialised and generic float adds, numpy's loops), so NaNs are compared as NaN."""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype.kind != "f":
        return a.tobytes() == b.tobytes()
    nan = np.isnan(a)
    return bool(np.array_equal(nan, np.isnan(b))) and np.where(nan, 0.0, a).tobytes() == np.where(nan, 0.0, b).tobytes()
