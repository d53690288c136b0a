"""Speed of a roofline sweep: ResNet-50 inference over 10,000 points of one GPU preset.

    python benchmarks/bench_sweep.py                     # the real roofline engine, 2 workers
    python benchmarks/bench_sweep.py --evaluator null    # the sweep machinery alone (no engine)

Target (issue 7): < 10 s for 10,000 points on 2 cores. Prints the median wall time of the repeats,
points per second and the machine load (os.getloadavg) before and after, since a loaded machine
slows every figure. It also prints the CPU time of each run (this process and its reaped worker
processes, getrusage), which a busy machine inflates far less than the wall time.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="gpu/h100-sxm5-80gb")
    parser.add_argument("--side", type=int, default=100, help="levels per axis (points = side^2)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--executor", default="processes", choices=["serial", "processes"])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--evaluator", default="engine", choices=["engine", "null"])
    args = parser.parse_args()

    hw = archsim.load_preset(args.preset)
    bw = hw.dram.bandwidth_bytes_per_s
    sms = hw.sm_count
    # Bandwidths up to the preset's own (higher ones exceed the pins' wire rate and are invalid);
    # SM counts from a quarter to all of them.
    axes = {"gpu.dram.bandwidth": {"from": f"{bw / 4!r} B/s", "to": f"{bw!r} B/s", "num": args.side},
            "gpu.sm_count": {"from": max(1, sms // 4), "to": sms, "num": args.side}}
    sweep = Sweep(hw, axes)
    if args.evaluator == "engine":
        work = archsim.zoo.resnet50(batch=1, dtype="fp16")
        evaluator = None
    else:
        work, evaluator = (1.0, 1.0), NullEvaluator()
    load_before = os.getloadavg()
    times, cpu = [], []
    for _ in range(args.repeats):
        c0 = _cpu_s()
        t0 = time.perf_counter()
        table = sweep.run(work, engine="roofline", executor=args.executor, workers=args.workers,
                          evaluator=evaluator, progress=False)
        times.append(time.perf_counter() - t0)
        cpu.append(_cpu_s() - c0)
    load_after = os.getloadavg()
    n = len(sweep)
    ok = int((table.drop_duplicates("point")["status"] == "ok").sum())
    median = statistics.median(times)
    print(f"preset {args.preset}, {n} points ({ok} valid), evaluator {args.evaluator}, "
          f"executor {args.executor} x {args.workers}, cpus {os.cpu_count()}")
    print(f"median {median:.3f} s over {args.repeats} runs (min {min(times):.3f}, max {max(times):.3f}); "
          f"{n / median:,.0f} points/s")
    print(f"CPU time median {statistics.median(cpu):.3f} s per run (all processes)")
    print(f"load average before {load_before[0]:.2f}, after {load_after[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
