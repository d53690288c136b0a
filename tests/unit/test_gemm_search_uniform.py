"""The compiled GEMM search's blocks of one SM description (every row on one row of the occupancy table,
as in a sweep that keeps the SM) give the one-row-at-a-time figures to the bit: the candidates' blocks
per SM taken once per block, and a candidate's feasibility from the rows' largest split-K limit (a NaN
limit, which no split exceeds, included)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_gemm_search import _oracle
from test_gemm_search_blocks import _case

import archsim.presets as presets
from archsim.cost import gemm_search as engine
from archsim.cost.params import GPUParams


@pytest.fixture(scope="module")
def params():
    return GPUParams.from_devices([presets.load_preset("gpu/v100-sxm2-16gb"),
                                   presets.load_preset("gpu/h100-sxm5-80gb")])


_LIMITS = st.sampled_from([16.0, 8.0, 4.0, 2.0, 1.0, 0.5, np.nan, np.inf, -np.inf])


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_rows=st.integers(2, 150),
       n_cand=st.sampled_from([1, 3, engine.KEEP_CANDIDATES, engine.KEEP_CANDIDATES + 1, 40]),
       split_k=st.booleans(), limits=st.lists(_LIMITS, min_size=1, max_size=3), table_row=st.integers(0, 1),
       mixed=st.booleans())
def test_blocks_of_one_sm_description_equal_the_oracle(params, seed, n_rows, n_cand, split_k, limits, table_row,
                                                       mixed):
    ops, points, rate, eff, op_row, point_row, dram_min, a_stream, occupancy, occupancy_row, cand = _case(
        params, seed, n_rows, n_cand, 1.0, split_k, False)
    # each point's split-K limit one of ``limits`` (the rows of a block then differ or agree)
    points[:, 13] = [limits[i % len(limits)] for i in range(len(points))]
    occupancy_row = np.full(n_rows, table_row, dtype=np.int64)
    if mixed:  # one row elsewhere: its block takes the per-row path, the others the uniform one
        occupancy_row[n_rows // 2] = 1 - table_row
    args = (ops, points, rate, eff, op_row, point_row, dram_min, a_stream, occupancy, occupancy_row, cand)
    got = np.empty((len(engine.OUT_FIELDS), n_rows))
    engine.search(*args, 64.0, 4.0, got)
    np.testing.assert_array_equal(got, _oracle(*args))


def test_a_block_infeasible_on_every_row_keeps_the_first_candidate(params):
    ops, points, rate, eff, op_row, point_row, dram_min, a_stream, occupancy, occupancy_row, cand = _case(
        params, 7, 40, engine.KEEP_CANDIDATES + 1, 1.0, True, False)
    points[:, 13] = 1.0  # every candidate splits K: none is feasible
    occupancy_row = np.zeros(40, dtype=np.int64)
    args = (ops, points, rate, eff, op_row, point_row, dram_min, a_stream, occupancy, occupancy_row, cand)
    got = np.empty((len(engine.OUT_FIELDS), 40))
    engine.search(*args, 64.0, 4.0, got)
    np.testing.assert_array_equal(got, _oracle(*args))
