"""Energy per action of a device's logic, and the technology-node scaling rule.

On-chip energies (arithmetic, register file, SRAM caches) are given at a *reference node*, by
default Horowitz's 45 nm, 0.9 V table ("Computing's Energy Problem", ISSCC 2014): fp32 add 0.9 pJ,
fp32 mult 3.7 pJ, fp16 add 0.4 pJ, fp16 mult 1.1 pJ, 32-bit register access ~1 pJ, 64-bit read of
an 8 KB / 32 KB / 1 MB SRAM 10 / 20 / 100 pJ. A device at another node scales them by

    E(node, V) = E_ref x (node / ref_node) x (V / ref_V)^2

dynamic energy is C V^2 and switched capacitance shrinks about linearly with feature size (the
first-order rule used by Accelergy's technology plug-ins and by Horowitz's own 45 -> 7 nm
extrapolations). DRAM and link energies are interface energies per bit, given per device, and are
not scaled. A :class:`EnergyTable` holds one table; the ledger in :mod:`archsim.energy` multiplies
action counts by these energies.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from archsim.hardware.base import HardwareModel, Precision, reads, si
from archsim.units import (
    Energy,
    EnergyPerArea,
    EnergyPerByte,
    EnergyPerByteLength,
    EnergyPerFlop,
    Frequency,
    Power,
    PowerPerArea,
)

ComputeUnit = Literal["vector", "tensor", "special"]

MAX_NODE_NM = 1000.0
"""Largest process node a table may state, nm (1 um CMOS, late 1980s)."""
MAX_VDD_V = 5.0
"""Largest core supply voltage a table may state, V (5 V TTL-compatible CMOS)."""


class EnergyTable(HardwareModel):
    """Energy per FLOP and per register byte at a reference node, with the device's own node."""

    # Bounds: CMOS nodes from 1 um (1000 nm) down, core supplies at most 5 V (TTL-era logic); outside
    # them the scaling rule below has no meaning and its square overflows.
    node_nm: float = Field(gt=0, le=MAX_NODE_NM, description="the device's process node, nm")
    vdd_v: float = Field(gt=0, le=MAX_VDD_V, description="the device's core supply voltage, V")
    reference_node_nm: float = Field(45.0, gt=0, le=MAX_NODE_NM, description="node the energies below are stated at")
    reference_vdd_v: float = Field(0.9, gt=0, le=MAX_VDD_V)
    vector_flop_j: dict[Precision, EnergyPerFlop] = si(
        "vector_flop", description="per FLOP on vector/CUDA-core ALUs (an FMA is 2 FLOP)"
    )
    tensor_flop_j: dict[Precision, EnergyPerFlop] = Field(
        default_factory=dict, alias="tensor_flop",
        description="per FLOP on matrix units (Tensor Cores, AMX); empty if the device has none",
    )
    tensor_flop_fp16_accumulate_j: dict[Precision, EnergyPerFlop] = Field(
        default_factory=dict, alias="tensor_flop_fp16_accumulate",
        description="per FLOP on Tensor Cores of fp16 / fp8 inputs accumulated in fp16 (an op's "
                    "accumulate_dtype='fp16'); tensor_flop is the fp32-accumulate energy. Absent: tensor_flop",
    )
    tensor_operand_flop_j: EnergyPerFlop = Field(
        0.0, ge=0, alias="tensor_operand_flop",
        description="per FLOP of a 16-bit MMA on GPU Tensor Cores, on top of tensor_flop (the MAC energies, "
                    "math only): operand delivery inside the Tensor Core (register and shared-memory operands "
                    "to the MMA array, its latches and reduction tree); other precisions scale with their "
                    "MMA's operand bytes per FLOP (archsim.hardware.gpu.MMA_OPERAND_BYTES_PER_FLOP); reported "
                    "as its own energy component, tensor_operand (data movement); 0: not modelled",
    )
    special_flop_j: EnergyPerFlop = si("special_flop", description="per special-function op (exp, rsqrt)")
    register_j_per_byte: EnergyPerByte = si("register", description="register-file access per byte")

    @property
    def scale(self) -> float:
        """The node/voltage factor applied to every on-chip energy (dimensionless)."""
        return (self.node_nm / self.reference_node_nm) * (self.vdd_v / self.reference_vdd_v) ** 2

    def flop_j(self, precision: str, unit: ComputeUnit = "vector") -> float:
        """Energy of one FLOP of ``precision`` on ``unit`` at the device's node, in J.

        A precision the table lacks for ``tensor`` falls back to the vector energy only if the
        caller asks for ``vector``: a missing entry is an error, never a silent zero.
        """
        if unit == "special":
            return self.special_flop_j * self.scale
        table = self.tensor_flop_j if unit == "tensor" else self.vector_flop_j
        if precision not in table:
            raise KeyError(
                f"energy table has no {unit} FLOP energy for {precision!r}; it has {sorted(table)}"
            )
        return table[precision] * self.scale  # type: ignore[index]

    def sram_j_per_byte(self, reference_j_per_byte: float) -> float:
        """Scale an SRAM access energy stated at the reference node to this device's node."""
        return reference_j_per_byte * self.scale

    @property
    def register_access_j_per_byte(self) -> float:
        """Register-file energy per byte at the device's node, in J/B."""
        return self.register_j_per_byte * self.scale


