"""The numba kernel behind :func:`archsim.cost.kernels.gpu_gemm`: every tile candidate of every row, the fastest kept.

A row is one GEMM on one hardware point. For each row the kernel evaluates the model of
:mod:`archsim.cost.kernels` (waves, occupancy, Little's-law bandwidth, pipeline fill, split-K reduction)
for every (tile, split-K) candidate, keeps the candidate of minimum time including its launch
overheads (the first on a tie, as ``numpy.argmin``; a NaN time wins, as there), and writes that
candidate's figures. The arithmetic is written out operation by operation in the order of the
formulas' documentation, in IEEE double precision without reassociation or contraction (numba's
default, no ``fastmath``) and with numpy's division semantics (``error_model="numpy"``: x / 0 is
inf or NaN, never an exception).

Doing this in one compiled loop keeps nothing of size rows x candidates in memory: a sweep of
thousands of points then costs a few nanoseconds per candidate instead of a few dozen numpy
temporaries per candidate. The values that depend on the GEMM and the candidate only (tile and block
counts, per-block FLOP and bytes, split-K bytes) are computed once where a GEMM's rows begin
(:func:`_op_candidates`; once per GEMM in an op-major stacked pass), not once per point.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

__all__ = ["OP_FIELDS", "POINT_FIELDS", "OUT_FIELDS", "OP_CANDIDATE_FIELDS", "search"]

OP_FIELDS = ("m", "n", "k", "batch", "a_bytes", "b_bytes", "c_bytes")
"""Columns of the GEMM table (one row per distinct GEMM)."""

POINT_FIELDS = ("sm_count", "gemm_pipeline_stages", "clock_hz", "l1_bandwidth_per_sm_bytes_per_s",
                "l2_bandwidth_bytes_per_s", "l2_bandwidth_efficiency", "dram_bandwidth_bytes_per_s",
                "dram_bandwidth_efficiency", "l2_latency_s", "dram_latency_s", "launch_overhead_s", "max_warps",
                "gemm_cluster_size", "gemm_max_split_k", "flop_per_cycle_per_sm", "efficiency")
"""Columns of the point table (one row per hardware point; the last two are the GEMM unit's rate and
achievable fraction at that point)."""

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
    """Fill ``out`` (len(OP_CANDIDATE_FIELDS) x candidates) with GEMM ``op``'s point-free values of
    every candidate: see :mod:`archsim.cost.kernels` for the formulas. Each is the operation the
    per-point model would make on the same numbers (a sweep's points then share them)."""
    m, n, k, batch, a, b, c = op[0], op[1], op[2], op[3], op[4], op[5], op[6]
    elem = _max(a, b)
    bk = k_slice_bytes / elem
    for j in range(cand.shape[1]):
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
        out[0, j] = stage_bytes
        out[1, j] = k_cta
        out[2, j] = tiles_mn * split
        out[3, j] = 2.0 * bm * bn * k_cta
        out[4, j] = m_tiles
        out[5, j] = bm * a
        out[6, j] = bn * b
        out[7, j] = bm * bn * (acc_bytes if split > 1.0 else c)
        out[8, j] = stage_bytes * k_iters + (bm * a * wn_count + bn * b * wm_count) * bk * k_iters
        out[9, j] = batch * m * n * acc_bytes * split if split > 1.0 else 0.0
        # Parallel split-K: a reduction kernel reads the partials and writes C.
        out[10, j] = batch * m * n * (acc_bytes * split + c) if split > 1.0 else 0.0


@njit(cache=True, inline="always", error_model="numpy")
def _candidate(oc, j, pt, dram_min, a_stream, bps, split):  # pragma: no cover - numba
    """The kernel model of one (GEMM, point, candidate ``j``): see :mod:`archsim.cost.kernels` for the
    formulas; ``oc`` is the GEMM's candidate table (:func:`_op_candidates`).

    Returns (score, time, compute, l1, l2, dram, fill, reduce_s, reduce_bytes, launches, ctas, slots,
    waves, flop_cta, l1_cta, l2_total, dram_kernel); ``score`` = time + launches x launch overhead.
    """
    # pt is a row of POINT_FIELDS.
    sm = pt[0]
    stages = pt[1]
    clock = pt[2]
    l1_rate = pt[3]
    l2_peak = pt[4] * pt[5]
    dram_peak = pt[6] * pt[7]
    l2_lat = pt[8]
    dram_lat = pt[9]
    launch_overhead = pt[10]
    cluster = pt[12]
    max_split = pt[13]
    unit_rate = pt[14]
    unit_efficiency = pt[15]
    stage_bytes = oc[0, j]
    k_cta = oc[1, j]
    ctas = oc[2, j]
    flop_cta = oc[3, j]
    l1_cta = oc[8, j]
    reduce_bytes = oc[10, j]
    slots = sm * bps
    full = np.floor(ctas / _max(slots, 1.0))
    tail = ctas - full * slots
    # Per-block work. A cluster of CTAs along M (Hopper TMA multicast) fetches each B tile from L2 once
    # for all of them: B's L2 traffic per block is divided by the CTAs that share it.
    share = _max(_min(cluster, oc[4, j]), 1.0)
    l2_cta = (oc[5, j] * a_stream + oc[6, j] / share) * k_cta + oc[7, j]
    sm_rate = unit_rate * clock * unit_efficiency
    l2_total = ctas * l2_cta
    dram_main = _min(dram_min, l2_total)
    dram_kernel = dram_main + oc[9, j]
    miss = _min(_max(dram_kernel / _max(l2_total, 1.0), 0.0), 1.0)
    latency = l2_lat + miss * dram_lat
    inflight_cta = (stages - 1.0) * stage_bytes
    # Compute and shared memory are quantised by waves (each SM runs its blocks in turn); L2 and DRAM
    # traffic are shared by the whole grid, at the bandwidth its resident blocks can keep in flight
    # (Little's law, combined with the peak harmonically: kernels.achievable_bandwidth).
    waves = full + (1.0 if tail > 0.0 else 0.0)
    blocks_in_turn = full * bps + np.ceil(tail / sm)
    compute = blocks_in_turn * flop_cta / sm_rate
    l1 = blocks_in_turn * l1_cta / l1_rate
    resident = _min(ctas, slots)
    lat_bw = _max(resident, 1.0) * inflight_cta / latency
    l2 = l2_total / (1.0 / (1.0 / l2_peak + 1.0 / lat_bw))
    dram = dram_kernel / (1.0 / (1.0 / dram_peak + 1.0 / lat_bw))
    t_body = _max(_max(compute, l1), _max(l2, dram))
    # The prologue of a wave loads its first k-slice cold, from DRAM through L2.
    fill = waves * (l2_lat + dram_lat)
    reduce_s = reduce_bytes / dram_peak
    time = t_body + fill + reduce_s
    # A candidate that does not fit on an SM, or splits K more than the library does, is never chosen.
    if not bps > 0.0 or split > max_split:
        time = math.inf
    launches = 2.0 if split > 1.0 else 1.0
    score = time + launches * launch_overhead
    return (score, time, compute, l1, l2, dram, fill, reduce_s, reduce_bytes, launches, ctas, slots, waves,
            flop_cta, l1_cta, l2_total, dram_kernel)


@njit(cache=True, error_model="numpy")
def search(ops, points, op_row, point_row, dram_min, a_stream, occupancy, occupancy_row, cand, k_slice_bytes,
           acc_bytes, out):  # pragma: no cover - numba
    """Fill ``out`` (len(OUT_FIELDS) x rows) with the fastest candidate of every row.

    ``ops``: (G, OP_FIELDS); ``points``: (H, POINT_FIELDS); row r is GEMM ``op_row[r]`` on point
    ``point_row[r]`` with L2-model DRAM bytes ``dram_min[r]``, A-stream factor ``a_stream[r]`` and
    blocks per SM ``occupancy[occupancy_row[r], candidate]``; ``cand``: (4, candidates) of bm, bn,
    threads, split-K.
    """
    n_cand = cand.shape[1]
    bms, bns, threads, splits = cand[0], cand[1], cand[2], cand[3]
    scores = np.empty(n_cand)
    oc = np.empty((len(OP_CANDIDATE_FIELDS), n_cand))
    last_op = -1
    for r in range(op_row.shape[0]):
        if op_row[r] != last_op:  # rows are op-major in a stacked pass: once per GEMM
            last_op = op_row[r]
            _op_candidates(ops[last_op], cand, k_slice_bytes, acc_bytes, oc)
        pt = points[point_row[r]]
        occ = occupancy[occupancy_row[r]]
        dm, ast = dram_min[r], a_stream[r]
        # A branch-free loop over the candidates (SIMD), then the first minimum.
        for j in range(n_cand):
            scores[j] = _candidate(oc, j, pt, dm, ast, occ[j], splits[j])[0]
        best = 0
        best_score = scores[0]
        for j in range(1, n_cand):
            score = scores[j]
            if score < best_score or (score != score and best_score == best_score):
                best = j
                best_score = score
        bps = occ[best]
        (_, time, compute, l1, l2, dram, fill, reduce_s, reduce_bytes, launches, ctas, slots, waves, flop_cta,
         l1_cta, l2_total, dram_kernel) = _candidate(oc, best, pt, dm, ast, bps, splits[best])
        active_avg = ctas / _max(waves, 1.0)
        out[0, r] = time
        out[1, r] = compute
        out[2, r] = l1
        out[3, r] = l2
        out[4, r] = dram + reduce_s
        out[5, r] = fill
        out[6, r] = launches
        out[7, r] = ctas * flop_cta
        out[8, r] = ctas * l1_cta
        out[9, r] = l2_total + reduce_bytes
        out[10, r] = dram_kernel + reduce_bytes
        out[11, r] = bms[best]
        out[12, r] = bns[best]
        out[13, r] = splits[best]
        out[14, r] = waves
        out[15, r] = bps
        max_warps = pt[11]
        out[16, r] = _min(1.0, active_avg / _max(slots, 1.0)) * bps * (threads[best] / 32.0) / max_warps
