"""The compiled GEMM tile search (archsim.cost.gemm_search) against a brute-force oracle.

The oracle runs the same kernel with one candidate at a time and takes the first candidate of
minimum time + launches x launch overhead, as ``numpy.argmin`` would: the full search must report
exactly that candidate's figures. Also: one GEMM alone equals the same GEMM inside a grid, and a
hand-computed tile.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import archsim.presets as presets
from archsim.cost import gemm_search as engine
from archsim.cost import kernels as kn
from archsim.cost.params import GPUParams


@pytest.fixture(scope="module")
def params():
    base = presets.load_preset("gpu/v100-sxm2-16gb")
    dump = base.model_dump()
    small = presets.validate_hardware({**dump, "sm_count": 7, "clock": "0.9 GHz",
                                       "dram": {**dump["dram"], "bandwidth": "120 GB/s"}})
    return GPUParams.from_devices([base, small, presets.load_preset("gpu/h100-sxm5-80gb")])


def _run(p, op, cand, dram_min, a_stream):
    """The compiled search of one GEMM ``op`` (7 values) at every point of ``p`` over the tile-table
    columns ``cand`` only (fp16 Tensor Cores)."""
    occupancy, occ_row = kn._occupancy_table(p, np.full(p.n, op[4]), np.full(p.n, op[5]))
    rows = np.arange(p.n, dtype=np.int64)
    got = kn._search(p, np.asarray([op], dtype=np.float64), np.zeros(p.n, dtype=np.int64), rows,
                     p.tensor_flop_per_cycle_per_sm["fp16"], p.tensor_efficiency, dram_min, a_stream,
                     np.ascontiguousarray(occupancy[:, cand]), occ_row, candidates=cand)
    return {name: getattr(got, name) for name in engine.OUT_FIELDS}


@settings(max_examples=40, deadline=None)
@given(m=st.integers(1, 20000), n=st.integers(1, 9000), k=st.integers(1, 40000), batch=st.integers(1, 4),
       elem=st.sampled_from([2.0, 4.0]), dram_frac=st.floats(0.0, 1.0), a_stream=st.floats(0.1, 1.0))
def test_search_picks_the_brute_force_best_candidate(params, m, n, k, batch, elem, dram_frac, a_stream):
    op = (m, n, k, batch, elem, elem, elem)
    dram_min = dram_frac * (m * k + k * n + m * n) * elem * batch
    candidates = len(kn.TILES) * len(kn.SPLIT_K)
    full = _run(params, op, np.arange(candidates), dram_min, a_stream)
    alone = [_run(params, op, np.asarray([j]), dram_min, a_stream) for j in range(candidates)]
    score = np.stack([a["time_s"] + a["launches"] * params.launch_overhead_s for a in alone])
    best = np.argmin(score, axis=0)
    for point in range(params.n):
        chosen = alone[best[point]]
        for name in engine.OUT_FIELDS:
            assert full[name][point] == chosen[name][point], (name, point)


def test_one_gemm_equals_the_same_gemm_in_a_grid(params):
    rate, eff = params.tensor_flop_per_cycle_per_sm["fp16"], params.tensor_efficiency
    shapes = np.asarray([[4096, 1024, 768, 1], [35, 8192, 500, 2], [128, 64, 4096, 12]], dtype=np.float64)
    e = np.full(3, 2.0)
    dram = np.arange(1, 3 * params.n + 1, dtype=np.float64) * 1e6
    grid = kn.gpu_gemm_grid(params, *shapes.T, e, e, e, rate, eff, dram, np.ones(3 * params.n))
    for g, (m, n, k, batch) in enumerate(shapes):
        one = kn.gpu_gemm(params, m, n, k, batch, 2.0, 2.0, 2.0, rate, eff, dram[g * params.n:(g + 1) * params.n])
        for name in engine.OUT_FIELDS:
            np.testing.assert_array_equal(getattr(grid, name)[g * params.n:(g + 1) * params.n], getattr(one, name),
                                          err_msg=name)


def test_rows_in_any_op_order_equal_op_major_rows(params):
    # The search builds a GEMM's point-free candidate table when its rows begin (once per GEMM in
    # an op-major pass): rows of interleaved GEMMs, which rebuild it at every row, give the same bits.
    rate, eff = params.tensor_flop_per_cycle_per_sm["fp16"], params.tensor_efficiency
    ops = np.asarray([[4096, 1024, 768, 1, 2, 2, 2], [35, 8192, 500, 2, 2, 2, 2]], dtype=np.float64)
    h = params.n
    occupancy, occ_row = kn._occupancy_table(params, np.full(h, 2.0), np.full(h, 2.0))
    points = np.arange(h, dtype=np.int64)

    def run(op_row, point_row):
        dram = 1e6 * (1.0 + op_row + 3.0 * point_row)
        got = kn._search(params, ops, op_row, point_row, rate, eff, dram, 0.5 + 0.1 * op_row, occupancy,
                         occ_row[point_row])
        return np.stack([getattr(got, name) for name in engine.OUT_FIELDS])

    major = run(np.repeat(np.arange(2, dtype=np.int64), h), np.tile(points, 2))
    mixed = run(np.tile(np.arange(2, dtype=np.int64), h), np.repeat(points, 2))
    np.testing.assert_array_equal(mixed.reshape(-1, h, 2).transpose(0, 2, 1).reshape(len(engine.OUT_FIELDS), -1),
                                  major)


def test_single_wave_tile_by_hand(params):
    # A 256x128x64 fp16 GEMM restricted to the 256x128 tile without split-K on the V100 (point 0):
    # bk = 64 B / 2 B = 32; k_iters = ceil(64 / 32) = 2, so k_cta = 64; one block (ctas = 1) runs one wave.
    # FLOP of the block = 2 x 256 x 128 x 64 = 4,194,304; the SM's rate is 1024 FLOP/cycle x clock x efficiency.
    # Shared-memory traffic per block: stage = (256 x 2 + 128 x 2) x 32 = 24,576 B per k-slice, written once
    # and read by 8 warps arranged 2 x 4: (256 x 2 x 4 + 128 x 2 x 2) x 32 = 81,920 B per slice -> 2 x
    # (24,576 + 81,920) = 212,992 B. L2 operand traffic: (256 x 2 + 128 x 2) x 64 + 256 x 128 x 2 = 114,688 B.
    tile = kn.TILES.index((256, 128, 8)) * len(kn.SPLIT_K)
    out = _run(params, (256, 128, 64, 1, 2.0, 2.0, 2.0), np.asarray([tile]), 0.0, 1.0)
    v100 = presets.load_preset("gpu/v100-sxm2-16gb")
    sm_rate = 1024 * v100.clock_hz * v100.efficiency.tensor_efficiency
    assert out["waves"][0] == 1.0 and out["split_k"][0] == 1.0 and out["bm"][0] == 256.0
    assert out["flop_executed"][0] == 4_194_304.0
    assert out["compute_s"][0] == pytest.approx(4_194_304.0 / sm_rate, rel=1e-12)
    assert out["l1_bytes"][0] == 212_992.0
    assert out["l2_bytes"][0] == 114_688.0
    assert out["dram_bytes"][0] == 0.0


def _oracle(ops, points, rate, eff, op_row, point_row, dram_min, a_stream, occupancy, occupancy_row, cand):
    """The search one row and one candidate at a time, in Python (the kernel's functions uncompiled):
    every candidate's score, the first minimum in the candidates' order (a NaN score wins), and that
    candidate's figures as :data:`engine.OUT_FIELDS` lists them."""
    n_cand = cand.shape[1]
    out = np.empty((len(engine.OUT_FIELDS), len(op_row)))
    oc = np.empty(len(engine.OP_CANDIDATE_FIELDS) * n_cand)
    rv = np.empty(len(engine.ROW_FIELDS) * engine.BLOCK_ROWS)
    model = engine._candidate.py_func
    with np.errstate(all="ignore"):
        for r in range(len(op_row)):
            engine._op_candidates.py_func(ops[op_row[r]], cand, 64.0, 4.0, oc)
            engine._row_values.py_func(points, rate, eff, point_row[r:r + 1], dram_min[r:r + 1], a_stream[r:r + 1],
                                       0, 1, rv)
            occ = occupancy[occupancy_row[r]]
            scores = [model(oc, n_cand, j, rv, 0, occ[j], cand[3, j])[0] for j in range(n_cand)]
            best = 0
            for j in range(1, n_cand):
                if scores[j] < scores[best] or (np.isnan(scores[j]) and not np.isnan(scores[best])):
                    best = j
            (_, time, compute, l1, l2, dram, fill, reduce_s, reduce_bytes, launches, ctas, slots, waves, flop_cta,
             l1_cta, l2_total, dram_kernel) = model(oc, n_cand, best, rv, 0, occ[best], cand[3, best])
            bps = occ[best]
            occupancy_ratio = (engine._min(1.0, ctas / engine._max(waves, 1.0) / engine._max(slots, 1.0)) * bps
                               * (cand[2, best] / 32.0) / points[point_row[r], 11])
            out[:, r] = (time, compute, l1, l2, dram + reduce_s, fill, launches, ctas * flop_cta, ctas * l1_cta,
                         l2_total + reduce_bytes, dram_kernel + reduce_bytes, cand[0, best], cand[1, best],
                         cand[3, best], waves, bps, occupancy_ratio)
    return out


_ODD = st.sampled_from([0.0, 1.0, -1.0, np.inf, np.nan])


@settings(max_examples=12, deadline=None)
@given(data=st.data(), n_ops=st.integers(1, 3), n_rows=st.integers(1, 150), op_major=st.booleans(),
       n_cand=st.integers(1, 12), odd=st.lists(st.tuples(st.integers(0, 10**6), _ODD), max_size=4))
def test_blocked_search_equals_one_row_at_a_time(params, data, n_ops, n_rows, op_major, n_cand, odd):
    # Rows of one GEMM are searched in blocks (each candidate over a block's rows), a lone row by its
    # candidates: both give the one-row-at-a-time figures, ties, NaN and infeasible candidates included.
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    ops = np.column_stack([rng.integers(1, 9000, n_ops), rng.integers(1, 9000, n_ops), rng.integers(1, 30000, n_ops),
                           rng.integers(1, 4, n_ops), rng.choice([1.0, 2.0, 4.0], (n_ops, 3))]).astype(np.float64)
    rate, eff = params.tensor_flop_per_cycle_per_sm["fp16"], params.tensor_efficiency
    points = kn._point_table([getattr(params, f) for f in engine.POINT_FIELDS], params.n)
    points = points * rng.choice([0.5, 1.0, 2.0], points.shape)
    points[:, 13] = rng.choice([1.0, 4.0, 16.0], params.n)
    for flat, value in odd:  # a few zero, negative, infinite or NaN point values
        points.flat[flat % points.size] = value
    op_row = np.sort(rng.integers(0, n_ops, n_rows)) if op_major else rng.integers(0, n_ops, n_rows)
    point_row = rng.integers(0, params.n, n_rows)
    table = np.stack([kn.TILE_TABLE[i] for i in (0, 1, 2, 4)])
    cand = np.ascontiguousarray(table[:, np.sort(rng.choice(table.shape[1], n_cand, replace=False))])
    occupancy = rng.choice([0.0, 1.0, 2.0, 3.0, 8.0], (2, n_cand))
    occupancy_row = rng.integers(0, 2, n_rows)
    dram_min = rng.random(n_rows) * 1e9 * rng.integers(0, 2, n_rows)
    a_stream = rng.random(n_rows)
    args = (ops, points, rate * rng.choice([0.5, 1.0], params.n), eff, op_row.astype(np.int64),
            point_row.astype(np.int64), dram_min, a_stream, occupancy, occupancy_row.astype(np.int64), cand)
    got = np.empty((len(engine.OUT_FIELDS), n_rows))
    engine.search(*args, 64.0, 4.0, got)
    np.testing.assert_array_equal(got, _oracle(*args))
