"""The compiled GEMM search skips a candidate whose score's lower bound no row's held score exceeds
(``gemm_search._dominated``), where a block's values are bounded (``_rows_bounded``, ``_op_bounded``): the
figures stay those of the one-row-at-a-time oracle to the bit (many candidates, ties between equal
candidates, split-K, rows at and beyond the bounds), and the bound never exceeds a feasible row's score."""

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
    return GPUParams.from_devices([presets.load_preset("gpu/v100-sxm2-16gb"), presets.load_preset("gpu/t4"),
                                   presets.load_preset("gpu/h100-sxm5-80gb")])


def _case(params, seed, n_ops, n_rows, n_cand, twins, edge):
    """Search arguments of ``n_rows`` op-major rows of ``n_ops`` GEMMs over ``n_cand`` candidates of the tile
    table (``twins``: each candidate twice, so that every score ties with its twin); ``edge``: a point value
    set to a bound of the pruned range or beyond it."""
    rng = np.random.default_rng(seed)
    ops = np.column_stack([rng.integers(1, 20000, n_ops), rng.integers(1, 9000, n_ops), rng.integers(1, 30000, n_ops),
                           rng.integers(1, 40, n_ops), rng.choice([1.0, 2.0, 4.0], (n_ops, 3))]).astype(np.float64)
    points = kn._point_table([getattr(params, f) for f in engine.POINT_FIELDS], params.n)
    points = points * rng.choice([0.5, 1.0, 2.0], points.shape)
    points[:, 13] = rng.choice([1.0, 4.0, 16.0, np.nan], params.n)  # the split-K limit (NaN: none)
    if edge is not None:
        field, value = edge
        points[rng.integers(0, params.n), field] = value
    table = kn.SEARCH_TABLE
    cand = table[:, np.sort(rng.choice(table.shape[1], n_cand, replace=False))]
    if twins:
        cand = np.repeat(cand, 2, axis=1)
    cand = np.ascontiguousarray(cand)
    occupancy = rng.choice([0.0, 1.0, 2.0, 3.0, 8.0], (2, cand.shape[1]))
    op_row = np.sort(rng.integers(0, n_ops, n_rows)).astype(np.int64)
    point_row = rng.integers(0, params.n, n_rows).astype(np.int64)
    dram_min = rng.random(n_rows) * 1e9 * rng.integers(0, 2, n_rows)
    rate, eff = params.tensor_flop_per_cycle_per_sm["fp16"], params.tensor_efficiency
    return (ops, points, rate * rng.choice([0.5, 1.0], params.n), eff, op_row, point_row, dram_min,
            rng.random(n_rows), occupancy, rng.integers(0, 2, n_rows).astype(np.int64), cand)


_EDGES = st.none() | st.tuples(st.sampled_from([0, 1, 2, 3, 4, 6, 8, 9, 10, 12]),
                               st.sampled_from([engine.SMALL, engine.BIG, 0.5 * engine.SMALL, 2.0 * engine.BIG,
                                                0.0, np.inf, np.nan]))


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_ops=st.integers(1, 3), n_rows=st.integers(2, 200),
       n_cand=st.sampled_from([engine.KEEP_CANDIDATES + 1, 20, 55]), twins=st.booleans(), edge=_EDGES)
def test_pruned_search_equals_the_oracle(params, seed, n_ops, n_rows, n_cand, twins, edge):
    args = _case(params, seed, n_ops, n_rows, n_cand, twins, edge)
    got = np.empty((len(engine.OUT_FIELDS), n_rows))
    engine.search(*args, 64.0, 4.0, got)
    np.testing.assert_array_equal(got, _oracle(*args))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_rows=st.integers(1, engine.BLOCK_ROWS), split=st.sampled_from([0, 3, 4]))
def test_the_bound_is_below_every_feasible_score(params, seed, n_rows, split):
    # _dominated says "dominated" only if no row's score is below its held score (the bound is at most the
    # score), and does below held scores of zero (the bound is a number no less than zero).
    ops, points, rate, eff, _, _, dram_min, a_stream, *_ = _case(params, seed, 1, n_rows, 55, False, None)
    points[:, 1] = np.maximum(points[:, 1], 2.0)  # a pipeline stage in flight (none: the rows are not bounded)
    rng = np.random.default_rng(seed)
    cand = kn.SEARCH_TABLE
    n_cand = cand.shape[1]
    oc = np.empty(len(engine.OP_CANDIDATE_FIELDS) * n_cand)
    engine._op_candidates(ops[0], cand, 64.0, 4.0, oc)
    rv = np.empty(len(engine.ROW_FIELDS) * engine.BLOCK_ROWS)
    point_row = rng.integers(0, params.n, n_rows).astype(np.int64)
    engine._row_values(points, rate, eff, point_row, dram_min[:n_rows], a_stream[:n_rows], 0, n_rows, rv)
    assert engine._rows_bounded(rv, n_rows)
    rv_unbounded = rv.copy()
    rv_unbounded[engine.BLOCK_ROWS + n_rows - 1] = 0.0  # no stage in flight: a latency-bound bandwidth of zero
    assert not engine._rows_bounded(rv_unbounded, n_rows)
    j = int(rng.integers(0, n_cand // 5)) * 5 + split  # a candidate of split-K 1, 8 or 16
    occ = rng.choice([0.0, 1.0, 2.0, 4.0], engine.BLOCK_ROWS)
    scores = np.array([engine._candidate(oc, n_cand, j, rv, i, occ[i], cand[3, j])[0] for i in range(n_rows)])
    no_reduce = not cand[3, j] > 1.0
    for factor in (0.0, 0.5, 0.9, 1.0, 1.0 + 1e-15, 2.0):
        held = np.full(engine.BLOCK_ROWS, np.inf)
        with np.errstate(invalid="ignore"):  # an infeasible row's inf score times zero
            held[:n_rows] = scores * factor
        dominated = engine._dominated(oc, n_cand, j, rv, n_rows, occ, cand[3, j], held, no_reduce)
        if dominated:
            assert not (scores < held[:n_rows]).any()
        if factor == 0.0:
            assert dominated
