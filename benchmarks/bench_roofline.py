"""Speed of the roofline engine: one ResNet-50 estimate, and a 1,000-point sweep through estimate_many.

``python benchmarks/bench_roofline.py [--points N] [--batch B]`` prints op-evaluations per second
(ops x hardware points / wall time) of the vectorised sweep path and the time of a single full
ResNet-50 estimate (median of repeats). Hardware points vary the V100 preset's DRAM bandwidth, SM
count and clock; packing the points into parameter arrays is included in the sweep time.
Nothing here is asserted: the figures are printed.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

import archsim.presets as presets  # noqa: E402
from archsim.engines import estimate, estimate_many  # noqa: E402
from archsim.workload import zoo  # noqa: E402


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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--points", type=int, default=1000)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args(argv)
    graph = zoo.resnet50(batch=args.batch, dtype="fp16")
    hw = presets.load_preset("gpu/v100-sxm2-16gb")
    estimate(graph, hw)  # warm imports
    single = []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        estimate(graph, hw)
        single.append(time.perf_counter() - t0)
    pts = points(args.points)
    t0 = time.perf_counter()
    frame = estimate_many(graph, pts)
    sweep_s = time.perf_counter() - t0
    evals = len(graph.ops) * len(pts)
    print(f"resnet50 batch {args.batch} fp16: {len(graph.ops)} ops")
    print(f"single estimate (V100): median {statistics.median(single) * 1e3:.1f} ms over {args.repeats} runs")
    print(f"estimate_many: {len(pts)} points x {len(graph.ops)} ops = {evals} op-evaluations in {sweep_s:.3f} s "
          f"-> {evals / sweep_s:.3g} op-evaluations/s")
    print(f"latency range over the sweep: {frame.latency_s.min() * 1e3:.2f} .. {frame.latency_s.max() * 1e3:.2f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
