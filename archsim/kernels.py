"""Kernel efficiency: how fast a kernel actually runs on a device, given its shape and occupancy.

GPU GEMM (and implicit-GEMM convolution) follows the structure of CUTLASS/cuBLAS kernels:

* a catalogue of threadblock tiles ``bm x bn`` (CUTLASS's default set, ``TILES``) with a 64-byte
  k-slice (``bk = 64 / element bytes``, CUTLASS's ``kTileK`` for every precision) and optional
  split-K; the tile with the minimum predicted time is chosen, as cuBLAS's heuristics do;
* occupancy: thread blocks per SM = min(max_blocks, max_warps / warps, registers / (registers per
  thread x threads), shared memory / (stages x k-slice bytes)) (CUDA occupancy calculator);
* waves: ``ceil(blocks / (SMs x blocks per SM))``; the last, partial wave is the tail effect
  (NVIDIA "Matrix Multiplication Background" guide: wave and tile quantization);
* per wave, time = max over resources of work / rate: Tensor-Core or CUDA-core FLOP of the padded
  tiles / (per-SM peak x efficiency), shared-memory operand traffic / L1 bandwidth, L2 operand
  traffic / achievable L2 bandwidth and DRAM traffic / achievable DRAM bandwidth;
* latency hiding by Little's law: bytes in flight = (stages - 1) k-slices per resident block, so
  the achievable bandwidth of a wave combines peak x efficiency and bytes in flight / latency
  harmonically (:func:`achievable_bandwidth`), with the
  latency of an L2 hit plus the DRAM miss share of the DRAM latency (Little 1961; Volkov, "Better
  performance at lower occupancy", GTC 2010);
* a pipeline fill of one memory latency per wave, and the launch overhead; parallel split-K adds
  its partial sums' traffic and a reduction kernel launch.

Streaming kernels (elementwise, reductions) run one 16-byte vector access per thread in flight
(``STREAM_BYTES_PER_THREAD``), so small tensors are latency-bound by the same Little's-law rule.

Every device factor is a named field of the hardware model (via :mod:`archsim.engines.params`);
the constants here describe the kernel library (tile catalogue, access width), not a device.
All functions are vectorised over hardware points (arrays of shape ``(H,)``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from archsim.engines.params import CPUParams, GPUParams, PIMParams

__all__ = [
    "TILES", "SPLIT_K", "STREAM_BYTES_PER_THREAD", "STREAM_THREADS_PER_BLOCK",
    "GemmKernel", "gpu_gemm", "achievable_bandwidth", "StreamKernel", "gpu_stream", "gpu_occupancy", "little_bandwidth",
]

TILES: tuple[tuple[int, int, int], ...] = (
    (256, 128, 8), (128, 256, 8), (128, 128, 8), (128, 64, 4), (64, 128, 4), (64, 64, 4),
    (128, 32, 4), (32, 128, 4), (64, 32, 2), (32, 64, 2), (32, 32, 1),
)
"""Threadblock tiles (bm, bn, warps): CUTLASS's default GEMM tile set (cutlass/profiler
``--cta-tile`` defaults and ``default_gemm_configuration.h``) with its small-tile variants."""

SPLIT_K: tuple[int, ...] = (1, 2, 4, 8, 16)
"""Split-K factors the mapper may choose (CUTLASS ``--split-k-slices``)."""

K_SLICE_BYTES = 64.0
"""Bytes of one k-slice per operand row: CUTLASS's kTileK is 64 B for every precision (32 fp16, 16 tf32)."""

ACCUMULATOR_BYTES = 4.0
"""GEMM accumulators and split-K partial sums are fp32 (cuBLAS with fp32 compute type)."""

STREAM_BYTES_PER_THREAD = 16.0
"""A streaming kernel issues one 128-bit (16 B) vector load per thread per iteration."""

STREAM_THREADS_PER_BLOCK = 256
"""Threads per block of the streaming kernel template (PyTorch's elementwise launch default)."""


