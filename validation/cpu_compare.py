"""Predicted (interval core model) versus measured time of each CPU validation kernel, and the MAPE.

Reads ``validation/data/cpu-epyc-genoa/measurements.csv``; predicts each case from its
``describe()`` with :func:`validation.cpu_machine.machine_model` (the preset, plus the guest's
measured latency profile unless ``--no-profile``); prints one line per kernel, the MAPE overall
and per family, and the orderings the model must get right. ``--out`` writes the table as CSV.

Run: ``python -m validation.cpu_compare [--no-profile] [--out predictions.csv]``
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

from archsim.microarch.core import predict
from validation.cpu_machine import DATA, machine_model
from validation.cpu_measure import _cases

ORDERINGS = (
    ("cpu/matmul-ijk/n=1024", "cpu/matmul-ikj/n=1024", "i-j-k slower than i-k-j at n = 1024"),
    ("cpu/branchy-store/unsorted/n=16777216", "cpu/branchy-store/sorted/n=16777216",
     "unsorted branchy loop slower than sorted"),
)


def compare(measurements: Path, use_profile: bool = True) -> list[dict]:
    with measurements.open() as f:
        measured = {r["name"]: r for r in csv.DictReader(f)}
    # The latency profile measured alongside these measurements (same folder).
    model = machine_model(measurements.parent / "latency_profile.csv" if use_profile else None)
    rows = []
    for case in _cases("full"):
        if case.name not in measured:
            continue
        p = predict(case.describe(), model)
        m = float(measured[case.name]["median_s"])
        rows.append({"name": case.name, "family": case.family, "measured_s": m, "predicted_s": p.time_s,
                     "error_pct": 100.0 * (p.time_s - m) / m, "bound": p.bound,
                     "base_cycles": p.base_cycles, "bandwidth_cycles": p.bandwidth_cycles,
                     "memory_stall_cycles": p.memory_stall_cycles, "branch_stall_cycles": p.branch_stall_cycles})
    return rows


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--measurements", type=Path, default=DATA / "measurements.csv")
    ap.add_argument("--no-profile", action="store_true", help="the preset alone, no measured latency profile")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    rows = compare(args.measurements, not args.no_profile)
    print(f"{'kernel':<42} {'measured ms':>12} {'predicted ms':>13} {'error':>8}  bound")
    for r in rows:
        print(f"{r['name']:<42} {r['measured_s'] * 1e3:12.3f} {r['predicted_s'] * 1e3:13.3f} "
              f"{r['error_pct']:7.1f}%  {r['bound']}")
    ape = [abs(r["error_pct"]) for r in rows]
    print(f"MAPE over {len(rows)} kernels: {sum(ape) / len(ape):.1f}%")
    fams: dict[str, list[float]] = {}
    for r in rows:
        fams.setdefault(r["family"], []).append(abs(r["error_pct"]))
    for fam, v in sorted(fams.items()):
        print(f"  {fam:<22} MAPE {sum(v) / len(v):6.1f}%  ({len(v)} kernels)")
    by = {r["name"]: r for r in rows}
    for slow, fast, what in ORDERINGS:
        if slow in by and fast in by:
            ms, mf = by[slow]["measured_s"], by[fast]["measured_s"]
            ps, pf = by[slow]["predicted_s"], by[fast]["predicted_s"]
            ok = (ms > mf) == (ps > pf)
            print(f"ordering {what}: measured {ms / mf:.1f}x, predicted {ps / pf:.1f}x -> {'right' if ok else 'WRONG'}")
    if args.out:
        with args.out.open("w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)


if __name__ == "__main__":
    main()
