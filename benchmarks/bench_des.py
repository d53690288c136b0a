"""Speed of the discrete-event engine, measured side by side with bare SimPy on the same machine.

Figures (medians of interleaved repetitions, so a change of machine load hits both sides alike):

1. events per second: bare SimPy (100 processes, each yielding 2000 ``env.timeout``) against the
   engine's simulation phase (``DESRun.simulate`` after ``prepare_des``) on an 8-GPU
   data-parallel ResNet-50 training step; target >= 80% of SimPy's rate (the median of the
   per-pair ratios, in wall time, and the same pairs in CPU time, which a busy machine disturbs less);
2. wall time of ``estimate(..., engine="des")`` for a ResNet-50 training step (forward, backward,
   update, ~500 ops) on one A100 of a DGX A100 (target < 1 s) and data-parallel over its 8 GPUs
   (target < 5 s), costing included;
3. ``prepare_des`` (validation, costing and planning, no simulation) of the 8-GPU data-parallel
   step (target <= 50 ms).

Run: ``python benchmarks/bench_des.py [--repeats N]``. Prints the machine load (os.getloadavg()).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import simpy

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import archsim  # noqa: E402
from archsim import zoo  # noqa: E402
from archsim.engines import estimate  # noqa: E402
from archsim.engines.des import DataParallel, prepare_des  # noqa: E402


def bare_simpy_rate(processes: int = 100, timeouts: int = 2000) -> float:
    """Events per second of bare SimPy processes yielding timeouts."""
    env = simpy.Environment()

    def proc(env: simpy.Environment):
        for _ in range(timeouts):
            yield env.timeout(1.0)

    for _ in range(processes):
        env.process(proc(env))
    t0, c0 = time.perf_counter(), time.process_time()
    env.run()
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    events = next(env._eid)  # SimPy numbers every scheduled event with this counter
    return events / wall, events / cpu


def engine_rate(graph, hw, runs: int = 1) -> tuple[float, float, int]:
    """Events per second (wall, CPU) of the engine's simulation phase (planning and costing
    excluded), over ``runs`` prepared simulations (one by default: more live runs give the garbage
    collector more to scan), and the events per run."""
    prepared = [prepare_des(graph, hw, data_parallel=DataParallel(gpus=hw.gpu_count)) for _ in range(runs)]
    t0, c0 = time.perf_counter(), time.process_time()
    for run in prepared:
        run.simulate()
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    events = sum(run.events() for run in prepared)
    return events / wall, events / cpu, events // runs


def wall(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args(argv)
    hw = archsim.load_preset("system/dgx-a100")
    graph = zoo.resnet50(batch=256, dtype="fp16", training=True)
    print(f"workload: {graph.name}, {len(graph.ops)} ops; hardware: {hw.name}")
    print(f"load average before: {os.getloadavg()}")
    estimate(graph, hw, engine="des")  # warm imports and caches once
    bare, eng, one, eight, ratio, ratio_cpu, prep = [], [], [], [], [], [], []
    events = 0
    for _ in range(args.repeats):
        b, b_cpu = bare_simpy_rate()
        e, e_cpu, events = engine_rate(graph, hw)
        bare.append(b)
        eng.append(e)
        ratio.append(e / b)
        ratio_cpu.append(e_cpu / b_cpu)
        one.append(wall(lambda: estimate(graph, hw, engine="des")))
        eight.append(wall(lambda: estimate(graph, hw, engine="des", data_parallel=DataParallel(gpus=8))))
        prep.append(wall(lambda: prepare_des(graph, hw, data_parallel=DataParallel(gpus=8))))
    med = statistics.median
    print(f"bare SimPy timeouts:        {med(bare):12,.0f} events/s (median of {args.repeats})")
    print(f"engine (8-GPU DP step):     {med(eng):12,.0f} events/s, {events} events per run")
    q = statistics.quantiles(ratio, n=4) if len(ratio) > 1 else [ratio[0]] * 3
    print(f"engine / SimPy:             {med(ratio):12.2f}   (median of per-pair ratios, quartiles "
          f"{q[0]:.2f}-{q[2]:.2f}; target >= 0.80)")
    print(f"engine / SimPy, CPU time:   {med(ratio_cpu):12.2f}   (the same pairs timed by process_time)")
    print(f"ResNet-50 step, 1 GPU:      {med(one):12.3f} s wall (target < 1 s)")
    print(f"ResNet-50 step, 8 GPUs DP:  {med(eight):12.3f} s wall (target < 5 s)")
    print(f"prepare 8-GPU DP step:      {med(prep) * 1e3:12.1f} ms wall (target <= 50 ms)")
    print(f"load average after: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
