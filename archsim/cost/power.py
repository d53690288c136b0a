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

Instruction counts are first-order: a vector FMA warp instruction does 2 x warp_size FLOP, a
Tensor Core warp MMA ``tensor_core.flop_per_instruction`` (the issued SASS instruction), a global load or store moves
``MEMORY_BYTES_PER_LANE`` per lane; a CPU vector instruction does 2 x SIMD lanes FLOP and a load
moves one SIMD register.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

from archsim.cost.types import CostArrays
from archsim.energy import PowerTerms, VFCurve, clocked_power, op_time, solve_clock
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


def _zero(c: CostArrays) -> np.ndarray:
    return np.zeros_like(c.latency_s)


def _instructions(flop: dict[str, np.ndarray], load_bytes: np.ndarray, p: Any, gpu: bool) -> np.ndarray:
    """Instructions issued (warp instructions on a GPU) per op and point, from the FLOP by unit and
    the bytes loaded (GPU: through L2, CPU: from L1)."""
    n = np.zeros_like(load_bytes)
    for key, count in flop.items():
        unit = key.partition(":")[0]
        if gpu:
            per = p.tensor_flop_per_instruction if unit == "tensor" else (
                p.warp_size if unit == "special" else 2.0 * p.warp_size)
        else:
            lanes = p.simd_bytes / 4.0
            per = lanes if unit == "special" else 2.0 * lanes * (8.0 if unit == "matrix" else 1.0)
        n = n + count / per
    if gpu:
        return n + load_bytes / (p.warp_size * MEMORY_BYTES_PER_LANE)
    return n + load_bytes / p.simd_bytes


def _rows(arrays: list[np.ndarray], rows: int | None = None) -> np.ndarray:
    """``np.stack`` of equal-length 1-d arrays (one concatenate: the stack's per-row checks cost more
    than the numbers here). One op: a (1, H) view of its array, no copy (nothing here writes into
    the stacked arrays, and the costs it returns share arrays as any CostArrays may). ``rows``: the
    number of (op) rows when an array holds several ops' rows one after another (see :func:`apply`)."""
    n = len(arrays) if rows is None else rows
    if len(arrays) == 1 and getattr(arrays[0], "ndim", 0) == 1:
        return arrays[0].reshape(n, -1)
    try:
        return np.concatenate(arrays).reshape(n, -1)
    except ValueError:  # a 0-d entry: broadcast the slow way
        if rows is not None:
            raise
        return np.stack(np.broadcast_arrays(*arrays))


def _occupancy(c: CostArrays, gpu: bool, one: np.ndarray) -> np.ndarray:
    """Thread blocks (GPU) or threads (CPU) of an op, per point (NaN: not known, taken as all)."""
    got = c.extra.get("blocks" if gpu else "threads")
    return one * np.nan if got is None else got


def _active(rows: list[np.ndarray], p: Any, gpu: bool, total_rows: int | None = None) -> np.ndarray:
    """Fraction of SMs (cores) each op occupies: its thread blocks (threads) over the SMs (cores)."""
    units = p.sm_count if gpu else p.cores
    got = _rows(rows, total_rows)
    return np.clip(np.where(np.isnan(got), 1.0, got / units), 0.0, 1.0)


