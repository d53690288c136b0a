"""The simulated machine: SimPy resources, the executors that run tasks on them, and the recorder.

Resources (one set per GPU replica where per-GPU):

* thread-block slots of the SMs: a :class:`SlotPool` of ``SMs x max_blocks`` slots, taken by
  wave segments in FIFO order (the hardware block scheduler dispatches kernels in launch order);
* device memory bandwidth: a :class:`~archsim.engines.desim.fluid.FluidShare` of
  ``bandwidth x dram_bandwidth_efficiency`` shared by every kernel in flight;
* copy engines: one per direction (CUDA ``asyncEngineCount = 2`` on data-centre GPUs), each
  feeding its direction of the host link (a FluidShare of ``bandwidth x efficiency``);
* host cores: a SlotPool of ``cores``, taken by host ops (``threads`` cores), loader workers
  (one each) and a host thread waiting for a PIM op, less the cores the training processes' main
  threads hold for the whole run (:meth:`Machine.reserve_cores`); host DRAM bandwidth as a FluidShare;
* PIM units: one kernel at a time over all units, plus the PIM host link;
* the GPU link: one collective at a time (NCCL runs collectives in order on its own stream). With
  a software profile's ``collectives`` (:meth:`Machine.configure_collectives`), the all-reduce is
  kernels too: it draws device-memory bandwidth on every GPU beside the compute kernels, and the
  kernels that start while it runs get the SMs its thread blocks leave (``1 - blocks / SMs``; the
  share is sampled when a wave segment starts).
"""

from __future__ import annotations

from collections import defaultdict, deque
from heapq import heappush
from typing import Any, NamedTuple

import simpy
from simpy.events import NORMAL, PENDING, Timeout

from archsim.engines.desim.fluid import FluidShare
from archsim.engines.desim.loop import FIRED
from archsim.engines.desim.plan import Task
from archsim.errors import EngineError

__all__ = ["Machine", "Record", "SlotPool", "COPY_ENGINES_PER_DIRECTION"]

COPY_ENGINES_PER_DIRECTION = 1
"""DMA copy engines per direction: ``asyncEngineCount`` is 2 (one H2D, one D2H) on Tesla-class GPUs
(CUDA C Programming Guide, "Overlap of Data Transfer and Kernel Execution")."""


class SlotPool:
    """``capacity`` identical units taken and given back in whole numbers, strictly first come, first
    served (a request waits while an earlier one waits, as SimPy's Container does).

    :meth:`acquire` returns ``None`` when the units are free at once (no event is scheduled, which
    keeps uncontended kernels cheap), else an event that fires when they are granted.
    """

    __slots__ = ("env", "capacity", "free", "_waiters")

    def __init__(self, env: simpy.Environment, capacity: int) -> None:
        self.env = env
        self.capacity = capacity
        self.free = capacity
        self._waiters: deque[tuple[int, simpy.Event]] = deque()

    def acquire(self, n: int) -> simpy.Event | None:
        if not self._waiters and self.free >= n:
            self.free -= n
            return None
        event = self.env.event()
        self._waiters.append((n, event))
        return event

    def release(self, n: int) -> None:
        self.free += n
        if self._waiters:
            self.grant()

    def grant(self) -> None:
        """Hand the free units to the waiting requests that fit, in order (after ``free`` grew)."""
        waiters = self._waiters
        while waiters and waiters[0][0] <= self.free:
            m, event = waiters.popleft()
            self.free -= m
            event.succeed()


class Record(NamedTuple):
    """One executed task: the op, where and when it ran (``task`` is None for a loader batch or an
    all-reduce). A tuple: the hot loop makes one per task with ``tuple.__new__(Record, ...)``, a
    third of a dataclass's ``__init__``."""

    task: Task
    replica: int
    step: int
    resource: str
    start_s: float
    end_s: float
    nbytes: float = 0.0
    energy_j: float = 0.0


_new_record = tuple.__new__


