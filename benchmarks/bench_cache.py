"""Accesses per second of archsim's cache simulator beside pycachesim, on the same hierarchy.

A 3-level LRU write-back hierarchy (L1 32 KiB 8-way, L2 1 MiB 8-way, L3 32 MiB 16-way, 64 B lines,
the data caches of this machine's AMD EPYC Zen 4 core) runs a streaming trace (8-byte loads at
consecutive addresses) and a random trace (8-byte loads uniform over 256 MiB), 1e7 accesses each.
Both simulators get the whole trace in one call: archsim a numpy array, pycachesim a Python list
(its fastest input; the list is built outside the timed region). Medians of ``--repeats`` runs,
interleaved, with the load average before and after. No simulator is compiled inside the timing.

Run: ``python benchmarks/bench_cache.py [--n 10000000] [--repeats 5]``
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np

from archsim.microarch.cache import CacheLevelConfig, CacheSimulator, HierarchyConfig

LEVELS = ((32 * 1024, 8), (1024 * 1024, 8), (32 * 1024 * 1024, 16))
LINE = 64


def archsim_config() -> HierarchyConfig:
    names = ("l1d", "l2", "l3")
    return HierarchyConfig(tuple(
        CacheLevelConfig(n, size, ways, LINE, shared=(n == "l3"))
        for n, (size, ways) in zip(names, LEVELS, strict=True)
    ))


def pycachesim_sim():
    import cachesim

    mem = cachesim.MainMemory()
    caches = []
    below = None
    for i, (size, ways) in reversed(list(enumerate(LEVELS))):
        sets = size // (ways * LINE)
        kw = {} if below is None else {"store_to": below, "load_from": below}
        c = cachesim.Cache(f"L{i + 1}", sets, ways, LINE, "LRU", **kw)
        if below is None:
            mem.load_to(c)
            mem.store_from(c)
        caches.append(c)
        below = c
    return cachesim.CacheSimulator(below, mem)


def traces(n: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(42)
    return {
        "streaming": np.arange(n, dtype=np.int64) * 8,
        "random": rng.integers(0, (256 << 20) // 8, n, dtype=np.int64) * 8,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10_000_000)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    try:
        import cachesim  # noqa: F401
        have_peer = True
    except ImportError:
        have_peer = False
    cfg = archsim_config()
    CacheSimulator(cfg).run(np.arange(64, dtype=np.int64))  # compile (or load the cached code)
    load_before = os.getloadavg()
    print(f"load average before: {load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f}")
    print(f"{'trace':<10} {'archsim M acc/s':>16} {'pycachesim M acc/s':>19} {'ratio':>6}"
          f"  (median of {args.repeats})")
    for name, trace in traces(args.n).items():
        as_list = trace.tolist() if have_peer else None
        ours, peer = [], []
        l1_ours = l1_peer = None
        for _ in range(args.repeats):
            sim = CacheSimulator(cfg)
            t0 = time.perf_counter_ns()
            sim.run(trace, 8, False)
            ours.append(args.n / ((time.perf_counter_ns() - t0) * 1e-9))
            l1_ours = sim.stats().levels[0].misses
            if have_peer:
                ps = pycachesim_sim()
                t0 = time.perf_counter_ns()
                ps.load(as_list, length=8)
                peer.append(args.n / ((time.perf_counter_ns() - t0) * 1e-9))
                l1_peer = next(iter(ps.stats()))["MISS_count"]
        mo = statistics.median(ours) / 1e6
        if have_peer:
            mp = statistics.median(peer) / 1e6
            print(f"{name:<10} {mo:>16.1f} {mp:>19.1f} {mo / mp:>6.2f}  (L1 misses {l1_ours} vs {l1_peer})")
        else:
            print(f"{name:<10} {mo:>16.1f} {'(not installed)':>19}")
    load_after = os.getloadavg()
    print(f"load average after: {load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f}")


if __name__ == "__main__":
    main()
