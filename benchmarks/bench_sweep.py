"""Speed of a roofline sweep: ResNet-50 inference over a grid of one GPU preset's variants.

    python benchmarks/bench_sweep.py                          # 1,024 points serial + 10,000 with 2 processes
    python benchmarks/bench_sweep.py --evaluator null         # the sweep machinery alone (no engine)
    python benchmarks/bench_sweep.py --big 1000000 --store /tmp/sweep-1m   # the 1M-point run (once: ~1-3 min)

Figures, each beside a reference measured in the same run on the same points and ops:

* serial sweep (``executor="serial"``, fresh axis values each repeat so no unit string is cached)
  as op-evaluations per second (ops x points / wall; target >= 5e6), beside a minimal numpy
  roofline (per op and point ``max(flop / peak, bytes / bandwidth)``, summed; what a sweep costs
  with no model at all); then the same after :func:`archsim.keep_freed_memory` (what ``archsim
  sweep`` and the sweep workers run with), with the minor page faults of each;
* a ``--points`` sweep with ``--workers`` local processes (issue 7's 10,000 points in < 10 s);
* with ``--big N``: one N-point sweep streamed to ``--store`` with ``--workers`` processes, its wall
  time (target < 60 s for 1M points on two processes) and the peak resident memory of this process
  and of the largest worker (getrusage; target < 2 GiB).

Medians of ``--repeats`` runs, the old and the reference interleaved; CPU time (this process and
its reaped workers, getrusage) is printed beside the wall time since a loaded machine inflates the
wall time far more. The 1-minute load average is printed before and after. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import math
import os
import resource
import shutil
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import archsim  # noqa: E402
from archsim.sweep import Sweep  # noqa: E402


@dataclass(frozen=True)
class NullEvaluator:
    """Returns the DRAM bandwidth as the only metric: what remains is point building, validation,
    keys, chunking, the executor and the table."""

    key: str = "null"

    def __call__(self, work, hardware):
        return [{"latency_s": 1.0 / hw.dram.bandwidth_bytes_per_s} for hw in hardware]


def _cpu_s() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)  # the pool's workers, once joined
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _load() -> str:
    load1 = os.getloadavg()[0]
    return f"load average {load1:.2f} on {os.cpu_count()} cores"


def numpy_roofline(graph, peak_flop_per_s: np.ndarray, bandwidth: np.ndarray) -> np.ndarray:
    """The reference: latency per point of the ops' max(flop / peak, compulsory bytes / bandwidth)."""
    flop = np.asarray([float(op.flop()) for op in graph.ops])
    nbytes = np.asarray([float(op.min_bytes()) for op in graph.ops])
    return np.maximum(np.outer(flop, 1.0 / peak_flop_per_s), np.outer(nbytes, 1.0 / bandwidth)).sum(axis=0)


