"""Time the numba CPU validation kernels on this machine and write the measurements with provenance.

For each case of ``validation.kernels.cpu`` at ``--sizes``: build the inputs (seed 0), run once to
compile (numba, cached) and check the output against the numpy reference, run ``--warmup`` more
times, then time repetitions with ``time.perf_counter_ns`` until both ``--min-repeats`` and
``--min-time`` are reached (at most ``--max-repeats``). Each repetition reuses the same inputs, so
the data start where the previous run left them. Recorded per case: median, interquartile range,
min, repeats, and the 1-minute load average before and after.

Also, with ``--latency`` (machine characterisation, independent of the kernels): a pointer chase
(one pointer per 64 B line, lines in random order, one cycle through all of them) over working sets
from 16 KiB to 256 MiB, median and min of 7 passes per size: the load-to-use latency this guest
sees at each level (``latency_profile.csv``); and a TLB profile (``tlb_profile.csv``: independent
loads, one per page, over 16..16384 pages); and a set-conflict profile (``conflict_profile.csv``:
independent loads 64 B .. 8 KiB apart). ``validation/cpu_machine.py`` reads the first and last.
``--only-latency`` skips the kernels.

Run: ``python -m validation.cpu_measure --sizes full [--latency] [--out validation/data/cpu-epyc-genoa]``
"""

from __future__ import annotations

import argparse
import csv
import datetime
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

DEFAULT_OUT = Path(__file__).resolve().parent / "data" / "cpu-epyc-genoa"
CSV_FIELDS = ("name", "family", "params", "median_s", "iqr_s", "min_s", "repeats", "load1_before",
              "load1_after", "correct")


def _cases(sizes: str):
    import importlib
    import pkgutil

    import validation.kernels.cpu as pkg

    out = []
    for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda m: m.name):
        if not info.name.startswith("_"):
            out += importlib.import_module(f"validation.kernels.cpu.{info.name}").cases(sizes)
    return out


def _lscpu() -> dict[str, str]:
    try:
        text = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return {}
    keep = ("Model name", "CPU family", "Model", "Stepping", "CPU(s)", "Hypervisor vendor", "L1d cache",
            "L2 cache", "L3 cache", "BogoMIPS")
    out = {}
    for line in text.splitlines():
        k, _, v = line.partition(":")
        if k.strip() in keep:
            out[k.strip()] = v.strip()
    return out


def _git_commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True,
                              cwd=Path(__file__).resolve().parent).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def time_case(case, warmup: int, min_repeats: int, max_repeats: int, min_time_s: float) -> dict:
    inputs = case.make_inputs(0)
    out = case.run(inputs)  # compiles (or loads numba's cache): not timed
    ref = case.reference(case.make_inputs(0))
    correct = bool(np.allclose(out, ref, rtol=case.rtol, atol=0.0))
    for _ in range(warmup):
        case.run(inputs)
    load_before = os.getloadavg()[0]
    times: list[int] = []
    t_start = time.perf_counter_ns()
    while len(times) < max_repeats and (len(times) < min_repeats
                                        or time.perf_counter_ns() - t_start < min_time_s * 1e9):
        t0 = time.perf_counter_ns()
        case.run(inputs)
        times.append(time.perf_counter_ns() - t0)
    t = np.array(times) * 1e-9
    q1, med, q3 = np.percentile(t, [25, 50, 75])
    return {"name": case.name, "family": case.family, "params": json.dumps(case.params, sort_keys=True),
            "median_s": f"{med:.6e}", "iqr_s": f"{q3 - q1:.3e}", "min_s": f"{t.min():.6e}", "repeats": len(t),
            "load1_before": f"{load_before:.2f}", "load1_after": f"{os.getloadavg()[0]:.2f}",
            "correct": correct}


