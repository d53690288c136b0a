"""Power of an op, the power limit and DVFS: the clock an op runs at, and what that does to it.

The cost functions (:mod:`archsim.cost.gpu`, :mod:`archsim.cost.cpu`) price an op at the device's
nominal (boost) clock. :func:`apply` then, for a device with a :class:`~archsim.hardware.PowerModel`:

1. adds the action energies the ledger does not price: instruction issue (fetch, decode,
   scheduling, operand collection; per warp instruction on a GPU, per instruction on a CPU, where it
   carries the out-of-order overhead), the on-chip network (bytes between the SMs/cores and the
   last-level cache) and the processor-side memory interface (controller + PHY per DRAM byte);
2. solves for the clock (:func:`archsim.energy.dvfs.solve_clock`): the highest clock whose average
   power fits the power limit, all ops and hardware points in one compiled bisection;
3. rescales the op to that clock: compute, L1 and L2 (or CPU cache) times by f_nom / f, DRAM and
   dependent-latency times unchanged; on-chip energies by (V(f) / v_max)^2; and replaces the
   static energy by board, leakage and clock-network power times the new latency.

The op gets ``extra["clock_hz"]``, ``extra["power_w"]`` (its average power) and
``extra["power_limited"]`` (1 where the limit lowered the clock); where that cost time, the time
key ``power`` holds the op's kernel time and its bound reads ``power``.

The arithmetic is numpy's over (ops, points) arrays: the costs' arrays stacked into one block,
written into where large (:func:`archsim.energy.dvfs.writer`); on a large block everything after the
governor (step 3, the average power and the limited time) is one compiled pass
(:func:`archsim.energy.clocked.rescale`, :func:`_rescaled`) with the same operations in the same
order; one op at one point (a lone estimate) runs them in Python floats (:func:`_point`), with the
same bits.

Instruction counts are first-order: a vector FMA warp instruction does 2 x warp_size FLOP, a
Tensor Core warp MMA ``tensor_core.flop_per_instruction`` (the issued SASS instruction), a global load or store moves
``MEMORY_BYTES_PER_LANE`` per lane; a CPU vector instruction does 2 x SIMD lanes FLOP and a load
moves one SIMD register.
"""

from __future__ import annotations

import functools
import itertools
import types
from collections.abc import Sequence
from typing import Any

import numpy as np

from archsim.cost.types import CostArrays, CostTotals
from archsim.energy import PowerTerms, VFCurve, clocked_power, op_time
from archsim.energy.dvfs import (
    INPLACE_MIN,
    c_float64,
    float_maximum,
    nominal_or_governed,
    point_clocked_power,
    point_governed,
    point_time,
    writer,
)
from archsim.hardware.gpu import MMA_FLOP_PER_INSTRUCTION

__all__ = ["apply", "MMA_FLOP_PER_WARP_INSTRUCTION", "MEMORY_BYTES_PER_LANE", "OFFCHIP", "TIME_SCALED"]

MMA_FLOP_PER_WARP_INSTRUCTION = MMA_FLOP_PER_INSTRUCTION
"""Default FLOP of one issued warp-level MMA (mma.sync m16n8k16 = 2 x 16 x 8 x 16); a GPU's own value is
``tensor_core.flop_per_instruction`` (Volta 512, Turing 2048)."""

MEMORY_BYTES_PER_LANE = 4.0
"""Bytes one lane moves per global memory instruction (a 32-bit LDG/STG: 128 B per warp)."""

OFFCHIP = ("dram", "dram_interface", "link", "pim")
"""Energy components that do not scale with the core voltage (off-chip and I/O supplies)."""

NOT_POWER_MODEL = ("static", "leakage", "clock")

TIME_SCALED_MEMORY = ("memory:l1", "memory:l2", "memory:l1d", "memory:l3")
"""Memory levels clocked with the cores (GPU L1/L2, CPU caches), whose time follows the clock."""

TIME_SCALED = TIME_SCALED_MEMORY
"""Public alias: the memory time keys that scale with the clock (plus every ``compute:`` key)."""


@functools.lru_cache(maxsize=256)
def _clocked(key: str) -> bool:
    return key.startswith("compute:") or key in TIME_SCALED_MEMORY


def _instructions(flop: dict[str, np.ndarray], load_bytes: np.ndarray, p: Any, gpu: bool) -> np.ndarray:
    """Instructions issued (warp instructions on a GPU) per op and point, from the FLOP by unit and
    the bytes loaded (GPU: through L2, CPU: from L1). ``flop`` and ``load_bytes`` are temporaries of
    the result's shape, which large arrays are divided into (:func:`~archsim.energy.dvfs.writer`); the
    result is then the first of them (the first FLOP key's, else ``load_bytes``)."""
    into = writer(load_bytes)
    n = None  # 0 + the first quotient, written into it (what a sum from zeros gives)
    for key, count in flop.items():
        q = into(np.divide, count, _flop_per_instruction(key, p, gpu), count)
        n = into(np.add, 0.0, q, q) if n is None else into(np.add, n, q, n)
    per = p.warp_size * MEMORY_BYTES_PER_LANE if gpu else p.simd_bytes
    q = into(np.divide, load_bytes, per, load_bytes)
    return into(np.add, 0.0, q, q) if n is None else into(np.add, n, q, n)


