"""The core model of this machine (a 2-vCPU KVM guest on AMD EPYC Genoa, Zen 4) for the CPU comparison.

Everything comes from the preset ``cpu/epyc-genoa-2vcpu`` (``models/cpu/epyc-genoa-2vcpu.toml``:
lscpu, the measured clock, the AMD Zen 4 optimisation guide via ``cpu_microarch.csv``, the measured
STREAM efficiency and call overhead), except what the guest's pointer-chase profile
(``latency_profile.csv``, measured by ``python -m validation.cpu_measure --latency``, never the
kernel timings) shows to differ from the datasheet:

- the L3 capacity this guest actually keeps: the host's 32 MiB L3 is shared with other tenants, so
  the effective capacity is the largest working set whose chase latency is still below the midpoint
  between the L3 plateau and the DRAM plateau;
- the DRAM latency: the chase latency at the largest working set (it includes the guest's
  nested-paging TLB walks, which a large random working set also pays in the kernels);
- the issue interval of L1 misses into one set (``conflict_profile.csv``, the 4 KiB stride: all
  lines in one set), which the datasheets do not give.

Each profile value is the fastest of its passes: on a shared host other tenants only add time.

``machine_model(profile=None)`` without a profile returns the preset's model unchanged.
"""

from __future__ import annotations

import csv
from dataclasses import replace
from pathlib import Path

from archsim.microarch.core import CoreModel

PRESET = "cpu/epyc-genoa-2vcpu"
DATA = Path(__file__).resolve().parent / "data" / "cpu-epyc-genoa"


def read_profile(path: Path) -> list[tuple[int, float]]:
    with path.open() as f:
        # The fastest pass: on a shared host, other tenants only ever add to a latency.
        return [(int(r["working_set_bytes"]), float(r["min_ns"])) for r in csv.DictReader(f)]


def effective_l3_bytes(profile: list[tuple[int, float]], l2_bytes: int, l3_bytes: int) -> int:
    """Largest working set above L2 whose latency is below the L3/DRAM midpoint (bytes)."""
    above = [(s, lat) for s, lat in profile if l2_bytes < s <= l3_bytes]
    if not above:
        return l3_bytes
    l3_lat = min(lat for _, lat in above)
    dram_lat = profile[-1][1]
    mid = 0.5 * (l3_lat + dram_lat)
    best = l2_bytes
    for s, lat in sorted(profile):
        if s > l2_bytes and lat <= mid:
            best = s
        elif s > l2_bytes:
            break
    return min(best, l3_bytes)


def machine_model(profile: Path | None = DATA / "latency_profile.csv") -> CoreModel:
    """The preset's core model, with the guest's measured L3 capacity and DRAM latency if profiled."""
    from archsim import load_preset

    model = CoreModel.from_device(load_preset(PRESET))
    if profile is None or not Path(profile).exists():
        return model
    prof = read_profile(Path(profile))
    levels = list(model.hierarchy.levels)
    l2, l3 = levels[-2], levels[-1]
    eff = effective_l3_bytes(prof, l2.size_bytes, l3.size_bytes)
    unit = l3.ways * l3.line_bytes
    levels[-1] = replace(l3, size_bytes=max(unit, eff // unit * unit))
    dram_latency_s = prof[-1][1] * 1e-9
    model = replace(model, hierarchy=replace(model.hierarchy, levels=tuple(levels)),
                    memory=replace(model.memory, dram_latency_s=dram_latency_s))
    return with_set_conflicts(model, Path(profile).with_name("conflict_profile.csv"))


def with_set_conflicts(model: CoreModel, path: Path) -> CoreModel:
    """The model with ``same_set_miss_cycles`` from the 4 KiB-stride row of ``path``, if present."""
    if not path.exists():
        return model
    with path.open() as f:
        rows = {int(r["stride_bytes"]): float(r["min_ns"]) for r in csv.DictReader(f)}
    if 4096 not in rows:
        return model
    cycles = rows[4096] * 1e-9 * model.core.clock_hz
    return replace(model, core=replace(model.core, same_set_miss_cycles=cycles))