class Machine:
    """The resources of one run and the executors of each task kind."""

    def __init__(self, env: simpy.Environment, hw: Any, replicas: int) -> None:
        self.env = env
        self.hw = hw
        self.replicas = replicas
        self.records: list[Record] = []
        self.busy_s: dict[str, float] = defaultdict(float)
        self.capacity: dict[str, float] = {}
        self.fluids: list[FluidShare] = []
        self.sm: list[SlotPool] = []
        self.dram: list[FluidShare] = []
        self.copy: list[dict[str, SlotPool]] = []
        self.link: list[dict[str, FluidShare]] = []
        gpu = hw.gpu
        for r in range(replicas):
            if gpu is not None:
                slots = gpu.sm_count * gpu.sm.max_blocks
                self.sm.append(SlotPool(env, slots))
                self.capacity[f"gpu{r}.sm"] = float(slots)
                self.dram.append(self._fluid(f"gpu{r}.dram", gpu.dram.bandwidth_bytes_per_s
                                             * gpu.efficiency.dram_bandwidth_efficiency))
            if hw.host_link is not None:
                self.copy.append({d: SlotPool(env, COPY_ENGINES_PER_DIRECTION) for d in ("h2d", "d2h")})
                self.link.append({d: self._fluid(f"gpu{r}.link.{d}", hw.host_link.bandwidth_bytes_per_s
                                                 * hw.host_link.efficiency) for d in ("h2d", "d2h")})
        host = hw.host
        self.reserved_cores = 0
        if host is not None:
            self.cores = SlotPool(env, host.cores)
            self.capacity["host.cores"] = float(host.cores)
            self.host_dram = self._fluid("host.dram", host.dram.bandwidth_bytes_per_s
                                         * host.efficiency.dram_bandwidth_efficiency)
        if hw.pim is not None:
            self.pim_units = SlotPool(env, 1)
            link = hw.pim.host_link
            self.pim_link = {d: self._fluid(f"pim.link.{d}", link.bandwidth_bytes_per_s * link.efficiency)
                             for d in ("h2d", "d2h")}
        self.collective = SlotPool(env, 1)
        self.nccl_active = 0
        self.nccl_slowdown = 1.0
        self.nccl_memory_bytes_per_byte = 0.0

    def configure_collectives(self, sm_blocks: int, memory_bytes_per_byte: float) -> None:
        """Run all-reduces as kernels holding ``sm_blocks`` SMs and moving ``memory_bytes_per_byte``
        device-memory bytes per byte sent (see the module doc)."""
        gpu = self.hw.gpu
        if gpu is None or sm_blocks <= 0:
            self.nccl_slowdown = 1.0
        else:
            self.nccl_slowdown = gpu.sm_count / max(gpu.sm_count - sm_blocks, 1)
        self.nccl_memory_bytes_per_byte = float(memory_bytes_per_byte)

    def reserve_cores(self, n: int) -> None:
        """Hold ``n`` host cores for the whole run (the training processes' main threads), before any
        process starts: loader workers and host ops share the rest (``n`` below the host's cores:
        checked with the run's inputs, ``des._validate``)."""
        self.cores.free -= n
        self.reserved_cores = n

    def _fluid(self, name: str, capacity: float) -> FluidShare:
        share = FluidShare(self.env, name, capacity)
        self.fluids.append(share)
        return share

    # --- executors (SimPy generators) ------------------------------------------------------------
    def lane(self, items: list[tuple[Task, tuple[int, ...], int]], r: int, step: int, lane: str,
             done: list[simpy.Event], bucket_done: Any, hold_core: bool):
        """Run a lane's tasks in order on replica ``r`` in ``step``, recording each on ``lane``.

        ``items`` are (task, its predecessors on other lanes, its gradient bucket or -1): a task
        starts when those predecessors' ``done`` events and its bucket's all-reduce
        (``bucket_done(step, bucket)``) have fired, and fires its own ``done`` event when it ends
        (``loop.FIRED`` for a task nothing waits on, scheduled all the same).

        The GPU kernel executor (its overheads, then its wave segments on SM slots drawing DRAM
        bandwidth) is written out here rather than in a generator per kernel: this is the hot loop of
        a run, and a sub-generator costs its creation and one more frame on every resume. For the
        same reason the clock is read as ``env._now`` and a task's ``done`` event is scheduled as
        ``Event.succeed`` does (``simpy/events.py``; see :mod:`archsim.engines.desim.loop`): the same
        event, in the same place of the queue.
        """
        env = self.env
        queue, eid = env._queue, env._eid
        all_of = env.all_of
        records = self.records
        busy_s = self.busy_s
        sm = self.sm[r] if self.sm else None
        flow = self.dram[r].flow if self.dram else None
        sm_key = f"gpu{r}.sm"
        for t, cross, b in items:
            # Predecessors on this lane are done already: only other lanes' are checked.
            waits = [ev for ev in (done[p] for p in cross) if ev._value is PENDING] if cross else []
            if b >= 0:
                ev = bucket_done(step, b)
                if ev._value is PENDING:
                    waits.append(ev)
            if waits:
                yield waits[0] if len(waits) == 1 else all_of(waits)
            start = env._now
            kind = t.executor
            if kind == "gpu":
                if t.fixed_s > 0.0:
                    yield Timeout(env, t.fixed_s)
                busy = 0.0
                demand = t.demand_bytes_per_s
                for seconds, slots in t.segments:
                    if not sm._waiters and sm.free >= slots:  # SlotPool.acquire, granted at once
                        sm.free -= slots
                    else:
                        yield sm.acquire(slots)
                    if self.nccl_active:
                        seconds *= self.nccl_slowdown  # the collective's blocks hold some SMs
                    t0 = env._now
                    yield flow(seconds, demand)
                    sm.free += slots  # SlotPool.release
                    if sm._waiters:
                        sm.grant()
                    busy += slots * (env._now - t0)
                busy_s[sm_key] += busy
                records.append(_new_record(Record, (t, r, step, lane, start, env._now, 0.0, 0.0)))
            elif kind == "copy":
                yield from self.copy_task(t, r)
                records.append(_new_record(Record, (t, r, step, lane, start, env._now, 0.0, 0.0)))
            else:
                yield from self.run(t, r, step, lane, hold_core and kind == "pim")
            ev = done[t.index]
            if ev is not FIRED:
                ev._ok = True
                ev._value = None
            heappush(queue, (env._now, NORMAL, next(eid), ev))

    def run(self, task: Task, replica: int, step: int, lane: str, hold_core: bool):
        """Execute a copy, host or PIM ``task`` and record it on ``lane`` (the resource name in the
        timeline); a PIM op with ``hold_core`` keeps one host core waiting for it. (GPU kernels run
        in :meth:`lane`.)"""
        start = self.env.now
        kind = task.executor
        if kind == "copy":
            yield from self.copy_task(task, replica)
        elif kind == "host":
            yield from self._host(task)
        elif kind == "pim":
            yield from self._pim(task, replica, step, hold_core)
            lane = "pim"
        else:
            raise EngineError(f"Machine.run executes copy, host and PIM tasks; {task.label!r} is a {kind!r} task")
        self.records.append(Record(task, replica, step, lane, start, self.env.now))

    def copy_task(self, task: Task, r: int):
        """A host<->device copy on its direction's copy engine and link."""
        env = self.env
        engine = self.copy[r][task.direction]
        wait = engine.acquire(1)
        if wait is not None:
            yield wait
        t0 = env.now
        if task.fixed_s > 0.0:
            yield env.timeout(task.fixed_s)
        yield self.link[r][task.direction].flow(task.kernel_s, task.demand_bytes_per_s)
        engine.release(1)
        self.busy_s[f"gpu{r}.copy.{task.direction}"] += env.now - t0

    def _host(self, task: Task):
        env = self.env
        threads = min(int(task.threads), self.cores.capacity - self.reserved_cores)
        wait = self.cores.acquire(threads)
        if wait is not None:
            yield wait
        t0 = env.now
        if task.fixed_s > 0.0:
            yield env.timeout(task.fixed_s)
        yield self.host_dram.flow(task.kernel_s, task.demand_bytes_per_s)
        self.cores.release(threads)
        self.busy_s["host.cores"] += threads * (env.now - t0)

    def _pim_transfer(self, task: Task, r: int, step: int):
        env = self.env
        t0 = env.now
        if task.fixed_s > 0.0:
            yield env.timeout(task.fixed_s)
        yield self.pim_link[task.direction].flow(task.kernel_s, task.demand_bytes_per_s)
        self.records.append(Record(task, r, step, f"pim.link.{task.direction}", t0, env.now))

    def _pim(self, task: Task, r: int, step: int, hold_core: bool):
        env = self.env
        if hold_core:
            wait = self.cores.acquire(1)
            if wait is not None:
                yield wait
        t_core = env.now
        if task.pre is not None:
            yield from self._pim_transfer(task.pre, r, step)
        wait = self.pim_units.acquire(1)
        if wait is not None:
            yield wait
        t0 = env.now
        yield env.timeout(task.fixed_s + task.kernel_s)
        self.pim_units.release(1)
        self.busy_s["pim.units"] += env.now - t0
        if task.post is not None:
            yield from self._pim_transfer(task.post, r, step)
        if hold_core:
            self.cores.release(1)
            self.busy_s["host.cores"] += env.now - t_core

    def loader_batch(self, seconds: float, replica: int, worker: int, step: int):
        """A loader worker prepares one batch on one host core."""
        wait = self.cores.acquire(1)
        if wait is not None:
            yield wait
        t0 = self.env.now
        yield self.env.timeout(seconds)
        self.cores.release(1)
        end = self.env.now
        self.busy_s["host.cores"] += end - t0
        self.busy_s["host.loader"] += end - t0
        self.records.append(Record(None, replica, step, f"host.loader{replica}.w{worker}", t0, end))  # type: ignore[arg-type]

    def allreduce(self, seconds: float, nbytes: float, energy_j: float, step: int, bucket: int):
        """One bucket's ring all-reduce over the GPU link (collectives in order)."""
        wait = self.collective.acquire(1)
        if wait is not None:
            yield wait
        t0 = self.env.now
        self.nccl_active += 1
        per_rank = nbytes / max(self.replicas, 1)
        if self.nccl_memory_bytes_per_byte > 0 and self.dram and seconds > 0:
            demand = self.nccl_memory_bytes_per_byte * per_rank / seconds
            yield self.env.all_of([d.flow(seconds, demand) for d in self.dram])
        else:
            yield self.env.timeout(seconds)
        self.nccl_active -= 1
        self.collective.release(1)
        end = self.env.now
        self.busy_s["gpu_link"] += end - t0
        self.records.append(Record(None, -1, step, "gpu_link.allreduce", t0, end, nbytes, energy_j))  # type: ignore[arg-type]

    # --- utilisation -----------------------------------------------------------------------------
    def utilisation(self, makespan_s: float) -> dict[str, float]:
        """Busy share of each resource over the makespan (0..1)."""
        if makespan_s <= 0.0:
            return {}
        if self.reserved_cores:
            self.busy_s["host.cores"] += self.reserved_cores * makespan_s
        for rec in self.records:  # lanes: summed here, not on the hot path
            if rec.task is not None and rec.task.index >= 0:
                self.busy_s[rec.resource] += rec.end_s - rec.start_s
        out: dict[str, float] = {}
        for key, busy in sorted(self.busy_s.items()):
            out[key] = min(1.0, busy / (self.capacity.get(key, 1.0) * makespan_s))
        for f in self.fluids:
            if f.moved_bytes > 0.0:
                out[f.name] = min(1.0, f.moved_bytes / (f.capacity_bytes_per_s * makespan_s))
        return out
