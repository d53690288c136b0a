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

from pydantic import Field

from archsim.hardware.base import HardwareModel, Precision, si
from archsim.units import EnergyPerByte, EnergyPerFlop

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