def _flop_per_instruction(key: str, p: Any, gpu: bool) -> Any:
    """FLOP of one instruction of the unit of FLOP key ``key`` (per point; ``p`` a pack, or the
    floats of one point, :func:`_point_cost`)."""
    unit = key.partition(":")[0]
    if gpu:
        return p.tensor_flop_per_instruction if unit == "tensor" else (
            p.warp_size if unit == "special" else 2.0 * p.warp_size)
    lanes = p.simd_bytes / 4.0
    return lanes if unit == "special" else 2.0 * lanes * (8.0 if unit == "matrix" else 1.0)


def _rows(arrays: list[np.ndarray], rows: int | None = None) -> np.ndarray:
    """``np.stack`` of equal-length 1-d arrays (one concatenate: the stack's per-row checks cost more
    than the numbers here). One op: a (1, H) view of its array, no copy. ``rows``: the number of
    (op) rows when an array holds several ops' rows one after another (see :func:`apply`)."""
    n = len(arrays) if rows is None else rows
    if len(arrays) == 1 and getattr(arrays[0], "ndim", 0) == 1:
        return arrays[0].reshape(n, -1)
    try:
        return np.concatenate(arrays).reshape(n, -1)
    except ValueError:  # a 0-d entry: broadcast the slow way
        if rows is not None:
            raise
        return np.stack(np.broadcast_arrays(*arrays))


def _block(columns: list[list[np.ndarray]], rows: int | None, lone: bool) -> list[np.ndarray]:
    """Each column (one array per cost) as one (ops, points) array (:func:`_rows`; a lone cost: its
    points' shape), all of them new and in one block made by one concatenation: the caller may write
    into them, and a key-range of them is one array (``block[i:j]``, what :func:`apply` scales at once).

    Returns the block (columns first), or a list of separate arrays where the entries do not make a
    float64 block (0-d entries, other dtypes: stacked column by column, as :func:`_rows` does)."""
    if not columns:
        return []
    try:
        block = np.concatenate(list(itertools.chain.from_iterable(columns)))
        if block.dtype == np.float64:
            shape = (len(columns), -1) if lone else (len(columns), len(columns[0]) if rows is None else rows, -1)
            return block.reshape(shape)
    except ValueError:
        pass
    out = [np.array(_rows(c, rows)) for c in columns]
    return [a.reshape(-1) for a in out] if lone else out


def _each(op: np.ufunc, rows: np.ndarray | list[np.ndarray], b: np.ndarray) -> list[np.ndarray] | np.ndarray:
    """``op(row, b)`` for each row of a block slice, written into the slice (one call, no new array:
    the caller owns the block, :func:`_block`), or for each of a list of rows (new arrays)."""
    if isinstance(rows, list):
        return [op(r, b) for r in rows]
    try:
        return op(rows, b, out=rows) if len(rows) else []
    except ValueError:  # b broadcasts the rows to a larger shape: new arrays
        return op(rows, b)


def _alone(costs: list[CostArrays], sizes: list[int], n: int, offchip_keys: list[str],
           unclocked_keys: list[str]) -> bool:
    """Whether each off-chip energy and each time the clock leaves alone of every cost is a float64
    array of its cost's rows (``g x n`` values for a cost of ``g`` ops at ``n`` points): what a row
    of their stacking holds, to the bit."""
    for c, g in zip(costs, sizes, strict=True):
        for values, keys in ((c.energy_breakdown_j, offchip_keys), (c.time_by_unit_s, unclocked_keys)):
            for k in keys:
                v = values.get(k)
                if v is not None and not (type(v) is np.ndarray and v.dtype == np.float64 and v.shape == (g * n,)):
                    return False
    return True


class Spare:
    """Arrays of the block's shape that :func:`apply` owns and no longer reads, to write into
    instead of new arrays (none where ``enabled`` is false: small arrays, or no float64 block)."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.rows: list[np.ndarray] = []

    def give(self, *arrays: np.ndarray) -> None:
        """Arrays done with (each given once, and read no more)."""
        if self.enabled:
            self.rows.extend(a for a in arrays if isinstance(a, np.ndarray) and a.dtype == np.float64)

    def take(self, wanted: bool = True) -> np.ndarray | None:
        """One of them (``None``: none left, or not ``wanted``; ``out=None`` makes a new array)."""
        return self.rows.pop() if wanted and self.rows else None

    def own(self, a: np.ndarray, like: np.ndarray) -> np.ndarray | None:
        """``a`` (a temporary the caller owns) where it has ``like``'s shape, else one of them."""
        return a if np.shape(a) == like.shape else self.take()

    def zeros(self, like: np.ndarray) -> np.ndarray:
        """``np.zeros_like(like)``: one of them set to 0 where there is one of its shape."""
        out = self.take()
        if out is None or out.shape != like.shape:
            return np.zeros_like(like)
        out.fill(0.0)
        return out

    def copy(self, a: np.ndarray, like: np.ndarray) -> np.ndarray:
        """``a`` broadcast to ``like``'s shape, as a new array (one of them where there is one)."""
        out = self.take()
        if out is None or out.shape != like.shape:
            return np.broadcast_to(a, like.shape).copy()
        np.copyto(out, a)
        return out


