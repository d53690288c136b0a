"""A GPU's constant power and the on-chip distance a DRAM byte travels, from its die.

The area form of :class:`archsim.hardware.PowerModel` states physical densities instead of watts
per SM; :func:`chip_power` turns them into the per-SM and uncore terms the DVFS model
(:mod:`archsim.energy.dvfs`) uses, for the device's SM count:

* powered area: ``A_on = A x (share x N / N_die + 1 - share)``, the SMs the device enables (fused-off
  SMs are power-gated) plus the rest of the die (L2, crossbar, memory controllers, I/O);
* leakage at v_max: ``rho x A_on x (v_max / V_ref)^n`` (leakage per area at the reference supply,
  ~V^n over the DVFS range), split between the enabled SMs and the rest by area;
* clock network at (max_voltage_clock, v_max): ``e_clk x A_on x (v_max / V_ref)^2 x f_vmax``, i.e.
  C_clk(area) x V^2 x f, so it follows clock and voltage under DVFS;
* on-chip network per DRAM byte at v_max: ``e_wire x sqrt(A) x (v_max / V_ref)^2``: the memory PHYs
  sit at the die edge, the L2 slices in the middle and the SMs spread over the die, so a byte
  travels about half a die side from the PHY to its L2 slice and on average half a side (the mean
  Manhattan distance from the centre of a square to a uniform point in it) to its SM: one die side.
  Wire capacitance per mm hardly shrinks with the node, so the wire energy scales with V^2 only
  (Keckler et al., IEEE Micro 31(5) 2011, Table 1: 256 bits x 10 mm, random data, 310 pJ at 40 nm and
  0.9 V; 150 pJ projected at 10 nm and 0.65 V, about 310 x (0.65 / 0.9)^2 = 162);
* board power (VRM losses, fans, anything not the GPU die or its DRAM): what the idle power leaves
  once the DRAM background, the memory PHYs and the die's own leakage and clock network at the
  idle point (``min_clock``, ``v_min``) are taken out, floored at zero. The idle power is the
  measured (datasheet or nvidia-smi) board figure, so the model reproduces it at idle.

All values SI (m^2, W, J, Hz, V).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["REFERENCE_VDD_V", "ChipPower", "chip_power", "chip_terms", "static_board_w"]

REFERENCE_VDD_V = 0.9
"""Supply the densities are stated at, V (the energy tables' reference, Horowitz 45 nm at 0.9 V)."""


@dataclass(frozen=True)
class ChipPower:
    """The constant terms and NoC energy of one GPU at v_max (W, J/B); ``powered_area_m2`` for reports."""

    board_w: float
    core_leakage_w: float
    uncore_leakage_w: float
    core_clock_w: float
    noc_j_per_byte: float
    powered_area_m2: float


def chip_power(pw: Any, die_area_m2: float, die_sm_count: int, sm_count: int, static_power_w: float,
               dram_background_w: float, dram_bandwidth_bytes_per_s: float) -> ChipPower:
    """The per-SM and uncore terms of an area-form ``pw`` (:class:`archsim.hardware.PowerModel`).

    ``core_clock_w`` is the whole clock network over ``sm_count`` (the uncore's share included), so
    ``core_clock_w x sm_count`` is the chip's clock power at (max_voltage_clock, v_max).
    """
    phy = pw.phy_power_per_bandwidth_j_per_byte * dram_bandwidth_bytes_per_s
    spare, core_leak, uncore_leak, clock_per_sm, noc, powered = chip_terms(
        pw, die_area_m2, die_sm_count, sm_count, static_power_w, dram_background_w, phy, math.sqrt)
    return ChipPower(max(spare, 0.0), core_leak, uncore_leak, clock_per_sm, noc, powered)


def chip_terms(pw: Any, die_area_m2: Any, die_sm_count: Any, sm_count: Any, static_power_w: Any,
               dram_background_w: Any, phy_w: Any, sqrt: Callable[[Any], Any]) -> tuple[Any, ...]:
    """The arithmetic of :func:`chip_power` on floats or on arrays of GPUs sharing ``pw`` (``sqrt``:
    ``math.sqrt`` or ``numpy.sqrt``, both correctly rounded): (the board power before its floor at 0,
    core leakage per SM, uncore leakage, clock power per SM, NoC J/B, powered area), W, J/B and m^2.
    ``phy_w`` is the PHYs' power (W). The terms of ``pw`` alone are Python floats either way, so one
    GPU's values are the same floats on both paths."""
    share = pw.sm_area_share
    sm_area = die_area_m2 * share / die_sm_count
    uncore_area = die_area_m2 * (1.0 - share)
    powered = sm_area * sm_count + uncore_area
    rel = pw.v_max_v / REFERENCE_VDD_V
    leak_scale = pw.leakage_power_density_w_per_m2 * rel ** pw.leakage_voltage_exponent
    clock_w = pw.clock_energy_density_j_per_m2 * powered * rel ** 2 * pw.max_voltage_clock_hz
    noc = pw.wire_energy_j_per_byte_m * sqrt(die_area_m2) * rel ** 2
    core_leak = leak_scale * sm_area
    uncore_leak = leak_scale * uncore_area
    idle_v = pw.v_min_v / pw.v_max_v
    idle_clock = min(pw.min_clock_hz, pw.max_voltage_clock_hz) / pw.max_voltage_clock_hz
    idle_chip = ((core_leak * sm_count + uncore_leak) * idle_v ** pw.leakage_voltage_exponent
                 + clock_w * idle_clock * idle_v ** 2)
    spare = static_power_w - dram_background_w - phy_w - idle_chip
    return spare, core_leak, uncore_leak, clock_w / sm_count, noc, powered


def static_board_w(gpu: Any) -> float:
    """The constant power a GPU's ops are charged as ``static`` (without the DRAM background), W.

    The area form's board power (:func:`chip_power`): its leakage and clock network are op energies
    of their own (``leakage``, ``clock``), so the idle power, which holds them, is not charged as
    well. Otherwise the device's ``static_power`` (the per-unit presets' board power is their idle
    power). The discrete-event engine charges this per run, as the roofline does per op.
    """
    pw = gpu.power
    if pw is None or not pw.area_form:
        return gpu.static_power_w
    return chip_power(pw, gpu.die_area_m2, gpu.die_sm_count, gpu.sm_count, gpu.static_power_w,
                      gpu.dram.background_power_w, gpu.dram.bandwidth_bytes_per_s).board_w
