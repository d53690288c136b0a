"""From ops to tasks: each op costed once by the shared cost function, then cut into timed pieces.

A :class:`Task` is what the simulator executes for one op: a fixed part (the op's named overheads:
kernel launch, pipeline fill, dispatch, link latency), which holds its stream but no shared
resource, then a kernel part that holds compute slots and draws from a shared bandwidth. The two
parts add up to the op's roofline latency exactly, so with no contention the engines agree.

GPU kernels are cut into **thread-block waves** (never one event per block, warp or instruction):
a kernel of ``B`` blocks with ``b`` resident blocks per SM on ``S`` SMs runs
``W = ceil(B / (S b))`` waves. Its full waves form one segment holding every thread-block slot;
the last, partial wave (the tail) is a second segment holding only the slots its blocks need, so a
kernel on another stream can start beside it (the tail effect). A block of a kernel with ``b``
blocks per SM holds ``max_blocks / b`` of an SM's ``max_blocks`` slots. Each wave takes the same
time (``kernel_s / W``): exact for tile-quantised GEMMs, within ``1 / W`` for streaming kernels.
Kernels without a block count (fused attention, Winograd convolutions) hold the whole GPU.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import operator
from dataclasses import dataclass, field
from typing import Any

from archsim.cost import (
    CostOptions,
    OpCost,
    host_dispatch_s,
    host_launch_s,
    op_cost_arrays,
    resolve_device,
    role_params,
    software_efficiency,
)
from archsim.errors import EngineError

__all__ = ["Task", "Coster", "gpu_segments", "dynamic_energy"]


@dataclass(slots=True)
class Task:
    """One op as the simulator runs it (times in s, bytes in B, energies in J).

    Attributes:
        index: position of the op in the workload.
        op: the op.
        executor: ``"gpu"``, ``"host"``, ``"copy"`` or ``"pim"``.
        cost: the op's :class:`~archsim.cost.types.OpCost` (solo).
        fixed_s: overheads (no shared resource held).
        kernel_s: the rest of the solo latency.
        shared_bytes: bytes drawn from the shared bandwidth (DRAM for kernels, the link for copies).
        demand_bytes_per_s: ``shared_bytes / kernel_s``.
        segments: GPU waves as (solo seconds, thread-block slots held).
        threads: host cores held (host ops).
        direction: ``"h2d"`` or ``"d2h"`` for copies.
        pre / post: for an offloaded op, the transfers of its inputs to and outputs from the PIM.
        dynamic_j: energy by component without static power.
    """

    index: int
    op: Any
    executor: str
    cost: OpCost
    fixed_s: float
    kernel_s: float
    shared_bytes: float
    demand_bytes_per_s: float
    dynamic_j: dict[str, float]
    segments: tuple[tuple[float, float], ...] = ()
    threads: float = 1.0
    direction: str = ""
    pre: Task | None = None
    post: Task | None = None
    label: str = field(default="")

    @property
    def latency_s(self) -> float:
        """Solo latency (fixed + kernel; for an offloaded op, with its transfers)."""
        extra = sum(t.latency_s for t in (self.pre, self.post) if t is not None)
        return self.fixed_s + self.kernel_s + extra


def dynamic_energy(cost: OpCost) -> dict[str, float]:
    """The op's energy by component without the static part (static power is charged per run)."""
    return {k: v for k, v in cost.energy_breakdown_j.items() if k != "static"}


def gpu_segments(kernel_s: float, extra: dict[str, float], sm_count: int, max_blocks: int) -> tuple[
        tuple[float, int], ...]:
    """The wave segments of a GPU kernel: ``((seconds, slots), ...)``, seconds summing to ``kernel_s``.

    Slots are whole thread-block slots (rounded up), at most ``sm_count x max_blocks``.
    """
    all_slots = sm_count * max_blocks
    blocks = extra.get("blocks", math.nan)
    bps = extra.get("blocks_per_sm", math.nan)
    if kernel_s <= 0.0:
        return ()
    if not (math.isfinite(blocks) and math.isfinite(bps) and blocks >= 1 and bps >= 1):
        return ((kernel_s, all_slots),)
    per_wave = sm_count * bps
    waves = math.ceil(blocks / per_wave)

    def slots(n_blocks: float) -> int:
        return min(all_slots, max(1, math.ceil(n_blocks * max_blocks / bps - 1e-9)))

    if waves <= 1:
        return ((kernel_s, slots(blocks)),)
    wave_s = kernel_s / waves
    return ((kernel_s - wave_s, all_slots), (wave_s, slots(blocks - (waves - 1) * per_wave)))