def little_bandwidth(bytes_in_flight: np.ndarray, latency_s: np.ndarray) -> np.ndarray:
    """Little's law: sustained bandwidth = bytes in flight / latency, in B/s."""
    return bytes_in_flight / latency_s


def achievable_bandwidth(peak_bytes_per_s: np.ndarray, little_bytes_per_s: np.ndarray) -> np.ndarray:
    """Bandwidth with ``bytes in flight`` outstanding: ``1 / (1 / peak + latency / bytes_in_flight)``.

    Each batch of in-flight bytes costs one latency plus its transfer time at the peak rate, so the
    two limits combine harmonically rather than by ``min``: a queue whose latency grows with
    utilisation (``L = L0 / (1 - rho)``, M/M/1) has exactly this throughput.
    """
    return 1.0 / (1.0 / peak_bytes_per_s + 1.0 / little_bytes_per_s)


def gpu_occupancy(p: GPUParams, threads: np.ndarray, registers_per_thread: np.ndarray,
                  shared_bytes: np.ndarray) -> np.ndarray:
    """Resident thread blocks per SM (0 when a block does not fit), broadcast over points x kernels.

    Registers are allocated per warp in units of 256 (CUDA occupancy calculator granularity).
    """
    warp = p.warp_size[:, None]
    warps = np.ceil(threads / warp)
    regs_per_warp = np.ceil(registers_per_thread * warp / 256.0) * 256.0
    by_warps = np.floor(p.max_warps[:, None] / warps)
    by_regs = np.floor(p.registers_per_sm[:, None] / (regs_per_warp * warps))
    by_smem = np.where(shared_bytes > 0, np.floor(p.shared_memory_bytes[:, None] / np.maximum(shared_bytes, 1.0)),
                       np.inf)
    blocks = np.minimum(np.minimum(p.max_blocks[:, None], by_warps), np.minimum(by_regs, by_smem))
    ok = ((shared_bytes <= p.max_shared_memory_per_block_bytes[:, None])
          & (threads <= p.max_threads_per_block[:, None])
          & (registers_per_thread <= p.max_registers_per_thread[:, None]))
    return np.where(ok, blocks, 0.0)


@dataclass(frozen=True)
class GemmKernel:
    """The chosen GEMM kernel per hardware point; times in s, bytes in B, arrays of shape (H,)."""

    time_s: np.ndarray            # kernel(s) time excluding launch overheads
    compute_s: np.ndarray         # sum over waves of the compute time
    l1_s: np.ndarray
    l2_s: np.ndarray
    dram_s: np.ndarray
    fill_s: np.ndarray            # pipeline fill, one latency per wave
    launches: np.ndarray          # kernels launched (2 with parallel split-K)
    flop_executed: np.ndarray     # FLOP of the padded tiles
    l1_bytes: np.ndarray
    l2_bytes: np.ndarray
    dram_bytes: np.ndarray
    bm: np.ndarray
    bn: np.ndarray
    split_k: np.ndarray
    waves: np.ndarray
    blocks_per_sm: np.ndarray
    achieved_occupancy: np.ndarray


def _tile_table(elem_bytes: float) -> tuple[np.ndarray, ...]:
    """Candidates (tiles x split-K) as flat arrays: bm, bn, threads, registers per thread, split."""
    bm, bn, warps, split = [], [], [], []
    for tbm, tbn, tw in TILES:
        for s in SPLIT_K:
            bm.append(tbm)
            bn.append(tbn)
            warps.append(tw)
            split.append(s)
    bm_a, bn_a, w_a, s_a = (np.asarray(v, dtype=np.float64)[None, :] for v in (bm, bn, warps, split))
    threads = w_a * 32.0
    acc = bm_a * bn_a / threads
    # Accumulators, double-buffered operand fragments (half the accumulator count) and ~32 registers of
    # addressing and loop state: the register budget CUTLASS's warp-level MMA reports in ptxas -v.
    regs = acc + np.ceil(acc / 2.0) + 32.0
    return bm_a, bn_a, threads, regs, s_a


