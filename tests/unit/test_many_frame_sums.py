"""``estimate_many``'s frame built from one block equals the frame pandas builds from the columns' dict."""


import numpy as np
import pandas as pd
from bit_compare import same_bits
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from archsim.engines.roofline import columns_frame

_FLOATS = st.floats(allow_nan=True, allow_infinity=True, width=64)


@given(st.integers(1, 6).flatmap(lambda h: st.lists(hnp.arrays(np.float64, h, elements=_FLOATS), min_size=1,
                                                    max_size=6)))
def test_frame_from_one_block_equals_pandas_frame_of_the_dict(arrays):
    columns = {f"c{i}": a for i, a in enumerate(arrays)}
    want = pd.DataFrame(columns)
    want.index.name = "point"
    got = columns_frame(columns)
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    assert got.columns.dtype == want.columns.dtype and got.index.name == "point"
    assert all(same_bits(got[c].to_numpy(), want[c].to_numpy()) for c in columns)


def test_frame_of_columns_of_other_types_is_pandas_own():
    columns = {"a": np.array([1.0, 2.0]), "b": np.array([1, 2])}
    want = pd.DataFrame(columns)
    want.index.name = "point"
    pd.testing.assert_frame_equal(columns_frame(columns), want, check_exact=True)
