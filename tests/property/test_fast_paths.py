"""Fast paths agree with the slow paths they replace (hypothesis)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from archsim.cost.kernels import _unique_rows

_TABLES = st.integers(1, 6).flatmap(lambda cols: st.lists(
    st.lists(st.sampled_from([0.0, 1.0, 2.0, 0.5, 48.0 * 1024, 1e9]), min_size=cols, max_size=cols),
    min_size=1, max_size=40))


@settings(max_examples=200, deadline=None)
@given(_TABLES)
def test_unique_rows_is_numpy_unique_axis0(rows: list[list[float]]) -> None:
    # The occupancy table's dedup must give numpy's rows, order and inverse exactly.
    table = np.asarray(rows, dtype=np.float64)
    keys, inverse = np.unique(table, axis=0, return_inverse=True)
    got_keys, got_inverse = _unique_rows(table)
    assert np.array_equal(got_keys, keys)
    assert np.array_equal(got_inverse, np.ravel(inverse))
    assert np.array_equal(got_keys[got_inverse], table)
