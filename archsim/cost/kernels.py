"""Kernel efficiency: how fast a kernel actually runs on a device, given its shape and occupancy.

GPU GEMM (and implicit-GEMM convolution) follows the structure of CUTLASS/cuBLAS kernels:

* a catalogue of threadblock tiles ``bm x bn`` (CUTLASS's default set, ``TILES``) with a 64-byte
  k-slice (``bk = 64 / element bytes``, CUTLASS's ``kTileK`` for every precision) and optional
  split-K (at most ``efficiency.gemm_max_split_k`` slices); the tile with the minimum predicted time
  is chosen, as cuBLAS's heuristics do;
* occupancy: thread blocks per SM = min(max_blocks, max_warps / warps, registers / (registers per
  thread x threads), shared memory / (stages x k-slice bytes)) (CUDA occupancy calculator);
* waves: ``ceil(blocks / (SMs x blocks per SM))``; the last, partial wave is the tail effect
  (NVIDIA "Matrix Multiplication Background" guide: wave and tile quantization);
* time = max over resources of work / rate: Tensor-Core or CUDA-core FLOP of the padded tiles that
  the busiest SM runs in turn (waves x blocks per SM) / (per-SM peak x efficiency), the same for its
  shared-memory operand traffic / L1 bandwidth, and the whole grid's L2 operand traffic and DRAM
  traffic / achievable L2 and DRAM bandwidth (shared by the grid, so not quantised by waves);
  every term is non-increasing in SMs, clock and bandwidth, and so is the minimum over tiles;
* latency hiding by Little's law: bytes in flight = (stages - 1) k-slices per resident block, so
  the achievable bandwidth of a wave combines peak x efficiency and bytes in flight / latency
  harmonically (:func:`achievable_bandwidth`), with the
  latency of an L2 hit plus the DRAM miss share of the DRAM latency (Little 1961; Volkov, "Better
  performance at lower occupancy", GTC 2010);
* a pipeline fill of one memory latency per wave, and the launch overhead; parallel split-K adds
  its partial sums' traffic and a reduction kernel launch.

Streaming kernels (elementwise, reductions) run one 16-byte vector access per thread in flight
(``STREAM_BYTES_PER_THREAD``; a described :class:`~archsim.workload.ops.Kernel` states its own
``bytes_in_flight_per_thread``), so small tensors are latency-bound by Little's law: their
bandwidth is the lower of bytes in flight / latency and the achievable peak.

Every device factor is a named field of the hardware model (via :mod:`archsim.cost.params`);
the constants here describe the kernel library (tile catalogue, access width), not a device.
All functions are vectorised over hardware points (arrays of shape ``(H,)``). The GEMM tile search
runs compiled (:mod:`archsim.cost.gemm_search`, numba): one loop over (GEMM, point) rows evaluates the
candidates and keeps the fastest, so a sweep allocates nothing of size rows x candidates.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from archsim.cost.params import CPUParams, GPUParams, PIMParams

__all__ = [
    "TILES", "SPLIT_K", "STREAM_BYTES_PER_THREAD", "STREAM_THREADS_PER_BLOCK",
    "GemmKernel", "gpu_gemm", "achievable_bandwidth", "loaded_little_bandwidth", "StreamKernel", "gpu_stream",
    "gpu_occupancy", "little_bandwidth", "gpu_stream_stacked",
]

TILES: tuple[tuple[int, int, int], ...] = (
    (256, 128, 8), (128, 256, 8), (128, 128, 8), (128, 64, 4), (64, 128, 4), (64, 64, 4),
    (128, 32, 4), (32, 128, 4), (64, 32, 2), (32, 64, 2), (32, 32, 1),
)
"""Threadblock tiles (bm, bn, warps): CUTLASS's default GEMM tile set (cutlass/profiler
``--cta-tile`` defaults and ``default_gemm_configuration.h``) with its small-tile variants."""

SPLIT_K: tuple[int, ...] = (1, 2, 4, 8, 16)
"""Split-K factors the mapper may choose (CUTLASS ``--split-k-slices``), up to the device's
``efficiency.gemm_max_split_k`` (the largest its GEMM library launches)."""

CONV_TILES: tuple[tuple[int, int], ...] = ((256, 128), (128, 128), (128, 64), (128, 32))
"""Threadblock tiles (bm, bn) of the convolution library's forward implicit-GEMM kernels, without
split-K: the kernels cuDNN 7 launches are named by their tile, ``maxwell_scudnn_128x{128,64,32}_*``
(Maxwell/Pascal), ``volta_scudnn_128x{128,64,32}_*`` and ``turing_scudnn_*`` (CUDA cores), and
``volta_fp16_s884cudnn_fp16_{256x128,128x128}_ldg8_*`` (Tensor Cores), as nvprof/Nsight traces of
cuDNN show them; none splits the reduction (C x R x S): small grids are not refilled by split-K as
cuBLAS's GEMMs are. (The 256 x 64 Tensor-Core variant is not in ``TILES`` and is left out.)"""