def _active(got: np.ndarray, p: Any, gpu: bool) -> np.ndarray:
    """Fraction of SMs (cores) each op occupies: its thread blocks (threads) over the SMs (cores);
    ``got`` (NaN: not known, taken as all) is a temporary, written into where it is large."""
    units = p.sm_count if gpu else p.cores
    if got.size < INPLACE_MIN:
        return np.clip(np.where(np.isnan(got), 1.0, got / units), 0.0, 1.0)
    unknown = np.isnan(got)
    np.divide(got, units, out=got)
    np.copyto(got, 1.0, where=unknown)
    return np.clip(got, 0.0, 1.0, out=got)


def _sum(arrays: list[np.ndarray], op: np.ufunc = np.add, out: np.ndarray | None = None) -> np.ndarray:
    """``functools.reduce(op, arrays)``: left to right, into the first result where it is large (and
    that into ``out``, a temporary of the result's shape, where given)."""
    if len(arrays) == 1:
        return arrays[0]
    acc = writer(arrays[0])(op, arrays[0], arrays[1], out)
    into = writer(acc)
    for a in arrays[2:]:
        acc = into(op, acc, a, acc)
    return acc


def apply(costs: Sequence[CostArrays], p: Any, gpu: bool, counts: Sequence[int] | None = None,
          totals: bool = False) -> list[CostArrays] | list[CostTotals]:
    """``costs`` (ops priced at the nominal clock at the points of pack ``p``) at their DVFS clocks.

    ``p`` is a :class:`~archsim.cost.params.GPUParams` (``gpu=True``) or
    :class:`~archsim.cost.params.CPUParams`. Points without a power model are returned unchanged.
    ``counts`` (default 1 each): the number of ops each cost stacks, op-major (the points of its
    first op, then of its second...; a kernel class's stacked pass, :mod:`archsim.cost.gpu_batch`):
    each of its ops is governed as if given alone, and it comes back stacked the same way.
    ``totals``: over (ops, points) arrays, each governed cost's :class:`~archsim.cost.types.CostTotals`
    (its kind, FLOP, latency, energy by component and FLOP by unit: the same arrays) instead of its
    CostArrays; elsewhere the CostArrays.
    """
    costs = list(costs)
    if not costs or not p.has_power.any():
        return costs
    if len(costs) == 1 and getattr(costs[0].latency_s, "size", 0) == 1 and (counts is None or counts[0] == 1):
        point = _point(costs[0], p, gpu)
        if point is not None:
            return [point]
    return _apply_arrays(costs, p, gpu, counts, totals)


