"""Bitwise comparison of arrays for the tests of bit-identical fast paths."""

from __future__ import annotations

import dataclasses

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


def assert_same(a, b, path: str = "cost") -> None:
    """Assert ``a`` and ``b`` are the same values to the bit, recursively: dicts in key order, arrays
    by dtype, shape and bytes, floats by their float64 bytes, dataclasses by their fields; ``path``
    names the place of a difference in the assertion message."""
    assert type(a) is type(b), path
    if isinstance(a, dict):
        assert list(a) == list(b), path
        for k in a:
            assert_same(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, np.ndarray):
        assert (a.dtype, a.shape) == (b.dtype, b.shape), path
        assert a.tobytes() == b.tobytes(), (path, a, b)
    elif isinstance(a, float):
        assert np.float64(a).tobytes() == np.float64(b).tobytes(), (path, a, b)
    elif dataclasses.is_dataclass(a):
        assert_same(vars(a), vars(b), path)
    else:
        assert a == b, path
