"""Processing-in-memory: bank-level SIMD units (Samsung HBM-PIM) or DPU cores (UPMEM).

A PIM device computes next to the DRAM banks: its aggregate internal bandwidth (units x per-unit
bank bandwidth) exceeds the external interface, and an internal access avoids the off-chip I/O
energy. Data that is not already resident must cross ``host_link`` first.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from archsim.hardware.base import HardwareModel, NonNegativeFloat, Precision, Source, si
from archsim.hardware.energy import EnergyTable
from archsim.hardware.memory import DRAM, Link
from archsim.units import Bandwidth, EnergyPerByte, Frequency, Power, Size, Time

PIMUnitKind = Literal["bank-simd", "dpu"]


class PIMUnit(HardwareModel):
    """The processing units of a PIM device (all identical)."""

    kind: PIMUnitKind
    count: int = Field(gt=0, description="units in the device (e.g. 2560 DPUs)")
    clock_hz: Frequency = si("clock", gt=0)
    ops_per_cycle: dict[Precision, NonNegativeFloat] = Field(
        min_length=1, description="arithmetic ops per cycle per unit (an FMA counts 2)"
    )
    local_memory_bytes: Size = si("local_memory", gt=0, description="WRAM of a DPU, registers of a bank unit")
    bank_bandwidth_bytes_per_s: Bandwidth = si("bank_bandwidth", gt=0, description="per unit, to its bank(s)")
    internal_read_energy_j_per_byte: EnergyPerByte = si("internal_read_energy", gt=0)


class PIMEfficiency(HardwareModel):
    """Named calibration factors of a PIM device."""

    launch_overhead_s: Time = si("launch_overhead", gt=0, description="host-side launch of a PIM kernel")
    compute_efficiency: float = Field(gt=0, le=1)
    bank_bandwidth_efficiency: float = Field(gt=0, le=1)


class PIMDevice(HardwareModel):
    """A PIM memory: its DRAM, its units, the link to the host, energy and calibration."""

    kind: Literal["pim"] = "pim"
    name: str = Field(min_length=1)
    units: PIMUnit
    dram: DRAM
    host_link: Link
    energy: EnergyTable
    static_power_w: Power = si("static_power")
    tdp_w: Power = si("tdp", gt=0)
    efficiency: PIMEfficiency
    sources: list[Source] = Field(default_factory=list)

    def peak_flop_per_s(self, precision: str = "fp16") -> float:
        """units x clock x ops/cycle for ``precision`` (0 if unsupported)."""
        per = self.units.ops_per_cycle.get(precision, 0.0)  # type: ignore[call-overload]
        return self.units.count * self.units.clock_hz * per

    @property
    def internal_bandwidth_bytes_per_s(self) -> float:
        """Aggregate bank bandwidth of all units (B/s)."""
        return self.units.count * self.units.bank_bandwidth_bytes_per_s