def gpu_gemm(p: GPUParams, m: int, n: int, k: int, batch: int, a_bytes: float, b_bytes: float, c_bytes: float,
             flop_per_cycle_per_sm: np.ndarray, efficiency: np.ndarray, dram_min_bytes: np.ndarray,
             a_stream_factor: np.ndarray | float = 1.0) -> GemmKernel:
    """Predict the best GEMM kernel for C[m,n] = A[m,k] B[k,n] (``batch`` instances) per point.

    ``flop_per_cycle_per_sm`` is the unit's dense rate (Tensor Core or CUDA core) per point,
    ``efficiency`` its achievable fraction; ``dram_min_bytes`` is the DRAM traffic the L2 tiling model
    (:mod:`archsim.traffic`) gives for the whole GEMM. ``a_stream_factor`` scales A's L2 operand
    traffic (below 1 for an implicit-GEMM convolution whose im2col rows overlap in L1).
    """
    elem = max(a_bytes, b_bytes)
    a_stream = np.broadcast_to(np.asarray(a_stream_factor, dtype=np.float64), (p.n,))[:, None]
    bk = K_SLICE_BYTES / elem
    bm, bn, threads, regs, split = _tile_table(elem)
    stages = p.gemm_pipeline_stages[:, None]
    stage_bytes = (bm * a_bytes + bn * b_bytes) * bk
    smem = stages * stage_bytes
    # The compiler caps registers at the architecture's per-thread limit (spilling the rest).
    bps = gpu_occupancy(p, threads, np.minimum(regs, p.max_registers_per_thread[:, None]), smem)
    sm = p.sm_count[:, None]
    k_iters = np.ceil(np.ceil(k / bk) / split)
    k_cta = k_iters * bk
    tiles_mn = np.ceil(m / bm) * np.ceil(n / bn) * batch
    ctas = tiles_mn * split
    slots = sm * bps
    full = np.floor(ctas / np.maximum(slots, 1.0))
    tail = ctas - full * slots
    # Per-block work.
    flop_cta = 2.0 * bm * bn * k_cta
    l2_cta = (bm * a_bytes * a_stream + bn * b_bytes) * k_cta + bm * bn * np.where(
        split > 1, ACCUMULATOR_BYTES, c_bytes)
    # Shared memory: every k-slice is written once and read by the warps; a warp tile of the
    # (bm/2 x bn/warps*2) CUTLASS arrangement reads its A rows and B columns, so smem reads per block
    # per slice are (bm * wn_count + bn * wm_count) elements; with wm_count = 2 warp rows.
    warps = threads / 32.0
    wm_count = np.minimum(2.0, warps)
    wn_count = warps / wm_count
    l1_cta = stage_bytes * k_iters + (bm * a_bytes * wn_count + bn * b_bytes * wm_count) * bk * k_iters
    sm_rate = flop_per_cycle_per_sm[:, None] * p.clock_hz[:, None] * efficiency[:, None]
    l1_rate = p.l1_bandwidth_per_sm_bytes_per_s[:, None]
    l2_peak = (p.l2_bandwidth_bytes_per_s * p.l2_bandwidth_efficiency)[:, None]
    dram_peak = (p.dram_bandwidth_bytes_per_s * p.dram_bandwidth_efficiency)[:, None]
    l2_total = ctas * l2_cta
    dram_main = np.minimum(np.asarray(dram_min_bytes, dtype=np.float64)[:, None], l2_total)
    partial_bytes = np.where(split > 1, batch * m * n * ACCUMULATOR_BYTES * split, 0.0)
    dram_kernel = dram_main + partial_bytes
    miss = np.clip(dram_kernel / np.maximum(l2_total, 1.0), 0.0, 1.0)
    latency = p.l2_latency_s[:, None] + miss * p.dram_latency_s[:, None]
    inflight_cta = (stages - 1.0) * stage_bytes

    def wave(active: np.ndarray) -> tuple[np.ndarray, ...]:
        per_sm = np.ceil(active / sm)
        compute = per_sm * flop_cta / sm_rate
        l1 = per_sm * l1_cta / l1_rate
        lat_bw = little_bandwidth(np.maximum(active, 1.0) * inflight_cta, latency)
        l2 = active * l2_cta / achievable_bandwidth(l2_peak, lat_bw)
        dram = dram_kernel * (active / np.maximum(ctas, 1.0)) / achievable_bandwidth(dram_peak, lat_bw)
        on = active > 0
        return tuple(np.where(on, x, 0.0) for x in (compute, l1, l2, dram))

    fc, fl1, fl2, fd = wave(np.where(full > 0, slots, 0.0))
    tc, tl1, tl2, td = wave(tail)
    t_full = np.maximum(np.maximum(fc, fl1), np.maximum(fl2, fd))
    t_tail = np.maximum(np.maximum(tc, tl1), np.maximum(tl2, td))
    waves = full + (tail > 0)
    # The prologue of a wave loads its first k-slice cold, from DRAM through L2.
    fill = waves * (p.l2_latency_s + p.dram_latency_s)[:, None]
    # Parallel split-K: a reduction kernel reads the partials and writes C.
    reduce_bytes = np.where(split > 1, batch * m * n * (ACCUMULATOR_BYTES * split + c_bytes), 0.0)
    reduce_s = reduce_bytes / dram_peak
    time = full * t_full + t_tail + fill + reduce_s
    time = np.where(bps > 0, time, np.inf)
    launches = np.where(split > 1, 2.0, 1.0)
    # Choose per point the candidate of minimum time including its launch overheads.
    best = np.argmin(time + launches * p.launch_overhead_s[:, None], axis=1)
    rows = np.arange(p.n)

    def pick(x: np.ndarray) -> np.ndarray:
        return np.broadcast_to(x, time.shape)[rows, best]

    active_avg = ctas / np.maximum(waves, 1.0)
    occupancy = np.minimum(1.0, active_avg / np.maximum(slots, 1.0)) * bps * warps / p.max_warps[:, None]
    return GemmKernel(
        time_s=pick(time),
        compute_s=pick(full * fc + tc),
        l1_s=pick(full * fl1 + tl1),
        l2_s=pick(full * fl2 + tl2),
        dram_s=pick(full * fd + td + reduce_s),
        fill_s=pick(fill),
        launches=pick(launches),
        flop_executed=pick(ctas * flop_cta),
        l1_bytes=pick(ctas * l1_cta),
        l2_bytes=pick(l2_total + reduce_bytes),
        dram_bytes=pick(dram_kernel + reduce_bytes),
        bm=pick(bm), bn=pick(bn), split_k=pick(split), waves=pick(waves), blocks_per_sm=pick(bps),
        achieved_occupancy=pick(occupancy),
    )


