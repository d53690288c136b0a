"""Power of an op, the power limit and DVFS: the clock an op runs at, and what that does to it.

The cost functions (:mod:`archsim.cost.gpu`, :mod:`archsim.cost.cpu`) price an op at the device's
nominal (boost) clock. :func:`apply` then, for a device with a :class:`~archsim.hardware.PowerModel`:

1. adds the action energies the ledger does not price: instruction issue (fetch, decode,
   scheduling, operand collection; per warp instruction on a GPU, per instruction on a CPU, where it
   carries the out-of-order overhead), the on-chip network (bytes between the SMs/cores and the
   last-level cache) and the processor-side memory interface (controller + PHY per DRAM byte);
2. solves for the clock (:func:`archsim.energy.dvfs.solve_clock`): the highest clock whose average
   power fits the power limit, all ops and hardware points in one vectorised bisection;
3. rescales the op to that clock: compute, L1 and L2 (or CPU cache) times by f_nom / f, DRAM and
   dependent-latency times unchanged; on-chip energies by (V(f) / v_max)^2; and replaces the
   static energy by board, leakage and clock-network power times the new latency.

The op gets ``extra["clock_hz"]``, ``extra["power_w"]`` (its average power) and
``extra["power_limited"]`` (1 where the limit lowered the clock); where that cost time, the time
key ``power`` holds the op's kernel time and its bound reads ``power``.

Instruction counts are first-order: a vector FMA warp instruction does 2 x warp_size FLOP, a
Tensor Core warp MMA ``MMA_FLOP_PER_WARP_INSTRUCTION``, a global load or store moves
``MEMORY_BYTES_PER_LANE`` per lane; a CPU vector instruction does 2 x SIMD lanes FLOP and a load
moves one SIMD register.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np

from archsim.cost.types import CostArrays
from archsim.energy import PowerTerms, VFCurve, op_power, op_time, solve_clock, voltage

__all__ = ["apply", "MMA_FLOP_PER_WARP_INSTRUCTION", "MEMORY_BYTES_PER_LANE", "OFFCHIP", "TIME_SCALED"]

MMA_FLOP_PER_WARP_INSTRUCTION = 4096.0
"""FLOP of one warp-level MMA: mma.sync m16n8k16 = 2 x 16 x 8 x 16 (PTX ISA, Warp-level MMA shapes)."""

MEMORY_BYTES_PER_LANE = 4.0
"""Bytes one lane moves per global memory instruction (a 32-bit LDG/STG: 128 B per warp)."""

OFFCHIP = ("dram", "dram_interface", "link", "pim")
"""Energy components that do not scale with the core voltage (off-chip and I/O supplies)."""

NOT_POWER_MODEL = ("static", "leakage", "clock")

TIME_SCALED_MEMORY = ("memory:l1", "memory:l2", "memory:l1d", "memory:l3")
"""Memory levels clocked with the cores (GPU L1/L2, CPU caches), whose time follows the clock."""

TIME_SCALED = TIME_SCALED_MEMORY
"""Public alias: the memory time keys that scale with the clock (plus every ``compute:`` key)."""


def _clocked(key: str) -> bool:
    return key.startswith("compute:") or key in TIME_SCALED_MEMORY


def _stack(costs: Sequence[CostArrays], get: Any) -> np.ndarray:
    return np.stack([np.broadcast_to(np.asarray(get(c), dtype=np.float64), c.latency_s.shape) for c in costs])


def _zero(c: CostArrays) -> np.ndarray:
    return np.zeros_like(c.latency_s)


def _instructions(c: CostArrays, p: Any, gpu: bool) -> np.ndarray:
    """Instructions issued (warp instructions on a GPU), per point."""
    n = _zero(c)
    for key, flop in c.flop_by_unit.items():
        unit = key.partition(":")[0]
        if gpu:
            per = MMA_FLOP_PER_WARP_INSTRUCTION if unit == "tensor" else (
                p.warp_size if unit == "special" else 2.0 * p.warp_size)
        else:
            lanes = p.simd_bytes / 4.0
            per = lanes if unit == "special" else 2.0 * lanes * (8.0 if unit == "matrix" else 1.0)
        n = n + flop / per
    if gpu:
        return n + c.bytes_by_level.get("l2", 0.0) / (p.warp_size * MEMORY_BYTES_PER_LANE)
    first = p.caches[0].name
    return n + c.bytes_by_level.get(first, 0.0) / p.simd_bytes


def _active(c: CostArrays, p: Any, gpu: bool) -> np.ndarray:
    """Fraction of SMs (cores) the op occupies: its thread blocks (threads) over the SMs (cores)."""
    if gpu:
        blocks = c.extra.get("blocks")
        if blocks is None:
            return np.ones_like(c.latency_s)
        return np.clip(np.nan_to_num(np.asarray(blocks, dtype=np.float64), nan=p.sm_count) / p.sm_count, 0.0, 1.0)
    threads = c.extra.get("threads")
    return np.ones_like(c.latency_s) if threads is None else np.clip(threads / p.cores, 0.0, 1.0)


def apply(costs: Sequence[CostArrays], p: Any, gpu: bool) -> list[CostArrays]:
    """``costs`` (ops priced at the nominal clock at the points of pack ``p``) at their DVFS clocks.

    ``p`` is a :class:`~archsim.cost.params.GPUParams` (``gpu=True``) or
    :class:`~archsim.cost.params.CPUParams`. Points without a power model are returned unchanged.
    """
    costs = list(costs)
    if not costs or not np.any(p.has_power):
        return costs
    last = p.caches[-1].name if not gpu else "l2"
    issue, noc, iface = [], [], []
    for c in costs:
        issue.append(_instructions(c, p, gpu) * p.issue_j)
        noc.append(c.bytes_by_level.get(last, 0.0) * p.noc_j_per_byte + _zero(c))
        iface.append(c.bytes_by_level.get("dram", 0.0) * p.dram_interface_j_per_byte + _zero(c))
    onchip = _stack(costs, lambda c: sum((v for k, v in c.energy_breakdown_j.items()
                                          if k not in OFFCHIP and k not in NOT_POWER_MODEL), _zero(c)))
    onchip = onchip + np.stack(issue) + np.stack(noc)
    offchip = _stack(costs, lambda c: sum((v for k, v in c.energy_breakdown_j.items() if k in OFFCHIP), _zero(c)))
    offchip = offchip + np.stack(iface)

    def longest(c: CostArrays, clocked: bool) -> np.ndarray:
        ts = [v for k, v in c.time_by_unit_s.items() if k != "overhead" and _clocked(k) == clocked]
        return np.max(np.stack(ts), axis=0) if ts else _zero(c)

    latency = _stack(costs, lambda c: c.latency_s)
    fixed = _stack(costs, lambda c: c.overhead_s)
    clock_s = _stack(costs, lambda c: longest(c, True))
    memory_s = _stack(costs, lambda c: longest(c, False))
    excess = np.maximum(latency - fixed - np.maximum(clock_s, memory_s), 0.0)
    active = _stack(costs, lambda c: _active(c, p, gpu))
    cores = p.sm_count if gpu else p.cores
    curve = VFCurve(p.v_min, p.v_max, p.knee_clock_hz, p.max_voltage_clock_hz)
    # Static power scales with the chip: leakage and clock network per SM (core), the memory PHYs
    # with the peak DRAM bandwidth; SMs an op leaves empty leak less (power-gated or idle).
    terms = PowerTerms(nominal_hz=p.clock_hz, fixed_s=fixed, clock_s=clock_s, memory_s=memory_s, excess_s=excess,
                       onchip_j=onchip, offchip_j=offchip,
                       board_w=p.board_power_w + p.dram_background_w + p.phy_power_w,
                       leakage_w=p.core_leakage_w * cores * active + p.uncore_leakage_w,
                       clock_w=p.core_clock_power_w * cores, leakage_exponent=p.leakage_exponent, curve=curve)
    ratio = np.where(p.has_power > 0, solve_clock(terms, p.power_limit_w, p.min_clock_hz / p.clock_hz), 1.0)
    new_latency = latency + (op_time(terms, ratio) - op_time(terms, np.ones_like(ratio)))
    watts = op_power(terms, ratio)
    # The energy tables hold energies at v_max (the presets' boost clock): a lower clock, chosen by
    # the governor or set by the user, runs them at V(f)^2 / v_max^2.
    scale = (voltage(curve, p.clock_hz * ratio) / p.v_max) ** 2
    out = []
    for i, c in enumerate(costs):
        has = p.has_power > 0
        lat = np.where(has, new_latency[i], c.latency_s)
        r = ratio[i]
        slowed = lat > c.latency_s * (1.0 + 1e-12)
        times = {"power": np.where(slowed, lat - c.overhead_s, 0.0)}
        times.update({k: (v / r if _clocked(k) else v) for k, v in c.time_by_unit_s.items()})
        energy = {}
        for k, v in c.energy_breakdown_j.items():
            if k in NOT_POWER_MODEL:
                continue
            energy[k] = v if k in OFFCHIP else v * np.where(has, scale[i], 1.0)
        energy["issue"] = np.where(has, issue[i] * scale[i], 0.0)
        if gpu:
            energy["noc"] = np.where(has, noc[i] * scale[i], 0.0)
        # The memory interface: its per-byte energy and its PHYs' standing power over the op.
        energy["dram_interface"] = np.where(has, iface[i] + p.phy_power_w * lat, 0.0)
        old_static = c.energy_breakdown_j.get("static", _zero(c))
        energy["static"] = np.where(has, (watts["board"][i] - p.phy_power_w) * lat, old_static)
        energy["leakage"] = np.where(has, watts["leakage"][i] * lat, 0.0)
        energy["clock"] = np.where(has, watts["clock"][i] * lat, 0.0)
        total = sum(energy.values(), _zero(c))
        extra = {**c.extra, "clock_hz": p.clock_hz * r,
                 "power_w": np.divide(total, lat, out=np.zeros_like(lat), where=lat > 0),
                 "power_limited": (r < 1.0).astype(np.float64)}
        out.append(dataclasses.replace(c, latency_s=lat, time_by_unit_s=times, energy_breakdown_j=energy,
                                       extra=extra))
    return out
