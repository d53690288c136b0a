"""CPU models: the core (clock, issue, SIMD, FMA units), branch predictor and the CPU device.

Peak FLOP/s of a core = clock x SIMD lanes x FMA units x 2 (an FMA is two FLOP), e.g. a Skylake-SP
core with two AVX-512 FMA units: 16 fp32 lanes x 2 units x 2 = 64 FLOP/cycle (Intel optimisation
manual; ``cpu_microarch.csv``).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from archsim.hardware.base import PRECISION_BITS, HardwareModel, NonNegativeInt, Precision, Source, reads, si
from archsim.hardware.energy import EnergyTable, PowerModel
from archsim.hardware.memory import DRAM, Cache
from archsim.units import Frequency, Power, Time

PredictorKind = Literal["static", "bimodal", "gshare", "perceptron", "tage"]


class CPUCore(HardwareModel):
    """One out-of-order core. ``clock`` is the sustained all-core clock under vector load."""

    clock_hz: Frequency = si("clock", gt=0)
    issue_width: int = Field(gt=0, description="instructions dispatched per cycle")
    pipeline_depth: int = Field(gt=0, description="stages from fetch to execute")
    rob_entries: int = Field(gt=0, description="reorder-buffer entries (instruction window)")
    simd_width_bits: int = Field(gt=0, description="width of one vector register/unit, bits")
    fma_units: dict[Precision, NonNegativeInt] = Field(
        description="vector FMA pipes usable per precision (0 or absent: not supported)"
    )
    matrix_flop_per_cycle: dict[Precision, NonNegativeInt] = Field(
        default_factory=dict, description="dense FLOP/cycle of a matrix unit (e.g. AMX); empty if none"
    )
    load_ports: int = Field(gt=0, description="loads issued per cycle")
    max_outstanding_misses: int = Field(gt=0, description="L1D miss buffers: the memory-level parallelism")

    @model_validator(mode="after")
    @reads("simd_width_bits", "fma_units")
    def _simd(self) -> CPUCore:
        if self.simd_width_bits % 64:
            raise ValueError(f"simd_width_bits {self.simd_width_bits} is not a multiple of 64")
        if "fp32" not in self.fma_units:
            raise ValueError("fma_units needs an 'fp32' entry")
        return self

    def lanes(self, precision: str) -> int:
        """SIMD lanes for ``precision``: vector width / element bits."""
        return max(1, self.simd_width_bits // PRECISION_BITS[precision])

    def vector_flop_per_cycle(self, precision: str) -> int:
        """Peak vector FLOP per cycle: lanes x FMA units x 2."""
        return self.lanes(precision) * self.fma_units.get(precision, 0) * 2  # type: ignore[call-overload]

    def matrix_flop_per_cycle_for(self, precision: str) -> int:
        """Peak matrix-unit FLOP per cycle (0 when the core has no matrix unit for it)."""
        return self.matrix_flop_per_cycle.get(precision, 0)  # type: ignore[call-overload]


class BranchPredictor(HardwareModel):
    """The core's conditional-branch predictor, as the microarchitecture simulator models it."""

    kind: PredictorKind
    table_entries: int = Field(gt=0, description="pattern-history entries (counters or perceptrons)")
    history_bits: int = Field(ge=0, description="global history length")
    mispredict_penalty_cycles: int = Field(gt=0)

    @model_validator(mode="after")
    @reads("table_entries")
    def _power_of_two(self) -> BranchPredictor:
        n = self.table_entries
        if n & (n - 1):
            raise ValueError(f"table_entries {n} is not a power of two")
        return self