@dataclass(frozen=True)
class StreamKernel:
    """A streaming kernel per hardware point (arrays of shape (H,))."""

    time_s: np.ndarray
    compute_s: np.ndarray
    special_s: np.ndarray
    l2_s: np.ndarray
    dram_s: np.ndarray
    fill_s: np.ndarray
    blocks_per_sm: np.ndarray
    achieved_occupancy: np.ndarray
    blocks: np.ndarray  # thread blocks launched (for the discrete-event engine's waves)


def gpu_stream(p: GPUParams, vector_flop: float, special_flop: float, l2_bytes: np.ndarray, dram_bytes: np.ndarray,
               vector_rate_per_sm: np.ndarray, threads_total: float | None = None,
               threads_per_block: float = STREAM_THREADS_PER_BLOCK, registers_per_thread: float = 32.0,
               shared_per_block: float = 0.0) -> StreamKernel:
    """A memory-streaming kernel: FLOP on the CUDA cores and SFUs, bytes through L2 and DRAM.

    Threads default to one per 16-byte vector of the DRAM traffic; resident threads (occupancy)
    times 16 B are in flight, which by Little's law bounds the bandwidth of small kernels (combined
    with the peak by :func:`achievable_bandwidth`).
    """
    dram = np.asarray(dram_bytes, dtype=np.float64)
    if threads_total is None:
        threads_total = max(1.0, float(np.max(dram)) / STREAM_BYTES_PER_THREAD)
    tpb = np.asarray([[threads_per_block]])
    bps = gpu_occupancy(p, tpb, np.asarray([[registers_per_thread]]), np.asarray([[shared_per_block]]))[:, 0]
    blocks = np.ceil(threads_total / threads_per_block)
    resident_blocks = np.minimum(blocks, p.sm_count * np.maximum(bps, 1.0))
    inflight = resident_blocks * threads_per_block * STREAM_BYTES_PER_THREAD
    busy_sm = np.minimum(p.sm_count, blocks)
    rate = vector_rate_per_sm * p.clock_hz * p.vector_efficiency * busy_sm
    compute = np.where(vector_flop > 0, vector_flop / np.maximum(rate, 1e-300), 0.0)
    sfu_rate = p.sfu_per_sm * p.clock_hz * p.vector_efficiency * busy_sm
    special = special_flop / sfu_rate
    l2_bw = achievable_bandwidth(p.l2_bandwidth_bytes_per_s * p.l2_bandwidth_efficiency,
                                 little_bandwidth(inflight, p.l2_latency_s))
    dram_bw = achievable_bandwidth(p.dram_bandwidth_bytes_per_s * p.dram_bandwidth_efficiency,
                                   little_bandwidth(inflight, p.l2_latency_s + p.dram_latency_s))
    l2 = np.asarray(l2_bytes, dtype=np.float64) / l2_bw
    dram_t = dram / dram_bw
    fill = np.where(dram > 0, p.l2_latency_s + p.dram_latency_s, p.l2_latency_s)
    time = np.maximum(np.maximum(compute, special), np.maximum(l2, dram_t)) + fill
    occupancy = resident_blocks / p.sm_count * threads_per_block / (p.max_warps * p.warp_size)
    return StreamKernel(time_s=time, compute_s=compute, special_s=special, l2_s=l2, dram_s=dram_t, fill_s=fill,
                        blocks_per_sm=bps, achieved_occupancy=np.minimum(occupancy, 1.0),
                        blocks=np.broadcast_to(blocks, bps.shape).astype(np.float64))