def _op_key(op: Any) -> tuple[Any, ...]:
    """Identity of an op's cost: its type and every field but its name, phase and fused member names."""
    cls = type(op)
    return (cls, _cost_fields(cls)(op))


@functools.lru_cache(maxsize=256)
def _cost_fields(cls: type) -> Any:
    """A getter of an op class's dataclass field values but name, phase and fused, as a tuple (the names
    are fixed by the class, which leads the key): ``dataclasses.fields`` per op costs 5 us."""
    names = [f.name for f in dataclasses.fields(cls) if f.name not in ("name", "phase", "fused")]
    getter = operator.attrgetter(*names)
    return getter if len(names) > 1 else (lambda op: (getter(op),))


class Coster:
    """Costs ops on one piece of hardware with the shared cost function, once per distinct op."""

    def __init__(self, hardware: Any, options: CostOptions) -> None:
        self.hardware = hardware
        self.options = options
        self._params: dict[str, Any] = {}
        self._cache: dict[tuple[Any, ...], Any] = {}
        self._solo: dict[tuple[Any, ...], OpCost] = {}

    def _pack(self, role: str, dev: Any, opts: CostOptions) -> Any:
        host = (host_dispatch_s(self.hardware, opts), host_launch_s(self.hardware, opts)) if role == "gpu" else ()
        pkey = f"{role}:{id(dev)}:{host}"
        if pkey not in self._params:
            self._params[pkey] = role_params(role, [self.hardware], [dev], opts)
        return self._params[pkey]

    def prefetch(self, ops: Any) -> None:
        """Cost the distinct GPU ops of ``ops`` (on their default device) in one stacked pass.

        :func:`archsim.cost.gpu_batch.governed_many` gives the one-op path's floats to the last bit
        (``tests/unit/test_gpu_batch.py``) for a fraction of its per-op Python overhead: a
        ResNet-50 training step has ~160 distinct ops. Later :meth:`cost` calls find them cached.
        """
        from archsim.cost import gpu_batch

        opts = self.options
        todo: dict[tuple[Any, ...], Any] = {}
        dev = None
        for op in ops:
            role, target = resolve_device(self.hardware, op.kind, opts)
            if role != "gpu":
                continue
            dev = target
            key = (_op_key(op), role, id(target), opts)
            if key not in self._cache:
                todo.setdefault(key, op)
        if todo:
            ops_todo = list(todo.values())
            params = self._pack("gpu", dev, opts)
            costs = gpu_batch.governed_many(ops_todo, params)
            self._cache.update(zip(todo, (software_efficiency(op, "gpu", c, opts)
                                          for op, c in zip(ops_todo, costs, strict=True)), strict=True))

    def cost(self, op: Any, options: CostOptions | None = None, target: tuple[str, Any] | None = None) -> OpCost:
        """The :class:`OpCost` of ``op`` (on ``target`` = (role, device) when given)."""
        opts = options or self.options
        role, dev = target if target is not None else resolve_device(self.hardware, op.kind, opts)
        key = (_op_key(op), role, id(dev), opts)
        solo = self._solo.get(key)
        if solo is None:
            arrays = self._cache.get(key)
            if arrays is None:
                plain = op_cost_arrays(op, role, [dev], opts, self._pack(role, dev, opts))
                arrays = software_efficiency(op, role, plain, opts)
                self._cache[key] = arrays
            solo = self._solo[key] = arrays.at(0, "", "")
        # Equal ops share the floats and their (read-only) dicts; results copy the dicts per op.
        return dataclasses.replace(solo, name=op.label, phase=op.phase)


def split(cost: OpCost) -> tuple[float, float]:
    """(fixed, kernel) seconds of a solo latency: the named overheads, then the rest."""
    fixed = min(max(cost.overhead_s, 0.0), cost.latency_s)
    return fixed, cost.latency_s - fixed


def check_finite(cost: OpCost) -> None:
    """An op the device cannot run (no block fits an SM) has an infinite time: say so."""
    if not math.isfinite(cost.latency_s):
        raise EngineError(f"op {cost.name!r}: its cost on {cost.device} is not finite (it does not fit the device)")
