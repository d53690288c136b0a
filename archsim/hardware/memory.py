"""Memories and links: caches, DRAM/HBM, PCIe/NVLink.

Energy fields are per byte moved at the component's interface. On-chip SRAM energies are stated at
the 45 nm reference node (Horowitz, ISSCC 2014) and scaled by the owning device's technology node
(see :mod:`archsim.hardware.energy`); DRAM and link energies are absolute (pJ/bit at the interface).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from archsim.hardware.base import HardwareModel, Source, reads, si
from archsim.units import Bandwidth, Energy, EnergyPerByte, Power, Size, Time

DRAMKind = Literal["ddr4", "ddr5", "lpddr4", "lpddr5", "gddr5", "gddr5x", "gddr6", "gddr6x",
                   "hbm", "hbm2", "hbm2e", "hbm3", "hbm3e"]
LinkKind = Literal["pcie3", "pcie4", "pcie5", "nvlink1", "nvlink2", "nvlink3", "nvlink4",
                   "ddr-channel", "hbm-channel", "ethernet", "infiniband", "host-dpu"]
Replacement = Literal["lru", "plru", "fifo", "random"]
WritePolicy = Literal["write-back", "write-through"]


class Cache(HardwareModel):
    """A set-associative cache level (or a GPU's L1/shared memory or L2).

    ``bandwidth`` is per instance: per core for a private CPU cache, per SM for a GPU L1, the whole
    cache for a shared one. ``latency_cycles`` is load-to-use in the owner's clock.
    """

    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$", description="level name, e.g. l1d, l2, l3")
    size_bytes: Size = si("size", gt=0)
    ways: int = Field(gt=0)
    line_bytes: int = Field(gt=0, alias="line_size", description="line size in bytes")
    latency_cycles: int = Field(gt=0)
    bandwidth_bytes_per_s: Bandwidth = si("bandwidth", gt=0)
    read_energy_j_per_byte: EnergyPerByte = si("read_energy", description="at the 45 nm reference node")
    write_energy_j_per_byte: EnergyPerByte = si("write_energy", description="at the 45 nm reference node")
    replacement: Replacement = "lru"
    write_policy: WritePolicy = "write-back"
    shared: bool = Field(description="shared by all cores/SMs (True) or private to each (False)")
    inclusive: bool = False

    @model_validator(mode="after")
    @reads("line_bytes", "ways", "size_bytes")
    def _geometry(self) -> Cache:
        line = self.line_bytes
        if line & (line - 1):
            raise ValueError(f"line_size {line} B is not a power of two")
        set_bytes = self.ways * line
        if self.size_bytes % set_bytes:
            raise ValueError(
                f"size {self.size_bytes:.0f} B is not divisible by ways x line_size = {self.ways} x {line} B"
            )
        return self

    @property
    def sets(self) -> int:
        """Number of sets: size / (ways x line)."""
        return int(self.size_bytes // (self.ways * self.line_bytes))


class DRAM(HardwareModel):
    """Off-chip memory (DDR, LPDDR, GDDR) or stacked HBM, as seen by the device that owns it.

    ``bandwidth`` is the peak of all channels together (datasheet figure); achievable fractions are
    the owning device's calibration fields. Timings are in seconds (datasheets give ns).
    """

    kind: DRAMKind
    name: str = Field("", description="a label, e.g. 'HBM2 (4 stacks)'")
    capacity_bytes: Size = si("capacity", gt=0)
    bandwidth_bytes_per_s: Bandwidth = si("bandwidth", gt=0)
    channels: int = Field(gt=0)
    bus_width_bits: int = Field(gt=0, description="data bus width of one channel")
    data_rate_mtps: int = Field(gt=0, description="transfers per second per pin, in MT/s")
    latency_s: Time = si("latency", gt=0, description="idle load-to-use latency seen by the device")
    t_rcd_s: Time = si("t_rcd", gt=0)
    t_cl_s: Time = si("t_cl", gt=0)
    t_rp_s: Time = si("t_rp", gt=0)
    row_buffer_bytes: Size = si("row_buffer", gt=0, description="row (page) size per bank")
    banks_per_channel: int = Field(gt=0)
    read_energy_j_per_byte: EnergyPerByte = si("read_energy", gt=0)
    write_energy_j_per_byte: EnergyPerByte = si("write_energy", gt=0)
    activation_energy_j: Energy = si("activation_energy", gt=0, description="one ACT+PRE of a row")
    background_power_w: Power = si("background_power", description="refresh and standby power")
    loaded_latency_coefficient: float = Field(
        0.0, ge=0.0, lt=1.0,
        description="queueing growth of the load latency with utilisation rho of the sustained bandwidth: "
                    "L = L_idle x (1 + c x rho / (1 - rho)); 0 = flat up to the knee (archsim.cost.kernels.gpu_stream)")
    sources: list[Source] = Field(default_factory=list)

    @property
    def wire_bandwidth_bytes_per_s(self) -> float:
        """channels x bus width x data rate: the pin bandwidth.

        ``bandwidth`` is not forced below it: a sweep may ask "what if this GPU had 8 TB/s?"
        without inventing pins. Every shipped preset is checked to be physical
        (bandwidth <= wire rate) by the test suite instead.
        """
        return self.channels * self.bus_width_bits / 8 * self.data_rate_mtps * 1e6


class Link(HardwareModel):
    """A point-to-point interconnect (PCIe, NVLink, a DDR channel to a PIM DIMM).

    ``bandwidth`` is per direction; ``latency`` is the one-way latency of a small transfer,
    including driver/DMA setup where the source measures it so.
    """

    kind: LinkKind
    bandwidth_bytes_per_s: Bandwidth = si("bandwidth", gt=0)
    latency_s: Time = si("latency")
    energy_j_per_byte: EnergyPerByte = si("energy")
    efficiency: float = Field(gt=0, le=1, description="achievable fraction of the bandwidth for large copies")
