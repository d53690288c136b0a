"""Traces of the loop nests of real kernels, and their instruction mixes.

A :class:`TracedKernel` describes one kernel at one size: its memory trace (generated in numba,
one chunk of outer-loop *units* at a time: a matrix row, a tile pair, an output channel, a block of
elements), its conditional-branch trace where the branches depend on data, and its dynamic
instruction mix. Kernels: matmul in i-j-k, i-k-j and blocked order, a direct convolution, a STREAM
triad, a reduction, and the branchy loop ``if x[i] > 0: s += x[i]`` over sorted or unsorted data.

Layout: row-major float64 (``element_bytes`` 8) arrays at page-aligned bases, one guard page apart.

Sampling (:func:`simulate_cache`, :func:`simulate_branch_trace`): the first ``warmup_units`` units
are run to warm the hierarchy, the counters are cleared, the next ``sample_units`` units are
counted, and the counts are scaled by ``total_units / sample_units``. The loop nests here are
stationary from unit to unit (every row of a matmul behaves like the next), which is what makes
this unbiased; ``sample_units=None`` simulates everything.

Instruction mixes are per-iteration counts read off the x86-64 code numba 0.68 / LLVM generates for
the kernels of ``validation/kernels/cpu`` on Zen 4 (``inspect_asm``), stated in each builder: which
loops are vectorised (i-k-j's inner loop and the triad: 512-bit, 8 doubles, unrolled x4), which
stay scalar for lack of fastmath (the reductions over k, the blocked tile loop, the convolution),
and which branch is if-converted (the plain branchy loop becomes a masked move; the variant with a
conditional store keeps its branch).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Literal

import numpy as np

from archsim.errors import WorkloadError
from archsim.microarch import _trace_gen as gen
from archsim.microarch.branch import BranchSimulator, BranchStats, PredictorConfig
from archsim.microarch.cache import CacheSimulator, HierarchyConfig, HierarchyStats

PAGE = 4096
MatmulOrder = Literal["ijk", "ikj", "blocked"]
BranchyVariant = Literal["select", "store"]

# Mispredicted loop exits: a TAGE-like predictor with a long history sees the exit of a short loop
# coming; an inner loop longer than this is taken to mispredict its exit once (estimate).
LOOP_EXIT_PREDICTABLE_TRIPS = 32
# Kernels with at most this many accesses are simulated whole, twice (see simulate_cache).
REPEAT_WARM_ACCESSES = 20_000_000


@dataclass(frozen=True)
class InstructionMix:
    """Dynamic counts of a whole kernel run (floats: some are per-iteration averages).

    ``carried_adds`` / ``carried_blends``: FP adds and masked moves on the loop-carried critical
    path (a reduction's ``s += ...``), which the core model multiplies by their latencies.
    ``loop_exit_mispredicts``: branch mispredictions of loop exits (see the constant above).
    """

    instructions: float
    loads: float
    stores: float
    fp_ops: float
    flop: float
    carried_adds: float = 0.0
    carried_blends: float = 0.0
    loop_exit_mispredicts: float = 0.0
    data_branches: float = 0.0


@dataclass(frozen=True)
class TracedKernel:
    """One kernel at one size: what the core model predicts from (``describe()`` of a CPU case)."""

    name: str
    kind: Literal["matmul", "conv2d", "triad", "reduction", "branchy"]
    params: dict
    total_units: int
    accesses_per_unit: int
    mix: InstructionMix
    default_sample_units: int | None = None
    warmup_units: int = 1
    bytes_per_unit: int = 0
    _bases: tuple[int, ...] = field(default=(), repr=False)

    def memory_chunks(self, u0: int, u1: int, max_units: int = 1) -> Iterator[tuple]:
        """``(addresses, sizes, is_write)`` arrays for units ``[u0, u1)``, ``max_units`` at a time.

        The arrays are views of one buffer, valid until the next chunk is generated (copy to keep).
        """
        if not 0 <= u0 <= u1 <= self.total_units:
            raise WorkloadError(f"{self.name}: units [{u0}, {u1}) outside 0..{self.total_units}")
        cap = self.accesses_per_unit * max_units
        addr = np.empty(cap, np.int64)
        size = np.empty(cap, np.int64)
        wr = np.empty(cap, np.bool_)
        p = self.params
        x = branchy_data(p["n"], p["sorted"], p["seed"]) if self.kind == "branchy" else None
        for lo in range(u0, u1, max_units):
            hi = min(u1, lo + max_units)
            n = self._fill(lo, hi, addr, size, wr, x)
            yield addr[:n], size[:n], wr[:n]

    def _fill(self, lo, hi, addr, size, wr, x) -> int:
        p, b = self.params, self._bases
        e = p["element_bytes"]
        if self.kind == "matmul":
            if p["order"] == "ijk":
                return gen.matmul_ijk_mem(p["n"], e, b[0], b[1], b[2], lo, hi, addr, size, wr)
            if p["order"] == "ikj":
                return gen.matmul_ikj_mem(p["n"], e, p["vector"], b[0], b[1], b[2], lo, hi, addr, size, wr)
            return gen.matmul_blocked_mem(p["n"], e, p["tile"], b[0], b[1], b[2], lo, hi, addr, size, wr)
        if self.kind == "conv2d":
            return gen.conv2d_mem(p["cin"], p["h"], p["w"], p["k"], p["k"], e, b[0], b[1], b[2], lo, hi,
                                  addr, size, wr)
        if self.kind in ("triad", "reduction"):
            n_in = 2 if self.kind == "triad" else 1
            out = b[2] if self.kind == "triad" else -1
            return gen.stream_mem(p["n"], e, p["vector"], p["block"], n_in, np.array(b[:2], np.int64), out,
                                  lo, hi, addr, size, wr)
        out = b[1] if p["variant"] == "store" else -1
        return gen.filter_mem(x, e, b[0], out, p["block"], lo, hi, addr, size, wr)

    def branch_trace(self, u0: int, u1: int) -> tuple[np.ndarray, np.ndarray] | None:
        """``(pc, taken)`` of the data-dependent branches of units ``[u0, u1)``, or None if none."""
        if self.kind != "branchy" or self.params["variant"] != "store":
            return None
        p = self.params
        x = branchy_data(p["n"], p["sorted"], p["seed"])[u0 * p["block"]:u1 * p["block"]]
        return np.full(x.shape[0], 0x40, np.int64), x > 0.0


def _bases(*sizes: int) -> tuple[int, ...]:
    out, at = [], PAGE
    for s in sizes:
        out.append(at)
        at += -(-s // PAGE) * PAGE + PAGE
    return tuple(out)


@functools.lru_cache(maxsize=4)
def branchy_data(n: int, sorted_: bool, seed: int) -> np.ndarray:
    """The branchy loop's input: n standard normals (half positive), sorted ascending if asked.

    Read-only and memoised (the trace generators ask for it once per chunk pass).
    """
    x = np.random.default_rng(seed).standard_normal(n)
    if sorted_:
        x.sort()
    x.flags.writeable = False
    return x


def _exit_mispredicts(trips: int, exits: float) -> float:
    return exits if trips > LOOP_EXIT_PREDICTABLE_TRIPS else 0.0


def matmul(n: int, order: MatmulOrder, tile: int = 64, element_bytes: int = 8) -> TracedKernel:
    """C = A B for n x n matrices in loop order ``order``."""
    if n <= 0 or order not in ("ijk", "ikj", "blocked") or tile <= 0:
        raise WorkloadError(f"matmul: n={n!r} > 0, order in ijk/ikj/blocked (got {order!r}), tile > 0")
    nb = n * n * element_bytes
    bases = _bases(nb, nb, nb)
    n3, n2 = float(n) ** 3, float(n) ** 2
    if order == "ijk":
        # Scalar (no fastmath): per k, vmulsd with a folded load, vmovsd load, vaddsd on s; unrolled
        # x8, so ~0.5 loop instruction per k. Per (i, j): the store and loop setup (~6).
        mix = InstructionMix(instructions=4.5 * n3 + 6 * n2, loads=2 * n3, stores=n2, fp_ops=2 * n3,
                             flop=2 * n3, carried_adds=n3, loop_exit_mispredicts=_exit_mispredicts(n, n2))
        units, per_unit, params = n, 2 * n * n + n, {}
    elif order == "ikj":
        # Vectorised j loop, 8 doubles per zmm, x4 unrolled: per vector vmulpd (B folded), vaddpd
        # (C folded), vmovupd store, ~0.75 loop instructions. Per (i, k): A load, alias checks (~12).
        vec = 8
        vectors = n2 * -(-n // vec)
        mix = InstructionMix(instructions=5.75 * vectors + 12 * n2, loads=2 * vectors + n2, stores=vectors,
                             fp_ops=2 * vectors, flop=2 * n3,
                             loop_exit_mispredicts=_exit_mispredicts(-(-n // vec) // 4, n2))
        units, per_unit, params = n, n * (1 + 3 * -(-n // vec)), {"vector": vec}
    else:
        # Scalar tile loop (the min() bounds keep LLVM from vectorising it): per j: 2 loads, a store,
        # vmulsd, vaddsd, ~1 loop instruction. Per (i, k) in a tile: the A load and setup (~6).
        nt = -(-n // tile)
        mix = InstructionMix(instructions=6 * n3 + 6 * n2 * nt, loads=2 * n3 + n2 * nt, stores=n3,
                             fp_ops=2 * n3, flop=2 * n3,
                             loop_exit_mispredicts=_exit_mispredicts(tile, n2 * nt))
        units, per_unit, params = nt * nt, nt * tile * tile * (1 + 3 * tile), {"tile": tile}
    sample = None if units <= 4 else (2 if order != "blocked" else 1)
    per_bytes = {"ijk": per_unit * element_bytes, "ikj": 3 * n * n * element_bytes,
                 "blocked": 3 * _blocked_unit_elements(n, tile) * element_bytes if order == "blocked" else 0}[order]
    return TracedKernel(
        name=f"matmul-{order}/n={n}", kind="matmul",
        params={"n": n, "order": order, "element_bytes": element_bytes} | params,
        total_units=units, accesses_per_unit=per_unit, mix=mix, default_sample_units=sample,
        warmup_units=1 if units > 2 else 0, bytes_per_unit=per_bytes, _bases=bases,
    )


def _blocked_unit_elements(n: int, tile: int) -> int:
    """Elements one (ii, kk) unit of the blocked matmul accesses: tile^2 n per operand stream."""
    return tile * tile * n


def conv2d(cin: int, cout: int, h: int, w: int, k: int = 3, element_bytes: int = 8) -> TracedKernel:
    """Direct convolution, stride 1, no padding, loop order co, y, x, ci, r, s (scalar)."""
    if min(cin, cout, h, w, k) <= 0 or k > min(h, w):
        raise WorkloadError(f"conv2d: sizes must be positive and k <= h, w (got {cin, cout, h, w, k})")
    oh, ow = h - k + 1, w - k + 1
    inner = float(cout) * oh * ow * cin * k * k
    outs = float(cout) * oh * ow
    bases = _bases(cin * h * w * element_bytes, cout * cin * k * k * element_bytes, cout * oh * ow * element_bytes)
    # Per (ci, r, s): vmovsd + vmulsd (folded load), vaddsd on acc, ~1.5 loop instructions (the
    # s loop of k trips is fully unrolled by LLVM for k = 3, leaving the r and ci loop overhead).
    mix = InstructionMix(instructions=4.5 * inner + 8 * outs, loads=2 * inner, stores=outs, fp_ops=2 * inner,
                         flop=2 * inner, carried_adds=inner,
                         loop_exit_mispredicts=_exit_mispredicts(cin, outs))
    return TracedKernel(
        name=f"conv2d/c={cin}x{cout}/hw={h}x{w}/k={k}", kind="conv2d",
        params={"cin": cin, "cout": cout, "h": h, "w": w, "k": k, "element_bytes": element_bytes},
        total_units=cout, accesses_per_unit=int(oh * ow * (2 * cin * k * k + 1)), mix=mix,
        default_sample_units=None if cout <= 4 else 2,
        bytes_per_unit=int(oh * ow * (2 * cin * k * k + 1)) * element_bytes, _bases=bases,
    )


def _stream_kernel(kind, n, element_bytes, block, mix, vector, name, n_arrays):
    bases = _bases(*([n * element_bytes] * n_arrays))
    units = -(-n // block)
    per = (block // vector + 1) * (3 if kind == "triad" else 1)
    return TracedKernel(name=name, kind=kind, params={"n": n, "element_bytes": element_bytes, "block": block,
                                                      "vector": vector},
                        total_units=units, accesses_per_unit=per, mix=mix,
                        default_sample_units=None if units <= 8 else 4,
                        bytes_per_unit=block * element_bytes * (3 if kind == "triad" else 1), _bases=bases)


def triad(n: int, element_bytes: int = 8, block: int = 1 << 16) -> TracedKernel:
    """STREAM triad a = b + s c (vectorised, 8 doubles per vector)."""
    if n <= 0:
        raise WorkloadError(f"triad: n must be positive, got {n!r}")
    v = 8
    vectors = float(-(-n // v))
    # Per zmm vector: vmulpd (c folded), vaddpd (b folded), vmovupd store, ~0.75 loop instructions.
    mix = InstructionMix(instructions=5.75 * vectors, loads=2 * vectors, stores=vectors, fp_ops=2 * vectors,
                         flop=2.0 * n)
    return _stream_kernel("triad", n, element_bytes, block, mix, v, f"triad/n={n}", 3)


def reduction(n: int, element_bytes: int = 8, block: int = 1 << 16) -> TracedKernel:
    """s = sum(x): scalar without fastmath, so one dependent add per element."""
    if n <= 0:
        raise WorkloadError(f"reduction: n must be positive, got {n!r}")
    # Per element: vaddsd with a folded load; unrolled x8, so ~1/8 loop instruction.
    mix = InstructionMix(instructions=1.125 * n, loads=float(n), stores=0.0, fp_ops=float(n), flop=float(n),
                         carried_adds=float(n))
    return _stream_kernel("reduction", n, element_bytes, block, mix, 1, f"reduction/n={n}", 1)


def branchy(n: int, sorted_: bool, variant: BranchyVariant = "store", seed: int = 0,
            element_bytes: int = 8, block: int = 1 << 16) -> TracedKernel:
    """``for i: if x[i] > 0: s += x[i]`` (``select``) or the same plus ``out[k] = x[i]; k += 1`` (``store``).

    LLVM if-converts the plain loop into a compare and a masked move, so ``select`` has no
    data-dependent branch and its loop-carried path is an add and a masked move per element. The
    conditional store cannot be speculated, so ``store`` keeps a real branch on ``x[i] > 0``.
    """
    if n <= 0 or variant not in ("select", "store"):
        raise WorkloadError(f"branchy: n={n!r} > 0 and variant in select/store (got {variant!r})")
    x = branchy_data(n, sorted_, seed)
    taken = float(np.count_nonzero(x > 0.0))
    if variant == "select":
        # Per element: vmovsd load, vaddsd, vcmpltsd, masked vmovsd; unrolled x8.
        mix = InstructionMix(instructions=4.125 * n, loads=float(n), stores=0.0, fp_ops=3.0 * n, flop=float(n),
                             carried_adds=float(n), carried_blends=float(n))
    else:
        # Per element: vmovsd load, vucomisd, ja, inc, cmp/jne; taken: vaddsd, vmovsd store, inc.
        mix = InstructionMix(instructions=5.0 * n + 3 * taken, loads=float(n), stores=taken,
                             fp_ops=n + taken, flop=taken, carried_adds=taken, data_branches=float(n))
    bases = _bases(n * element_bytes, n * element_bytes)
    units = -(-n // block)
    return TracedKernel(
        name=f"branchy-{variant}/{'sorted' if sorted_ else 'unsorted'}/n={n}", kind="branchy",
        params={"n": n, "sorted": sorted_, "variant": variant, "seed": seed, "element_bytes": element_bytes,
                "block": block},
        total_units=units, accesses_per_unit=2 * block, mix=mix,
        default_sample_units=None if units <= 8 else 4,
        bytes_per_unit=block * element_bytes * (2 if variant == "store" else 1), _bases=bases,
    )


def _sample(kernel: TracedKernel, sample_units: int | None, capacity_bytes: int) -> tuple[int, int, int]:
    # The warm-up streams at least twice the hierarchy's capacity, so that the sample sees the
    # steady state, write-backs from the last level included (they leave it only when evicted).
    s = kernel.default_sample_units if sample_units is None else sample_units
    w = kernel.warmup_units
    if kernel.bytes_per_unit:
        w = max(w, -(-2 * capacity_bytes // kernel.bytes_per_unit))
    if s is None or s <= 0 or w + s >= kernel.total_units:
        return 0, 0, kernel.total_units
    return 0, w, w + s


def _capacity(hierarchy: HierarchyConfig) -> int:
    return sum(lv.size_bytes * (1 if lv.shared else hierarchy.n_cores) for lv in hierarchy.levels)


def simulate_cache(kernel: TracedKernel, hierarchy: HierarchyConfig, sample_units: int | None = None,
                   max_units_per_chunk: int = 1, repeated: bool = True) -> tuple[HierarchyStats, float]:
    """Run (a sample of) the kernel's memory trace; return the scaled stats and the scale factor.

    ``sample_units=None`` uses the kernel's default sample; ``0`` simulates every unit.
    ``repeated``: the kernel runs back to back (as when timed), so a kernel whose whole trace is
    short (<= ``REPEAT_WARM_ACCESSES``) is simulated twice and counted the second time: its data
    start where the previous run left them. Long kernels are sampled after a warm-up instead.
    """
    sim = CacheSimulator(hierarchy)
    if repeated and kernel.total_units * kernel.accesses_per_unit <= REPEAT_WARM_ACCESSES:
        for _ in range(2):
            sim.reset_stats()
            for a, s, wr in kernel.memory_chunks(0, kernel.total_units, max_units_per_chunk):
                sim.run(a, s, wr)
        return sim.stats().scaled(1.0), 1.0
    _, w, stop = _sample(kernel, sample_units, _capacity(hierarchy))
    for a, s, wr in kernel.memory_chunks(0, w, max_units_per_chunk):
        sim.run(a, s, wr)
    sim.reset_stats()
    for a, s, wr in kernel.memory_chunks(w, stop, max_units_per_chunk):
        sim.run(a, s, wr)
    factor = kernel.total_units / (stop - w)
    return sim.stats().scaled(factor), factor


def simulate_branch_trace(kernel: TracedKernel, predictor: PredictorConfig,
                          sample_units: int | None = None) -> BranchStats:
    """Mispredictions of the kernel's data-dependent branches (scaled from the sample)."""
    _, w, stop = _sample(kernel, sample_units, 0)
    if kernel.branch_trace(0, 0) is None:
        return BranchStats(0, 0, 0)
    sim = BranchSimulator(predictor)
    if w:
        pc, tk = kernel.branch_trace(0, w)
        sim.run(pc, tk)
    pc, tk = kernel.branch_trace(w, stop)
    before = sim.stats()
    sim.run(pc, tk)
    after = sim.stats()
    factor = kernel.total_units / (stop - w)
    counted = after.counted - before.counted
    return BranchStats(int(round(counted * factor)), int(round(counted * factor)),
                       int(round((after.mispredictions - before.mispredictions) * factor)))


def with_sample(kernel: TracedKernel, sample_units: int | None) -> TracedKernel:
    """A copy of ``kernel`` with another default sample size."""
    return replace(kernel, default_sample_units=sample_units)