CONV_LIBRARY = "conv"
CONV_BACKWARD_LIBRARY = "conv_backward"
GEMM_LIBRARY = "gemm"
"""Kernel catalogues: ``"gemm"`` every (tile, split-K) candidate (cuBLAS/CUTLASS) with at most the
device's ``efficiency.gemm_max_split_k`` slices, ``"conv"`` the forward-convolution kernels of
:data:`CONV_TILES`, ``"conv_backward"`` every (tile, split-K) candidate for the convolution library's
backward passes (cuDNN's weight-gradient kernels split their NPQ reduction themselves: the GEMM
library's split-K limit does not apply to them)."""
LIBRARIES = (GEMM_LIBRARY, CONV_LIBRARY, CONV_BACKWARD_LIBRARY)

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


def loaded_little_bandwidth(peak_bytes_per_s: np.ndarray, bytes_in_flight: np.ndarray, idle_latency_s: np.ndarray,
                            coefficient: np.ndarray) -> np.ndarray:
    """Bandwidth of independent requests when the latency grows with the load, in B/s.

    A memory system's load latency is flat at low utilisation and rises as the bandwidth approaches
    its sustained maximum, because requests queue in the controllers and the network before the
    DRAM (B. Jacob, "The Memory System: You Can't Avoid It, You Can't Ignore It, You Can't Fake It",
    Morgan & Claypool 2009: the latency-bandwidth response is constant up to ~40 % of the sustained
    bandwidth, about linear to ~80 %, then exponential, up to twice the idle latency or more; AMD
    PG313, "Versal NoC: HBM2e access latencies": structural latency plus queuing latency in the NMUs,
    switches and HBM controllers, which dominates when the masters keep many transactions outstanding).
    ``peak_bytes_per_s`` is the sustained peak (DRAM peak x the kernel's efficiency). The
    queueing form ``L = L0 x (1 + c x rho / (1 - rho))`` with ``rho = B / peak`` (``c = 1`` is
    M/M/1 with service time L0, the harmonic :func:`achievable_bandwidth`; ``c = 0`` the sharp knee
    ``min(peak, N / L0)``) and Little's law ``B = N / L`` give ``rho`` as the root in [0, 1) of
    ``(c L0 - L0) rho^2 + (L0 + x) rho - x = 0`` with ``x = N / peak`` (seconds):
    ``rho = 2 x / (L0 + x + sqrt((L0 - x)^2 + 4 c L0 x))`` (the stable form of the root).

    ``coefficient`` (``c``, per point) is ``dram.loaded_latency_coefficient`` of the hardware model
    (HBM presets 0.111: twice the idle latency at 90 % of sustained; GDDR 0); where it is 0 the
    result is exactly ``min(peak, N / L0)``, so stacked points of mixed memories match one-op runs.
    """
    knee = np.minimum(peak_bytes_per_s, little_bandwidth(bytes_in_flight, idle_latency_s))
    c = np.asarray(coefficient, dtype=np.float64)
    loaded = c > 0.0
    if not loaded.any():
        return knee
    x = bytes_in_flight / peak_bytes_per_s
    if isinstance(x, np.ndarray) and x.ndim and all(np.shape(v) in ((), x.shape) for v in (idle_latency_s, c)):
        bandwidth = _loaded_peak_fraction(x, idle_latency_s, c)
        np.multiply(peak_bytes_per_s, bandwidth, out=bandwidth)
        if not loaded.all():
            np.copyto(bandwidth, knee, where=~loaded)
        return bandwidth
    rho = 2.0 * x / (idle_latency_s + x + np.sqrt((idle_latency_s - x) ** 2 + 4.0 * c * idle_latency_s * x))
    return np.where(loaded, peak_bytes_per_s * rho, knee)


def _loaded_peak_fraction(x: np.ndarray, idle_latency_s: np.ndarray, c: np.ndarray) -> np.ndarray:
    """``rho = 2 x / (L0 + x + sqrt((L0 - x)^2 + 4 c L0 x))`` of :func:`loaded_little_bandwidth` for an
    array ``x`` (``L0`` and ``c`` of its shape, or numbers), with the same operations in the same order
    on two temporaries (a stacked pass runs it on tens of thousands of rows); ``x`` becomes the result."""
    root = np.subtract(idle_latency_s, x)
    np.square(root, out=root)  # what ``** 2`` of an array computes
    term = np.multiply(4.0, c, out=np.empty_like(x))
    term *= idle_latency_s
    term *= x
    root += term
    np.sqrt(root, out=root)
    np.add(idle_latency_s, x, out=term)
    term += root
    np.multiply(2.0, x, out=x)
    x /= term
    return x


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