class PowerModel(HardwareModel):
    """What a chip draws besides its action energies, and how its voltage follows its clock.

    Average power of an op at clock ``f`` (:mod:`archsim.energy.dvfs`):

        P(f) = board + phy_power_per_bandwidth x peak DRAM bandwidth
             + (core_leakage x N x active + uncore_leakage) x (V/v_max)^leakage_voltage_exponent
             + core_clock_power x N x (f / max_voltage_clock) x (V/v_max)^2
             + (sum of on-chip action energies x (V(f)/v_max)^2 + DRAM energies) / t(f)

    with ``N`` the SMs (cores) and ``active`` the fraction of them the op occupies: static power
    scales with the SM count and the memory interface, so a bigger chip or more HBM costs power.
    Dynamic energy is C V^2 (so action energies, stated at v_max, i.e. at ``max_voltage_clock``, scale
    by (V/v_max)^2) and the clock network switches every cycle whatever the work (C V^2 f); this is
    the component split of GPUWattch (Leng et al., ISCA 2013) and AccelWattch (Kandiah et al.,
    MICRO 2021: constant + static + idle-SM + dynamic power, with a DVFS-aware voltage term).

    The voltage-frequency curve is piecewise linear: ``v_min`` up to ``knee_clock`` (the voltage
    floor of the process), then linear to ``v_max`` at ``max_voltage_clock``, extrapolated above
    it. A power limit makes the DVFS governor pick the highest clock in ``[min_clock, clock]``
    whose power fits (:func:`archsim.energy.dvfs.solve_clock`).

    The constant terms come in one of two forms, complete: per unit (``board_power``,
    ``core_leakage_power``, ``uncore_leakage_power``, ``core_clock_power``, ``noc_energy``), or, for a
    GPU with ``die_area`` and ``die_sm_count``, per die area (``leakage_power_density``,
    ``clock_energy_density``, ``sm_area_share``, ``wire_energy``; :mod:`archsim.energy.chip` turns
    them into the same terms, the board power from the device's idle power).
    """

    # Per-unit form (CPUs): the constant terms as watts per core and for the uncore.
    board_power_w: Power | None = si("board_power", default=None, description="constant power while busy: "
                                     "fans, VRM losses, DRAM refresh (W); per-unit form only")
    phy_power_per_bandwidth_j_per_byte: EnergyPerByte = si(
        "phy_power_per_bandwidth", description="static power of the memory PHYs and controllers per unit of "
        "peak DRAM bandwidth (W per B/s = J/B): more channels, more PHYs")
    core_leakage_power_w: Power | None = si("core_leakage_power", default=None, description="leakage of one "
                                            "SM (GPU) or core (CPU) at v_max and operating temperature (W); "
                                            "scales with the fraction the op occupies; per-unit form only")
    uncore_leakage_power_w: Power | None = si("uncore_leakage_power", default=None, description="leakage of the "
                                              "rest of the chip (L2/LLC, NoC, memory controllers) at v_max (W)")
    leakage_voltage_exponent: float = Field(3.0, gt=0, description="leakage power ~ V^n over the DVFS range")
    core_clock_power_w: Power | None = si("core_clock_power", default=None, description="clock tree and idle "
                                          "pipeline switching of one SM or core at max_voltage_clock and v_max, "
                                          "whatever the work (W, ~ f V^2); per-unit form only")
    # Area form (GPUs, with the device's die_area and die_sm_count): archsim.energy.chip.
    leakage_power_density_w_per_m2: PowerPerArea | None = si(
        "leakage_power_density", default=None, gt=0, description="leakage per die area at the reference "
        "supply (REFERENCE_VDD_V) and operating temperature; area form only")
    clock_energy_density_j_per_m2: EnergyPerArea | None = si(
        "clock_energy_density", default=None, gt=0, description="clock-network energy per cycle per die area "
        "at the reference supply (C_clk per area x V_ref^2); area form only")
    sm_area_share: float | None = Field(None, gt=0, lt=1, description="share of the die area in the SMs "
                                        "(the rest: L2, crossbar, memory controllers, I/O); area form only")
    wire_energy_j_per_byte_m: EnergyPerByteLength | None = si(
        "wire_energy", default=None, gt=0, description="on-chip wire energy per byte per metre at the "
        "reference supply: a DRAM byte crosses one die side (archsim.energy.chip); area form only")
    issue_energy_j: Energy = si("issue_energy", description="fetch, decode, schedule and operand collection "
                                "per warp instruction (GPU) or per instruction (CPU, incl. out-of-order "
                                "rename/ROB/scheduler), at v_max (J)")
    noc_energy_j_per_byte: EnergyPerByte | None = si("noc_energy", default=None, description="on-chip "
                                                     "network per byte between the cores/SMs and the last-level "
                                                     "cache, at v_max; per-unit form only")
    dram_interface_energy_j_per_byte: EnergyPerByte = si(
        "dram_interface_energy", description="memory controller and PHY on the processor side per DRAM byte "
        "(the DRAM's own core and I/O energy is the memory's read/write energy)")
    v_min_v: float = Field(alias="v_min", gt=0, description="voltage floor of the V-f curve, V")
    v_max_v: float = Field(alias="v_max", gt=0, description="voltage at max_voltage_clock, V")
    knee_clock_hz: Frequency = si("knee_clock", gt=0, description="highest clock at v_min")
    max_voltage_clock_hz: Frequency = si("max_voltage_clock", gt=0, description="clock at v_max")
    min_clock_hz: Frequency = si("min_clock", gt=0, description="lowest clock the governor uses")

    @property
    def area_form(self) -> bool:
        """True where the constant terms and the NoC energy follow from the die (archsim.energy.chip)."""
        return self.leakage_power_density_w_per_m2 is not None

    @model_validator(mode="after")
    @reads("board_power_w", "core_leakage_power_w", "uncore_leakage_power_w", "core_clock_power_w",
           "noc_energy_j_per_byte", "leakage_power_density_w_per_m2", "clock_energy_density_j_per_m2",
           "sm_area_share", "wire_energy_j_per_byte_m", "v_min_v", "v_max_v", "knee_clock_hz",
           "max_voltage_clock_hz")
    def _curve(self) -> PowerModel:
        unit = [self.board_power_w, self.core_leakage_power_w, self.uncore_leakage_power_w, self.core_clock_power_w,
                self.noc_energy_j_per_byte]
        area = [self.leakage_power_density_w_per_m2, self.clock_energy_density_j_per_m2, self.sm_area_share,
                self.wire_energy_j_per_byte_m]
        if not (all(v is not None for v in unit) and all(v is None for v in area)
                or all(v is None for v in unit) and all(v is not None for v in area)):
            raise ValueError("give either the per-unit terms (board_power, core_leakage_power, "
                             "uncore_leakage_power, core_clock_power, noc_energy) or the area terms "
                             "(leakage_power_density, clock_energy_density, sm_area_share, wire_energy), "
                             "all of one and none of the other")
        if self.v_min_v > self.v_max_v:
            raise ValueError(f"v_min {self.v_min_v} V exceeds v_max {self.v_max_v} V")
        if self.knee_clock_hz >= self.max_voltage_clock_hz:
            raise ValueError("knee_clock must be below max_voltage_clock")
        return self

    def voltage(self, clock_hz: float) -> float:
        """Supply voltage at ``clock_hz`` on the piecewise-linear curve (V)."""
        slope = (self.v_max_v - self.v_min_v) / (self.max_voltage_clock_hz - self.knee_clock_hz)
        return self.v_min_v + slope * max(clock_hz - self.knee_clock_hz, 0.0)
