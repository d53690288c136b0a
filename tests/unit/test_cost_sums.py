"""Left-to-right sums of the cost assembly: the in-place running sum equals ``functools.reduce(np.add)``."""

import functools

import numpy as np
from bit_compare import same_bits
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from archsim.cost.common import added_in_order

_FLOATS = st.floats(allow_nan=True, allow_infinity=True, width=64)



@given(st.integers(1, 6).flatmap(lambda h: st.lists(hnp.arrays(np.float64, h, elements=_FLOATS), min_size=1,
                                                    max_size=8)))
def test_added_in_order_equals_reduce_and_leaves_its_arrays_alone(arrays):
    before = [a.copy() for a in arrays]
    with np.errstate(all="ignore"):  # inf - inf, overflow: the same NaN and inf either way
        got, want = added_in_order(arrays), functools.reduce(np.add, arrays)
    assert same_bits(got, want)
    assert all(same_bits(a, b) for a, b in zip(arrays, before, strict=True))
    if len(arrays) > 1:
        assert all(got is not a for a in arrays)


@given(st.lists(st.sampled_from(["f64", "f32", "i64", "scalar", "wide", "one"]), min_size=2, max_size=6))
def test_added_in_order_with_mixed_shapes_and_types_equals_reduce(kinds):
    make = {"f64": lambda: np.array([0.1, -0.0, 3.5]), "f32": lambda: np.array([0.1, 2.5, 1e-8], dtype=np.float32),
            "i64": lambda: np.array([1, 2, 3]), "scalar": lambda: 0.3, "wide": lambda: np.full((2, 3), 0.7),
            "one": lambda: np.array([1e16])}
    arrays = [make[k]() for k in kinds]
    assert same_bits(added_in_order(arrays), functools.reduce(np.add, arrays))


def test_added_in_order_of_one_array_is_that_array():
    a = np.arange(3.0)
    assert added_in_order([a]) is a