def _tile_table() -> tuple[np.ndarray, ...]:
    """Candidates (tiles x split-K) as flat arrays: bm, bn, threads, registers per thread, split."""
    bm, bn, warps, split = [], [], [], []
    for tbm, tbn, tw in TILES:
        for s in SPLIT_K:
            bm.append(tbm)
            bn.append(tbn)
            warps.append(tw)
            split.append(s)
    bm_a, bn_a, w_a, s_a = (np.asarray(v, dtype=np.float64) for v in (bm, bn, warps, split))
    threads = w_a * 32.0
    acc = bm_a * bn_a / threads
    # Accumulators, double-buffered operand fragments (half the accumulator count) and ~32 registers of
    # addressing and loop state: the register budget CUTLASS's warp-level MMA reports in ptxas -v.
    regs = acc + np.ceil(acc / 2.0) + 32.0
    table = (bm_a, bn_a, threads, regs, s_a)
    for column in table:
        column.flags.writeable = False  # a constant of the catalogue, shared by every call
    return table


TILE_TABLE = _tile_table()
"""The candidate table of :func:`_tile_table`, built once at import (read-only arrays)."""


_OCCUPANCY_FIELDS = ("warp_size", "max_warps", "registers_per_sm", "shared_memory_bytes", "max_blocks",
                     "max_shared_memory_per_block_bytes", "max_threads_per_block", "max_registers_per_thread",
                     "gemm_pipeline_stages")


@dataclass(frozen=True)
class _SMView:
    """The SM limits of :data:`_OCCUPANCY_FIELDS` for some rows (what :func:`gpu_occupancy` reads)."""

    warp_size: np.ndarray
    max_warps: np.ndarray
    registers_per_sm: np.ndarray
    shared_memory_bytes: np.ndarray
    max_blocks: np.ndarray
    max_shared_memory_per_block_bytes: np.ndarray
    max_threads_per_block: np.ndarray
    max_registers_per_thread: np.ndarray
    gemm_pipeline_stages: np.ndarray


