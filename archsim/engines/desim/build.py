"""Build the simulation plan: tasks from ops, lanes (streams) from the graph, gradient buckets.

Streams: ops of one *group* (GPU kernels, host ops, PIM ops queued apart from the host, each
copy direction when copies overlap compute) are spread over that group's streams in graph order.
An op continues the stream of its first predecessor in the group whose stream has not moved on
(it extends a chain), else it opens the least recently used stream. With one stream this is the
graph's order, the roofline's serial sum; independent chains land on different streams.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from archsim.cost import CostOptions
from archsim.engines.desim.collective import ring_allreduce_bytes_per_rank, ring_allreduce_s
from archsim.engines.desim.config import DataParallel, PIMOffload
from archsim.engines.desim.plan import Coster, Task, check_finite, dynamic_energy, gpu_segments, split
from archsim.errors import EngineError

__all__ = ["HardwareView", "build_tasks", "assign_lanes", "Bucket", "gradient_buckets"]

_TRANSFERS = ("h2d", "d2h")


@dataclass(frozen=True)
class HardwareView:
    """The parts of a device or System the simulator uses (``None`` where absent)."""

    name: str
    gpu: Any
    gpu_count: int
    host: Any
    pim: Any
    host_link: Any
    gpu_link: Any

    @classmethod
    def of(cls, hw: Any) -> HardwareView:
        kind = getattr(hw, "kind", None)
        if kind == "system":
            return cls(hw.name, hw.gpu, hw.gpu_count, hw.host, hw.pim, hw.host_link, hw.gpu_link)
        if kind == "gpu":
            return cls(hw.name, hw, 1, None, None, None, None)
        if kind == "cpu":
            return cls(hw.name, None, 0, hw, None, None, None)
        if kind == "pim":
            return cls(hw.name, None, 0, None, hw, None, None)
        raise EngineError(f"hardware must be a CPUDevice, GPUDevice, PIMDevice or System, got {type(hw).__name__}")


def _transfer(coster: Coster, nbytes: float, direction: str, link: Any) -> Task | None:
    from archsim.workload import DeviceToHost, HostToDevice
    if nbytes <= 0:
        return None
    n = int(math.ceil(nbytes))
    op = HostToDevice(n, name="pim.in") if direction == "h2d" else DeviceToHost(n, name="pim.out")
    cost = coster.cost(op, target=("link", link))
    fixed, kernel = split(cost)
    shared = cost.bytes_by_level.get("link", 0.0)
    return Task(-1, op, "copy", cost, fixed, kernel, shared, shared / kernel if kernel > 0 else 0.0,
                dynamic_energy(cost), direction=direction, label=op.label)


def build_tasks(ops: tuple[Any, ...], coster: Coster, hw: HardwareView, offload: PIMOffload | None) -> list[Task]:
    """One :class:`Task` per op, costed by the shared cost function."""
    coster.prefetch([op for op in ops if not (offload is not None and op.kind not in _TRANSFERS
                                              and offload.selects(op))])
    tasks: list[Task] = []
    for i, op in enumerate(ops):
        if offload is not None and op.kind not in _TRANSFERS and offload.selects(op):
            cost = coster.cost(op, target=("pim", hw.pim))
            check_finite(cost)
            fixed, kernel = split(cost)
            params_bytes = op.param_count() * op.dtype.bytes
            in_bytes = max(0.0, sum(t.bytes for t in op.inputs()) - params_bytes)
            out_bytes = sum(t.bytes for t in op.outputs())
            link = hw.pim.host_link
            tasks.append(Task(i, op, "pim", cost, fixed, kernel, cost.bytes_by_level.get("pim", 0.0), 0.0,
                              dynamic_energy(cost), pre=_transfer(coster, in_bytes, "h2d", link),
                              post=_transfer(coster, out_bytes, "d2h", link), label=op.label))
            continue
        cost = coster.cost(op)
        check_finite(cost)
        fixed, kernel = split(cost)
        role = cost.device
        dyn = dynamic_energy(cost)
        if role == "link":
            shared = cost.bytes_by_level.get("link", 0.0)
            tasks.append(Task(i, op, "copy", cost, fixed, kernel, shared, shared / kernel if kernel > 0 else 0.0,
                              dyn, direction=op.kind, label=op.label))
        elif role == "gpu":
            shared = cost.bytes_by_level.get("dram", 0.0)
            segs = gpu_segments(kernel, cost.extra, hw.gpu.sm_count, hw.gpu.sm.max_blocks)
            tasks.append(Task(i, op, "gpu", cost, fixed, kernel, shared, shared / kernel if kernel > 0 else 0.0,
                              dyn, segments=segs, label=op.label))
        elif role == "host":
            shared = cost.bytes_by_level.get("dram", 0.0)
            threads = cost.extra.get("threads", float(hw.host.cores))
            tasks.append(Task(i, op, "host", cost, fixed, kernel, shared, shared / kernel if kernel > 0 else 0.0,
                              dyn, threads=max(1.0, min(float(hw.host.cores), threads)), label=op.label))
        else:
            tasks.append(Task(i, op, "pim", cost, fixed, kernel, cost.bytes_by_level.get("pim", 0.0), 0.0, dyn,
                              label=op.label))
    return tasks


def _group(task: Task, compute: str, overlap_copies: bool, offload: PIMOffload | None) -> str:
    if task.executor == "copy":
        return f"copy.{task.direction}" if overlap_copies else compute
    if task.executor == "pim" and compute != "pim":
        return "pim" if offload is not None and not offload.host_waits else compute
    return task.executor


def assign_lanes(tasks: list[Task], preds: list[tuple[int, ...]], compute: str, streams: int,
                 overlap_copies: bool, offload: PIMOffload | None) -> list[tuple[str, int, list[Task]]]:
    """Lanes as (group, stream number, tasks in order); ``streams`` streams for the compute group."""
    lane_of: dict[int, tuple[str, int]] = {}
    last_op: dict[tuple[str, int], int] = {}
    last_use: dict[tuple[str, int], int] = {}
    lanes: dict[tuple[str, int], list[Task]] = {}
    for clock, t in enumerate(tasks):
        g = _group(t, compute, overlap_copies, offload)
        n = streams if g == compute else 1
        choice = None
        if n > 1:
            for p in preds[t.index]:
                lane = lane_of.get(p)
                if lane is not None and lane[0] == g and last_op.get(lane) == p:
                    choice = lane
                    break
            if choice is None:
                choice = min(((g, k) for k in range(n)), key=lambda ln: (last_use.get(ln, -1), ln[1]))
        else:
            choice = (g, 0)
        lane_of[t.index] = choice
        last_op[choice] = t.index
        last_use[choice] = clock
        lanes.setdefault(choice, []).append(t)
    return [(g, k, ts) for (g, k), ts in lanes.items()]


@dataclass(frozen=True)
class Bucket:
    """Gradients all-reduced together: the update ops waiting for them and the ops producing them."""

    updates: tuple[int, ...]
    sources: tuple[int, ...]
    nbytes: float
    seconds: float
    bytes_per_rank: float
    energy_j: float


def gradient_buckets(tasks: list[Task], preds: list[tuple[int, ...]], dp: DataParallel,
                     link: Any) -> list[Bucket]:
    """DDP buckets in gradient-ready order (last update op first), each with its ring all-reduce time."""
    updates = [t for t in tasks if t.op.kind == "optimizer"]
    if not updates:
        raise EngineError("data_parallel needs a training graph with optimizer update ops (see training_step)")
    cap = math.inf if dp.bucket_bytes is None else float(dp.bucket_bytes)
    groups: list[list[Task]] = [[]]
    size = 0.0
    for t in reversed(updates):
        nbytes = t.op.params * t.op.dtype.bytes
        if groups[-1] and size + nbytes > cap:
            groups.append([])
            size = 0.0
        groups[-1].append(t)
        size += nbytes
    bw = link.bandwidth_bytes_per_s * link.efficiency
    out = []
    for grp in groups:
        nbytes = float(sum(t.op.params * t.op.dtype.bytes for t in grp))
        sources = sorted({p for t in grp for p in preds[t.index]})
        per_rank = ring_allreduce_bytes_per_rank(nbytes, dp.gpus)
        out.append(Bucket(tuple(t.index for t in grp), tuple(sources), nbytes,
                          ring_allreduce_s(nbytes, dp.gpus, bw, link.latency_s), per_rank,
                          per_rank * dp.gpus * link.energy_j_per_byte))
    return out


def loader_seconds(loader: Any, coster: Coster, hw: HardwareView) -> float:
    """Seconds one worker takes to prepare one batch (on one host core)."""
    if loader.seconds_per_sample is not None:
        return loader.batch * float(loader.seconds_per_sample)
    cost = coster.cost(loader.preprocess, options=CostOptions(device="host", threads=1),
                       target=("host", hw.host))
    return loader.batch * cost.latency_s
