"""The discrete-event engine: the whole system simulated in time with SimPy.

``estimate_des(work, hardware, options, streams=..., overlap_copies=..., loader=..., steps=...,
data_parallel=..., offload=...)`` prices every op with the roofline's cost function
(:mod:`archsim.cost`) and then *schedules* the ops on the machine's resources
(:mod:`archsim.engines.desim.machine`): kernels on streams, in thread-block waves, sharing SM slots
and device-memory bandwidth; copies on copy engines and links, overlapping compute; host ops on
cores; PIM offload; a CPU input pipeline with a bounded prefetch queue feeding training steps; and
data-parallel training with bucketed ring all-reduces. What the roofline cannot see (queues,
overlap, contention) shows in the makespan; with none of them the two engines agree.

Each run has a fresh ``simpy.Environment``; time is float seconds. Nothing is random: ties are
broken by the order processes are created (graph order, replica order), which is fixed.

Energy uses the same ledger: each op's dynamic energy (every component but static) from its cost,
the all-reduce's link bytes at the GPU link's energy per byte, plus static power x the makespan
for every device the run engages (GPUs when any kernel or copy runs, the host when any host op,
loader worker or waiting host thread runs, the PIM device when any PIM op runs), idle time
included. With one serial stream this is the roofline's energy.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import simpy

from archsim.cost import CostOptions
from archsim.energy.chip import static_board_w
from archsim.engines.desim.build import (
    HardwareView,
    assign_lanes,
    build_tasks,
    gradient_buckets,
    loader_seconds,
)
from archsim.engines.desim.config import DataParallel, InputPipeline, PIMOffload
from archsim.engines.desim.loop import FIRED, LeanProcess, run_to_end
from archsim.engines.desim.machine import Machine, Record
from archsim.engines.desim.plan import Coster, Task
from archsim.errors import EngineError
from archsim.results import OpResult, RunResult, TimelineEntry

__all__ = ["estimate_des", "prepare_des", "steady_step_s", "DESRun", "InputPipeline", "DataParallel", "PIMOffload"]


def _check_int(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise EngineError(f"{name} must be an int >= 1, got {value!r}")
    return value


def _validate(hw: HardwareView, compute: str, streams: Any, overlap_copies: Any, loader: Any, steps: Any,
              data_parallel: Any, offload: Any) -> int:
    _check_int("streams", streams)
    _check_int("steps", steps)
    if not isinstance(overlap_copies, bool):
        raise EngineError(f"overlap_copies must be True or False, got {overlap_copies!r}")
    if loader is not None:
        if not isinstance(loader, InputPipeline):
            raise EngineError(f"loader must be an InputPipeline or None, got {type(loader).__name__}")
        if hw.host is None:
            raise EngineError("loader needs a host CPU: pass a System (or a CPUDevice)")
        gpus = data_parallel.gpus if isinstance(data_parallel, DataParallel) else 1
        if loader.main_threads * gpus >= hw.host.cores:
            raise EngineError(f"loader.main_threads={loader.main_threads} x {gpus} training process(es) hold "
                              f"every one of the host's {hw.host.cores} cores: none is left for loader workers")
    if offload is not None:
        if not isinstance(offload, PIMOffload):
            raise EngineError(f"offload must be a PIMOffload or None, got {type(offload).__name__}")
        if hw.pim is None:
            raise EngineError(f"offload needs a PIM device; {hw.name!r} has none")
        if offload.host_waits and hw.host is None:
            raise EngineError("offload.host_waits=True needs a host CPU to wait")
    replicas = 1
    if data_parallel is not None:
        if not isinstance(data_parallel, DataParallel):
            raise EngineError(f"data_parallel must be a DataParallel or None, got {type(data_parallel).__name__}")
        if compute != "gpu" or hw.gpu is None:
            raise EngineError("data_parallel runs the graph on GPUs: pass a System with GPUs (device='gpu')")
        if data_parallel.gpus > hw.gpu_count:
            raise EngineError(f"data_parallel.gpus={data_parallel.gpus} but {hw.name!r} has "
                              f"{hw.gpu_count} GPU(s); allowed: 1..{hw.gpu_count}")
        if data_parallel.gpus > 1 and hw.gpu_link is None:
            raise EngineError(f"data_parallel over {data_parallel.gpus} GPUs needs the system's gpu_link")
        replicas = data_parallel.gpus
    return replicas


def _check_bounds(hw: HardwareView, tasks: list[Task], steps: int, replicas: int) -> None:
    """Refuse, before simulating, a run the machine cannot execute or that would take too long."""
    from archsim.limits import limits

    copies = sorted({t.op.label for t in tasks if t.executor == "copy"})
    if copies and hw.host_link is None:
        raise EngineError(f"{hw.name!r}: host<->device copies ({', '.join(copies[:3])}) need a host link; "
                          "pass a System with a host_link (a bare device has no host to copy from)")
    total = len(tasks) * steps * replicas
    cap = limits().max_des_tasks
    if total > cap:
        raise EngineError(f"steps={steps}: {len(tasks)} ops x {steps} steps x {replicas} replica(s) = {total} "
                          f"simulated tasks exceeds the limit {cap} (set ARCHSIM_MAX_DES_TASKS to raise it)")


def _compute_role(hw: HardwareView, options: CostOptions) -> str:
    if options.device is not None:
        return options.device
    return "gpu" if hw.gpu is not None else "host" if hw.host is not None else "pim"


@dataclass(frozen=True)
class _Context:
    hardware: Any
    options: CostOptions
    name: str
    streams: int
    data_parallel: DataParallel | None
    offload: PIMOffload | None


class DESRun:
    """One simulation: the environment, the machine, the plan and the processes that drive it.

    Made by :func:`prepare_des`; :meth:`simulate` runs it once, :meth:`result` reads it out.
    """

    context: _Context

    def __init__(self, hw: HardwareView, tasks: list[Task], preds: list[tuple[int, ...]],
                 lanes: list[tuple[str, int, list[Task]]], replicas: int, steps: int, overlap_copies: bool,
                 offload: PIMOffload | None, loader: InputPipeline | None, batch_s: float,
                 feed: Task | None, buckets: list[Any]) -> None:
        self.env = simpy.Environment()
        self.hw = hw
        self.m = Machine(self.env, hw, replicas)
        self.tasks, self.preds, self.lanes = tasks, preds, lanes
        self.replicas, self.steps = replicas, steps
        self.overlap_copies = overlap_copies
        self.hold_core = offload is not None and offload.host_waits
        self.loader, self.batch_s, self.feed = loader, batch_s, feed
        self.buckets = buckets
        self.bucket_of = {u: b for b, bk in enumerate(buckets) for u in bk.updates}
        self._done: dict[tuple[int, int], list[simpy.Event]] = {}
        self._bucket_done: dict[tuple[int, int], simpy.Event] = {}
        self.step_end: list[list[float]] = [[] for _ in range(replicas)]
        # Per lane, each task with its predecessors on other lanes and its bucket (-1: none).
        self.waits_of: dict[tuple[str, int], list[tuple[Task, tuple[int, ...], int]]] = {}
        for g, k, ts in lanes:
            mine = {t.index for t in ts}
            self.waits_of[(g, k)] = [(t, tuple(p for p in preds[t.index] if p not in mine),
                                      self.bucket_of.get(t.index, -1)) for t in ts]
        # The tasks whose done events something waits on: a later task on another lane, an
        # all-reduce (its bucket's gradient sources) or, without copy overlap, the next batch's copy
        # (all of a step). The others' done flags are scheduled as loop.FIRED (no object per task).
        if feed is not None and not overlap_copies:
            awaited = set(range(len(tasks)))
        else:
            awaited = {p for items in self.waits_of.values() for _, cross, _ in items for p in cross}
            awaited.update(j for bk in buckets for j in bk.sources)
        self._awaited = [i in awaited for i in range(len(tasks))]

    def done(self, r: int, s: int) -> list[simpy.Event]:
        key = (r, s)
        evs = self._done.get(key)
        if evs is None:
            env = self.env
            evs = [simpy.Event(env) if waited else FIRED for waited in self._awaited]
            self._done[key] = evs
        return evs

    def bucket_done(self, s: int, b: int) -> simpy.Event:
        ev = self._bucket_done.get((s, b))
        if ev is None:
            ev = self._bucket_done[(s, b)] = self.env.event()
        return ev

    def lane_name(self, group: str, k: int, r: int) -> str:
        if group == "gpu":
            return f"gpu{r}.stream{k}"
        if group.startswith("copy."):
            return f"gpu{r}.{group}"
        prefix = f"r{r}." if self.replicas > 1 else ""
        return f"{group}.{prefix}stream{k}"

    # --- processes -------------------------------------------------------------------------------
    def lane(self, group: str, k: int, r: int, s: int):
        return self.m.lane(self.waits_of[(group, k)], r, s, self.lane_name(group, k, r), self.done(r, s),
                           self.bucket_done, self.hold_core and group != "pim")

    def replica(self, r: int, ready: list[simpy.Event] | None, started: list[simpy.Event]):
        env = self.env
        for s in range(self.steps):
            if ready is not None:
                yield ready[s]
            started[s].succeed()
            procs = [LeanProcess(env, self.lane(g, k, r, s)) for g, k, _ in self.lanes]
            yield env.all_of(procs)
            self.step_end[r].append(env.now)

    def feeder(self, r: int, store: simpy.Store, ready: list[simpy.Event], started: list[simpy.Event]):
        """Takes prepared batches from the loader queue and copies each to the device one step ahead."""
        for s in range(self.steps):
            yield store.get()
            if self.feed is not None:
                if s > 0 and self.overlap_copies:
                    yield started[s - 1]  # one batch in flight on the device (double buffering)
                elif s > 0:
                    yield self._step_done(r, s - 1)
                yield from self.m.run(self.feed, r, s, f"gpu{r}.copy.h2d", False)
            ready[s].succeed()

    def _step_done(self, r: int, s: int) -> simpy.Event:
        return self.env.all_of(self.done(r, s))

    def worker(self, r: int, w: int, store: simpy.Store, counter: list[int]):
        while counter[0] < self.steps:
            s = counter[0]
            counter[0] += 1
            yield from self.m.loader_batch(self.batch_s, r, w, s)
            yield store.put(s)

    def collectives(self):
        env = self.env
        for s in range(self.steps):
            for b, bk in enumerate(self.buckets):
                waits = [self.done(r, s)[j] for r in range(self.replicas) for j in bk.sources]
                if waits:
                    yield env.all_of(waits)
                yield from self.m.allreduce(bk.seconds, bk.bytes_per_rank * self.replicas, bk.energy_j, s, b)
                self.bucket_done(s, b).succeed()

    def start(self) -> None:
        env = self.env
        if self.loader is not None and self.loader.main_threads:
            self.m.reserve_cores(self.loader.main_threads * self.replicas)
        for r in range(self.replicas):
            started = [env.event() for _ in range(self.steps)]
            ready = None
            if self.loader is not None:
                store = simpy.Store(env, capacity=self.loader.prefetch_depth)
                ready = [env.event() for _ in range(self.steps)]
                counter = [0]
                for w in range(self.loader.cores):
                    env.process(self.worker(r, w, store, counter))
                env.process(self.feeder(r, store, ready, started))
            env.process(self.replica(r, ready, started))
        if self.buckets and self.replicas > 1:
            env.process(self.collectives())

    def simulate(self) -> None:
        """Run the simulation to its end (once)."""
        if self.env.now > 0 or self._done:
            raise EngineError("a DESRun simulates once; prepare a new one")
        self.start()
        run_to_end(self.env)

    def result(self) -> RunResult:
        """The :class:`~archsim.results.RunResult` of the finished simulation."""
        return _result(self)

    def events(self) -> int:
        # SimPy numbers every scheduled event with this counter (simpy.core.Environment._eid).
        return next(self.env._eid)


def _static_w(hw: HardwareView, records: list[Record], replicas: int, loader: Any, hold_core: bool) -> dict[str, float]:
    kinds = {rec.task.executor for rec in records if rec.task is not None}
    out = {}
    if hw.gpu is not None and ("gpu" in kinds or ("copy" in kinds and hw.host_link is not None)):
        # The power the roofline charges as each op's ``static`` energy (leakage and clock network,
        # which the idle power holds, are op energies of their own where the power model has them).
        out["gpu"] = replicas * (static_board_w(hw.gpu) + hw.gpu.dram.background_power_w)
    if hw.host is not None and ("host" in kinds or loader is not None or (hold_core and "pim" in kinds)):
        out["host"] = hw.host.static_power_w + hw.host.dram.background_power_w
    if hw.pim is not None and "pim" in kinds:
        out["pim"] = hw.pim.static_power_w + hw.pim.dram.background_power_w
    return out


def _loader_period_s(run: DESRun) -> float:
    """The loader's sustained time per batch of one replica, in s (0 without a loader).

    Each of ``cores`` workers makes one batch per ``batch_s``, and the replicas' workers together hold
    at most the host's cores that the training processes' main threads leave, so one replica gets a
    batch no faster than every ``batch_s x replicas / min(cores x replicas, host cores - main_threads x
    replicas)``.
    """
    loader = run.loader
    if loader is None:
        return 0.0
    workers = loader.cores * run.replicas
    return run.batch_s * run.replicas / min(workers, run.hw.host.cores - loader.main_threads * run.replicas)


def steady_step_s(step_s: list[float], loader_period_s: float = 0.0) -> float:
    """The steady-state training step time (s) of a run with per-step times ``step_s``.

    Two things bound the steady state from below, and the larger one sets it: the device's step,
    measured as the mean step time after the first step (which holds the first batch's preparation
    and copy), and the loader's sustained time per batch ``loader_period_s`` (a step consumes a
    batch; over a long run they cannot come faster than the workers make them). The measured mean
    alone misleads on a short CPU-bound run: ``k`` workers start together and deliver their first
    ``k`` batches at once, so the first ``k`` steps run back to back at the device's speed and a run
    of a few steps sees only that burst (0.008 s steps for a 0.04 s loader period). The bound does
    not see host cores taken by host ops of the graph; those slow the loader only in the measured
    mean, which a run long enough to cover several loader cycles shows. With one step there is no
    step-to-step interval: the bound is then the first step, load included.
    """
    if not step_s:
        raise EngineError("steady_step_s needs at least one step time")
    measured = sum(step_s[1:]) / (len(step_s) - 1) if len(step_s) > 1 else step_s[0]
    return max(measured, loader_period_s)


def _op_result(rec: Record) -> OpResult:
    t = rec.task
    c = t.cost
    latency = rec.end_s - rec.start_s
    dyn = dict(t.dynamic_j)
    by_level = dict(c.bytes_by_level)
    for sub in (t.pre, t.post):
        if sub is not None:
            for k, v in sub.dynamic_j.items():
                dyn[k] = dyn.get(k, 0.0) + v
            by_level["link"] = by_level.get("link", 0.0) + sub.shared_bytes
    breakdown = {**dyn, "static": c.static_power_w * latency}
    extra = {**c.extra, "launches": c.launches, "overhead_s": c.overhead_s, "solo_latency_s": t.latency_s,
             "replica": float(rec.replica), "step": float(rec.step)}
    return OpResult(name=c.name, kind=c.kind, phase=c.phase, device="pim" if t.executor == "pim" else c.device,
                    flop=c.flop, bytes_by_level=by_level, time_by_unit_s=dict(c.time_by_unit_s), bound=c.bound,
                    latency_s=latency, energy_j=float(sum(breakdown.values())), energy_breakdown_j=breakdown,
                    start_s=rec.start_s, extra=extra, flop_nominal=c.flop_nominal)


def estimate_des(work: Any, hardware: Any, options: CostOptions | None = None, *, streams: int = 1,
                 overlap_copies: bool = True, loader: InputPipeline | None = None, steps: int = 1,
                 data_parallel: DataParallel | None = None, offload: PIMOffload | None = None) -> RunResult:
    """Simulate ``work`` (an op or an OpGraph) on ``hardware`` (a device or a System) in time.

    Args:
        options: the cost function's options (device role, CPU threads), as for the roofline.
        streams: streams of the compute device; independent ops spread over them and share SM slots
            and memory bandwidth.
        overlap_copies: host<->device copies run on copy engines beside compute (``True``) or in
            the compute stream (``False``).
        loader: a CPU input pipeline feeding each step (see :class:`InputPipeline`).
        steps: iterations of ``work`` (training steps of an epoch); step ``s + 1`` starts when step
            ``s`` has finished and its batch is on the device.
        data_parallel: data-parallel training over several GPUs (see :class:`DataParallel`).
        offload: ops to run on the System's PIM device (see :class:`PIMOffload`).

    Returns a :class:`~archsim.results.RunResult` with one OpResult per executed op (per step and
    GPU), the timeline, per-resource utilisation, and in ``_meta["des"]`` the event count and the
    step times: ``step_s``, per step, from the previous step's end; ``step_time_s``, the steady-state
    step time (see :func:`steady_step_s`); ``loader_period_s``, the loader's sustained time per batch
    (0 without a loader).
    """
    run = prepare_des(work, hardware, options, streams=streams, overlap_copies=overlap_copies, loader=loader,
                      steps=steps, data_parallel=data_parallel, offload=offload)
    run.simulate()
    return run.result()


def prepare_des(work: Any, hardware: Any, options: CostOptions | None = None, *, streams: int = 1,
                overlap_copies: bool = True, loader: InputPipeline | None = None, steps: int = 1,
                data_parallel: DataParallel | None = None, offload: PIMOffload | None = None) -> DESRun:
    """Validate, cost and plan a run without simulating it (:meth:`DESRun.simulate`, then
    :meth:`DESRun.result`); the arguments are those of :func:`estimate_des`."""
    from archsim.engines.roofline import work_ops

    options = options or CostOptions()
    hw = HardwareView.of(hardware)
    compute = _compute_role(hw, options)
    replicas = _validate(hw, compute, streams, overlap_copies, loader, steps, data_parallel, offload)
    ops, preds, name = work_ops(work)
    coster = Coster(hardware, options)
    tasks = build_tasks(ops, coster, hw, offload)
    _check_bounds(hw, tasks, steps, replicas)
    lanes = assign_lanes(tasks, preds, compute, streams, overlap_copies, offload)
    buckets = gradient_buckets(tasks, preds, data_parallel, hw.gpu_link) if replicas > 1 else []
    batch_s, feed = 0.0, None
    if loader is not None:
        batch_s = loader_seconds(loader, coster, hw)
        if loader.sample_bytes > 0 and hw.host_link is not None and compute == "gpu":
            from archsim.engines.desim.build import _transfer
            feed = _transfer(coster, loader.sample_bytes * loader.batch, "h2d", hw.host_link)
    run = DESRun(hw, tasks, preds, lanes, replicas, steps, overlap_copies, offload, loader, batch_s, feed, buckets)
    run.context = _Context(hardware, options, name, streams, data_parallel, offload)
    sw = options.software
    if sw is not None:
        run.m.configure_collectives(sw.collectives.sm_blocks, sw.collectives.memory_bytes_per_byte)
    return run


def _result(run: DESRun) -> RunResult:
    from archsim._version import __version__

    ctx = run.context
    hw, hardware, options, name = run.hw, ctx.hardware, ctx.options, ctx.name
    replicas, steps, loader = run.replicas, run.steps, run.loader
    streams, overlap_copies = ctx.streams, run.overlap_copies
    data_parallel, offload = ctx.data_parallel, ctx.offload
    makespan = float(run.env.now)
    records = run.m.records
    unfinished = [r for r in range(replicas) if len(run.step_end[r]) < steps]
    if unfinished:
        raise EngineError(f"the simulation stalled before finishing every step on replica(s) {unfinished}")

    ops_out = [_op_result(rec) for rec in records if rec.task is not None and rec.task.index >= 0]
    energy: dict[str, float] = {}
    for rec in records:
        parts = rec.task.dynamic_j if rec.task is not None else {"link": rec.energy_j}
        for k, v in parts.items():
            energy[k] = energy.get(k, 0.0) + v
    static = _static_w(hw, records, replicas, loader, run.hold_core)
    energy["static"] = sum(static.values()) * makespan
    label = (lambda rec, base: f"{base}@step{rec.step}") if steps > 1 else (lambda rec, base: base)
    timeline = []
    for rec in sorted(records, key=lambda x: (x.start_s, x.resource)):
        if rec.task is None:
            base = "allreduce" if rec.resource.startswith("gpu_link") else "load_batch"
            timeline.append(TimelineEntry(label(rec, base), rec.resource, rec.start_s, rec.end_s, rec.nbytes,
                                          rec.energy_j))
        else:
            timeline.append(TimelineEntry(label(rec, rec.task.label), rec.resource, rec.start_s, rec.end_s,
                                          rec.task.shared_bytes, float(sum(rec.task.dynamic_j.values()))))
    ends = run.step_end[0]
    step_s = [b - a for a, b in zip([0.0, *ends[:-1]], ends, strict=True)]
    period = _loader_period_s(run)
    steady = steady_step_s(step_s, period)
    util = run.m.utilisation(makespan)
    if loader is not None:
        util["host.loader"] = min(1.0, run.m.busy_s["host.loader"] / (loader.cores * replicas * makespan))
    meta = {
        "archsim_version": __version__, "engine": "des", "hardware_name": hw.name,
        "hardware_hash": hardware.content_hash() if hasattr(hardware, "content_hash") else "",
        "options": {"device": options.device, "threads": options.threads, "host_dispatch": options.host_dispatch,
                    "streams": streams,
                    "overlap_copies": overlap_copies, "steps": steps,
                    "loader": None if loader is None else {k: v for k, v in asdict(loader).items()
                                                          if k != "preprocess"},
                    "data_parallel": None if data_parallel is None else asdict(data_parallel),
                    "offload": None if offload is None else asdict(offload)},
        "des": {"events": run.events(), "step_s": step_s, "step_time_s": steady,
                "static_power_w": static, "loader_batch_s": run.batch_s, "loader_period_s": period},
    }
    return RunResult(engine="des", hardware=hw.name, workload=name, latency_s=makespan,
                     energy_j=float(sum(energy.values())), energy_breakdown_j=energy, ops=tuple(ops_out),
                     timeline=tuple(timeline), utilisation=util, _meta=meta)
