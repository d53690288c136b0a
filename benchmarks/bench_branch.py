"""Branches per second of archsim's branch predictors (gshare is the target: >= 50 M/s).

Trace: 1e7 conditional branches from 64 static branches (pc = 4 x id), outcomes from a biased coin
(70% taken) so that the tables are exercised. Median of ``--repeats`` runs, after one run that
compiles or loads the cached code; the load average is printed before and after.

Run: ``python benchmarks/bench_branch.py [--n 10000000] [--repeats 5]``
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np

from archsim.microarch.branch import KINDS, BranchSimulator, PredictorConfig


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10_000_000)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    pc = rng.integers(0, 64, args.n, dtype=np.int64) * 4
    taken = rng.random(args.n) < 0.7
    backward = pc % 8 == 0
    la = os.getloadavg()
    print(f"load average before: {la[0]:.2f} {la[1]:.2f} {la[2]:.2f}")
    print(f"{'predictor':<11} {'M branches/s':>13} {'mispredict rate':>16}  (median of {args.repeats})")
    for kind in KINDS:
        cfg = PredictorConfig(kind=kind, history_bits=64 if kind == "tage" else 12)
        BranchSimulator(cfg).run(pc[:100], taken[:100], backward[:100])
        rates, sim = [], None
        for _ in range(args.repeats):
            sim = BranchSimulator(cfg)
            t0 = time.perf_counter_ns()
            sim.run(pc, taken, backward)
            rates.append(args.n / ((time.perf_counter_ns() - t0) * 1e-9))
        print(f"{kind:<11} {statistics.median(rates) / 1e6:>13.1f} {sim.stats().mispredict_rate:>16.3f}")
    la = os.getloadavg()
    print(f"load average after: {la[0]:.2f} {la[1]:.2f} {la[2]:.2f}")


if __name__ == "__main__":
    main()
