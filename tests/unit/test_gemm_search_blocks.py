"""The compiled GEMM search's block variants give the one-row-at-a-time figures to the bit.

A block of rows is scored with two quotients known where the whole block allows it (a B-tile share
of exactly 1 where no cluster exceeds one CTA, a zero split-K reduction for a candidate without
split-K), and with few candidates each row's figures are kept as the scoring takes a candidate
instead of being computed again (``gemm_search.KEEP_CANDIDATES``). Each variant is checked against
the uncompiled oracle of ``test_gemm_search``: clusters of 1 and above, split-K candidates or none,
few candidates or many, NaN tile counts, infeasible candidates.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_gemm_search import _oracle

import archsim.presets as presets
from archsim.cost import gemm_search as engine
from archsim.cost import kernels as kn
from archsim.cost.params import GPUParams


@pytest.fixture(scope="module")
def params():
    return GPUParams.from_devices([presets.load_preset("gpu/v100-sxm2-16gb"),
                                   presets.load_preset("gpu/h100-sxm5-80gb")])


def _case(params, seed, n_rows, n_cand, cluster, split_k, nan_m):
    """Search arguments of ``n_rows`` rows of two GEMMs (op-major) over ``n_cand`` candidates."""
    rng = np.random.default_rng(seed)
    ops = np.asarray([[rng.integers(1, 9000), rng.integers(1, 9000), rng.integers(1, 30000), 1, 2.0, 2.0, 2.0],
                      [rng.integers(1, 500), rng.integers(1, 500), rng.integers(1, 3000), 2, 2.0, 2.0, 2.0]],
                     dtype=np.float64)
    if nan_m:
        ops[1, 0] = np.nan
    points = kn._point_table([getattr(params, f) for f in engine.POINT_FIELDS], params.n)
    points[:, 12] = cluster
    points[:, 13] = 16.0
    table = kn.SEARCH_TABLE
    columns = np.flatnonzero(table[3] > 1.0 if split_k else table[3] == 1.0)
    cand = np.ascontiguousarray(table[:, np.sort(rng.choice(columns, min(n_cand, len(columns)), replace=False))])
    occupancy = rng.choice([0.0, 1.0, 2.0, 4.0], (2, cand.shape[1]))
    op_row = np.sort(rng.integers(0, 2, n_rows)).astype(np.int64)
    point_row = rng.integers(0, params.n, n_rows).astype(np.int64)
    dram_min = rng.random(n_rows) * 1e9
    rate, eff = params.tensor_flop_per_cycle_per_sm["fp16"], params.tensor_efficiency
    return (ops, points, rate, eff, op_row, point_row, dram_min, rng.random(n_rows), occupancy,
            rng.integers(0, 2, n_rows).astype(np.int64), cand)


@settings(max_examples=16, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_rows=st.integers(2, 150),
       n_cand=st.sampled_from([1, 3, engine.KEEP_CANDIDATES, engine.KEEP_CANDIDATES + 1, 40]),
       cluster=st.sampled_from([1.0, 0.5, 2.0, np.nan]), split_k=st.booleans(), nan_m=st.booleans())
def test_block_variants_equal_the_oracle(params, seed, n_rows, n_cand, cluster, split_k, nan_m):
    args = _case(params, seed, n_rows, n_cand, cluster, split_k, nan_m)
    got = np.empty((len(engine.OUT_FIELDS), n_rows))
    engine.search(*args, 64.0, 4.0, got)
    np.testing.assert_array_equal(got, _oracle(*args))


def test_zero_reduce_row_value_is_the_quotient(params):
    # The row table's reduction time of a candidate without split-K is 0.0 / dram_peak (NaN at 0).
    points = kn._point_table([getattr(params, f) for f in engine.POINT_FIELDS], params.n)
    points[1, 6] = 0.0
    rv = np.empty(len(engine.ROW_FIELDS) * engine.BLOCK_ROWS)
    rows = np.arange(params.n, dtype=np.int64)
    with np.errstate(all="ignore"):
        engine._row_values.py_func(points, np.ones(params.n), np.ones(params.n), rows, np.zeros(params.n),
                                   np.ones(params.n), 0, params.n, rv)
    at = engine.ROW_FIELDS.index("zero_reduce_s") * engine.BLOCK_ROWS
    assert rv[at] == 0.0 and np.isnan(rv[at + 1])
