"""Cheap deterministic evaluators for the sweep tests (picklable: module-level classes)."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

from archsim.errors import EngineError


@dataclass(frozen=True)
class ToyEvaluator:
    """latency = flop / (sm_count x clock x 128 FLOP/cycle) + bytes / DRAM bandwidth; energy grows with SMs.

    ``work`` is a (flop, bytes) pair. Optionally sleeps per point and appends each evaluated point
    to ``log`` (for the resume tests), and refuses points with fewer SMs than ``refuse_below``.
    """

    key: str = "toy-v1"
    sleep_s: float = 0.0
    log: str | None = None
    refuse_below: int = 0

    def __call__(self, work, hardware):
        flop, nbytes = work
        rows = []
        for hw in hardware:
            if hw.sm_count < self.refuse_below:
                raise EngineError(f"toy engine refuses sm_count {hw.sm_count}")
            if self.sleep_s:
                time.sleep(self.sleep_s)
            if self.log:
                with open(self.log, "a") as fh:
                    fh.write(f"{hw.dram.bandwidth_bytes_per_s!r},{hw.sm_count}\n")
                    fh.flush()
                    os.fsync(fh.fileno())
            compute_s = flop / (hw.sm_count * hw.clock_hz * 128)
            memory_s = nbytes / hw.dram.bandwidth_bytes_per_s
            rows.append({
                "latency_s": compute_s + memory_s,
                "energy_j": 1e-12 * flop + 3e-11 * nbytes + 0.5 * hw.sm_count * (compute_s + memory_s),
                "echo_bandwidth": hw.dram.bandwidth_bytes_per_s,
                "echo_sm_count": float(hw.sm_count),
            })
        return rows


def toy_workload(batch: int = 1, scale: float = 1.0):
    """A workload factory: (flop, bytes) growing with the batch."""
    return (2e9 * batch * scale, 1e8 + 1e6 * batch)


@dataclass(frozen=True)
class PidEvaluator:
    """Appends the evaluating process's pid to ``log`` and sleeps: shows which processes ran points."""

    log: str
    key: str = "pid-v1"
    sleep_s: float = 0.05

    def __call__(self, work, hardware):
        rows = []
        for hw in hardware:
            with open(self.log, "a") as fh:
                fh.write(f"{os.getpid()}\n")
            time.sleep(self.sleep_s)
            rows.append({"latency_s": 1.0 / hw.sm_count, "energy_j": float(hw.sm_count)})
        return rows