def latency_profile(sizes_bytes, passes: int = 7, steps: int = 2_000_000) -> list[dict]:
    """Dependent-load latency per working set: one pointer per line, lines in one random cycle."""
    from numba import njit

    @njit(cache=False)
    def chase(nxt, n):  # pragma: no cover - numba
        p = np.uint64(0)  # unsigned: no wrap-around check on the dependent path
        for _ in range(n):
            p = np.uint64(nxt[p])
        return p

    rng = np.random.default_rng(0)
    rows = []
    for size in sizes_bytes:
        lines = max(2, size // 64)
        perm = rng.permutation(lines)
        nxt = np.zeros(lines * 8, np.int64)
        nxt[perm * 8] = np.roll(perm, -1) * 8
        chase(nxt, min(lines, 10))
        chase(nxt, lines)  # touch every line once
        ns = []
        for _ in range(passes):
            t0 = time.perf_counter_ns()
            chase(nxt, steps)
            ns.append((time.perf_counter_ns() - t0) / steps)
        rows.append({"working_set_bytes": size, "latency_ns": f"{np.median(ns):.2f}",
                     "min_ns": f"{min(ns):.2f}", "load1": f"{os.getloadavg()[0]:.2f}"})
    return rows


def tlb_profile(page_counts, passes: int = 7, accesses: int = 4_000_000) -> list[dict]:
    """Independent loads, one per 4 KiB page, over ``pages`` pages in a fixed shuffled order.

    The line within each page rotates with the page number, so up to 512 pages the data stay in
    L1 and only the translations change level: the per-access time against the page count shows
    the cost of a first-level DTLB miss (past 72 pages) and of a page walk (past the L2 DTLB).
    """
    from numba import njit

    @njit(cache=False)
    def touch(x, order, reps):  # pragma: no cover - numba
        s = 0.0
        for _ in range(reps):
            for i in range(order.shape[0]):
                s += x[np.uint64(order[i])]
        return s

    rng = np.random.default_rng(1)
    rows = []
    for pages in page_counts:
        x = np.ones(pages * 512)
        pg = rng.permutation(pages)
        order = (pg * 512 + (pg % 64) * 8).astype(np.int64)
        reps = max(1, accesses // pages)
        touch(x, order, 1)
        ns = []
        for _ in range(passes):
            t0 = time.perf_counter_ns()
            touch(x, order, reps)
            ns.append((time.perf_counter_ns() - t0) / (reps * pages))
        rows.append({"pages": pages, "ns_per_access": f"{np.median(ns):.3f}", "min_ns": f"{min(ns):.3f}",
                     "load1": f"{os.getloadavg()[0]:.2f}"})
    return rows


def conflict_profile(strides_bytes, lines: int = 256, passes: int = 7, reps: int = 20_000) -> list[dict]:
    """Independent loads over ``lines`` lines ``stride`` bytes apart, repeated: with a 4 KiB stride
    every line falls into one L1 set (the i-j-k column walk), with 4 KiB + 64 B they spread."""
    from numba import njit

    @njit(cache=False)
    def touch(x, order, reps):  # pragma: no cover - numba
        s = 0.0
        for _ in range(reps):
            for i in range(order.shape[0]):
                s += x[np.uint64(order[i])]
        return s

    rows = []
    for stride in strides_bytes:
        order = (np.arange(lines) * (stride // 8)).astype(np.int64)
        x = np.ones(int(order[-1]) + 8)
        touch(x, order, 1)
        ns = []
        for _ in range(passes):
            t0 = time.perf_counter_ns()
            touch(x, order, reps)
            ns.append((time.perf_counter_ns() - t0) / (reps * lines))
        rows.append({"stride_bytes": stride, "lines": lines, "ns_per_access": f"{np.median(ns):.3f}",
                     "min_ns": f"{min(ns):.3f}", "load1": f"{os.getloadavg()[0]:.2f}"})
    return rows


def _write_csv(path: Path, rows: list[dict], fields) -> None:
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(fields))
        w.writeheader()
        w.writerows(rows)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="full", choices=["quick", "full"])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--min-repeats", type=int, default=5)
    ap.add_argument("--max-repeats", type=int, default=50)
    ap.add_argument("--min-time", type=float, default=1.0, help="seconds of timed runs per case")
    ap.add_argument("--latency", action="store_true", help="also measure the pointer-chase latency profile")
    ap.add_argument("--only-latency", action="store_true", help="only the latency and TLB profiles")
    ap.add_argument("--only", default="", help="substring: time only the cases whose name contains it")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    import numba

    started = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    rows = []
    for case in [] if args.only_latency else _cases(args.sizes):
        if args.only and args.only not in case.name:
            continue
        row = time_case(case, args.warmup, args.min_repeats, args.max_repeats, args.min_time)
        print(f"{row['name']:<42} {float(row['median_s']) * 1e3:10.3f} ms  iqr {float(row['iqr_s']) * 1e3:8.3f} ms"
              f"  n={row['repeats']:<3} load {row['load1_before']}->{row['load1_after']}  ok={row['correct']}",
              flush=True)
        rows.append(row)
    if rows:
        _write_csv(args.out / "measurements.csv", rows, CSV_FIELDS)
    if args.latency or args.only_latency:
        sizes = [16 << 10, 64 << 10, 256 << 10, 512 << 10, 768 << 10, 1536 << 10, 2 << 20, 3 << 20, 4 << 20,
                 6 << 20, 8 << 20, 12 << 20, 16 << 20, 24 << 20, 32 << 20, 64 << 20, 256 << 20]
        prof = latency_profile(sizes)
        for r in prof:
            print(f"chase {r['working_set_bytes'] / 2**20:8.3f} MiB  {r['latency_ns']:>8} ns  load {r['load1']}")
        _write_csv(args.out / "latency_profile.csv", prof, ("working_set_bytes", "latency_ns", "min_ns", "load1"))
        tlb = tlb_profile([16, 32, 64, 96, 128, 256, 512, 1024, 2048, 4096, 8192, 16384])
        for r in tlb:
            print(f"tlb   {r['pages']:6d} pages  {r['ns_per_access']:>8} ns/access  load {r['load1']}")
        _write_csv(args.out / "tlb_profile.csv", tlb, ("pages", "ns_per_access", "min_ns", "load1"))
        conf = conflict_profile([64, 2048, 4096, 4096 + 64, 8192])
        for r in conf:
            print(f"set   stride {r['stride_bytes']:6d} B  {r['ns_per_access']:>8} ns/access  load {r['load1']}")
        _write_csv(args.out / "conflict_profile.csv", conf, ("stride_bytes", "lines", "ns_per_access", "min_ns",
                                                             "load1"))
    prov = {
        "started_utc": started, "finished_utc": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "command": "python -m validation.cpu_measure " + " ".join(argv if argv is not None else sys.argv[1:]),
        "git_commit": _git_commit(), "lscpu": _lscpu(), "python": platform.python_version(),
        "numba": numba.__version__, "numpy": np.__version__, "platform": platform.platform(),
        "clock": "time.perf_counter_ns (monotonic)", "threads": 1,
        "method": "median of repeats after a compile run and warm-up runs; inputs reused between repeats",
    }
    name = "provenance.json" if rows else "provenance_latency.json"
    (args.out / name).write_text(json.dumps(prov, indent=2) + "\n")


if __name__ == "__main__":
    main()