def cpu_compute_rate(p: CPUParams, precision: str, matrix: bool, threads: np.ndarray | float) -> np.ndarray:
    """Achievable FLOP/s of ``threads`` cores: cores x clock x SIMD x FMA x 2 x efficiency, per point."""
    per_cycle = p.matrix_flop_per_cycle[precision] if matrix else p.vector_flop_per_cycle[precision]
    return np.minimum(p.cores, threads) * p.clock_hz * per_cycle * p.compute_efficiency


def cpu_dram_bandwidth(p: CPUParams, threads: np.ndarray | float) -> np.ndarray:
    """Achievable DRAM bandwidth from peak x STREAM efficiency and threads x misses in flight x line / latency."""
    mlp = np.minimum(p.cores, threads) * p.max_outstanding_misses * p.line_bytes
    return achievable_bandwidth(p.dram_bandwidth_bytes_per_s * p.dram_bandwidth_efficiency,
                                little_bandwidth(mlp, p.dram_latency_s))


def pim_compute_rate(p: PIMParams, precision: str) -> np.ndarray:
    """Achievable op/s of all PIM units: units x clock x ops/cycle x efficiency, per point."""
    return p.units * p.clock_hz * p.ops_per_cycle[precision] * p.compute_efficiency


def pim_bank_bandwidth(p: PIMParams) -> np.ndarray:
    """Achievable aggregate internal bandwidth: units x per-unit bank bandwidth x efficiency."""
    return p.units * p.bank_bandwidth_bytes_per_s * p.bank_bandwidth_efficiency