class CPUEfficiency(HardwareModel):
    """Named calibration factors of a CPU, each with a source in the preset."""

    dram_bandwidth_efficiency: float = Field(gt=0, le=1, description="STREAM triad / peak bandwidth")
    compute_efficiency: float = Field(gt=0, le=1, description="achievable fraction of peak FMA issue")
    parallel_overhead_s: Time = si("parallel_overhead", description="fork/join of a parallel region")
    op_overhead_s: Time = si("op_overhead", description="framework dispatch per operator")
    launch_api_s: Time = si("launch_api", description="host time of each further kernel launch of one "
                                                      "operator (the launch API call alone)")


class CPUDevice(HardwareModel):
    """A CPU socket (or a VM's share of one): cores, cache hierarchy, memory, predictor, energy."""

    kind: Literal["cpu"] = "cpu"
    name: str = Field(min_length=1)
    cores: int = Field(gt=0, description="physical cores (or vCPUs for a VM)")
    threads_per_core: int = Field(gt=0)
    core: CPUCore
    caches: list[Cache] = Field(min_length=1, description="from the core outwards: l1d, l2, l3")
    dram: DRAM
    branch_predictor: BranchPredictor
    energy: EnergyTable
    static_power_w: Power = si("static_power", description="power drawn when idle")
    tdp_w: Power = si("tdp", gt=0)
    power_limit_w: Power | None = si("power_limit", gt=0, default=None,
                                     description="package power limit (PPT/PL1) the governor enforces; None: tdp")
    power: PowerModel | None = Field(None, description="package/leakage/clock power, energy per instruction "
                                     "and the V-f curve; None: static power only, no DVFS")
    efficiency: CPUEfficiency
    sources: list[Source] = Field(default_factory=list)

    @model_validator(mode="after")
    @reads("caches", "static_power_w", "tdp_w", "power")
    def _hierarchy(self) -> CPUDevice:
        names = [c.name for c in self.caches]
        if len(set(names)) != len(names):
            raise ValueError(f"caches: duplicate level names {names}")
        for inner, outer in zip(self.caches, self.caches[1:], strict=False):
            if outer.size_bytes <= inner.size_bytes:
                raise ValueError(
                    f"caches: {outer.name} ({outer.size_bytes:.0f} B) must be larger than "
                    f"{inner.name} ({inner.size_bytes:.0f} B)"
                )
            if outer.latency_cycles < inner.latency_cycles:
                raise ValueError(f"caches: {outer.name} latency is below {inner.name}'s")
        if self.static_power_w > self.tdp_w:
            raise ValueError("static_power exceeds tdp")
        if self.power is not None and self.power.area_form:
            raise ValueError("a CPU's power model takes the per-unit terms (board_power, core_leakage_power, "
                             "uncore_leakage_power, core_clock_power, noc_energy), not the area terms")
        return self

    @property
    def effective_power_limit_w(self) -> float:
        """The enforced package power limit (W): ``power_limit`` if given, else ``tdp``."""
        return self.power_limit_w if self.power_limit_w is not None else self.tdp_w

    def cache(self, name: str) -> Cache:
        """The cache level called ``name``."""
        for c in self.caches:
            if c.name == name:
                return c
        raise KeyError(f"{self.name} has no cache {name!r}; levels: {[c.name for c in self.caches]}")

    def peak_flop_per_s(self, precision: str = "fp32", unit: Literal["vector", "matrix"] = "vector") -> float:
        """Peak FLOP/s of all cores: cores x clock x FLOP/cycle of ``unit`` (FLOP/s)."""
        per_cycle = (self.core.vector_flop_per_cycle(precision) if unit == "vector"
                     else self.core.matrix_flop_per_cycle_for(precision))
        return self.cores * self.core.clock_hz * per_cycle

    @property
    def dram_bandwidth_bytes_per_s(self) -> float:
        """Peak DRAM bandwidth (B/s)."""
        return self.dram.bandwidth_bytes_per_s

    def ridge_point(self, precision: str = "fp32") -> float:
        """FLOP per DRAM byte at which the peak roofline turns from memory- to compute-bound."""
        return self.peak_flop_per_s(precision) / self.dram_bandwidth_bytes_per_s