def _axes(bw: float, sms: int, side: int, shift: float, n_sm: int | None = None) -> dict:
    # Bandwidths up to the preset's own (higher ones exceed the pins' wire rate and are invalid);
    # SM counts from a quarter to all of them (``n_sm`` of them, ``side`` by default). ``shift``
    # moves the bandwidths so that every repeat parses new strings.
    return {"gpu.dram.bandwidth": {"from": f"{bw / (4.0 + shift)!r} B/s", "to": f"{bw!r} B/s", "num": side},
            "gpu.sm_count": {"from": max(1, sms // 4), "to": sms, "num": n_sm or side}}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="gpu/h100-sxm5-80gb")
    parser.add_argument("--serial-side", type=int, default=32, help="serial sweep: points = side^2")
    parser.add_argument("--points", type=int, default=10000, help="process sweep points (0 skips)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--evaluator", default="engine", choices=["engine", "null"])
    parser.add_argument("--big", type=int, default=0, help="points of one streamed sweep (1000000 for the target)")
    parser.add_argument("--store", default="", help="directory for --big (deleted first)")
    args = parser.parse_args()

    hw = archsim.load_preset(args.preset)
    bw, sms = hw.dram.bandwidth_bytes_per_s, hw.sm_count
    graph = archsim.zoo.resnet50(batch=1, dtype="fp16")
    n_ops = len(graph.ops)
    work, evaluator = (graph, None) if args.evaluator == "engine" else ((1.0, 1.0), NullEvaluator())
    print(f"preset {args.preset}, ResNet-50 batch 1 fp16 ({n_ops} ops), evaluator {args.evaluator}; "
          f"{_load()} at start")
    peak = hw.tensor_core.flop_per_cycle_per_sm["fp16"] * hw.clock_hz

    # 1. serial, beside the numpy reference on the same points; then again after
    # archsim.keep_freed_memory() (glibc keeps freed memory: what `archsim sweep` and the sweep
    # workers do; it cannot be undone in this process, so it comes second).
    side = args.serial_side
    n = side * side
    Sweep(hw, _axes(bw, sms, side, 0.0)).run(work, executor="serial", evaluator=evaluator, progress=False)
    evals = n * n_ops
    med = statistics.median
    for label, shift in (("", 0.0), (" after archsim.keep_freed_memory()", 0.5)):
        if shift:
            archsim.keep_freed_memory()
        sweep_s, sweep_cpu, ref_s, faults = [], [], [], []
        for r in range(args.repeats):
            sweep = Sweep(hw, _axes(bw, sms, side, shift + 0.01 * (r + 1)))
            f0, c0, t0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt, _cpu_s(), time.perf_counter()
            sweep.run(work, executor="serial", evaluator=evaluator, progress=False)
            sweep_s.append(time.perf_counter() - t0)
            sweep_cpu.append(_cpu_s() - c0)
            faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0)
            pts = sweep.points()
            t0 = time.perf_counter()
            numpy_roofline(graph, np.full(n, peak) * pts["gpu.sm_count"].to_numpy() / sms,
                           pts["gpu.dram.bandwidth_bytes_per_s"].to_numpy())
            ref_s.append(time.perf_counter() - t0)
        print(f"serial sweep{label}, {n} points: median {med(sweep_s):.3f} s wall, {med(sweep_cpu):.3f} s CPU, "
              f"{med(faults):.0f} minor page faults; {evals / med(sweep_s):.3g} op-evaluations/s (target >= 5e6)")
        print(f"  numpy roofline reference, same points: {med(ref_s) * 1e3:.2f} ms, {evals / med(ref_s):.3g} "
              f"op-evaluations/s; sweep / reference = {med(sweep_s) / med(ref_s):.0f}x")

    # 2. the process sweep.
    if args.points:
        side2 = math.isqrt(args.points)
        times, cpu = [], []
        for r in range(max(1, args.repeats // 2)):
            sweep = Sweep(hw, _axes(bw, sms, side2, 0.01 * (r + 1)))
            c0, t0 = _cpu_s(), time.perf_counter()
            table = sweep.run(work, executor="processes", workers=args.workers, evaluator=evaluator,
                              progress=False)
            times.append(time.perf_counter() - t0)
            cpu.append(_cpu_s() - c0)
        ok = int((table.drop_duplicates("point")["status"] == "ok").sum())
        m = med(times)
        print(f"{len(sweep)}-point sweep ({ok} valid), {args.workers} processes: median {m:.3f} s wall "
              f"(min {min(times):.3f}), {med(cpu):.3f} s CPU; {len(sweep) / m:,.0f} points/s, "
              f"{len(sweep) * n_ops / m:.3g} op-evaluations/s (target < 10 s)")

    # 3. the big streamed sweep (one run).
    if args.big:
        if not args.store:
            parser.error("--big needs --store DIR")
        store = Path(args.store)
        shutil.rmtree(store, ignore_errors=True)
        # Every SM count from a quarter to all (distinct ints), bandwidths filling the rest.
        n_sm = sms - max(1, sms // 4) + 1
        sweep = Sweep(hw, _axes(bw, sms, max(1, args.big // n_sm), 0.5, n_sm))
        c0, t0 = _cpu_s(), time.perf_counter()
        table = sweep.run(work, executor="processes", workers=args.workers, evaluator=evaluator,
                          metrics=["latency_s", "energy_j"], store=store, progress=False)
        wall = time.perf_counter() - t0
        own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # KiB -> GiB (Linux)
        child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 2**20
        print(f"{len(sweep)}-point sweep streamed to {store}, {args.workers} processes: {wall:.1f} s wall, "
              f"{_cpu_s() - c0:.1f} s CPU, {len(sweep) * n_ops / wall:.3g} op-evaluations/s (target < 60 s); "
              f"peak RSS {own:.2f} GiB here, {child:.2f} GiB largest worker (target < 2 GiB); "
              f"{len(table)} table rows")
    print(f"{_load()} at end")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