def _unique_rows(table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(table, axis=0, return_inverse=True)`` of a 2-D float table: the distinct rows in
    lexicographic order and each row's index among them. One ``np.lexsort`` over the columns: numpy's
    ``axis=0`` path sorts the rows as opaque structured records, ~10x slower at 10^4 rows and more."""
    if len(table) <= 1 or (table == table[0]).all():  # nothing to sort (a lone GEMM at one point, one precision)
        return table[:1].copy(), np.zeros(len(table), dtype=np.int64)
    order = np.lexsort(table.T[::-1])  # the last key is the primary one: column 0 leads
    ordered = table[order]
    new = np.empty(len(table), dtype=bool)
    new[0] = True
    np.any(ordered[1:] != ordered[:-1], axis=1, out=new[1:])
    inverse = np.empty(len(table), dtype=np.int64)
    inverse[order] = np.cumsum(new) - 1
    return ordered[new], inverse


def _library_columns(library: str) -> np.ndarray | None:
    """:func:`library_candidates`, computed (once per library, at import)."""
    if library in (GEMM_LIBRARY, CONV_BACKWARD_LIBRARY):
        return None
    bm, bn, _, _, split = TILE_TABLE
    keep = np.zeros(len(bm), dtype=bool)
    for tbm, tbn in CONV_TILES:
        keep |= (bm == tbm) & (bn == tbn)
    columns = np.flatnonzero(keep & (split == 1.0))
    columns.flags.writeable = False
    return columns


def _frozen(a: np.ndarray) -> np.ndarray:
    """``a``, or a read-only view of it: the compiled search is specialised once, for read-only tables."""
    if not a.flags.writeable:
        return a
    view = a.view()
    view.flags.writeable = False
    return view


_LIBRARY_COLUMNS = {library: _library_columns(library) for library in LIBRARIES}
"""Each library's columns of the candidate table (:func:`library_candidates`), read-only constants."""

SEARCH_TABLE = _frozen(np.stack([TILE_TABLE[0], TILE_TABLE[1], TILE_TABLE[2], TILE_TABLE[4]]))
"""bm, bn, threads and split-K of every candidate: the table the compiled search reads."""

_LIBRARY_TABLES = {library: SEARCH_TABLE if columns is None else _frozen(np.ascontiguousarray(SEARCH_TABLE[:, columns]))
                   for library, columns in _LIBRARY_COLUMNS.items()}
""":data:`SEARCH_TABLE` restricted to each library's candidates (read-only constants)."""


def library_candidates(library: str) -> np.ndarray | None:
    """Columns of the candidate table a kernel library chooses from (``None``: all of them; a
    read-only array shared by every call)."""
    if library not in _LIBRARY_COLUMNS:
        raise ValueError(f"unknown GEMM kernel library {library!r}; known: {', '.join(LIBRARIES)}")
    return _LIBRARY_COLUMNS[library]


_KEPT_KEY = "_archsim_gemm_kept"
"""Key, in a parameter pack's instance ``__dict__``, of the values :func:`_kept` derives from it."""


def _kept(p: GPUParams, key: tuple[Any, ...], fields: tuple[str, ...], build: Any) -> Any:
    """What ``build()`` derives from the fields ``fields`` of the pack ``p`` (and ``key``), built once
    per pack and kept in its instance ``__dict__`` under a non-field key, as
    :meth:`GPUParams.continuation` keeps its view: a pack's ``==``, ``repr`` and fields do not see it.
    A kept value is used while those fields are the very arrays it was built from (read-only arrays
    of a frozen pack): a view of the pack with one of them replaced builds its own."""
    sources = tuple(getattr(p, f) for f in fields)
    held = p.__dict__.get(_KEPT_KEY)
    if held is None:
        held = p.__dict__[_KEPT_KEY] = {}
    got = held.get(key)
    if got is None or any(a is not b for a, b in zip(got[0], sources, strict=True)):
        got = held[key] = (sources, build())
    return got[1]


def _occupancy_table(p: GPUParams, a_bytes: np.ndarray, b_bytes: np.ndarray,
                     repeat: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Blocks per SM of every tile candidate, once per distinct (SM description, element sizes).

    Occupancy depends on the SM's limits, the pipeline depth and the element sizes only; a sweep
    over clocks, SM counts or bandwidths (or many GEMMs on one device) shares them. The rows asked
    for are the points of ``p`` repeated ``repeat`` times, row ``i`` with element sizes
    ``a_bytes[i]``, ``b_bytes[i]`` (arrays of ``repeat x p.n``). Returns (table of shape
    (distinct rows, candidates), each asked row's index into it).
    """
    cols = [np.tile(getattr(p, f), repeat) if repeat > 1 else getattr(p, f) for f in _OCCUPANCY_FIELDS]
    cols += [a_bytes, b_bytes]
    keys, inverse = _unique_rows(np.stack(cols, axis=1))
    return _occupancy_of_keys(keys), np.ravel(inverse).astype(np.int64)


def _occupancy_of_keys(keys: np.ndarray) -> np.ndarray:
    """Blocks per SM of every tile candidate (C-contiguous, distinct rows x candidates) for the distinct
    rows ``keys`` of (:data:`_OCCUPANCY_FIELDS`, A and B element sizes in bytes)."""
    sub = {f: keys[:, i] for i, f in enumerate(_OCCUPANCY_FIELDS)}
    bm, bn, threads, regs, _ = (v[None, :] for v in TILE_TABLE)
    a_u, b_u = keys[:, -2:-1], keys[:, -1:]
    bk = K_SLICE_BYTES / np.maximum(a_u, b_u)
    smem = sub["gemm_pipeline_stages"][:, None] * ((bm * a_u + bn * b_u) * bk)
    view = _SMView(**sub)
    bps = gpu_occupancy(view, threads, np.minimum(regs, view.max_registers_per_thread[:, None]), smem)  # type: ignore[arg-type]
    return np.ascontiguousarray(bps)


def _uniform_occupancy(p: GPUParams, a: float, b: float) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`_occupancy_table` of element sizes ``a``, ``b`` at every point of ``p`` when all points share
    one SM description (the table's one row, and row 0 for every point), found without stacking the
    points' fields; ``None`` when they do not."""
    cols = [getattr(p, f) for f in _OCCUPANCY_FIELDS]
    if p.n == 0 or not all(bool((c == c[0]).all()) for c in cols):
        return None
    keys = np.array([[*(c[0] for c in cols), a, b]], dtype=np.float64)  # the first row, as _unique_rows keeps it
    return _occupancy_of_keys(keys), np.zeros(p.n, dtype=np.int64)


def _pair_occupancy(p: GPUParams, a: float, b: float, library: str) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_occupancy_table` of element sizes ``a``, ``b`` at every point of ``p``, restricted to the
    candidates of ``library``: (read-only table, each point's row in it), kept on the pack (:func:`_kept`)."""
    def build() -> tuple[np.ndarray, np.ndarray]:
        columns = _LIBRARY_COLUMNS[library]
        if columns is not None:
            table, rows = _pair_occupancy(p, a, b, GEMM_LIBRARY)
            return _frozen(np.ascontiguousarray(table[:, columns])), rows
        got = _uniform_occupancy(p, a, b)
        table, rows = got if got is not None else _occupancy_table(p, np.full(p.n, a), np.full(p.n, b))
        return _frozen(table), _frozen(rows)

    return _kept(p, ("occupancy", a, b, library), _OCCUPANCY_FIELDS, build)


def _occupancy_rows(p: GPUParams, pairs: np.ndarray, library: str) -> tuple[np.ndarray, list[np.ndarray]]:
    """The occupancy table of the distinct element-size pairs ``pairs`` (P, 2) at every point of ``p``
    (:func:`_pair_occupancy`, stacked), and for each pair each point's row in it."""
    if len(pairs) == 1:
        table, rows = _pair_occupancy(p, float(pairs[0, 0]), float(pairs[0, 1]), library)
        return table, [rows]
    tables, offset_rows, offset = [], [], 0
    for a, b in pairs.tolist():
        table, rows = _pair_occupancy(p, a, b, library)
        tables.append(table)
        offset_rows.append(rows + offset)
        offset += len(table)
    return _frozen(np.concatenate(tables)), offset_rows


def gpu_gemm(p: GPUParams, m: int | np.ndarray, n: int | np.ndarray, k: int | np.ndarray, batch: int | np.ndarray,
             a_bytes: float | np.ndarray, b_bytes: float | np.ndarray, c_bytes: float | np.ndarray,
             flop_per_cycle_per_sm: np.ndarray, efficiency: np.ndarray, dram_min_bytes: np.ndarray,
             a_stream_factor: np.ndarray | float = 1.0, library: str = GEMM_LIBRARY) -> GemmKernel:
    """Predict the best GEMM kernel for C[m,n] = A[m,k] B[k,n] (``batch`` instances) per point.

    ``flop_per_cycle_per_sm`` is the unit's dense rate (Tensor Core or CUDA core) per point,
    ``efficiency`` its achievable fraction; ``dram_min_bytes`` is the DRAM traffic the L2 tiling model
    (:mod:`archsim.cost.traffic`) gives for the whole GEMM. ``a_stream_factor`` scales A's L2 operand
    traffic (below 1 for an implicit-GEMM convolution whose im2col rows overlap in L1). ``library``
    selects the kernel catalogue (:func:`library_candidates`).

    The shape (``m``, ``n``, ``k``, ``batch``, element sizes) may be scalars or arrays of shape
    ``(H,)``: with arrays, row ``i`` is a different GEMM on point ``i``.
    """
    h = p.n
    candidates = library_candidates(library)
    ops = _point_table([m, n, k, batch, a_bytes, b_bytes, c_bytes], h)
    rows = np.arange(h, dtype=np.int64)
    pairs, pair_of_row = _unique_rows(ops[:, 4:6])
    occupancy, pair_rows = _occupancy_rows(p, pairs, library)
    occupancy_row = pair_rows[0] if len(pair_rows) == 1 else np.stack(pair_rows)[np.ravel(pair_of_row), rows]
    return _search(p, ops, rows, rows, flop_per_cycle_per_sm, efficiency, dram_min_bytes, a_stream_factor,
                   occupancy, occupancy_row, candidates, library)


def gpu_gemm_grid(p: GPUParams, m: np.ndarray, n: np.ndarray, k: np.ndarray, batch: np.ndarray,
                  a_bytes: np.ndarray, b_bytes: np.ndarray, c_bytes: np.ndarray, flop_per_cycle_per_sm: np.ndarray,
                  efficiency: np.ndarray, dram_min_bytes: np.ndarray, a_stream_factor: np.ndarray,
                  library: str = GEMM_LIBRARY) -> GemmKernel:
    """:func:`gpu_gemm` of G GEMMs at each of the H points of ``p``, results flattened op-major (G*H,).

    The shape values are arrays of shape (G,); ``dram_min_bytes`` and ``a_stream_factor`` (G*H,).
    Row ``g * H + h`` is GEMM ``g`` on point ``h``, with the same floats as :func:`gpu_gemm` of
    that GEMM at that point.
    """
    g, h = len(m), p.n
    candidates = library_candidates(library)
    ops = np.ascontiguousarray(np.array((m, n, k, batch, a_bytes, b_bytes, c_bytes), dtype=np.float64).T)
    # Occupancy per point and distinct element-size pair (one pair per precision in practice).
    pairs, pair_of_op = _unique_rows(ops[:, 4:6])
    occupancy, pair_rows = _occupancy_rows(p, pairs, library)
    if h == 1:
        op_row = np.arange(g, dtype=np.int64)
        points = np.zeros(g, dtype=np.int64)
        occupancy_row = np.concatenate(pair_rows)[np.ravel(pair_of_op)] if len(pairs) > 1 else np.repeat(
            pair_rows[0], g)
    else:
        op_row, points = _grid_rows(p, g)
        if len(pairs) > 1:
            occupancy_row = np.concatenate([pair_rows[i] for i in np.ravel(pair_of_op).tolist()])
        elif len(occupancy) == 1:  # one SM description: every row reads the table's one row
            occupancy_row = np.zeros(g * h, dtype=np.int64)
        else:
            occupancy_row = np.tile(pair_rows[0], g)
    return _search(p, ops, op_row, points, flop_per_cycle_per_sm, efficiency, dram_min_bytes, a_stream_factor,
                   occupancy, occupancy_row, candidates, library)


def _grid_rows(p: GPUParams, g: int) -> tuple[np.ndarray, np.ndarray]:
    """Each row's GEMM and point in an op-major grid of ``g`` GEMMs at the points of ``p``:
    ``np.repeat(np.arange(g), p.n)`` and ``np.tile(np.arange(p.n), g)`` (int64, C-contiguous). Kept on
    the pack for the most GEMMs asked so far: a smaller grid (the next kernel class of the same call)
    reads the first ``g * p.n`` rows of those arrays, which are its own. The arrays stay writable, as
    the search was always given them (numba compiles one specialisation per array flags); it only
    reads them."""
    held = p.__dict__.setdefault(_KEPT_KEY, {})
    got = held.get("grid_rows")
    if got is None or got[0] < g:
        got = held["grid_rows"] = (g, np.repeat(np.arange(g, dtype=np.int64), p.n),
                                   np.tile(np.arange(p.n, dtype=np.int64), g))
    rows = g * p.n
    return got[1][:rows], got[2][:rows]


def _point_table(values: list[Any], n: int) -> np.ndarray:
    """The C-contiguous (n, len(values)) float64 table whose column ``j`` is ``values[j]`` over the
    ``n`` points (an (n,) array, or a number for every point): the same floats as stacking their
    broadcasts, in one conversion (``broadcast_to`` costs a Python call per column)."""
    cols = [v if isinstance(v, np.ndarray) and v.shape == (n,) else np.full(n, v, dtype=np.float64) for v in values]
    return np.ascontiguousarray(np.array(cols, dtype=np.float64).T)


def _search_points(p: GPUParams, library: str) -> np.ndarray:
    """The point table of the compiled search (:data:`~archsim.cost.gemm_search.POINT_FIELDS` of ``p``),
    read-only and kept on the pack (:func:`_kept`). The GEMM library splits K at most
    ``efficiency.gemm_max_split_k`` ways; the convolution libraries are not limited by that field."""
    from archsim.cost import gemm_search as engine

    limited = library == GEMM_LIBRARY

    def build() -> np.ndarray:
        if limited:
            return _frozen(_point_table([getattr(p, f) for f in engine.POINT_FIELDS], p.n))
        table = _search_points(p, GEMM_LIBRARY).copy()  # the same columns but one, without a second conversion
        table[:, engine.POINT_FIELDS.index("gemm_max_split_k")] = float(max(SPLIT_K))
        return _frozen(table)

    return _kept(p, ("points", limited), engine.POINT_FIELDS, build)


def _float_rows(values: np.ndarray | float, rows: int) -> np.ndarray:
    """``values`` (an array of ``rows`` floats, or one for every row) as a writable C-contiguous float64
    array of shape (rows,): the array itself when it is one (the search only reads it), else a new
    one (numba compiles one specialisation per array flags: the search's inputs keep the same)."""
    if isinstance(values, np.ndarray) and values.shape == (rows,) and values.dtype == np.float64 \
            and values.flags.c_contiguous and values.flags.writeable:
        return values
    return np.broadcast_to(np.asarray(values, dtype=np.float64), (rows,)).copy()


def _search(p: GPUParams, ops: np.ndarray, op_row: np.ndarray, point_row: np.ndarray,
            flop_per_cycle_per_sm: np.ndarray, efficiency: np.ndarray, dram_min_bytes: np.ndarray | float,
            a_stream_factor: np.ndarray | float, occupancy: np.ndarray, occupancy_row: np.ndarray,
            candidates: np.ndarray | None = None, library: str = GEMM_LIBRARY) -> GemmKernel:
    """Run the compiled candidate search (:mod:`archsim.cost.gemm_search`) over rows (GEMM ``op_row[r]`` on
    point ``point_row[r]``) and wrap its output table as a :class:`GemmKernel`.

    ``candidates`` selects columns of the tile table (all by default; ``occupancy`` has one column
    per selected candidate). The GEMM library (``library``) splits K at most
    ``efficiency.gemm_max_split_k`` ways; the convolution libraries are not limited by that field.
    """
    from archsim.cost import gemm_search as engine

    rows = len(op_row)
    if candidates is None:
        table = SEARCH_TABLE
    elif candidates is _LIBRARY_COLUMNS[library]:
        table = _LIBRARY_TABLES[library]
    else:
        table = _frozen(np.ascontiguousarray(SEARCH_TABLE[:, candidates]))
    out = np.empty((len(engine.OUT_FIELDS), rows))
    engine.search(np.ascontiguousarray(ops, dtype=np.float64), _search_points(p, library),
                  _float_rows(flop_per_cycle_per_sm, p.n), _float_rows(efficiency, p.n), op_row, point_row,
                  _float_rows(dram_min_bytes, rows), _float_rows(a_stream_factor, rows),
                  _frozen(np.ascontiguousarray(occupancy)), _frozen(occupancy_row), table, K_SLICE_BYTES,
                  ACCUMULATOR_BYTES, out)
    kernel = object.__new__(GemmKernel)
    kernel.__dict__.update(zip(engine.OUT_FIELDS, out, strict=True))  # every field, as the frozen __init__ sets them
    return kernel


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


def stream_blocks_per_sm(p: GPUParams, threads_per_block: float = STREAM_THREADS_PER_BLOCK,
                         registers_per_thread: float = 32.0, shared_per_block: float = 0.0,
                         max_blocks_per_sm: float = np.inf) -> np.ndarray:
    """Resident blocks per SM of a streaming kernel at each point of ``p`` (:func:`gpu_occupancy`
    of one block shape, at most ``max_blocks_per_sm``): a function of the point alone, kept on the
    pack per block shape (:func:`_kept`; a read-only array)."""
    def build() -> np.ndarray:
        tpb = np.asarray([[threads_per_block]])
        bps = gpu_occupancy(p, tpb, np.asarray([[registers_per_thread]]), np.asarray([[shared_per_block]]))[:, 0]
        return _frozen(np.minimum(bps, max_blocks_per_sm))

    key = ("stream_blocks_per_sm", threads_per_block, registers_per_thread, shared_per_block, max_blocks_per_sm)
    return _kept(p, key, _STREAM_OCCUPANCY_FIELDS, build)


_STREAM_OCCUPANCY_FIELDS = ("warp_size", "max_warps", "registers_per_sm", "shared_memory_bytes", "max_blocks",
                            "max_shared_memory_per_block_bytes", "max_threads_per_block",
                            "max_registers_per_thread")
"""The pack's fields :func:`gpu_occupancy` reads (a streaming kernel's occupancy depends on them alone)."""


def gpu_stream(p: GPUParams, vector_flop: float, special_flop: float, l2_bytes: np.ndarray, dram_bytes: np.ndarray,
               vector_rate_per_sm: np.ndarray, threads_total: float | None = None,
               threads_per_block: float = STREAM_THREADS_PER_BLOCK, registers_per_thread: float = 32.0,
               shared_per_block: float = 0.0, independent: bool = True,
               bytes_per_thread: float = STREAM_BYTES_PER_THREAD, max_blocks_per_sm: float = np.inf,
               read_fraction: float | None = None, blocks_per_sm: np.ndarray | None = None) -> StreamKernel:
    """A memory-streaming kernel: FLOP on the CUDA cores and SFUs, bytes through L2 and DRAM.

    Threads default to one per 16-byte vector of the DRAM traffic; resident threads (occupancy, at
    most ``max_blocks_per_sm`` blocks per SM) times ``bytes_per_thread`` (default 16 B) are in flight,
    which by Little's law bounds the bandwidth of small kernels (the lower of it and the peak).

    ``read_fraction`` (reads / DRAM bytes), when the kernel's description gives it, refines both
    limits: a thread's round is one load latency (L2 + DRAM) when it loads, plus one L2 latency when
    it stores (a store is posted to the write-back L2, which acknowledges it; DRAM sees it at
    eviction); and traffic in one direction only runs at ``efficiency.dram_read_only_efficiency`` or
    ``dram_write_only_efficiency`` (no read/write bus turnarounds). ``None``: every byte waits a load
    latency, at the mixed efficiency.

    ``independent=False``: the kernel's accesses form dependence chains whose latency the caller
    prices explicitly, so the bytes move at the achievable peak (applying Little's law as well would
    count the same latency twice).

    ``blocks_per_sm``: :func:`stream_blocks_per_sm` of ``p`` for these block arguments, when the caller
    has it (a stacked pass computes it once per point and tiles it; ``None``: computed here).
    """
    dram = np.asarray(dram_bytes, dtype=np.float64)
    if threads_total is None:
        threads_total = max(1.0, float(np.max(dram)) / STREAM_BYTES_PER_THREAD)
    bps = blocks_per_sm
    if bps is None:
        bps = stream_blocks_per_sm(p, threads_per_block, registers_per_thread, shared_per_block, max_blocks_per_sm)
    blocks = np.ceil(threads_total / threads_per_block)
    # Each array below is new (or made here); the in-place steps keep the operations and their order.
    resident_blocks = np.maximum(bps, 1.0)
    np.multiply(p.sm_count, resident_blocks, out=resident_blocks)
    np.minimum(blocks, resident_blocks, out=resident_blocks)
    inflight = resident_blocks * threads_per_block
    inflight *= bytes_per_thread
    busy_sm = np.minimum(p.sm_count, blocks)
    rate = vector_rate_per_sm * p.clock_hz
    rate *= p.vector_efficiency
    rate *= busy_sm
    np.maximum(rate, 1e-300, out=rate)
    compute = np.where(np.greater(vector_flop, 0), np.divide(vector_flop, rate, out=rate), 0.0)
    special = p.sfu_per_sm * p.clock_hz
    special *= p.vector_efficiency
    special *= busy_sm
    np.divide(special_flop, special, out=special)
    l2_bw = p.l2_bandwidth_bytes_per_s * p.l2_bandwidth_efficiency
    dram_bw = p.dram_bandwidth_bytes_per_s * p.dram_bandwidth_efficiency
    load_latency = p.l2_latency_s + p.dram_latency_s
    dram_latency = load_latency
    if read_fraction is not None:
        if read_fraction >= 1.0:
            dram_bw = p.dram_bandwidth_bytes_per_s * p.dram_read_only_efficiency
        elif read_fraction <= 0.0:
            dram_bw = p.dram_bandwidth_bytes_per_s * p.dram_write_only_efficiency
        dram_latency = (dram_latency if read_fraction > 0.0 else 0.0) + (p.l2_latency_s if read_fraction < 1.0
                                                                          else 0.0)
    if independent:
        # A streaming kernel's requests are independent: its bandwidth is Little's-law-bound until the
        # bytes in flight cover the latency, then peak-bound, with a sharp knee (gpu-benches gpu-stream on
        # ten GPUs: the harmonic combination of achievable_bandwidth is 25-45 % too slow at >= 25 %
        # occupancy, the minimum within 10 %; validation/gpu_stream.py). The tiled-GEMM model keeps the
        # harmonic form (its operand loads wait on the pipeline, the queue of achievable_bandwidth).
        # DRAM: the round latency grows with the utilisation of the sustained bandwidth
        # (dram.loaded_latency_coefficient; 0 keeps the sharp knee), see loaded_little_bandwidth.
        np.minimum(l2_bw, little_bandwidth(inflight, p.l2_latency_s), out=l2_bw)
        dram_bw = loaded_little_bandwidth(dram_bw, inflight, dram_latency, p.dram_loaded_latency_coefficient)
    l2 = np.divide(np.asarray(l2_bytes, dtype=np.float64), l2_bw, out=l2_bw)
    dram_t = np.divide(dram, dram_bw, out=dram_bw)
    fill = np.where(dram > 0, load_latency, p.l2_latency_s)
    time = np.maximum(compute, special)
    np.maximum(time, np.maximum(l2, dram_t), out=time)
    time += fill
    occupancy = np.divide(resident_blocks, p.sm_count, out=resident_blocks)
    occupancy *= threads_per_block
    occupancy /= p.max_warps * p.warp_size
    np.minimum(occupancy, 1.0, out=occupancy)
    if not (isinstance(blocks, np.ndarray) and blocks.shape == bps.shape and blocks.dtype == np.float64):
        blocks = np.broadcast_to(blocks, bps.shape).astype(np.float64)
    return StreamKernel(time_s=time, compute_s=compute, special_s=special, l2_s=l2, dram_s=dram_t, fill_s=fill,
                        blocks_per_sm=bps, achieved_occupancy=occupancy, blocks=blocks)


def gpu_stream_stacked(p: GPUParams, vector_rate_key: str, vector_flop: np.ndarray, special_flop: np.ndarray,
                       threads_total: np.ndarray, l2_bytes: np.ndarray, dram_bytes: np.ndarray,
                       blocks_per_sm: np.ndarray | None = None) -> StreamKernel:
    """:func:`gpu_stream` of G streaming kernels of the default block (independent accesses) at each of
    the H points of ``p``, rows op-major (row ``g * H + h``: kernel ``g`` on point ``h``), the same
    floats as the array model on the rows stacked (``p`` tiled, each kernel's values repeated), in one
    compiled loop (:func:`archsim.cost.gemm_search.stream_rows`).

    ``vector_flop``, ``special_flop`` and ``threads_total`` are per kernel (G,); ``l2_bytes`` and
    ``dram_bytes`` per row (G*H,); ``vector_rate_key`` the CUDA-core precision that runs them. The
    kernel's ``blocks_per_sm`` is :func:`stream_blocks_per_sm` of ``p`` tiled G times (``blocks_per_sm``,
    when the caller has it; read-only)."""
    from archsim.cost import gemm_search as engine

    h = p.n
    rows = len(vector_flop) * h
    bps = stream_blocks_per_sm(p)

    def build() -> np.ndarray:
        fields = [p.vector_flop_per_cycle_per_sm[vector_rate_key],
                  *(getattr(p, f) for f in engine.STREAM_POINT_FIELDS[1:-1]), bps]
        return _frozen(np.ascontiguousarray(np.array(fields, dtype=np.float64)))

    points = _kept(p, ("stream_points", vector_rate_key), _STREAM_POINT_SOURCES, build)
    out = np.empty((len(engine.STREAM_OUT_FIELDS), rows))
    engine.stream_rows(_float_rows(vector_flop, len(vector_flop)), _float_rows(special_flop, len(vector_flop)),
                       _float_rows(threads_total, len(vector_flop)), _float_rows(l2_bytes, rows),
                       _float_rows(dram_bytes, rows), points, float(STREAM_THREADS_PER_BLOCK),
                       STREAM_BYTES_PER_THREAD, out)
    tiled = blocks_per_sm if blocks_per_sm is not None else bps if len(vector_flop) == 1 else _frozen(
        np.tile(bps, len(vector_flop)))
    kernel = object.__new__(StreamKernel)
    kernel.__dict__.update(zip(engine.STREAM_OUT_FIELDS, out, strict=True), blocks_per_sm=tiled)
    return kernel


_STREAM_POINT_SOURCES = ("vector_flop_per_cycle_per_sm", "sm_count", "clock_hz", "vector_efficiency", "sfu_per_sm",
                         "l2_bandwidth_bytes_per_s", "l2_bandwidth_efficiency", "dram_bandwidth_bytes_per_s",
                         "dram_bandwidth_efficiency", "l2_latency_s", "dram_latency_s",
                         "dram_loaded_latency_coefficient", "max_warps", "warp_size",
                         *_STREAM_OCCUPANCY_FIELDS)
"""The pack's fields :func:`gpu_stream_stacked`'s point table is made of (kept while they are the
pack's arrays, :func:`_kept`)."""


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