def _apply_arrays(costs: list[CostArrays], p: Any, gpu: bool, counts: Sequence[int] | None,
                  totals: bool = False) -> list[CostArrays] | list[CostTotals]:
    """:func:`apply` over (ops, points) arrays (any number of ops and points)."""
    single = counts is None or all(g == 1 for g in counts)
    sizes = [1] * len(costs) if counts is None else list(counts)
    total_rows = None if single else sum(sizes)
    # A lone cost is computed in its points' shape (H,): the same floats as its (1, H) row, with the
    # per-point arrays of p in the same shape (numpy's cheapest call on tiny arrays).
    lone = single and len(costs) == 1
    last = p.caches[-1].name if not gpu else "l2"
    loads = "l2" if gpu else p.caches[0].name  # where load instructions are counted from
    occupancy = [c.extra.get("blocks" if gpu else "threads") for c in costs]
    unknown = any(o is None for o in occupancy)
    if single:
        zero = np.zeros_like(costs[0].latency_s)
        zeros = [zero] * len(costs)
        nans = itertools.repeat(np.full_like(zero, np.nan) if unknown else None)
    else:
        h = p.n
        by_size = {g: np.zeros(g * h) for g in dict.fromkeys(sizes)}
        zeros = [by_size[g] for g in sizes]
        # one array per size, as the zeros: the block's concatenation copies what it reads
        nan_by_size = {g: np.full(g * h, np.nan) for g in dict.fromkeys(sizes)} if unknown else {}
        nans = [nan_by_size[g] for g in sizes] if unknown else itertools.repeat(None)

    def column(dicts: list[dict[str, np.ndarray]], k: str) -> list[np.ndarray]:
        # Each cost's array of key k, 0 where it has none (the stacking of missing keys).
        return list(map(dict.get, dicts, itertools.repeat(k), zeros))

    energies = [c.energy_breakdown_j for c in costs]
    timings = [c.time_by_unit_s for c in costs]
    flops = [c.flop_by_unit for c in costs]
    levels = [c.bytes_by_level for c in costs]
    ekeys = list(dict.fromkeys(itertools.chain.from_iterable(energies)))
    tkeys = list(dict.fromkeys(itertools.chain.from_iterable(timings)))
    fkeys = list(dict.fromkeys(itertools.chain.from_iterable(flops)))
    onchip_keys = [k for k in ekeys if k not in OFFCHIP and k not in NOT_POWER_MODEL]
    offchip_keys = [k for k in ekeys if k in OFFCHIP]
    clocked_keys = [k for k in tkeys if k != "overhead" and _clocked(k)]
    unclocked_keys = [k for k in tkeys if k == "overhead" or not _clocked(k)]
    # Two blocks: the arrays the costs returned keep as they are (off-chip energies, times the clock
    # leaves alone), and the rest, which is written into and dropped. Where the kept arrays are the
    # float64 arrays of their costs' rows (:func:`_alone`), they go back as the costs gave them (the
    # values of their rows), their block holds only those the arithmetic reads (no overhead time),
    # and it is written into once read.
    alone = _alone(costs, sizes, p.n, offchip_keys, unclocked_keys)
    alone_t = frozenset(unclocked_keys if alone else ())
    alone_e = frozenset(k for k in offchip_keys if alone and k not in _ADDED)
    stacked_times = [k for k in unclocked_keys if not (alone and k == "overhead")]
    kept = _block([column(energies, k) for k in offchip_keys] + [column(timings, k) for k in stacked_times],
                  total_rows, lone)
    occupancy = [nan if got is None else got for got, nan in zip(occupancy, nans, strict=False)]
    work = _block([column(energies, k) for k in onchip_keys] + [column(timings, k) for k in clocked_keys]
                  + [column(flops, k) for k in fkeys] + [column(levels, k) for k in (loads, last, "dram")]
                  + [[c.latency_s for c in costs], [c.overhead_s for c in costs], occupancy], total_rows, lone)
    offchip0 = dict(zip(offchip_keys, kept, strict=False))
    times0 = dict(zip(stacked_times, kept[len(offchip_keys):], strict=True))
    n_on, n_clk, n_flop = len(onchip_keys), len(clocked_keys), len(fkeys)
    onchip0 = dict(zip(onchip_keys, work, strict=False))
    clocked0 = work[n_on:n_on + n_clk]
    flop = dict(zip(fkeys, work[n_on + n_clk:], strict=False))
    load_bytes, last_bytes, dram_bytes, latency, fixed, got = work[n_on + n_clk + n_flop:]
    into = writer(latency)  # into the temporaries where the arrays are large
    # The block's rows that are done with, written into instead of new arrays (each array of the
    # block's shape that is not new costs its pages): the quotients of _instructions but the one
    # holding the sum, then each temporary once it is no longer read.
    spare = Spare(latency.size >= INPLACE_MIN and isinstance(work, np.ndarray))

    issue = _instructions(flop, load_bytes, p, gpu)
    spare.give(*[a for a in (*flop.values(), load_bytes) if a is not issue])
    issue = into(np.multiply, issue, p.issue_j, issue)
    noc = into(np.multiply, last_bytes, p.noc_j_per_byte, last_bytes) if gpu else np.zeros_like(issue)
    iface = into(np.multiply, dram_bytes, p.dram_interface_j_per_byte, dram_bytes)
    onchip = into(np.add, issue, noc, spare.take())
    offchip = iface
    for k in ekeys:
        if k in OFFCHIP:
            offchip = (into(np.add, offchip, offchip0[k], spare.take()) if offchip is iface
                       else into(np.add, offchip, offchip0[k], offchip))
        elif k not in NOT_POWER_MODEL:
            onchip = into(np.add, onchip, onchip0[k], onchip)
    clock_s = _sum(clocked0, np.maximum, spare.take(n_clk > 1)) if n_clk else np.zeros_like(issue)
    unclocked = [times0[k] for k in unclocked_keys if k != "overhead"]
    memory_s = _sum(unclocked, np.maximum, spare.take(len(unclocked) > 1)) if unclocked else np.zeros_like(issue)
    excess = into(np.subtract, latency, fixed, spare.take())
    longest = into(np.maximum, clock_s, memory_s, spare.take())
    excess = into(np.subtract, excess, longest, excess)
    spare.give(longest)
    excess = into(np.maximum, excess, 0.0, excess)
    cores = p.sm_count if gpu else p.cores
    leakage = into(np.multiply, p.core_leakage_w * cores, _active(got, p, gpu), got)
    curve = VFCurve(p.v_min, p.v_max, p.knee_clock_hz, p.max_voltage_clock_hz)
    # Static power scales with the chip: leakage and clock network per SM (core), the memory PHYs
    # with the peak DRAM bandwidth; SMs an op leaves empty leak less (power-gated or idle).
    terms = PowerTerms(nominal_hz=p.clock_hz, fixed_s=fixed, clock_s=clock_s, memory_s=memory_s, excess_s=excess,
                       onchip_j=onchip, offchip_j=offchip,
                       board_w=p.board_power_w + p.dram_background_w + p.phy_power_w,
                       leakage_w=into(np.add, leakage, p.uncore_leakage_w, leakage),
                       clock_w=p.core_clock_power_w * cores, leakage_exponent=p.leakage_exponent, curve=curve)
    has = p.has_power > 0
    every = bool(has.all())

    def where(a: Any, b: Any) -> Any:
        # np.where(has, a, b), skipped when every point has a power model (the usual case).
        return a if every else np.where(has, a, b)

    scratch = [spare.take() for _ in range(3)]
    ratio, nominal_s = nominal_or_governed(terms, p.power_limit_w, p.min_clock_hz / p.clock_hz, scratch)
    spare.give(*[a for a in scratch if a is not None])
    # Every (op, point) at the nominal clock: the ratio 1 in the points' shape, whose clock factors
    # broadcast to the same floats as the full shape's; op_time(terms, 1) is nominal_s itself.
    # (Not at one point of several ops: there numpy's power would run over the ops with the leakage
    # exponent as a scalar, 2 and 0.5 taken as a square and a square root, not over the points.)
    nominal = ratio is None and nominal_s.shape == latency.shape and (latency.ndim == 1 or latency.shape[-1] > 1)
    rescaled = None
    if every and spare.enabled and (nominal or ratio is not None) and latency.shape[-1] > 1:
        # The terms' temporaries, the nominal latency and times and the kept block (where the costs'
        # own arrays go back) are read by the kernel only, each entry before it writes the entry: its
        # outputs may be written into them.
        read = [*[a for a in (onchip, offchip) if a is not iface], excess, nominal_s, latency, fixed, got,
                *[a for a, own in ((clock_s, n_clk != 1), (memory_s, len(unclocked) != 1)) if own],
                *(kept if alone else ())]
        rescaled = _rescaled(terms, p, ratio, nominal_s, (latency, issue, noc, iface),
                             (work[:n_on], clocked0, kept[:len(offchip_keys)]), (ekeys, onchip_keys, offchip_keys),
                             gpu, spare, read, full=not totals)
    if rescaled is not None:
        lat, clock_hz, power_w, limited, power_s, energy = rescaled
        times = {"power": power_s}
        divided = dict(zip(clocked_keys, clocked0, strict=True))
        times.update({k: (divided[k] if k in divided else times0[k]) for k in tkeys if k not in alone_t})
    else:
        if nominal:
            ratio = where(np.ones(np.shape(terms.nominal_hz)), 1.0)
            lat = where(into(np.add, latency, into(np.subtract, nominal_s, nominal_s, nominal_s), nominal_s), latency)
        else:
            if ratio is None:
                ratio = np.ones(np.broadcast(terms.clock_s, p.power_limit_w).shape)
            ratio = where(ratio, 1.0)
            if nominal_s.shape != np.shape(ratio):
                nominal_s = op_time(terms, np.ones_like(ratio))
            lat = op_time(terms, ratio)
            lat = where(into(np.add, latency, into(np.subtract, lat, nominal_s, lat), lat), latency)
            spare.give(nominal_s)
        # The terms' temporaries the rest does not read (the clock's powers read none of them).
        spare.give(*[a for a in (onchip, offchip) if a is not iface], excess)
        spare.give(*[a for a, own in ((clock_s, n_clk != 1), (memory_s, len(unclocked) != 1)) if own])
        # The constant powers at the governed clock (the time and energy terms of op_power are not
        # needed here: the energies are scaled below and the time is ``lat``).
        watts = clocked_power(terms, ratio)
        # The energy tables hold energies at v_max (the presets' boost clock): a lower clock, chosen by
        # the governor or set by the user, runs them at V(f)^2 / v_max^2.
        scale = where(watts.v2, 1.0)
        energy = dict(zip(onchip_keys, _each(np.multiply, work[:n_on], scale), strict=True))
        energy = {k: (offchip0[k] if k in OFFCHIP else energy[k]) for k in ekeys if k not in NOT_POWER_MODEL}
        energy["issue"] = where(into(np.multiply, issue, scale, issue), 0.0)
        if gpu:
            energy["noc"] = where(into(np.multiply, noc, scale, noc), 0.0)
        # The memory interface: its per-byte energy and its PHYs' standing power over the op.
        phy = into(np.multiply, p.phy_power_w, lat, spare.take())
        energy["dram_interface"] = where(into(np.add, iface, phy, phy), 0.0)
        spare.give(iface)
        board = into(np.subtract, watts.board_w, p.phy_power_w, watts.board_w)
        static0 = 0.0 if every or "static" not in ekeys else (
            energies[0]["static"] if lone else _rows(column(energies, "static"), total_rows))
        energy["static"] = where(into(np.multiply, board, lat, spare.own(board, lat)), static0)
        energy["leakage"] = where(into(np.multiply, watts.leakage_w, lat, spare.own(watts.leakage_w, lat)), 0.0)
        energy["clock"] = where(into(np.multiply, watts.clock_w, lat, spare.own(watts.clock_w, lat)), 0.0)
        total = _sum(list(energy.values()), out=spare.take())
        power_w = np.divide(total, lat, out=spare.zeros(lat), where=lat > 0)
        if all(total is not v for v in energy.values()):
            spare.give(total)
        if alone:  # the kept block is read no more (the costs' own arrays go back)
            spare.give(*kept)
        lengthened = lat > into(np.multiply, latency, 1.0 + 1e-12, latency)
        spare.give(latency)
        if lat.size < INPLACE_MIN:
            power_s = np.where(lengthened, lat - fixed, 0.0)
        else:
            power_s = np.subtract(lat, fixed, out=spare.zeros(lat), where=lengthened)
        times = {"power": power_s}
        divided = dict(zip(clocked_keys, _each(np.divide, work[n_on:n_on + n_clk], ratio), strict=True))
        times.update({k: (divided[k] if k in divided else times0[k]) for k in tkeys if k not in alone_t})
        clock_hz = watts.clock_hz  # p.clock_hz * ratio
        if nominal:  # the points' clocks, one row per op; none of them limited
            clock_hz, limited = spare.copy(clock_hz, lat), spare.zeros(lat)
        else:
            limited = (ratio < 1.0).astype(np.float64)
    # Each (ops, points) array as its list of per-op row views (what ``a[i]`` gives), cut once; a
    # cost stacking g ops gets its g rows as one flat view (g x points values, op-major).
    if lone:
        def cut(a: np.ndarray) -> list[np.ndarray]:
            return [a]
    elif single:
        cut = list
    else:
        starts = list(itertools.accumulate(sizes, initial=0))

        def cut(a: np.ndarray) -> list[np.ndarray]:
            # a[s:e].reshape(-1): the same view, cut from the flat array (one reshape, not one each).
            flat, h = a.reshape(-1), a.shape[-1]
            return [flat[s * h:e * h] for s, e in zip(starts[:-1], starts[1:], strict=True)]

    energy = {k: ([] if k in alone_e else cut(v)) for k, v in energy.items()}

    def breakdown(i: int, had: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        # Cost i's energies; keys it did not have stay out (the stacking filled them with 0).
        return {k: (had[k] if k in alone_e else v[i]) for k, v in energy.items() if k in had or k in _ADDED}

    if totals:  # the totals' fields alone: the latency and energies below, the tags and FLOP as given
        return [CostTotals.from_fields({"kind": c.kind, "flop": c.flop, "latency_s": lat_i,
                                        "energy_breakdown_j": breakdown(i, c.energy_breakdown_j),
                                        "flop_by_unit": c.flop_by_unit})
                for i, (c, lat_i) in enumerate(zip(costs, cut(lat), strict=True))]
    times = {k: cut(v) for k, v in times.items()}
    power_rows = times["power"]
    out = []
    for i, (c, lat_i, clock_i, power_i, limited_i) in enumerate(zip(costs, cut(lat), cut(clock_hz), cut(power_w),
                                                                    cut(limited), strict=True)):
        # Keys an op did not have stay out of its dicts (the stacking filled them with 0).
        t_i = {"power": power_rows[i], **{k: (v if k in alone_t else times[k][i]) for k, v in c.time_by_unit_s.items()}}
        e_i = breakdown(i, c.energy_breakdown_j)
        extra = {**c.extra, **dict(zip(EXTRA_KEYS, (clock_i, power_i, limited_i), strict=True))}
        out.append(CostArrays.from_fields({**c.__dict__, "latency_s": lat_i, "time_by_unit_s": t_i,
                                           "energy_breakdown_j": e_i, "extra": extra}))
    return out


def _rescaled(t: PowerTerms, p: Any, ratio: np.ndarray | None, nominal_s: np.ndarray,
              entries: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
              rows: tuple[Any, Any, Any], keys: tuple[list[str], list[str], list[str]], gpu: bool,
              spare: Spare, read: list[np.ndarray], full: bool = True) -> tuple[Any, ...] | None:
    """:func:`apply`'s arithmetic after the governor over a large block in one compiled pass
    (:func:`archsim.energy.clocked.rescale`, the same floats): the latency (s), the clock (Hz), the
    average power (W), the power-limited flag, the power-limited time (s) and the energy dict (J, in
    :func:`apply`'s order), each of the block's shape.

    ``ratio``: the governed ratios (``None``: 1 everywhere); ``entries``: the nominal latency (s),
    the issue, on-chip network and memory interface energies (J); ``rows``: the block's on-chip
    energy rows (scaled in place), clocked time rows (divided in place) and off-chip energy rows
    (``keys``: the energies' keys in their order, the on-chip and the off-chip energies' keys).
    ``read``: arrays the kernel reads and may write into (given to ``spare`` once it runs). ``None``
    (nothing given, nothing written: the numpy passes then) unless the rows are C-contiguous slices
    of a block, every per-(op, point) array is a C-contiguous float64 array of the block's shape and
    every per-point one of the points. Without ``full`` (the totals alone are read), the clock, the
    average power, the flag and the power-limited time are ``None`` and the clocked time rows are
    left as they are."""
    latency, issue, noc, iface = entries
    ekeys, onchip_keys, offchip_keys = keys
    shape, size = latency.shape, latency.size
    if not all(type(r) is np.ndarray and r.flags.c_contiguous and r.dtype == np.float64 and r.shape[1:] == shape
               for r in rows if len(r)):
        return None
    c = t.curve
    points = (t.nominal_hz, c.knee_hz, (c.v_max - c.v_min) / (c.vmax_hz - c.knee_hz), c.v_min, c.v_max, c.vmax_hz,
              t.clock_w, t.board_w, p.phy_power_w, t.leakage_exponent)
    block = (latency, nominal_s, t.fixed_s, t.clock_s, t.memory_s, t.excess_s, t.leakage_w, issue, noc, iface,
             *(() if ratio is None else (ratio,)))
    if not (c_float64(points, shape[-1:]) and c_float64(block, shape)):
        return None
    from archsim.energy import clocked  # numba: imported for large blocks only

    table = np.stack(points)  # the rows of clocked.POINTS, one (writable) array of one type

    flat = np.empty(0) if ratio is None else ratio.reshape(-1)
    # V(f) / v_max where numpy's power is needed (the entries off the ratio 1, then the points at it).
    governed = int(np.count_nonzero(flat != 1.0))
    rel, n, at = np.empty(governed + shape[-1]), np.empty(governed + shape[-1]), np.empty(governed, dtype=np.int64)
    clocked.voltage_ratios(flat, table, rel, n, at)
    leak = rel ** n
    on = {key: i for i, key in enumerate(onchip_keys)}
    off = {key: i for i, key in enumerate(offchip_keys)}
    codes = {key: (clocked.ROWS + len(on) + off[key] if key in OFFCHIP else clocked.ROWS + on[key])
             for key in ekeys if key not in NOT_POWER_MODEL}
    codes.update({"issue": clocked.ISSUE, **({"noc": clocked.NOC} if gpu else {}), "dram_interface": clocked.INTERFACE,
                  "static": clocked.STATIC, "leakage": clocked.LEAKAGE, "clock": clocked.CLOCK})
    spare.give(*read)
    if full:
        lat, clock_hz, power_w, limited, power_s, static, leakage, clock = _outputs(spare, shape, 8)
    else:
        lat, static, leakage, clock = _outputs(spare, shape, 4)
        clock_hz = power_w = limited = power_s = None
    unused = np.empty(0)
    onchip, clock_rows, offchip = (r.reshape(len(r), size) if len(r) else np.empty((0, size)) for r in rows)
    clocked.rescale(flat, *[a.reshape(-1) for a in block[:10]], table, leak, at, onchip, clock_rows, offchip,
                    np.array(list(codes.values()), dtype=np.int64), full,
                    *[unused if a is None else a.reshape(-1)
                      for a in (lat, clock_hz, power_w, limited, power_s, static, leakage, clock)])
    added = (issue, noc, iface, static, leakage, clock)  # in the order of clocked.ISSUE .. clocked.CLOCK
    energy = {key: (added[code] if code < clocked.ROWS else
                    rows[2][code - clocked.ROWS - len(on)] if key in OFFCHIP else rows[0][code - clocked.ROWS])
              for key, code in codes.items()}
    return lat, clock_hz, power_w, limited, power_s, energy


def _outputs(spare: Spare, shape: tuple[int, ...], k: int) -> list[np.ndarray]:
    """``k`` distinct C-contiguous float64 arrays of ``shape`` to write into: the spare ones of that
    shape first, then new ones."""
    out: list[np.ndarray] = []
    seen: set[int] = set()
    while len(out) < k:
        a = spare.take()
        if a is None:
            out.append(np.empty(shape))
        elif id(a) not in seen and a.shape == shape and a.flags.c_contiguous and a.dtype == np.float64:
            seen.add(id(a))
            out.append(a)
    return out


_POINT_FIELDS = ("issue_j", "dram_interface_j_per_byte", "core_leakage_w", "uncore_leakage_w", "board_power_w",
                 "dram_background_w", "phy_power_w", "core_clock_power_w", "power_limit_w", "min_clock_hz",
                 "clock_hz", "v_min", "v_max", "knee_clock_hz", "max_voltage_clock_hz")
_POINT_GPU = (*_POINT_FIELDS, "warp_size", "tensor_flop_per_instruction", "sm_count", "noc_j_per_byte")
_POINT_CPU = (*_POINT_FIELDS, "simd_bytes", "cores")


def _point(c: CostArrays, p: Any, gpu: bool) -> CostArrays | None:
    """:func:`apply` of one op at one point in Python floats: the same IEEE operations in the same
    order as the arrays (numpy's maximum, clip and power where they differ from Python's), the same
    bits, without numpy's per-call cost on one-entry arrays. ``None`` where an entry is not a
    one-entry array or a division by zero needs numpy's inf and NaN (the arrays then)."""
    try:
        return _point_cost(c, p, gpu)
    except (AttributeError, ValueError, ZeroDivisionError):
        return None


def _point_cost(c: CostArrays, p: Any, gpu: bool) -> CostArrays:
    """:func:`_point` (raises where it returns ``None``)."""
    q = types.SimpleNamespace(**{f: getattr(p, f).item() for f in (_POINT_GPU if gpu else _POINT_CPU)})
    level = {k: v.item() for k, v in c.bytes_by_level.items()}
    n = 0.0
    for key, count in c.flop_by_unit.items():
        n = n + count.item() / _flop_per_instruction(key, q, gpu)
    if gpu:
        n = n + level.get("l2", 0.0) / (q.warp_size * MEMORY_BYTES_PER_LANE)
    else:
        n = n + level.get(p.caches[0].name, 0.0) / q.simd_bytes
    issue = n * q.issue_j
    noc = level.get("l2", 0.0) * q.noc_j_per_byte if gpu else 0.0
    iface = level.get("dram", 0.0) * q.dram_interface_j_per_byte
    onchip = issue + noc
    offchip = iface
    energy0 = {k: v.item() for k, v in c.energy_breakdown_j.items()}
    for k, v in energy0.items():
        if k in OFFCHIP:
            offchip = offchip + v
        elif k not in NOT_POWER_MODEL:
            onchip = onchip + v
    times0 = {k: v.item() for k, v in c.time_by_unit_s.items()}
    clocked = [v for k, v in times0.items() if k != "overhead" and _clocked(k)]
    unclocked = [v for k, v in times0.items() if k != "overhead" and not _clocked(k)]
    clock_s = functools.reduce(float_maximum, clocked) if clocked else 0.0
    memory_s = functools.reduce(float_maximum, unclocked) if unclocked else 0.0
    latency, fixed = c.latency_s.item(), c.overhead_s.item()
    excess = float_maximum(latency - fixed - float_maximum(clock_s, memory_s), 0.0)
    cores = q.sm_count if gpu else q.cores
    got = c.extra.get("blocks" if gpu else "threads")
    active = 1.0 if got is None or got.item() != got.item() else got.item() / cores
    active = 0.0 if active < 0.0 else (1.0 if active > 1.0 else active)  # numpy's clip (-0 and NaN kept)
    terms = PowerTerms(nominal_hz=q.clock_hz, fixed_s=fixed, clock_s=clock_s, memory_s=memory_s, excess_s=excess,
                       onchip_j=onchip, offchip_j=offchip,
                       board_w=q.board_power_w + q.dram_background_w + q.phy_power_w,
                       leakage_w=q.core_leakage_w * cores * active + q.uncore_leakage_w,
                       clock_w=q.core_clock_power_w * cores, leakage_exponent=p.leakage_exponent,
                       curve=VFCurve(q.v_min, q.v_max, q.knee_clock_hz, q.max_voltage_clock_hz))
    ratio, nominal_s = point_governed(terms, q.power_limit_w, q.min_clock_hz / q.clock_hz)
    lat = latency + (point_time(terms, ratio) - nominal_s)
    watts = point_clocked_power(terms, ratio)
    scale = watts.v2
    energy = {k: (v if k in OFFCHIP else v * scale) for k, v in energy0.items() if k not in NOT_POWER_MODEL}
    energy["issue"] = issue * scale
    if gpu:
        energy["noc"] = noc * scale
    energy["dram_interface"] = iface + q.phy_power_w * lat
    energy["static"] = (watts.board_w - q.phy_power_w) * lat
    energy["leakage"] = watts.leakage_w * lat
    energy["clock"] = watts.clock_w * lat
    total = None
    for v in energy.values():
        total = v if total is None else total + v
    times = {"power": lat - fixed if lat > latency * (1.0 + 1e-12) else 0.0}
    times.update({k: (v / ratio if _clocked(k) else v) for k, v in times0.items()})
    # One array of every value, cut into one-entry rows; the values the clock leaves alone are the
    # op's own arrays.
    values = [lat, watts.clock_hz, total / lat if lat > 0 else 0.0, 1.0 if ratio < 1.0 else 0.0,
              *times.values(), *energy.values()]
    rows = list(np.array(values).reshape(-1, 1))
    lat_i, clock_i, power_i, limited_i = rows[:4]
    t_i = dict(zip(times, rows[4:], strict=False))
    e_i = dict(zip(energy, rows[4 + len(times):], strict=True))
    for k, v in c.time_by_unit_s.items():
        if not _clocked(k):
            t_i[k] = v
    for k, v in c.energy_breakdown_j.items():
        if k in e_i and k in OFFCHIP and k not in _ADDED:
            e_i[k] = v
    extra = {**c.extra, **dict(zip(EXTRA_KEYS, (clock_i, power_i, limited_i), strict=True))}
    return CostArrays.from_fields({**c.__dict__, "latency_s": lat_i, "time_by_unit_s": t_i,
                                   "energy_breakdown_j": e_i, "extra": extra})


_ADDED = ("issue", "noc", "dram_interface", "static", "leakage", "clock")
EXTRA_KEYS = ("clock_hz", "power_w", "power_limited")
"""The ``extra`` entries :func:`apply` adds to every op it governs, in this order."""
