"""Timing loops: CUDA events around each GPU run, a monotonic clock around each CPU run.

GPU: after the checked run and a warm-up, timed runs are enqueued in batches behind a ``spin`` kernel
that keeps the GPU busy while the host enqueues ``event, run, event`` triples; the events therefore
bracket the kernel alone, not numba's ~10 us host-side launch cost (the approach of NVIDIA's nvbench
"blocking kernel"). Cold-cache cases rotate through buffer copies whose total exceeds twice the L2, or,
when that is too many copies, flush L2 with a write of twice its size between runs (outside the events).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from validation.stats import repetitions, rotation_sets

__all__ = ["TimingConfig", "QUICK", "FULL", "GpuTiming", "time_gpu", "time_cpu"]


@dataclass(frozen=True)
class TimingConfig:
    """How long and how often to time one case.

    Attributes:
        target_s: device time to spend on timed runs of one case.
        min_reps / max_reps: bounds on the number of timed runs.
        warmup: untimed runs after the checked run (the first run also compiled the kernel).
        batch: timed runs enqueued behind one spin kernel.
        max_sets: most buffer copies rotated for cold-cache cases.
        memory_budget_bytes: most device (or host) memory the copies may take.
    """

    target_s: float
    min_reps: int
    max_reps: int
    warmup: int = 3
    batch: int = 32
    max_sets: int = 64
    memory_budget_bytes: int = 8 << 30


QUICK = TimingConfig(target_s=0.03, min_reps=10, max_reps=100)
FULL = TimingConfig(target_s=0.15, min_reps=25, max_reps=400)


@dataclass(frozen=True)
class GpuTiming:
    """Per-run times and what the loop did, for the record."""

    times_s: list[float]
    sets: int
    flushed: bool
    enqueue_s: float
    gap_median_s: float


def time_gpu(
    run: Callable[[Any], Any],
    dev_inputs: dict[str, Any],
    backend: Any,
    cache_policy: str,
    working_set_bytes: int,
    l2_bytes: int,
    cfg: TimingConfig,
    spin_seconds: Callable[[float], None],
    flush: Callable[[], None],
) -> GpuTiming:
    """Warm up, size the loop, and return the event-timed durations of ``run``."""
    est_s, enq_s = [], []
    for _ in range(cfg.warmup):
        s, e = backend.event(), backend.event()
        t0 = time.perf_counter()
        s.record()
        run(dev_inputs)
        e.record()
        enq_s.append(time.perf_counter() - t0)
        backend.synchronize()
        est_s.append(backend.elapsed_s(s, e))
    estimate = float(np.median(est_s)) if est_s else 0.0
    enqueue = float(np.median(enq_s)) if enq_s else 0.0
    reps = repetitions(estimate, cfg.target_s, cfg.min_reps, cfg.max_reps)

    sets, flushed = [dev_inputs], False
    if cache_policy == "cold" and l2_bytes > 0:
        k, flushed = rotation_sets(working_set_bytes, l2_bytes, cfg.max_sets, cfg.memory_budget_bytes)
        sets += [backend.duplicate(dev_inputs) for _ in range(k - 1)]

    events = [(backend.event(), backend.event()) for _ in range(reps)]
    i = 0
    while i < reps:
        b = min(cfg.batch, reps - i)
        # Cover the host's enqueue time of the batch (plus flushes), with a margin for jitter.
        spin_seconds(min(0.05, 2.0 * b * enqueue + 1e-4))
        for j in range(i, i + b):
            if flushed:
                flush()
            s, e = events[j]
            s.record()
            run(sets[j % len(sets)])
            e.record()
        i += b
    backend.synchronize()
    times = [backend.elapsed_s(s, e) for s, e in events]
    gaps = [backend.elapsed_s(events[j][1], events[j + 1][0]) for j in range(reps - 1)]
    return GpuTiming(
        times_s=times,
        sets=len(sets),
        flushed=flushed,
        enqueue_s=enqueue,
        gap_median_s=float(np.median(gaps)) if gaps else 0.0,
    )


def time_cpu(
    run: Callable[[Any], Any],
    inputs: dict[str, np.ndarray],
    cache_policy: str,
    working_set_bytes: int,
    llc_bytes: int,
    cfg: TimingConfig,
) -> tuple[list[float], int]:
    """perf_counter_ns around each run (numba CPU kernels are synchronous); the first call compiles."""
    est = []
    for _ in range(max(1, cfg.warmup)):
        t0 = time.perf_counter_ns()
        run(inputs)
        est.append((time.perf_counter_ns() - t0) * 1e-9)
    reps = repetitions(float(np.median(est[1:] or est)), cfg.target_s, cfg.min_reps, cfg.max_reps)
    sets = [inputs]
    if cache_policy == "cold" and llc_bytes > 0:
        k, _ = rotation_sets(working_set_bytes, llc_bytes, cfg.max_sets, cfg.memory_budget_bytes)
        sets += [{key: v.copy() for key, v in inputs.items()} for _ in range(k - 1)]
    times = []
    for j in range(reps):
        inp = sets[j % len(sets)]
        t0 = time.perf_counter_ns()
        run(inp)
        times.append((time.perf_counter_ns() - t0) * 1e-9)
    return times, len(sets)


def spin_calibrated(backend: Any, spin_kernel: Any, scratch: Any) -> Callable[[float], None]:
    """A ``seconds -> None`` that enqueues the spin kernel for about that long (calibrated once here)."""
    iters = 20000
    s, e = backend.event(), backend.event()
    spin_kernel[1, 1](scratch, iters)  # compile
    backend.synchronize()
    s.record()
    spin_kernel[1, 1](scratch, iters)
    e.record()
    backend.synchronize()
    per_iter_s = max(backend.elapsed_s(s, e) / iters, 1e-10)

    def enqueue(seconds: float) -> None:
        spin_kernel[1, 1](scratch, max(1, math.ceil(seconds / per_iter_s)))

    return enqueue
