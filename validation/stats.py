"""Summary statistics and sizing rules of the timing loops (pure functions, no device).

Timings are summarised by the median and the interquartile range: kernel times have a long right tail
(preemption, clock changes, other tenants) that would drag a mean.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["TimingStats", "summarize", "repetitions", "rotation_sets"]


@dataclass(frozen=True)
class TimingStats:
    """Median and quartiles of repeated runs, in seconds."""

    median_s: float
    q1_s: float
    q3_s: float
    repeats: int

    @property
    def iqr_s(self) -> float:
        return self.q3_s - self.q1_s


def summarize(times_s: Sequence[float]) -> TimingStats:
    """Median and quartiles (numpy's linear interpolation) of ``times_s``; at least one time."""
    arr = np.asarray(times_s, dtype=np.float64)
    if arr.size == 0:
        raise ValueError("times_s: need at least one timing")
    if not np.all(np.isfinite(arr)) or np.any(arr < 0):
        raise ValueError("times_s: timings must be finite and non-negative")
    q1, med, q3 = np.percentile(arr, [25.0, 50.0, 75.0])
    return TimingStats(median_s=float(med), q1_s=float(q1), q3_s=float(q3), repeats=int(arr.size))


def repetitions(estimate_s: float, target_s: float, min_reps: int, max_reps: int) -> int:
    """How many timed runs fill ``target_s`` at ``estimate_s`` each, clamped to [min_reps, max_reps]."""
    if min_reps < 1 or max_reps < min_reps:
        raise ValueError(f"min_reps/max_reps: need 1 <= min_reps <= max_reps, got {min_reps}, {max_reps}")
    if estimate_s <= 0:
        return max_reps
    return int(min(max_reps, max(min_reps, math.ceil(target_s / estimate_s))))


def rotation_sets(
    working_set_bytes: int, cache_bytes: int, max_sets: int, memory_budget_bytes: int
) -> tuple[int, bool]:
    """Buffer sets to rotate so a run never finds its inputs in a cache of ``cache_bytes``.

    Successive runs cycle through ``k`` copies of the inputs; once ``k * working_set`` exceeds twice the
    cache, a run's inputs were evicted by the runs in between (LRU-like replacement). ``k`` is limited by
    ``max_sets`` and by the memory budget; when the limit stops short of twice the cache, the second value
    is True: the driver must flush the cache between runs (outside the timed region).

    Returns:
        (k, needs_flush)
    """
    if working_set_bytes <= 0 or cache_bytes < 0:
        raise ValueError("working_set_bytes must be > 0 and cache_bytes >= 0")
    needed = max(1, math.ceil(2 * cache_bytes / working_set_bytes) + 1) if cache_bytes else 1
    if working_set_bytes > 2 * cache_bytes:
        return 1, False
    affordable = max(1, memory_budget_bytes // working_set_bytes)
    k = int(min(needed, max_sets, affordable))
    return k, k * working_set_bytes <= 2 * cache_bytes
