"""The numba kernels behind :func:`archsim.cost.kernels.gpu_gemm`: every tile candidate of every row, the fastest kept.

A row is one GEMM on one hardware point. For each row the kernel evaluates the model of
:mod:`archsim.cost.kernels` (waves, occupancy, Little's-law bandwidth, pipeline fill, split-K reduction)
for every (tile, split-K) candidate, keeps the candidate of minimum time including its launch
overheads (the first on a tie, as ``numpy.argmin``; a NaN time wins, as there), and writes that
candidate's figures. The arithmetic is written out operation by operation in the order of the
formulas' documentation, in IEEE double precision without reassociation or contraction (numba's
default, no ``fastmath``) and with numpy's division semantics (``error_model="numpy"``: x / 0 is
inf or NaN, never an exception).

Doing this compiled keeps nothing of size rows x candidates in memory: a sweep of thousands of
points then costs a few nanoseconds per candidate instead of a few dozen numpy temporaries per
candidate. The values that depend on the GEMM and the candidate only (tile and block counts,
per-block FLOP and bytes, split-K bytes) are computed once where a GEMM's rows begin
(:func:`_op_candidates`; once per GEMM in an op-major stacked pass), not once per point; those of a
row's point, once per row (:func:`_row_values`). A GEMM's consecutive rows are searched in blocks:
each candidate's model runs over the block's rows in one loop (SIMD across the rows, the divisions
of the model being its cost), the rows' running minimum kept in the candidates' order, so the choice
is the one-row-at-a-time choice to the last bit. With many candidates, a candidate whose score's lower
bound (its compute time in place of the slowest of its times) no row's held score exceeds is skipped
(:func:`_dominated`), where the block's values lie in ranges in which no score can be NaN.

:func:`mapper_rows` is the L2 tiling mapper of :func:`archsim.cost.traffic.gemm_bytes_rows` (the DRAM
bytes the search starts from), compiled for the same reason: one call for all of an estimate's GEMMs.
:func:`stream_rows` is the streaming-kernel model of :func:`archsim.cost.kernels.gpu_stream` over a
stacked pass's rows, in one loop instead of a few dozen numpy passes. :func:`gemm_rows` and
:func:`assemble_rows` are, for the same reason, what :func:`archsim.cost.gpu.gemm_parts` and
:func:`archsim.cost.gpu.assemble` compute from a stacked class's kernels (times, bytes by level, write
shares, host dispatch, energy by component) when the rows are many: one loop per figure over each op's
points instead of a numpy pass and a temporary per operation.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

__all__ = ["OP_FIELDS", "POINT_FIELDS", "OUT_FIELDS", "OP_CANDIDATE_FIELDS", "ROW_FIELDS", "search", "mapper_rows",
           "STREAM_POINT_FIELDS", "STREAM_OUT_FIELDS", "stream_rows", "ASSEMBLE_POINT_FIELDS", "ASSEMBLE_OUT_FIELDS",
           "assemble_rows", "GEMM_OP_FIELDS", "GEMM_POINT_FIELDS", "GEMM_ROWS_OUT_FIELDS", "gemm_rows"]

OP_FIELDS = ("m", "n", "k", "batch", "a_bytes", "b_bytes", "c_bytes")
"""Columns of the GEMM table (one row per distinct GEMM)."""

POINT_FIELDS = ("sm_count", "gemm_pipeline_stages", "clock_hz", "l1_bandwidth_per_sm_bytes_per_s",
                "l2_bandwidth_bytes_per_s", "l2_bandwidth_efficiency", "dram_bandwidth_bytes_per_s",
                "dram_bandwidth_efficiency", "l2_latency_s", "dram_latency_s", "launch_overhead_s", "max_warps",
                "gemm_cluster_size", "gemm_max_split_k")
"""Columns of the point table (one row per hardware point): fields of the parameter pack (the GEMM
unit's rate and achievable fraction at each point are passed beside it)."""

OUT_FIELDS = ("time_s", "compute_s", "l1_s", "l2_s", "dram_s", "fill_s", "launches", "flop_executed", "l1_bytes",
              "l2_bytes", "dram_bytes", "bm", "bn", "split_k", "waves", "blocks_per_sm", "achieved_occupancy")
"""Rows of the output table: the fields of :class:`archsim.cost.kernels.GemmKernel`, in order."""


@njit(cache=True, inline="always", error_model="numpy")
def _max(a, b):  # pragma: no cover - numba
    """``numpy.maximum`` of two floats (NaN propagates)."""
    return a if (a >= b or a != a) else b


@njit(cache=True, inline="always", error_model="numpy")
def _min(a, b):  # pragma: no cover - numba
    """``numpy.minimum`` of two floats (NaN propagates)."""
    return a if (a <= b or a != a) else b


OP_CANDIDATE_FIELDS = ("stage_bytes", "k_cta", "ctas", "flop_cta", "m_tiles", "bm_a", "bn_b",
                       "c_term", "l1_cta", "partial_bytes", "reduce_bytes")
"""Rows of a GEMM's candidate table (:func:`_op_candidates`): the model's values that depend on the
GEMM and the candidate only, not on the hardware point."""


@njit(cache=True, error_model="numpy")
def _op_candidates(op, cand, k_slice_bytes, acc_bytes, out):  # pragma: no cover - numba
    """Fill ``out`` (flat, field-major: value ``f`` of candidate ``j`` at ``f * candidates + j``) with GEMM
    ``op``'s point-free values of every candidate (:data:`OP_CANDIDATE_FIELDS`): see
    :mod:`archsim.cost.kernels` for the formulas. Each is the operation the per-point model would make
    on the same numbers (a sweep's points then share them)."""
    m, n, k, batch, a, b, c = op[0], op[1], op[2], op[3], op[4], op[5], op[6]
    elem = _max(a, b)
    bk = k_slice_bytes / elem
    nc = cand.shape[1]
    for j in range(nc):
        bm, bn, threads, split = cand[0, j], cand[1, j], cand[2, j], cand[3, j]
        stage_bytes = (bm * a + bn * b) * bk
        k_iters = np.ceil(np.ceil(k / bk) / split)
        k_cta = k_iters * bk
        m_tiles = np.ceil(m / bm)
        tiles_mn = m_tiles * np.ceil(n / bn) * batch
        # Shared memory: every k-slice is written once and read by the warps; a warp tile of the
        # (bm/2 x bn/warps*2) CUTLASS arrangement reads its A rows and B columns, so smem reads per block
        # per slice are (bm * wn_count + bn * wm_count) elements; with wm_count = 2 warp rows.
        warps = threads / 32.0
        wm_count = _min(2.0, warps)
        wn_count = warps / wm_count
        out[j] = stage_bytes
        out[nc + j] = k_cta
        out[2 * nc + j] = tiles_mn * split
        out[3 * nc + j] = 2.0 * bm * bn * k_cta
        out[4 * nc + j] = m_tiles
        out[5 * nc + j] = bm * a
        out[6 * nc + j] = bn * b
        out[7 * nc + j] = bm * bn * (acc_bytes if split > 1.0 else c)
        out[8 * nc + j] = stage_bytes * k_iters + (bm * a * wn_count + bn * b * wm_count) * bk * k_iters
        out[9 * nc + j] = batch * m * n * acc_bytes * split if split > 1.0 else 0.0
        # Parallel split-K: a reduction kernel reads the partials and writes C.
        out[10 * nc + j] = batch * m * n * (acc_bytes * split + c) if split > 1.0 else 0.0


BLOCK_ROWS = 64
"""Rows of one GEMM searched together: the model runs over a block's rows in one loop per candidate
(SIMD across rows), on per-row tables of this many columns."""

ROW_FIELDS = ("sm_count", "stages_in_flight", "sm_rate", "l1_bandwidth_per_sm_bytes_per_s", "inv_l2_peak",
              "dram_peak", "inv_dram_peak", "l2_latency_s", "dram_latency_s", "fill_latency_s", "launch_overhead_s",
              "gemm_cluster_size", "gemm_max_split_k", "dram_min", "a_stream", "max_warps", "zero_reduce_s")
"""Rows of a block's per-row table (:func:`_row_values`; flat, value ``f`` of row ``i`` at
``f * BLOCK_ROWS + i``): a row's point values as the model combines them before any candidate (its
peaks, their reciprocals, the SM's FLOP rate), the row's DRAM bytes and A-stream factor, the SM's
warp limit (for the achieved occupancy), and the split-K reduction time of a candidate without one
(``0.0 / dram_peak``: the quotient the model takes for its zero reduction bytes)."""

KEEP_CANDIDATES = 8
"""Most candidates of a search whose blocks keep each row's figures as the scoring takes a candidate
(:func:`_block_best`'s ``keep``) instead of running the model again for the chosen ones: with few
candidates (a convolution library's tiles) the stores cost less than the second model run."""

CHOSEN_FIELDS = (*OP_CANDIDATE_FIELDS, "blocks_per_sm", "split_k", "bm", "bn", "threads")
"""Rows of a block's table of each row's chosen candidate (:func:`_block_out`; flat like
:data:`ROW_FIELDS`): its values of the GEMM's candidate table, its blocks per SM on the row's point
and its tile-table values."""


@njit(cache=True, error_model="numpy")
def _row_values(points, unit_rate, unit_efficiency, point_row, dram_min, a_stream, start, stop,
                rv):  # pragma: no cover - numba
    """Fill the first ``stop - start`` columns of the per-row table ``rv`` (:data:`ROW_FIELDS`) with rows
    ``start:stop``: each the operation the per-candidate model made on the same numbers."""
    for i in range(stop - start):
        r = start + i
        point = point_row[r]
        pt = points[point]  # a row of POINT_FIELDS
        l2_peak = pt[4] * pt[5]
        dram_peak = pt[6] * pt[7]
        rv[i] = pt[0]
        rv[BLOCK_ROWS + i] = pt[1] - 1.0
        rv[2 * BLOCK_ROWS + i] = unit_rate[point] * pt[2] * unit_efficiency[point]
        rv[3 * BLOCK_ROWS + i] = pt[3]
        rv[4 * BLOCK_ROWS + i] = 1.0 / l2_peak
        rv[5 * BLOCK_ROWS + i] = dram_peak
        rv[6 * BLOCK_ROWS + i] = 1.0 / dram_peak
        rv[7 * BLOCK_ROWS + i] = pt[8]
        rv[8 * BLOCK_ROWS + i] = pt[9]
        rv[9 * BLOCK_ROWS + i] = pt[8] + pt[9]
        rv[10 * BLOCK_ROWS + i] = pt[10]
        rv[11 * BLOCK_ROWS + i] = pt[12]
        rv[12 * BLOCK_ROWS + i] = pt[13]
        rv[13 * BLOCK_ROWS + i] = dram_min[r]
        rv[14 * BLOCK_ROWS + i] = a_stream[r]
        rv[15 * BLOCK_ROWS + i] = pt[11]
        rv[16 * BLOCK_ROWS + i] = 0.0 / dram_peak


@njit(cache=True, inline="always", error_model="numpy")
def _candidate(c, cs, jc, rv, i, bps, split, unit_share=False, no_reduce=False):  # pragma: no cover - numba
    """The kernel model of one (GEMM, row ``i``, candidate): see :mod:`archsim.cost.kernels` for the
    formulas. The candidate's point-free values (:data:`OP_CANDIDATE_FIELDS`) are ``c[f * cs + jc]``
    (the GEMM's candidate table, or a block's table of each row's chosen candidate), the row's values
    ``rv[f * BLOCK_ROWS + i]`` (:func:`_row_values`).

    Two quotients are known without their division where the caller knows it of a whole block:
    ``unit_share`` (the cluster size is at most 1 and ``m_tiles`` a number, so the B-tile share is
    exactly 1.0 and ``bn_b / share`` is ``bn_b``), ``no_reduce`` (a candidate without split-K, whose
    reduction bytes are 0.0: its reduction time is the row's ``0.0 / dram_peak``). The floats are
    those of the divisions.

    Returns (score, time, compute, l1, l2, dram, fill, reduce_s, reduce_bytes, launches, ctas, slots,
    waves, flop_cta, l1_cta, l2_total, dram_kernel); ``score`` = time + launches x launch overhead.
    """
    sm = rv[i]
    stages_in_flight = rv[BLOCK_ROWS + i]
    sm_rate = rv[2 * BLOCK_ROWS + i]
    l1_rate = rv[3 * BLOCK_ROWS + i]
    inv_l2_peak = rv[4 * BLOCK_ROWS + i]
    dram_peak = rv[5 * BLOCK_ROWS + i]
    inv_dram_peak = rv[6 * BLOCK_ROWS + i]
    l2_lat = rv[7 * BLOCK_ROWS + i]
    dram_lat = rv[8 * BLOCK_ROWS + i]
    fill_lat = rv[9 * BLOCK_ROWS + i]
    launch_overhead = rv[10 * BLOCK_ROWS + i]
    cluster = rv[11 * BLOCK_ROWS + i]
    max_split = rv[12 * BLOCK_ROWS + i]
    dram_min = rv[13 * BLOCK_ROWS + i]
    a_stream = rv[14 * BLOCK_ROWS + i]
    stage_bytes = c[jc]
    k_cta = c[cs + jc]
    ctas = c[2 * cs + jc]
    flop_cta = c[3 * cs + jc]
    m_tiles = c[4 * cs + jc]
    bm_a = c[5 * cs + jc]
    bn_b = c[6 * cs + jc]
    c_term = c[7 * cs + jc]
    l1_cta = c[8 * cs + jc]
    partial_bytes = c[9 * cs + jc]
    reduce_bytes = c[10 * cs + jc]
    slots = sm * bps
    full = np.floor(ctas / _max(slots, 1.0))
    tail = ctas - full * slots
    # Per-block work. A cluster of CTAs along M (Hopper TMA multicast) fetches each B tile from L2 once
    # for all of them: B's L2 traffic per block is divided by the CTAs that share it.
    b_cta = bn_b if unit_share else bn_b / _max(_min(cluster, m_tiles), 1.0)
    l2_cta = (bm_a * a_stream + b_cta) * k_cta + c_term
    l2_total = ctas * l2_cta
    dram_main = _min(dram_min, l2_total)
    dram_kernel = dram_main + partial_bytes
    miss = _min(_max(dram_kernel / _max(l2_total, 1.0), 0.0), 1.0)
    latency = l2_lat + miss * dram_lat
    inflight_cta = stages_in_flight * stage_bytes
    # Compute and shared memory are quantised by waves (each SM runs its blocks in turn); L2 and DRAM
    # traffic are shared by the whole grid, at the bandwidth its resident blocks can keep in flight
    # (Little's law, combined with the peak harmonically: kernels.achievable_bandwidth).
    waves = full + (1.0 if tail > 0.0 else 0.0)
    blocks_in_turn = full * bps + np.ceil(tail / sm)
    compute = blocks_in_turn * flop_cta / sm_rate
    l1 = blocks_in_turn * l1_cta / l1_rate
    resident = _min(ctas, slots)
    lat_bw = _max(resident, 1.0) * inflight_cta / latency
    l2 = l2_total / (1.0 / (inv_l2_peak + 1.0 / lat_bw))
    dram = dram_kernel / (1.0 / (inv_dram_peak + 1.0 / lat_bw))
    t_body = _max(_max(compute, l1), _max(l2, dram))
    # The prologue of a wave loads its first k-slice cold, from DRAM through L2.
    fill = waves * fill_lat
    reduce_s = rv[16 * BLOCK_ROWS + i] if no_reduce else reduce_bytes / dram_peak
    time = t_body + fill + reduce_s
    # A candidate that does not fit on an SM, or splits K more than the library does, is never chosen.
    if not bps > 0.0 or split > max_split:
        time = math.inf
    launches = 2.0 if split > 1.0 else 1.0
    score = time + launches * launch_overhead
    return (score, time, compute, l1, l2, dram, fill, reduce_s, reduce_bytes, launches, ctas, slots, waves,
            flop_cta, l1_cta, l2_total, dram_kernel)


@njit(cache=True, error_model="numpy")
def _block_best(oc, splits, occupancy, occupancy_row, rv, start, n, occ, best_score, best, keep, res, kept,
                oc_bounded):  # pragma: no cover - numba
    """The first candidate of minimum score of each of the ``n`` rows of a block (``best``), as
    ``numpy.argmin`` over the candidates would pick it: the first on a tie, a NaN score wins.

    The scores are those of :func:`_candidate`, compared in the candidates' order: one loop over
    the rows per candidate, the rows' running minimum kept (``best_score``); a block of one row
    (a GEMM at one point) scores its candidates in one loop instead (SIMD across candidates).
    ``occ`` and ``best_score`` hold at least max(n, candidates) values.

    With ``keep`` (a block of several rows), each row's figures of the candidate it holds are kept as
    it is taken (:func:`_score_rows`; candidate 0 is scored on every row and held first, the state
    the first comparison with inf leaves), so :func:`_block_kept` writes them without running the
    model again (fewer candidates than figures: a library of few tiles).

    Without ``keep``, a candidate whose score's lower bound (:func:`_dominated`) is no less than every
    row's score held is not scored: no row would take it. Only where the block's row values
    (:func:`_rows_bounded`) and the candidate's values (``oc_bounded[j]``, :func:`_op_bounded`) lie in
    ranges where no score is NaN, so the choice is that of scoring it.
    """
    n_cand = splits.shape[0]
    if n == 1:
        for j in range(n_cand):
            occ[j] = occupancy[occupancy_row[start], j]
        for j in range(n_cand):
            best_score[j] = _candidate(oc, n_cand, j, rv, 0, occ[j], splits[j])[0]
        choice = 0
        held = best_score[0]
        for j in range(1, n_cand):
            score = best_score[j]
            if score < held or (score != score and held == held):
                choice = j
                held = score
        best[0] = choice
        return
    # An infeasible candidate (it fits on no SM, or splits K beyond the library's limit) scores
    # inf + launches x launch overhead: inf when no overhead is NaN or -inf, a score never taken. A
    # candidate infeasible on every row of the block is then skipped.
    skip_infeasible = True
    unit_cluster = True  # every row's cluster size at most 1 (a B-tile share of 1 where m_tiles is a number)
    # Rows of one SM description (one row of the occupancy table, as a sweep that keeps the SM has): a
    # candidate's blocks per SM are one number, feasible on some row where it fits and splits K at most
    # the largest limit of the rows (or a row's limit is NaN, which no split exceeds).
    row = occupancy_row[start]
    uniform = True
    unlimited = False
    limit = -math.inf
    for i in range(n):
        best_score[i] = math.inf  # a first score of inf is not taken, and candidate 0 stays the choice
        best[i] = 0
        skip_infeasible = skip_infeasible and rv[10 * BLOCK_ROWS + i] > -math.inf
        unit_cluster = unit_cluster and rv[11 * BLOCK_ROWS + i] <= 1.0
        uniform = uniform and occupancy_row[start + i] == row
        max_split = rv[12 * BLOCK_ROWS + i]
        unlimited = unlimited or max_split != max_split
        limit = max_split if max_split > limit else limit
    bounded = not keep and _rows_bounded(rv, n)  # with few candidates (keep) the bound costs more than it saves
    for j in range(n_cand):
        split = splits[j]
        feasible = not skip_infeasible or (keep and j == 0)
        if uniform:
            bps = occupancy[row, j]
            for i in range(n):
                occ[i] = bps
            feasible = feasible or (bps > 0.0 and (unlimited or not split > limit))
        else:
            for i in range(n):
                bps = occupancy[occupancy_row[start + i], j]
                occ[i] = bps
                feasible = feasible or (bps > 0.0 and not split > rv[12 * BLOCK_ROWS + i])
        if not feasible:
            continue
        m_tiles = oc[4 * n_cand + j]
        unit = unit_cluster and m_tiles == m_tiles
        no_reduce = not split > 1.0
        first = j == 0
        if bounded and not first and oc_bounded[j] and _dominated(oc, n_cand, j, rv, n, occ, split, best_score,
                                                                   no_reduce):
            continue
        # The two known quotients (_candidate) and the keeping, each loop compiled with them fixed.
        if keep:
            if unit:
                if no_reduce:
                    _score_rows(oc, n_cand, j, rv, n, occ, split, best_score, best, first, res, kept, True, True, True)
                else:
                    _score_rows(oc, n_cand, j, rv, n, occ, split, best_score, best, first, res, kept, True, False, True)
            elif no_reduce:
                _score_rows(oc, n_cand, j, rv, n, occ, split, best_score, best, first, res, kept, False, True, True)
            else:
                _score_rows(oc, n_cand, j, rv, n, occ, split, best_score, best, first, res, kept, False, False, True)
        elif unit:
            if no_reduce:
                _score_rows(oc, n_cand, j, rv, n, occ, split, best_score, best, first, res, kept, True, True, False)
            else:
                _score_rows(oc, n_cand, j, rv, n, occ, split, best_score, best, first, res, kept, True, False, False)
        elif no_reduce:
            _score_rows(oc, n_cand, j, rv, n, occ, split, best_score, best, first, res, kept, False, True, False)
        else:
            _score_rows(oc, n_cand, j, rv, n, occ, split, best_score, best, first, res, kept, False, False, False)


SMALL = 1e-30
"""Least magnitude of the positive values the search prunes with (:func:`_rows_bounded`, :func:`_op_bounded`)."""

BIG = 1e30
"""Largest magnitude of the values the search prunes with: products and quotients of a few such values are
finite, so every score of the block is a number (inf where the candidate is infeasible), never NaN."""


@njit(cache=True, inline="always", error_model="numpy")
def _within(x, low):  # pragma: no cover - numba
    """``low <= x <= BIG`` (False for NaN)."""
    return x >= low and x <= BIG


@njit(cache=True, error_model="numpy")
def _rows_bounded(rv, n):  # pragma: no cover - numba
    """Whether each of the ``n`` rows of a block has its SMs, pipeline stages in flight, rates, L2 and DRAM
    peaks (and their reciprocals) and L2 latency in [SMALL, BIG] and its DRAM latency, fill latency, launch
    overhead, cluster size, DRAM bytes and A-stream factor in [0, BIG] (the cluster size: in [-BIG, BIG])."""
    ok = True
    for i in range(n):
        for f in (0, 1, 2, 3, 4, 5, 6, 7):
            ok = ok and _within(rv[f * BLOCK_ROWS + i], SMALL)
        for f in (8, 9, 10, 13, 14):
            ok = ok and _within(rv[f * BLOCK_ROWS + i], 0.0)
        ok = ok and _within(rv[11 * BLOCK_ROWS + i], -BIG)
    return ok


@njit(cache=True, error_model="numpy")
def _op_bounded(oc, n_cand, out):  # pragma: no cover - numba
    """``out[j]``: whether candidate ``j``'s values of a GEMM's candidate table are in [0, BIG], its stage
    bytes in [SMALL, BIG]."""
    for j in range(n_cand):
        ok = _within(oc[j], SMALL)
        for f in range(1, len(OP_CANDIDATE_FIELDS)):
            ok = ok and _within(oc[f * n_cand + j], 0.0)
        out[j] = ok


@njit(cache=True, inline="always", error_model="numpy")
def _dominated(c, cs, jc, rv, n, occ, split, best_score, no_reduce):  # pragma: no cover - numba
    """Whether no row of a block (of bounded values: :func:`_rows_bounded`, :func:`_op_bounded`) would take
    candidate ``jc``: on each row it is infeasible (its score inf) or a lower bound of its score is no less
    than the score held (``best_score``; a NaN held takes nothing). The bound is :func:`_candidate`'s score
    with its compute time in place of the body's time, the maximum of its compute, L1, L2 and DRAM times:
    the same operations on the same numbers, and a rounded sum does not decrease when a term grows.

    One loop over the rows without early exit (SIMD across them), a block's infinite blocks per SM
    counting as a row that may take the candidate."""
    ctas = c[2 * cs + jc]
    flop_cta = c[3 * cs + jc]
    reduce_bytes = c[10 * cs + jc]
    launches = 2.0 if split > 1.0 else 1.0
    taken = False
    for i in range(n):
        bps = occ[i]
        sm = rv[i]
        slots = sm * bps
        full = np.floor(ctas / _max(slots, 1.0))
        tail = ctas - full * slots
        waves = full + (1.0 if tail > 0.0 else 0.0)
        blocks_in_turn = full * bps + np.ceil(tail / sm)
        compute = blocks_in_turn * flop_cta / rv[2 * BLOCK_ROWS + i]
        fill = waves * rv[9 * BLOCK_ROWS + i]
        reduce_s = rv[16 * BLOCK_ROWS + i] if no_reduce else reduce_bytes / rv[5 * BLOCK_ROWS + i]
        bound = compute + fill + reduce_s + launches * rv[10 * BLOCK_ROWS + i]
        feasible = bps > 0.0 and not split > rv[12 * BLOCK_ROWS + i]
        taken = taken | (feasible & ((bound < best_score[i]) | (bps > BIG)))
    return not taken


@njit(cache=True, inline="always", error_model="numpy")
def _put_figures(res, i, time, compute, l1, l2, dram, fill, reduce_s, reduce_bytes, launches, ctas, waves, flop_cta,
                 l1_cta, l2_total, dram_kernel, bps):  # pragma: no cover - numba
    """Row ``i``'s figures of :data:`OUT_FIELDS` that :func:`_candidate`'s values give (all but the
    tile, split-K and achieved occupancy) into ``res`` (flat, fields x ``BLOCK_ROWS``)."""
    res[i] = time
    res[BLOCK_ROWS + i] = compute
    res[2 * BLOCK_ROWS + i] = l1
    res[3 * BLOCK_ROWS + i] = l2
    res[4 * BLOCK_ROWS + i] = dram + reduce_s
    res[5 * BLOCK_ROWS + i] = fill
    res[6 * BLOCK_ROWS + i] = launches
    res[7 * BLOCK_ROWS + i] = ctas * flop_cta
    res[8 * BLOCK_ROWS + i] = ctas * l1_cta
    res[9 * BLOCK_ROWS + i] = l2_total + reduce_bytes
    res[10 * BLOCK_ROWS + i] = dram_kernel + reduce_bytes
    res[14 * BLOCK_ROWS + i] = waves
    res[15 * BLOCK_ROWS + i] = bps


@njit(cache=True, inline="always", error_model="numpy")
def _achieved_occupancy(ctas, waves, slots, bps, threads, max_warps):  # pragma: no cover - numba
    """The kernel's achieved occupancy (:data:`OUT_FIELDS`): its CTAs per wave over the SMs' CTA
    slots (at most 1), times the blocks per SM ``bps`` and warps per CTA (``threads`` / 32), over
    the SM's ``max_warps``."""
    active_avg = ctas / _max(waves, 1.0)
    return _min(1.0, active_avg / _max(slots, 1.0)) * bps * (threads / 32.0) / max_warps


@njit(cache=True, inline="always", error_model="numpy")
def _score_rows(oc, n_cand, j, rv, n, occ, split, best_score, best, first, res, kept, unit_share, no_reduce,
                keep):  # pragma: no cover - numba
    """Score candidate ``j`` on the ``n`` rows of a block (blocks per SM ``occ``) and keep each row's
    first minimum (``best_score``, ``best``; a NaN score wins), :func:`_candidate` with the block's
    known quotients. With ``keep``, a row taking the candidate (every row where ``first``, the first
    candidate) keeps its figures: those of :data:`OUT_FIELDS` the model gives (``res``; tile,
    split-K and occupancy are left to :func:`_block_kept`) and its CTAs and slots (``kept``)."""
    for i in range(n):
        (score, time, compute, l1, l2, dram, fill, reduce_s, reduce_bytes, launches, ctas, slots, waves, flop_cta,
         l1_cta, l2_total, dram_kernel) = _candidate(oc, n_cand, j, rv, i, occ[i], split, unit_share, no_reduce)
        held = best_score[i]
        take = score < held or (score != score and held == held)
        if keep:
            take = take or first
            if take:
                _put_figures(res, i, time, compute, l1, l2, dram, fill, reduce_s, reduce_bytes, launches, ctas,
                             waves, flop_cta, l1_cta, l2_total, dram_kernel, occ[i])
                kept[i] = ctas
                kept[BLOCK_ROWS + i] = slots
        best_score[i] = score if take else held
        best[i] = j if take else best[i]


@njit(cache=True, error_model="numpy")
def _block_kept(cand, rv, start, n, best, res, kept, out):  # pragma: no cover - numba
    """:func:`_block_out` of a block scored with ``keep`` (:func:`_block_best`): the model's figures of
    each row's chosen candidate are in ``res`` already; its tile, split-K and occupancy are added (the
    operations of :func:`_block_out` on the same numbers) and ``res`` copied to ``out``."""
    for i in range(n):
        j = best[i]
        ctas, slots, waves, bps = kept[i], kept[BLOCK_ROWS + i], res[14 * BLOCK_ROWS + i], res[15 * BLOCK_ROWS + i]
        res[11 * BLOCK_ROWS + i] = cand[0, j]
        res[12 * BLOCK_ROWS + i] = cand[1, j]
        res[13 * BLOCK_ROWS + i] = cand[3, j]
        res[16 * BLOCK_ROWS + i] = _achieved_occupancy(ctas, waves, slots, bps, cand[2, j], rv[15 * BLOCK_ROWS + i])
    for f in range(out.shape[0]):
        row = out[f, start:start + n]  # a view: the copy runs over contiguous rows
        for i in range(n):
            row[i] = res[f * BLOCK_ROWS + i]


@njit(cache=True, inline="always", error_model="numpy")
def _out_rows(chosen, rv, n, res, unit_share, no_reduce):  # pragma: no cover - numba
    """The figures (:data:`OUT_FIELDS`) of each of the ``n`` rows' chosen candidates (``chosen``,
    :data:`CHOSEN_FIELDS`) into ``res``: :func:`_candidate` with the block's known quotients."""
    n_fields = len(OP_CANDIDATE_FIELDS)
    for i in range(n):
        bps = chosen[n_fields * BLOCK_ROWS + i]
        split = chosen[(n_fields + 1) * BLOCK_ROWS + i]
        (_, time, compute, l1, l2, dram, fill, reduce_s, reduce_bytes, launches, ctas, slots, waves, flop_cta,
         l1_cta, l2_total, dram_kernel) = _candidate(chosen, BLOCK_ROWS, i, rv, i, bps, split, unit_share,
                                                        no_reduce)
        _put_figures(res, i, time, compute, l1, l2, dram, fill, reduce_s, reduce_bytes, launches, ctas, waves,
                     flop_cta, l1_cta, l2_total, dram_kernel, bps)
        res[11 * BLOCK_ROWS + i] = chosen[(n_fields + 2) * BLOCK_ROWS + i]
        res[12 * BLOCK_ROWS + i] = chosen[(n_fields + 3) * BLOCK_ROWS + i]
        res[13 * BLOCK_ROWS + i] = split
        res[16 * BLOCK_ROWS + i] = _achieved_occupancy(ctas, waves, slots, bps, chosen[(n_fields + 4) * BLOCK_ROWS + i],
                                               rv[15 * BLOCK_ROWS + i])


@njit(cache=True, error_model="numpy")
def _block_out(oc, cand, occupancy, occupancy_row, rv, start, n, best, chosen, res, out):  # pragma: no cover - numba
    """Write the figures of each row's chosen candidate ``best[i]`` to ``out[:, start + i]``.

    The chosen candidates' values are first gathered into ``chosen`` (:data:`CHOSEN_FIELDS`), so the
    model then runs over the rows in one loop of contiguous columns (SIMD across rows) into ``res``
    (flat, :data:`OUT_FIELDS` x ``BLOCK_ROWS``), which is copied to ``out``.
    """
    n_cand = cand.shape[1]
    n_fields = len(OP_CANDIDATE_FIELDS)
    unit_share = True  # every row's B-tile share exactly 1 (_candidate's unit_share)
    no_reduce = True  # no row's candidate splits K
    for i in range(n):
        j = best[i]
        for f in range(n_fields):
            chosen[f * BLOCK_ROWS + i] = oc[f * n_cand + j]
        chosen[n_fields * BLOCK_ROWS + i] = occupancy[occupancy_row[start + i], j]
        chosen[(n_fields + 1) * BLOCK_ROWS + i] = cand[3, j]
        chosen[(n_fields + 2) * BLOCK_ROWS + i] = cand[0, j]
        chosen[(n_fields + 3) * BLOCK_ROWS + i] = cand[1, j]
        chosen[(n_fields + 4) * BLOCK_ROWS + i] = cand[2, j]
        m_tiles = oc[4 * n_cand + j]
        unit_share = unit_share and rv[11 * BLOCK_ROWS + i] <= 1.0 and m_tiles == m_tiles
        no_reduce = no_reduce and not cand[3, j] > 1.0
    # The block's known quotients (_candidate), each loop compiled with them fixed.
    if unit_share:
        if no_reduce:
            _out_rows(chosen, rv, n, res, True, True)
        else:
            _out_rows(chosen, rv, n, res, True, False)
    elif no_reduce:
        _out_rows(chosen, rv, n, res, False, True)
    else:
        _out_rows(chosen, rv, n, res, False, False)
    for f in range(out.shape[0]):
        row = out[f, start:start + n]  # a view: the copy runs over contiguous rows
        for i in range(n):
            row[i] = res[f * BLOCK_ROWS + i]


@njit(cache=True, error_model="numpy")
def search(ops, points, unit_rate, unit_efficiency, op_row, point_row, dram_min, a_stream, occupancy, occupancy_row,
           cand, k_slice_bytes, acc_bytes, out):  # pragma: no cover - numba
    """Fill ``out`` (len(OUT_FIELDS) x rows) with the fastest candidate of every row.

    ``ops``: (G, OP_FIELDS); ``points``: (H, POINT_FIELDS), with the GEMM unit's FLOP/cycle/SM
    ``unit_rate`` and achievable fraction ``unit_efficiency`` (H,) at each point; row r is GEMM
    ``op_row[r]`` on point ``point_row[r]`` with L2-model DRAM bytes ``dram_min[r]``, A-stream factor
    ``a_stream[r]`` and blocks per SM ``occupancy[occupancy_row[r], candidate]``; ``cand``:
    (4, candidates) of bm, bn, threads, split-K.

    Consecutive rows of one GEMM (an op-major stacked pass) are searched in blocks of up to
    :data:`BLOCK_ROWS`: its candidate table is built once, each candidate is scored over the block's
    rows in one loop (:func:`_block_best`), and the chosen ones' figures are computed again over the
    rows (:func:`_block_out`), or, with at most :data:`KEEP_CANDIDATES` candidates, kept as the
    scoring takes them (:func:`_block_kept`).
    """
    n_cand = cand.shape[1]
    splits = cand[3]
    oc = np.empty(len(OP_CANDIDATE_FIELDS) * n_cand)
    rv = np.empty(len(ROW_FIELDS) * BLOCK_ROWS)
    chosen = np.empty(len(CHOSEN_FIELDS) * BLOCK_ROWS)
    res = np.empty(len(OUT_FIELDS) * BLOCK_ROWS)
    occ = np.empty(max(BLOCK_ROWS, n_cand))
    best_score = np.empty(max(BLOCK_ROWS, n_cand))
    best = np.empty(BLOCK_ROWS, dtype=np.int64)
    kept = np.empty(2 * BLOCK_ROWS)
    oc_bounded = np.empty(n_cand, dtype=np.bool_)
    keep_all = n_cand <= KEEP_CANDIDATES
    rows = op_row.shape[0]
    last_op = -1
    start = 0
    while start < rows:
        op = op_row[start]
        stop = start + 1
        while stop < rows and stop - start < BLOCK_ROWS and op_row[stop] == op:
            stop += 1
        if op != last_op:  # rows are op-major in a stacked pass: once per GEMM
            last_op = op
            _op_candidates(ops[op], cand, k_slice_bytes, acc_bytes, oc)
            _op_bounded(oc, n_cand, oc_bounded)
        n = stop - start
        _row_values(points, unit_rate, unit_efficiency, point_row, dram_min, a_stream, start, stop, rv)
        keep = keep_all and n > 1
        _block_best(oc, splits, occupancy, occupancy_row, rv, start, n, occ, best_score, best, keep, res, kept,
                    oc_bounded)
        if keep:
            _block_kept(cand, rv, start, n, best, res, kept, out)
        else:
            _block_out(oc, cand, occupancy, occupancy_row, rv, start, n, best, chosen, res, out)
        start = stop


@njit(cache=True, inline="always", error_model="numpy")
def _tile_sizes(dim, bits, out):  # pragma: no cover - numba
    """Fill ``out[:bits + 1]`` with the tile sizes the traffic mapper tries along a dimension of
    ``dim``: the powers of two ``2^0 .. 2^(bits - 1)`` (``dim`` in place of those at or above it),
    then ``dim`` itself (:func:`archsim.cost.traffic._tile_candidates`, padded with ``dim``)."""
    power = 1.0
    for i in range(bits):
        out[i] = power if power < dim else dim
        power *= 2.0
    out[bits] = dim


@njit(cache=True, error_model="numpy")
def mapper_rows(m, n, k, batch, a, b, c, a_pass, cap, bits_m, bits_n, out):  # pragma: no cover - numba
    """Fill ``out`` (R,) with :func:`archsim.cost.traffic.gemm_bytes_rows` of R GEMMs: row ``r`` is the
    minimum over its output-stationary tiles and A-/B-panel dataflows of the bytes crossing into a
    level of ``cap[r]`` bytes, each candidate's count made of the same operations in the same order as
    the array formulas there (a tile that does not fit counts as untiled); ``bits_m``, ``bits_n``: the
    powers of two tried along M and N (the bit lengths of the largest M and N)."""
    tms = np.empty(bits_m + 1)
    tns = np.empty(bits_n + 1)
    ceil_m = np.empty(bits_m + 1)
    ceil_n = np.empty(bits_n + 1)
    for r in range(m.shape[0]):
        mr, nr, kr, br, ar, bb, cr, ap, cp = m[r], n[r], k[r], batch[r], a[r], b[r], c[r], a_pass[r], cap[r]
        _tile_sizes(mr, bits_m, tms)
        _tile_sizes(nr, bits_n, tns)
        for i in range(bits_m + 1):
            ceil_m[i] = np.ceil(mr / tms[i])
        for i in range(bits_n + 1):
            ceil_n[i] = np.ceil(nr / tns[i])
        bkn = bb * kr * nr
        cmn = cr * mr * nr
        untiled = (ap * nr + bkn * mr + cmn) * br
        # Output-stationary: a C tile plus one k-slice of its A rows and B columns.
        q_os = math.inf
        for i in range(bits_m + 1):
            tm = tms[i]
            b_reads = bkn * ceil_m[i]
            for j in range(bits_n + 1):
                tn = tns[j]
                fits = tm * tn * cr + tm * ar + tn * bb <= cp
                q = (ap * ceil_n[j] + b_reads + cmn) * br if fits else untiled
                q_os = _min(q_os, q)
        a_row = ap / mr
        # A-panel resident: tm rows of A, one column of B, tm outputs.
        q_a = math.inf
        for i in range(bits_m + 1):
            tm = tms[i]
            fits = tm * a_row + kr * bb + tm * cr <= cp
            q = (ap + bkn * ceil_m[i] + cmn) * br if fits else untiled
            q_a = _min(q_a, q)
        # B-panel resident: tn columns of B, one row of A, tn outputs.
        q_b = math.inf
        for j in range(bits_n + 1):
            tn = tns[j]
            fits = tn * kr * bb + a_row + tn * cr <= cp
            q = (ap * ceil_n[j] + bkn + cmn) * br if fits else untiled
            q_b = _min(q_b, q)
        out[r] = _min(_min(q_os, q_a), q_b)


STREAM_POINT_FIELDS = ("vector_rate", "sm_count", "clock_hz", "vector_efficiency", "sfu_per_sm",
                       "l2_bandwidth_bytes_per_s", "l2_bandwidth_efficiency", "dram_bandwidth_bytes_per_s",
                       "dram_bandwidth_efficiency", "l2_latency_s", "dram_latency_s",
                       "dram_loaded_latency_coefficient", "max_warps", "warp_size", "blocks_per_sm")
"""Rows of :func:`stream_rows`' point table (one column per hardware point): the CUDA-core FLOP/cycle/SM
of the kernel's precision, fields of the parameter pack, and the default block's occupancy."""

STREAM_OUT_FIELDS = ("time_s", "compute_s", "special_s", "l2_s", "dram_s", "fill_s", "achieved_occupancy",
                     "blocks")
"""Rows of :func:`stream_rows`' output table: fields of :class:`archsim.cost.kernels.StreamKernel`."""


@njit(cache=True, inline="always", error_model="numpy")
def _np_max(a, b):  # pragma: no cover - numba
    """``numpy.maximum`` of two floats: NaN propagates (the first NaN), a tie (+0 and -0) gives ``b``."""
    return a if (a > b or a != a) else b


@njit(cache=True, inline="always", error_model="numpy")
def _np_min(a, b):  # pragma: no cover - numba
    """``numpy.minimum`` of two floats: NaN propagates (the first NaN), a tie (+0 and -0) gives ``b``."""
    return a if (a < b or a != a) else b


@njit(cache=True, inline="always", error_model="numpy")
def _stream_rates(points, j, busy):  # pragma: no cover - numba
    """(CUDA-core FLOP/s, SFU op/s) of a streaming kernel on ``busy`` SMs of point ``j``."""
    clock = points[2, j]
    efficiency = points[3, j]
    rate = points[0, j] * clock
    rate = rate * efficiency
    rate = rate * busy
    special = points[4, j] * clock
    special = special * efficiency
    special = special * busy
    return _np_max(rate, 1e-300), special


@njit(cache=True, inline="always", error_model="numpy")
def _stream_bandwidths(points, j, resident, threads_per_block, bytes_per_thread):  # pragma: no cover - numba
    """(L2 bandwidth, DRAM bandwidth, achieved occupancy) of a streaming kernel with ``resident``
    blocks on point ``j``: its bytes in flight by Little's law, the DRAM latency loaded where the
    point's coefficient is positive (kernels.loaded_little_bandwidth; the knee otherwise, both
    computed and one kept)."""
    sm = points[1, j]
    l2_latency = points[9, j]
    inflight = resident * threads_per_block
    inflight = inflight * bytes_per_thread
    l2_bw = points[5, j] * points[6, j]
    dram_peak = points[7, j] * points[8, j]
    load_latency = l2_latency + points[10, j]
    l2_bw = _np_min(l2_bw, inflight / l2_latency)
    c = points[11, j]
    knee = _np_min(dram_peak, inflight / load_latency)
    x = inflight / dram_peak
    root = load_latency - x
    root = root * root
    term = 4.0 * c
    term = term * load_latency
    term = term * x
    root = root + term
    root = np.sqrt(root)
    term = load_latency + x
    term = term + root
    loaded = dram_peak * ((2.0 * x) / term)
    occupancy = resident / sm
    occupancy = occupancy * threads_per_block
    occupancy = occupancy / (points[12, j] * points[13, j])
    return l2_bw, loaded if c > 0.0 else knee, _np_min(occupancy, 1.0)


@njit(cache=True, inline="always", error_model="numpy")
def _stream_row(res, i, vector, special_work, positive, rate, special, l2_bw, dram_bw, occupancy, blocks,
                l2_bytes, dram, l2_latency, load_latency):  # pragma: no cover - numba
    """Write one row's figures (:data:`STREAM_OUT_FIELDS`) to column ``i`` of ``res``."""
    compute = vector / rate if positive else 0.0
    special = special_work / special
    l2 = l2_bytes / l2_bw
    dram_s = dram / dram_bw
    fill = load_latency if dram > 0 else l2_latency
    time = _np_max(compute, special)
    time = _np_max(time, _np_max(l2, dram_s))
    res[i] = time + fill
    res[BLOCK_ROWS + i] = compute
    res[2 * BLOCK_ROWS + i] = special
    res[3 * BLOCK_ROWS + i] = l2
    res[4 * BLOCK_ROWS + i] = dram_s
    res[5 * BLOCK_ROWS + i] = fill
    res[6 * BLOCK_ROWS + i] = occupancy
    res[7 * BLOCK_ROWS + i] = blocks


@njit(cache=True, error_model="numpy")
def stream_rows(vector_flop, special_flop, threads_total, l2_bytes, dram_bytes, points, threads_per_block,
                bytes_per_thread, out):  # pragma: no cover - numba
    """Fill ``out`` (len(STREAM_OUT_FIELDS) x rows) with :func:`archsim.cost.kernels.gpu_stream` of
    G streaming kernels at H points (independent accesses, no read fraction): row ``g * H + h`` is
    kernel ``g`` (``vector_flop``, ``special_flop``, ``threads_total``: (G,)) on point ``h``
    (``points``: (STREAM_POINT_FIELDS, H)) with ``l2_bytes`` and ``dram_bytes`` (G*H,). Each value is
    the operation the array model makes on the same numbers, in its order (``numpy.maximum`` and
    ``minimum`` as :func:`_np_max`, :func:`_np_min`).

    A kernel whose blocks fill a point (at least its SMs, a positive number, and its resident blocks
    ``sm x max(blocks per SM, 1)``) has that point's rates, bandwidths and occupancy: the minima
    with its blocks give the point's own values there, so they are computed once per point
    (``sat``) and a block of such points runs only the kernel's own divisions."""
    h = points.shape[1]
    res = np.empty(len(STREAM_OUT_FIELDS) * BLOCK_ROWS)
    sat = np.empty(6 * h)  # per point: resident blocks, FLOP/s, SFU op/s, L2 and DRAM bandwidth, occupancy
    for j in range(h):
        sm = points[1, j]
        resident = sm * _np_max(points[14, j], 1.0)
        rate, special = _stream_rates(points, j, sm)
        l2_bw, dram_bw, occupancy = _stream_bandwidths(points, j, resident, threads_per_block, bytes_per_thread)
        sat[j] = resident
        sat[h + j] = rate
        sat[2 * h + j] = special
        sat[3 * h + j] = l2_bw
        sat[4 * h + j] = dram_bw
        sat[5 * h + j] = occupancy
    for g in range(vector_flop.shape[0]):
        vector, special_work, threads = vector_flop[g], special_flop[g], threads_total[g]
        blocks = np.ceil(threads / threads_per_block)
        positive = vector > 0
        # A kernel's points in blocks: each block's figures into ``res`` (one loop, SIMD across the
        # points), then copied to its rows of ``out``.
        for j0 in range(0, h, BLOCK_ROWS):
            n = min(BLOCK_ROWS, h - j0)
            r0 = g * h + j0
            full = True
            for i in range(n):
                sm = points[1, j0 + i]
                full = full and sm > 0.0 and blocks >= sm and blocks >= sat[j0 + i]
            if full:
                for i in range(n):
                    j = j0 + i
                    l2_latency = points[9, j]
                    _stream_row(res, i, vector, special_work, positive, sat[h + j], sat[2 * h + j], sat[3 * h + j],
                                sat[4 * h + j], sat[5 * h + j], blocks, l2_bytes[r0 + i], dram_bytes[r0 + i],
                                l2_latency, l2_latency + points[10, j])
            else:
                for i in range(n):
                    j = j0 + i
                    resident = _np_min(blocks, sat[j])
                    rate, special = _stream_rates(points, j, _np_min(points[1, j], blocks))
                    l2_bw, dram_bw, occupancy = _stream_bandwidths(points, j, resident, threads_per_block,
                                                                   bytes_per_thread)
                    l2_latency = points[9, j]
                    _stream_row(res, i, vector, special_work, positive, rate, special, l2_bw, dram_bw, occupancy,
                                blocks, l2_bytes[r0 + i], dram_bytes[r0 + i], l2_latency, l2_latency + points[10, j])
            for f in range(len(STREAM_OUT_FIELDS)):
                row = out[f, r0:r0 + n]  # a view: the copy runs over contiguous rows
                for i in range(n):
                    row[i] = res[f * BLOCK_ROWS + i]


ASSEMBLE_POINT_FIELDS = ("host_launch_s", "dram_row_buffer_bytes", "register_j_per_byte", "l1_read_j_per_byte",
                         "l2_read_j_per_byte", "dram_read_j_per_byte", "l1_write_j_per_byte", "l2_write_j_per_byte",
                         "dram_write_j_per_byte", "dram_activation_j", "static_power_w", "tensor_operand_flop_j")
"""Rows of :func:`assemble_rows`' point table (one column per hardware point): fields of the parameter pack
(the register file's price is its read and its write price)."""

ASSEMBLE_OUT_FIELDS = ("dispatch_s", "latency_s", "overhead_s", "dram_activations",
                       "read:register", "read:l1", "read:l2", "read:dram",
                       "write:register", "write:l1", "write:l2", "write:dram",
                       "energy:compute", "energy:register", "energy:l1", "energy:l2", "energy:dram", "energy:static",
                       "energy:tensor_operand")
"""The arrays of :func:`assemble_rows`' output, in order."""


@njit(cache=True, error_model="numpy")
def assemble_rows(kernel_s, overhead, launches, dispatch_first, register_b, l1_b, l2_b, dram_b, register_w, l1_w,
                  l2_w, dram_w, same_l1_l2, flop0, flop1, flop2, n_flop, flop_price, operand_ratio, operand,
                  points, out):  # pragma: no cover - numba
    """Fill ``out`` (a tuple of len(ASSEMBLE_OUT_FIELDS) arrays of the rows) with what
    :func:`archsim.cost.gpu.assemble` derives from a kernel's rows: its host dispatch, latency and exposed
    overhead (``_host_bound``), DRAM row
    activations, bytes read and written at each level (``_split_reads``) and energy by component
    (:func:`archsim.energy.ledger.account` with finite prices, no link bytes), each value the
    operation the array code makes on the same numbers, in its order.

    Rows are op-major over the H points of ``points`` (:data:`ASSEMBLE_POINT_FIELDS`, (fields, H)): row
    ``r`` is on point ``r % H``. Per row: ``kernel_s``, ``overhead``, ``launches``, ``dispatch_first``
    (the first launch's host dispatch), the bytes at each level and the write shares of L1, L2 and
    DRAM; ``register_w`` the register file's write share. ``same_l1_l2``: L1 has L2's bytes and share
    (its reads and writes rows are left unwritten: L2's are the same floats). ``flop0`` .. ``flop2``:
    the FLOP counts of the first ``n_flop`` units in order, priced by the rows of ``flop_price``
    ((3, H)); a unit with ``operand_ratio`` not NaN is a Tensor-Core unit whose FLOP, scaled by it, add
    to the operand energy (``operand``: whether it is reported; the operand row is left unwritten
    otherwise)."""
    h = points.shape[1]
    for r in range(0, kernel_s.shape[0], h):  # an op's rows: its points in order
        e = r + h
        _assemble_op(kernel_s[r:e], overhead[r:e], launches[r:e], dispatch_first[r:e], register_b[r:e], l1_b[r:e],
                     l2_b[r:e], dram_b[r:e], register_w, l1_w[r:e], l2_w[r:e], dram_w[r:e], same_l1_l2, flop0[r:e],
                     flop1[r:e], flop2[r:e], n_flop, flop_price, operand_ratio, operand, points, out, r, e)


@njit(cache=True, inline="always", error_model="numpy")
def _assemble_op(kernel_s, overhead, launches, dispatch_first, register_b, l1_b, l2_b, dram_b, register_w, l1_w,
                 l2_w, dram_w, same_l1_l2, flop0, flop1, flop2, n_flop, flop_price, operand_ratio, operand, points,
                 table, r, e):  # pragma: no cover - numba
    """:func:`assemble_rows` of one op's rows ``r .. e - 1`` (the other arrays: views of them; row ``i`` on
    point ``i``) into entries ``r .. e - 1`` of each array of ``table``: one loop per figure over the points (SIMD
    across them), the later figures reading the earlier ones' rows."""
    n = points.shape[1]
    out = [table[f][r:e] for f in range(len(table))]
    dispatch, latency, exposed, activations = out[0], out[1], out[2], out[3]
    for i in range(n):
        dispatch[i] = dispatch_first[i] + _np_max(launches[i] - 1.0, 0.0) * points[0, i]
    for i in range(n):
        device = kernel_s[i] + overhead[i]
        bound = dispatch[i] > device
        latency[i] = dispatch[i] if bound else device
        exposed[i] = dispatch[i] - kernel_s[i] if bound else overhead[i]
    for i in range(n):
        activations[i] = dram_b[i] / points[1, i]
    rest = 1.0 - register_w
    reads, writes = out[4], out[8]
    for i in range(n):
        reads[i] = register_b[i] * rest
        writes[i] = register_b[i] * register_w
    _read_write(l2_b, l2_w, out[6], out[10])
    if not same_l1_l2:
        _read_write(l1_b, l1_w, out[5], out[9])
    _read_write(dram_b, dram_w, out[7], out[11])
    compute = out[12]
    for i in range(n):
        compute[i] = 0.0
    for u in range(n_flop):
        flop = flop0 if u == 0 else flop1 if u == 1 else flop2
        price = flop_price[u]
        for i in range(n):
            count = flop[i]
            compute[i] = compute[i] + count * price[i] if count > 0 else compute[i]
    _level_energy(out[4], out[8], points[2], points[2], out[13])
    f = 6 if same_l1_l2 else 5
    _level_energy(out[f], out[f + 4], points[3], points[6], out[14])
    _level_energy(out[6], out[10], points[4], points[7], out[15])
    energy, reads, writes, act_price = out[16], out[7], out[11], points[9]
    read_price, write_price = points[5], points[8]
    for i in range(n):
        e = reads[i] * read_price[i]
        e = e + writes[i] * write_price[i]
        e = e + activations[i] * act_price[i]
        energy[i] = 0.0 + e
    static, static_price = out[17], points[10]
    for i in range(n):
        static[i] = static_price[i] * latency[i]
    if operand:
        tensor, first = out[18], True
        for u in range(n_flop):
            ratio = operand_ratio[u]
            if ratio != ratio:
                continue
            flop = flop0 if u == 0 else flop1 if u == 1 else flop2
            if first:
                for i in range(n):
                    tensor[i] = flop[i] * ratio
            else:
                for i in range(n):
                    tensor[i] = tensor[i] + flop[i] * ratio
            first = False
        price = points[11]
        for i in range(n):
            tensor[i] = tensor[i] * price[i]


@njit(cache=True, inline="always", error_model="numpy")
def _read_write(level_b, share, reads, writes):  # pragma: no cover - numba
    """A level's bytes read and written (``_split_reads``): ``bytes x (1 - write share)`` and ``bytes x
    write share``, over a view's points."""
    for i in range(level_b.shape[0]):
        reads[i] = level_b[i] * (1.0 - share[i])
        writes[i] = level_b[i] * share[i]


@njit(cache=True, inline="always", error_model="numpy")
def _level_energy(reads, writes, read_price, write_price, energy):  # pragma: no cover - numba
    """A memory level's energy (:func:`archsim.energy.ledger.account`): ``0.0 + (reads x read price + writes
    x write price)``, over a view's points."""
    for i in range(reads.shape[0]):
        e = reads[i] * read_price[i]
        e = e + writes[i] * write_price[i]
        energy[i] = 0.0 + e


GEMM_OP_FIELDS = ("m", "n", "batch", "c_bytes", "extra_vector_flop", "matmul_flop")
"""Columns of :func:`gemm_rows`' GEMM table (one row per stacked GEMM)."""

GEMM_POINT_FIELDS = ("vector_rate", "clock_hz", "vector_efficiency", "sm_count", "launch_overhead_s")
"""Rows of :func:`gemm_rows`' point table: the CUDA-core FLOP/cycle/SM of the epilogue's precision and fields
of the parameter pack."""

GEMM_ROWS_OUT_FIELDS = ("compute:tensor", "compute:vector", "overhead", "kernel_s", "register", "write:l1",
                        "write:l2", "write:dram", "flop:tensor", "flop:vector", "blocks")
"""The arrays of :func:`gemm_rows`' output, in order: :func:`archsim.cost.gpu.gemm_parts`' arrays (the write shares
``write:<level>``)."""


@njit(cache=True, inline="always", error_model="numpy")
def _clip01(x):  # pragma: no cover - numba
    """``numpy.clip(x, 0.0, 1.0)`` of a float: NaN stays, a tie keeps ``x`` (-0.0 stays -0.0)."""
    low = 0.0 if x < 0.0 else x
    return 1.0 if low > 1.0 else low


@njit(cache=True, error_model="numpy")
def gemm_rows(ops, points, use_tc, time_s, compute_s, fill_s, launches, l1_bytes, l2_bytes, dram_bytes, bm, bn,
              split_k, out):  # pragma: no cover - numba
    """Fill ``out`` (a tuple of len(GEMM_ROWS_OUT_FIELDS) arrays of the rows) with the arrays
    :func:`archsim.cost.gpu.gemm_parts` derives from the chosen kernels (:func:`search`'s figures ``time_s``
    .. ``split_k``, per row) of G
    GEMMs (``ops``: (G, GEMM_OP_FIELDS)) at H points (``points``: (GEMM_POINT_FIELDS, H); ``use_tc``: (H,),
    whether the GEMM runs on the Tensor Cores there), rows op-major (row ``g * H + h``), each value the
    operation the array code makes on the same numbers in its order (``numpy.maximum`` as
    :func:`_np_max`, ``clip`` as :func:`_clip01`)."""
    h = points.shape[1]
    rate = np.empty(h)  # the epilogue's FLOP/s at each point: rate x clock x efficiency x SMs
    for j in range(h):
        rate[j] = points[0, j] * points[1, j] * points[2, j] * points[3, j]
    for g in range(ops.shape[0]):
        r = g * h
        e = r + h
        _gemm_op(ops[g, 0], ops[g, 1], ops[g, 2], ops[g, 3], ops[g, 4], ops[g, 5], rate, points, use_tc,
                 time_s[r:e], compute_s[r:e], fill_s[r:e], launches[r:e], l1_bytes[r:e], l2_bytes[r:e],
                 dram_bytes[r:e], bm[r:e], bn[r:e], split_k[r:e], out, r, e)


@njit(cache=True, inline="always", error_model="numpy")
def _gemm_op(m, n, batch, c_b, extra_vector, mm, rate, points, use_tc, time_s, compute_s, fill_s, launches, l1_bytes,
             l2_bytes, dram_bytes, bm, bn, split_k, table, r, e):  # pragma: no cover - numba
    """:func:`gemm_rows` of one GEMM's rows ``r .. e - 1`` (its figures: views of them; row ``i`` on point
    ``i``), one loop per array over the points (SIMD across them)."""
    out = [table[f][r:e] for f in range(len(table))]
    launch_overhead = points[4]
    register = 1.5 * c_b * extra_vector
    out_frac = c_b * m * n * batch
    tensor, vector, overhead, kernel_s = out[0], out[1], out[2], out[3]
    for i in range(rate.shape[0]):
        epilogue = extra_vector / rate[i]
        tc = use_tc[i]
        tensor[i] = compute_s[i] if tc else 0.0
        vector[i] = epilogue if tc else compute_s[i] + epilogue
        overhead[i] = launches[i] * launch_overhead[i] + fill_s[i]
        kernel_s[i] = time_s[i] - fill_s[i] + epilogue
    registers, w_l1, w_l2, w_dram = out[4], out[5], out[6], out[7]
    for i in range(rate.shape[0]):
        registers[i] = 2.0 * l1_bytes[i] + register
        w_l1[i] = _clip01(out_frac / _np_max(l1_bytes[i], 1.0))
        w_l2[i] = _clip01(out_frac / _np_max(l2_bytes[i], 1.0))
        w_dram[i] = _clip01(out_frac / _np_max(dram_bytes[i], 1.0))
    flop_tensor, flop_vector, blocks = out[8], out[9], out[10]
    for i in range(rate.shape[0]):
        tc = use_tc[i]
        flop_tensor[i] = mm if tc else 0.0
        flop_vector[i] = ((0.0 if tc else mm) + extra_vector) + 0.0
        blocks[i] = np.ceil(m / bm[i]) * np.ceil(n / bn[i]) * batch * split_k[i]