def apply(costs: Sequence[CostArrays], p: Any, gpu: bool, counts: Sequence[int] | None = None) -> list[CostArrays]:
    """``costs`` (ops priced at the nominal clock at the points of pack ``p``) at their DVFS clocks.

    ``p`` is a :class:`~archsim.cost.params.GPUParams` (``gpu=True``) or
    :class:`~archsim.cost.params.CPUParams`. Points without a power model are returned unchanged.
    ``counts`` (default 1 each): the number of ops each cost stacks, op-major (the points of its
    first op, then of its second...; a kernel class's stacked pass, :mod:`archsim.cost.gpu_batch`):
    each of its ops is governed as if given alone, and it comes back stacked the same way.
    """
    costs = list(costs)
    if not costs or not p.has_power.any():
        return costs
    single = counts is None or all(g == 1 for g in counts)
    sizes = [1] * len(costs) if counts is None else list(counts)
    total_rows = None if single else sum(sizes)
    last = p.caches[-1].name if not gpu else "l2"
    loads = "l2" if gpu else p.caches[0].name  # where load instructions are counted from
    zero = np.zeros_like(costs[0].latency_s)
    one = np.ones_like(zero)
    if single:
        zeros = itertools.repeat(zero)
        ones = itertools.repeat(one)
    else:
        h = p.n
        by_size = {g: np.zeros(g * h) for g in dict.fromkeys(sizes)}
        zeros = [by_size[g] for g in sizes]
        ones = [np.ones(g * h) for g in sizes]

    def stacked(rows: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
        # One (ops, points) array per key, missing keys as 0: numpy work per key, not per op.
        # (itertools and map walk the dicts in C: a stacked graph has ~1,000 op-keys per pass.)
        keys = dict.fromkeys(itertools.chain.from_iterable(rows))
        return {k: _rows(list(map(dict.get, rows, itertools.repeat(k), zeros)), total_rows) for k in keys}

    energy0 = stacked([c.energy_breakdown_j for c in costs])
    times0 = stacked([c.time_by_unit_s for c in costs])
    flop = stacked([c.flop_by_unit for c in costs])
    level = stacked([{"loads": c.bytes_by_level.get(loads, z), last: c.bytes_by_level.get(last, z),
                      "dram": c.bytes_by_level.get("dram", z)} for c, z in zip(costs, zeros, strict=False)])
    issue = _instructions(flop, level["loads"], p, gpu) * p.issue_j
    noc = level[last] * p.noc_j_per_byte if gpu else np.zeros_like(issue)
    iface = level["dram"] * p.dram_interface_j_per_byte
    onchip = issue + noc
    offchip = iface.copy()
    for k, v in energy0.items():
        if k in OFFCHIP:
            offchip = offchip + v
        elif k not in NOT_POWER_MODEL:
            onchip = onchip + v
    clocked = [v for k, v in times0.items() if k != "overhead" and _clocked(k)]
    unclocked = [v for k, v in times0.items() if k != "overhead" and not _clocked(k)]
    clock_s = functools.reduce(np.maximum, clocked) if clocked else np.zeros_like(issue)
    memory_s = functools.reduce(np.maximum, unclocked) if unclocked else np.zeros_like(issue)
    latency = _rows([c.latency_s for c in costs], total_rows)
    fixed = _rows([c.overhead_s for c in costs], total_rows)
    excess = np.maximum(latency - fixed - np.maximum(clock_s, memory_s), 0.0)
    active = _active([_occupancy(c, gpu, o) for c, o in zip(costs, ones, strict=False)], p, gpu, total_rows)
    cores = p.sm_count if gpu else p.cores
    curve = VFCurve(p.v_min, p.v_max, p.knee_clock_hz, p.max_voltage_clock_hz)
    # Static power scales with the chip: leakage and clock network per SM (core), the memory PHYs
    # with the peak DRAM bandwidth; SMs an op leaves empty leak less (power-gated or idle).
    terms = PowerTerms(nominal_hz=p.clock_hz, fixed_s=fixed, clock_s=clock_s, memory_s=memory_s, excess_s=excess,
                       onchip_j=onchip, offchip_j=offchip,
                       board_w=p.board_power_w + p.dram_background_w + p.phy_power_w,
                       leakage_w=p.core_leakage_w * cores * active + p.uncore_leakage_w,
                       clock_w=p.core_clock_power_w * cores, leakage_exponent=p.leakage_exponent, curve=curve)
    has = p.has_power > 0
    every = bool(has.all())

    def where(a: Any, b: Any) -> Any:
        # np.where(has, a, b), skipped when every point has a power model (the usual case).
        return a if every else np.where(has, a, b)

    ratio = where(solve_clock(terms, p.power_limit_w, p.min_clock_hz / p.clock_hz), 1.0)
    lat = where(latency + (op_time(terms, ratio) - op_time(terms, np.ones_like(ratio))), latency)
    # The constant powers at the governed clock (the time and energy terms of op_power are not
    # needed here: the energies are scaled below and the time is ``lat``).
    watts = clocked_power(terms, ratio)
    # The energy tables hold energies at v_max (the presets' boost clock): a lower clock, chosen by
    # the governor or set by the user, runs them at V(f)^2 / v_max^2.
    scale = where(watts.v2, 1.0)
    energy = {k: (v if k in OFFCHIP else v * scale) for k, v in energy0.items() if k not in NOT_POWER_MODEL}
    energy["issue"] = where(issue * scale, 0.0)
    if gpu:
        energy["noc"] = where(noc * scale, 0.0)
    # The memory interface: its per-byte energy and its PHYs' standing power over the op.
    energy["dram_interface"] = where(iface + p.phy_power_w * lat, 0.0)
    energy["static"] = where((watts.board_w - p.phy_power_w) * lat, energy0.get("static", 0.0))
    energy["leakage"] = where(watts.leakage_w * lat, 0.0)
    energy["clock"] = where(watts.clock_w * lat, 0.0)
    total = functools.reduce(np.add, energy.values())
    power_w = np.divide(total, lat, out=np.zeros_like(lat), where=lat > 0)
    times = {"power": np.where(lat > latency * (1.0 + 1e-12), lat - fixed, 0.0)}
    times.update({k: (v / ratio if _clocked(k) else v) for k, v in times0.items()})
    clock_hz = watts.clock_hz  # p.clock_hz * ratio
    limited = (ratio < 1.0).astype(np.float64)
    # Each (ops, points) array as its list of per-op row views (what ``a[i]`` gives), cut once; a
    # cost stacking g ops gets its g rows as one flat view (g x points values, op-major).
    if single:
        cut = list
    else:
        starts = np.cumsum([0, *sizes]).tolist()

        def cut(a: np.ndarray) -> list[np.ndarray]:
            return [a[s:e].reshape(-1) for s, e in zip(starts[:-1], starts[1:], strict=True)]

    times = {k: cut(v) for k, v in times.items()}
    energy = {k: cut(v) for k, v in energy.items()}
    power_rows = times["power"]
    out = []
    for i, (c, lat_i, clock_i, power_i, limited_i) in enumerate(zip(costs, cut(lat), cut(clock_hz), cut(power_w),
                                                                    cut(limited), strict=True)):
        # Keys an op did not have stay out of its dicts (the stacking filled them with 0).
        t_i = {"power": power_rows[i], **{k: times[k][i] for k in c.time_by_unit_s}}
        had = c.energy_breakdown_j
        e_i = {k: v[i] for k, v in energy.items() if k in had or k in _ADDED}
        extra = {**c.extra, **dict(zip(EXTRA_KEYS, (clock_i, power_i, limited_i), strict=True))}
        out.append(CostArrays.from_fields({**c.__dict__, "latency_s": lat_i, "time_by_unit_s": t_i,
                                           "energy_breakdown_j": e_i, "extra": extra}))
    return out


_ADDED = ("issue", "noc", "dram_interface", "static", "leakage", "clock")
EXTRA_KEYS = ("clock_hz", "power_w", "power_limited")
"""The ``extra`` entries :func:`apply` adds to every op it governs, in this order."""
