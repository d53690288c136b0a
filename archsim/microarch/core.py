"""An interval (mechanistic) model of an out-of-order core, driven by simulated miss and mispredict counts.

cycles = max(base, bandwidth) + memory stall + branch stall, where (Karkhanis & Smith, ISCA 2004;
Eyerman, Eeckhout, Karkhanis & Smith, ACM TOCS 2009, "A mechanistic performance model for
superscalar out-of-order processors"):

- base: the steady-state dispatch limit, the largest of instructions / issue width, loads / load
  ports, stores / store ports, FP instructions / FP pipes, and the loop-carried critical path
  (dependent FP adds x add latency + masked moves x their latency): a reduction without
  reassociation runs at one add latency per element however wide the core is.
- bandwidth: for each boundary between levels, the bytes the cache simulator moved across it over
  the bandwidth of the level below (a shared level's and DRAM's bandwidth split between the active
  cores); the streaming kernels end up here, with prefetching hiding their latency.
- memory stall: first-level demand misses x the mean exposed latency of the level that serves them
  (from the simulated hit ratios below), divided by the memory-level parallelism
  MLP = min(miss buffers, ROB entries / instructions per miss) (independent misses within one ROB
  window overlap; Chou, Fahs & Abraham, ISCA 2004). A miss exposes only the part of its latency
  that the ROB cannot cover with other work: max(0, latency - W), W = ROB entries / base IPC
  cycles (Karkhanis & Smith, ISCA 2004: the window keeps dispatching until it fills), so a
  dependency-bound loop hides L2 and L3 hits behind its own critical path. Dependent loads
  (pointer chasing) have MLP 1 and no window.
- branch stall: mispredictions x (front-end refill = mispredict penalty + branch resolution time,
  taken as the FP load-to-use plus compare latency of the compare that feeds the branch) (Eyerman,
  Smith & Eeckhout, ISPASS 2006, "Characterizing the branch misprediction penalty").

Multicore: ``cores`` copies of a kernel on private data, each seeing its share of the shared cache
capacity and of the shared-level and DRAM bandwidth (a partitioned-sharing approximation).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from archsim.errors import SchemaError
from archsim.microarch.branch import PredictorConfig
from archsim.microarch.cache import HierarchyConfig, HierarchyStats
from archsim.microarch.traces import TracedKernel, simulate_branch_trace, simulate_cache

Bound = Literal["issue", "load-ports", "store-ports", "fp-pipes", "dependency", "bandwidth"]


@dataclass(frozen=True)
class CoreParams:
    """What the interval model needs of a core (cycles are core cycles at ``clock_hz``).

    ``fp_pipes``: pipes that execute FP add/mul instructions (Zen 4: 2 FMA/MUL + 2 ADD).
    ``fp_load_latency_cycles``: FP load-to-use on an L1 hit; ``fp_add_latency_cycles``: FP add and
    compare latency; ``blend_latency_cycles``: a masked move.
    """

    clock_hz: float
    issue_width: int
    load_ports: int
    store_ports: int
    fp_pipes: int
    rob_entries: int
    max_outstanding_misses: int
    mispredict_penalty_cycles: int
    fp_add_latency_cycles: int = 3
    blend_latency_cycles: int = 1
    fp_load_latency_cycles: int = 7

    def __post_init__(self) -> None:
        for f in ("clock_hz", "issue_width", "load_ports", "store_ports", "fp_pipes", "rob_entries",
                  "max_outstanding_misses", "mispredict_penalty_cycles"):
            if not getattr(self, f) > 0:
                raise SchemaError(f"core params: {f} must be positive, got {getattr(self, f)!r}")

    @classmethod
    def from_core(cls, core, mispredict_penalty_cycles: int, store_ports: int = 2,
                  fp_add_pipes: int | None = None) -> CoreParams:
        """From a hardware :class:`archsim.hardware.cpu.CPUCore`.

        ``fp_add_pipes`` defaults to the number of FMA pipes (Zen 4's FP2/FP3 beside FP0/FP1, AMD
        Zen 4 software optimisation guide); ``store_ports`` 2 (Zen 4: 2 stores per cycle).
        """
        fma = int(core.fma_units.get("fp64", core.fma_units["fp32"]))
        return cls(clock_hz=float(core.clock_hz), issue_width=int(core.issue_width), load_ports=int(core.load_ports),
                   store_ports=store_ports, fp_pipes=fma + (fma if fp_add_pipes is None else fp_add_pipes),
                   rob_entries=int(core.rob_entries), max_outstanding_misses=int(core.max_outstanding_misses),
                   mispredict_penalty_cycles=mispredict_penalty_cycles)


@dataclass(frozen=True)
class MemoryParams:
    """Latency of each cache level (load-to-use, core cycles), of DRAM (s), and the bandwidths.

    ``level_bandwidth_bytes_per_s[i]``: what level i can deliver to the level above it (per instance:
    per core if private, the whole cache if shared); ``shared[i]`` says which are shared.
    """

    level_latency_cycles: tuple[int, ...]
    level_bandwidth_bytes_per_s: tuple[float, ...]
    shared: tuple[bool, ...]
    dram_latency_s: float
    dram_bandwidth_bytes_per_s: float

    def __post_init__(self) -> None:
        n = len(self.level_latency_cycles)
        if n == 0 or len(self.level_bandwidth_bytes_per_s) != n or len(self.shared) != n:
            raise SchemaError("memory params: one latency, bandwidth and shared flag per cache level")
        if self.dram_latency_s <= 0 or self.dram_bandwidth_bytes_per_s <= 0:
            raise SchemaError("memory params: dram_latency_s and dram_bandwidth_bytes_per_s must be positive")


@dataclass(frozen=True)
class CoreModel:
    """A core, its memory system, its cache hierarchy as simulated, and its branch predictor."""

    core: CoreParams
    memory: MemoryParams
    hierarchy: HierarchyConfig
    predictor: PredictorConfig
    call_overhead_s: float = 0.0  # per kernel call (dispatch), added to the predicted time

    @classmethod
    def from_device(cls, cpu, prefetcher: str = "stride") -> CoreModel:
        """From a :class:`archsim.hardware.cpu.CPUDevice`: one core of it, the DRAM at its measured
        efficiency (``efficiency.dram_bandwidth_efficiency``), a stride prefetcher at L1, and the
        per-call overhead ``efficiency.op_overhead_s``."""
        bp = cpu.branch_predictor
        return cls(
            core=CoreParams.from_core(cpu.core, int(bp.mispredict_penalty_cycles)),
            memory=MemoryParams(
                level_latency_cycles=tuple(int(c.latency_cycles) for c in cpu.caches),
                level_bandwidth_bytes_per_s=tuple(float(c.bandwidth_bytes_per_s) for c in cpu.caches),
                shared=tuple(bool(c.shared) for c in cpu.caches),
                dram_latency_s=float(cpu.dram.latency_s),
                dram_bandwidth_bytes_per_s=float(cpu.dram.bandwidth_bytes_per_s
                                                 * cpu.efficiency.dram_bandwidth_efficiency),
            ),
            hierarchy=HierarchyConfig.from_device(cpu, n_cores=1, prefetcher=prefetcher),
            predictor=PredictorConfig.from_predictor(bp),
            call_overhead_s=float(cpu.efficiency.op_overhead_s),
        )


@dataclass(frozen=True)
class CorePrediction:
    """Predicted cycles and time of one kernel, with the terms and the counts behind them.

    ``time_s`` = cycles / clock + the model's per-call overhead.
    """

    kernel: str
    cycles: float
    time_s: float
    base_cycles: float
    bandwidth_cycles: float
    memory_stall_cycles: float
    branch_stall_cycles: float
    bound: Bound
    mlp: float
    mispredictions: float
    cache: HierarchyStats


def _share(hierarchy: HierarchyConfig, cores: int) -> HierarchyConfig:
    if cores == 1:
        return hierarchy
    levels = []
    for lv in hierarchy.levels:
        if lv.shared:
            unit = lv.ways * lv.line_bytes
            size = max(unit, (lv.size_bytes // cores) // unit * unit)
            lv = replace(lv, size_bytes=size)
        levels.append(replace(lv, shared=False) if lv.shared else lv)
    return HierarchyConfig(tuple(levels), n_cores=1, seed=hierarchy.seed)


def predict(kernel: TracedKernel, model: CoreModel, cores: int = 1, sample_units: int | None = None,
            dependent_loads: bool = False, repeated: bool = True) -> CorePrediction:
    """Predict one core's cycles for ``kernel`` while ``cores`` cores each run a copy of it.

    ``repeated``: the kernel runs back to back, so a short one finds its data where its previous run
    left them (see :func:`archsim.microarch.traces.simulate_cache`); False starts from cold caches.
    """
    if not isinstance(cores, int) or cores <= 0:
        raise SchemaError(f"predict: cores must be a positive int, got {cores!r}")
    c, m, mix = model.core, model.memory, kernel.mix
    hier = _share(model.hierarchy, cores)
    if len(hier.levels) != len(m.level_latency_cycles):
        raise SchemaError("predict: the hierarchy and the memory params have different numbers of levels")
    stats, _ = simulate_cache(kernel, hier, sample_units, repeated=repeated)
    branches = simulate_branch_trace(kernel, model.predictor, sample_units)

    terms = {
        "issue": mix.instructions / c.issue_width,
        "load-ports": mix.loads / c.load_ports,
        "store-ports": mix.stores / c.store_ports,
        "fp-pipes": mix.fp_ops / c.fp_pipes,
        "dependency": mix.carried_adds * c.fp_add_latency_cycles + mix.carried_blends * c.blend_latency_cycles,
    }
    base_bound = max(terms, key=terms.__getitem__)
    base = terms[base_bound]

    # Bandwidth: bytes across boundary i are served by level i + 1 (or DRAM).
    bw_cycles = 0.0
    for i, lv in enumerate(stats.levels):
        moved = lv.bytes_from_below + lv.bytes_to_below
        if i + 1 < len(stats.levels):
            bw = m.level_bandwidth_bytes_per_s[i + 1] / (cores if m.shared[i + 1] else 1)
        else:
            bw = m.dram_bandwidth_bytes_per_s / cores
        bw_cycles = max(bw_cycles, moved / (bw / c.clock_hz))

    # Memory stall: demand misses of the first level, served at the mean latency below it.
    l1 = stats.levels[0]
    demand_misses = float(l1.read_misses + l1.write_misses)
    window = 0.0 if dependent_loads or base == 0 else c.rob_entries * base / mix.instructions
    latency = 0.0
    reach = 1.0  # probability that a first-level miss gets this far
    lat_below = [max(0.0, lat - window) for lat in
                 list(m.level_latency_cycles[1:]) + [m.dram_latency_s * c.clock_hz]]
    for j, lv in enumerate(stats.levels[1:], start=1):
        miss_ratio = lv.read_misses / lv.reads if lv.reads else 1.0
        latency += reach * (1.0 - miss_ratio) * lat_below[j - 1]
        reach *= miss_ratio
    latency += reach * lat_below[-1]
    if dependent_loads or demand_misses == 0:
        mlp = 1.0
    else:
        per_miss = mix.instructions / demand_misses
        mlp = min(float(c.max_outstanding_misses), max(1.0, c.rob_entries / per_miss))
    stall = demand_misses * latency / mlp

    mispredicts = branches.mispredictions + mix.loop_exit_mispredicts
    resolve = c.fp_load_latency_cycles + c.fp_add_latency_cycles
    branch_stall = mispredicts * (c.mispredict_penalty_cycles + resolve)

    bound: Bound = "bandwidth" if bw_cycles > base else base_bound  # type: ignore[assignment]
    cycles = max(base, bw_cycles) + stall + branch_stall
    return CorePrediction(kernel=kernel.name, cycles=cycles, time_s=cycles / c.clock_hz + model.call_overhead_s,
                          base_cycles=base,
                          bandwidth_cycles=bw_cycles, memory_stall_cycles=stall, branch_stall_cycles=branch_stall,
                          bound=bound, mlp=mlp, mispredictions=mispredicts, cache=stats)

