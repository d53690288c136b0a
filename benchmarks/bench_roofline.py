"""Speed of the roofline engine: one ResNet-50 estimate, a lone GEMM, estimate_many, a big sweep.

``python benchmarks/bench_roofline.py [--points N] [--big-points M] [--batch B] [--repeats R]``
prints, side by side, the median wall and CPU time over ``R`` repeats of

* a single full ResNet-50 (fp16) ``estimate`` on the V100 preset (target <= 5 ms);
* a lone 4096^3 fp16 GEMM ``estimate`` on the V100 (target <= 0.3 ms; GenZ takes 0.25-0.55 ms);
* ``estimate_many`` over ``N`` V100 variants, as op-evaluations per second (ops x points / time;
  target >= 1e7), the points already validated, beside a minimal numpy roofline over the same ops
  and points (per op and point ``max(flop / peak, compulsory bytes / bandwidth)``, summed);
* the same ``estimate_many`` after :func:`archsim.keep_freed_memory` (glibc keeps freed memory for
  reuse), with the minor page faults per call before and after;
* a sweep engineer's ``M``-point inference sweep (target < 10 s) including building and
  validating each hardware point (one run: it is long).

Hardware points vary the V100 preset's DRAM bandwidth, SM count and clock. The machine load
(1-minute load average / cores) is printed with the figures: on a shared machine the wall time
is inflated by other processes, the CPU time much less. Nothing here is asserted.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

import archsim  # noqa: E402
import archsim.presets as presets  # noqa: E402
from archsim.engines import estimate, estimate_many  # noqa: E402
from archsim.workload import zoo  # noqa: E402
from archsim.workload.ops import Gemm  # noqa: E402


def points(n: int) -> list:
    """``n`` V100 variants (DRAM bandwidth, SM count, clock on a grid), validated once each."""
    base = presets.load_preset("gpu/v100-sxm2-16gb")
    dump = base.model_dump()
    rng = np.random.default_rng(0)
    out = []
    for _ in range(n):
        d = {**dump, "sm_count": int(rng.integers(40, 161)), "clock": f"{rng.uniform(1.0, 2.0):.3f} GHz",
             "dram": {**dump["dram"], "bandwidth": f"{rng.uniform(300, 899):.1f} GB/s"}}
        out.append(presets.validate_hardware(d))
    return out


def numpy_roofline(graph, peak_flop_per_s: np.ndarray, bandwidth: np.ndarray) -> np.ndarray:
    """The reference: latency per point of the ops' max(flop / peak, compulsory bytes / bandwidth)."""
    flop = np.asarray([float(op.flop()) for op in graph.ops])
    nbytes = np.asarray([float(op.min_bytes()) for op in graph.ops])
    return np.maximum(np.outer(flop, 1.0 / peak_flop_per_s), np.outer(nbytes, 1.0 / bandwidth)).sum(axis=0)


def _timed(fn, repeats: int) -> tuple[float, float]:
    """Median wall and CPU seconds of ``repeats`` calls of ``fn``."""
    wall, cpu = [], []
    for _ in range(repeats):
        w0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - w0)
        cpu.append(time.process_time() - c0)
    return statistics.median(wall), statistics.median(cpu)


def _faults_per_call(fn, repeats: int) -> float:
    """Median minor page faults of ``repeats`` calls of ``fn`` (getrusage)."""
    counts = []
    for _ in range(repeats):
        f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        fn()
        counts.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0)
    return statistics.median(counts)


def _load() -> str:
    load1 = os.getloadavg()[0]
    cores = os.cpu_count() or 1
    return f"load average {load1:.2f} on {cores} cores ({load1 / cores:.2f} per core)"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--points", type=int, default=1000)
    ap.add_argument("--big-points", type=int, default=10000, help="0 skips the big sweep")
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args(argv)
    graph = zoo.resnet50(batch=args.batch, dtype="fp16")
    n_ops = len(graph.ops)
    hw = presets.load_preset("gpu/v100-sxm2-16gb")
    estimate(graph, hw)  # warm imports
    print(f"resnet50 batch {args.batch} fp16: {n_ops} ops; {_load()} at start")
    rows = []
    w, c = _timed(lambda: estimate(graph, hw), args.repeats)
    rows.append(("single estimate (V100)", w, c, f"{w * 1e3:.1f} ms wall, {c * 1e3:.1f} ms CPU", "<= 5 ms"))
    gemm = Gemm(4096, 4096, 4096, dtype="fp16")
    estimate(gemm, hw)
    w, c = _timed(lambda: [estimate(gemm, hw) for _ in range(20)], args.repeats)
    rows.append(("lone GEMM 4096^3 fp16 (V100)", w / 20, c / 20, f"{w / 20 * 1e3:.2f} ms wall", "<= 0.3 ms"))
    pts = points(args.points)
    estimate_many(graph, pts[:2])
    w, c = _timed(lambda: estimate_many(graph, pts), args.repeats)
    evals = n_ops * len(pts)
    rows.append((f"estimate_many, {len(pts)} points", w, c,
                 f"{evals / w:.3g} wall, {evals / c:.3g} CPU op-evaluations/s", ">= 1e7 /s"))
    peak = np.asarray([h.tensor_core.flop_per_cycle_per_sm["fp16"] * h.sm_count * h.clock_hz for h in pts])
    bw = np.asarray([h.dram.bandwidth_bytes_per_s for h in pts])
    w, c = _timed(lambda: numpy_roofline(graph, peak, bw), args.repeats)
    rows.append((f"  numpy roofline reference, {len(pts)} points", w, c,
                 f"{evals / w:.3g} wall op-evaluations/s", "reference"))
    # The same estimate_many after archsim.keep_freed_memory() (glibc keeps freed memory for reuse:
    # what the sweep workers and `archsim sweep` run with); it cannot be undone, so it comes last
    # but for the big sweep. Minor page faults per call beside both.
    faults = _faults_per_call(lambda: estimate_many(graph, pts), args.repeats)
    archsim.keep_freed_memory()
    estimate_many(graph, pts)
    w, c = _timed(lambda: estimate_many(graph, pts), args.repeats)
    rows.append(("  the same after keep_freed_memory()", w, c,
                 f"{evals / w:.3g} wall op-evaluations/s; page faults {faults:.0f} -> "
                 f"{_faults_per_call(lambda: estimate_many(graph, pts), args.repeats):.0f} a call", ">= 1e7 /s"))
    if args.big_points:
        w0, c0 = time.perf_counter(), time.process_time()
        big = points(args.big_points)
        w1 = time.perf_counter()
        frame = estimate_many(graph, big)
        w2, c2 = time.perf_counter(), time.process_time()
        rows.append((f"{args.big_points}-point sweep incl. validation", w2 - w0, c2 - c0,
                     f"validate {w1 - w0:.2f} s + estimate {w2 - w1:.2f} s wall (1 run)", "< 10 s"))
        lat = frame.latency_s
        print(f"latency range over the {args.big_points}-point sweep: {lat.min() * 1e3:.2f} .. "
              f"{lat.max() * 1e3:.2f} ms")
    print(f"{'case':40s} {'wall s':>9s} {'CPU s':>9s}  {'figure':58s} target")
    for name, wall, cpu, figure, target in rows:
        print(f"{name:40s} {wall:9.4f} {cpu:9.4f}  {figure:58s} {target}")
    print(f"medians of {args.repeats} repeats (big sweep: 1 run); {_load()} at end")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
