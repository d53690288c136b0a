"""Hierarchical roofline: one ceiling per memory level and per compute unit, ops as points.

Williams, Waterman & Patterson, "Roofline: an insightful visual performance model", CACM 2009; the
hierarchical form (one bandwidth ceiling per level, each op placed once per level at its intensity
for that level's bytes) is Yang et al., "Hierarchical Roofline Analysis for GPUs", 2020. Ceilings
are the hardware's peak rates (datasheet peaks, before efficiency factors); an op sits at
(FLOP / bytes at the level, FLOP / latency), with marker area proportional to its share of the run's
time. Ridge points (peak / bandwidth, in FLOP/B) of the top compute ceiling are marked and labelled.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from archsim.plot._common import PlotError, figure, style


@dataclass(frozen=True)
class Ceiling:
    """A roof: ``kind`` is ``"memory"`` (``rate`` in B/s) or ``"compute"`` (``rate`` in FLOP/s)."""

    name: str
    kind: str
    rate: float


def _device(hardware: Any, device: str | None) -> Any:
    if getattr(hardware, "kind", None) != "system":
        return hardware
    role = device or ("gpu" if hardware.gpu is not None else "host")
    dev = getattr(hardware, role, None)
    if dev is None:
        raise PlotError(f"the system has no device {role!r}; roles: host, gpu, pim")
    return dev


def ceilings(hardware: Any, device: str | None = None) -> list[Ceiling]:
    """Peak ceilings of a device (or of ``device`` of a system): memory levels first, inside out last."""
    dev = _device(hardware, device)
    out: list[Ceiling] = []
    if dev.kind == "gpu":
        out.append(Ceiling("l1", "memory", dev.sm.l1.bandwidth_bytes_per_s * dev.sm_count))  # per-SM L1
        out.append(Ceiling(dev.l2.name, "memory", dev.l2.bandwidth_bytes_per_s))
        out.append(Ceiling("dram", "memory", dev.dram.bandwidth_bytes_per_s))
        for p in dev.sm.fma_lanes:
            out.append(Ceiling(f"vector {p}", "compute", dev.peak_flop_per_s(p, "vector")))
        if dev.tensor_core is not None:
            for p in dev.tensor_core.flop_per_cycle_per_sm:
                out.append(Ceiling(f"tensor {p}", "compute", dev.peak_flop_per_s(p, "tensor")))
    elif dev.kind == "cpu":
        for c in dev.caches:
            out.append(Ceiling(c.name, "memory", c.bandwidth_bytes_per_s * (1 if c.shared else dev.cores)))
        out.append(Ceiling("dram", "memory", dev.dram.bandwidth_bytes_per_s))
        for p, units in dev.core.fma_units.items():
            if units:
                out.append(Ceiling(f"vector {p}", "compute", dev.peak_flop_per_s(p, "vector")))
        for p in dev.core.matrix_flop_per_cycle:
            out.append(Ceiling(f"matrix {p}", "compute", dev.peak_flop_per_s(p, "matrix")))
    elif dev.kind == "pim":
        out.append(Ceiling("pim banks", "memory", dev.internal_bandwidth_bytes_per_s))
        out.append(Ceiling("dram", "memory", dev.dram.bandwidth_bytes_per_s))
        out.append(Ceiling("host link", "memory", dev.host_link.bandwidth_bytes_per_s))
        for p in dev.units.ops_per_cycle:
            out.append(Ceiling(f"pim {p}", "compute", dev.peak_flop_per_s(p)))
    else:
        raise PlotError(f"no roofline for hardware of kind {dev.kind!r}")
    return _merge_equal([c for c in out if c.rate > 0])


def _merge_equal(roofs: list[Ceiling]) -> list[Ceiling]:
    """One ceiling per distinct rate of a unit: ``tensor fp16`` and ``tensor bf16`` at the same
    FLOP/s are drawn once as ``tensor fp16/bf16`` (two lines on top of each other read as one)."""
    out: list[Ceiling] = []
    for c in roofs:
        unit, _, precision = c.name.rpartition(" ")
        for i, o in enumerate(out):
            o_unit = o.name.rpartition(" ")[0]
            if c.kind == o.kind == "compute" and unit == o_unit and abs(o.rate - c.rate) <= 1e-9 * c.rate:
                out[i] = Ceiling(f"{o.name}/{precision}", o.kind, o.rate)
                break
        else:
            out.append(c)
    return out


def _prefix(values: np.ndarray, unit: str) -> tuple[float, str]:
    top = float(np.nanmax(values)) if values.size else 1.0
    for exp, p in ((15, "P"), (12, "T"), (9, "G"), (6, "M"), (3, "k")):
        if top >= 10**exp:
            return 10.0**exp, p + unit
    return 1.0, unit


def roofline(result: Any, hardware: Any, *, device: str | None = None, levels: list[str] | None = None,
             precision: str | None = None, title: str | None = None, style_name: str | None = "paper") -> Any:
    """Plot ``result``'s ops on the hierarchical roofline of ``hardware``; returns the figure.

    ``levels`` picks the memory levels to place ops at (default: every level the ops report bytes for
    that has a ceiling). Ops without FLOP or without bytes at a level are not placed at that level.
    Ridge points are those of the highest compute ceiling, or of the highest one for ``precision``
    (e.g. ``"fp16"``: the workload's precision) when given.
    """
    roofs = ceilings(hardware, device)
    memory = [c for c in roofs if c.kind == "memory"]
    compute = [c for c in roofs if c.kind == "compute"]
    if not memory or not compute:
        raise PlotError("the hardware has no memory or no compute ceiling to draw")
    candidates = compute
    if precision is not None:
        candidates = [c for c in compute if precision in c.name.rpartition(" ")[2].split("/")]
        if not candidates:
            raise PlotError(f"no compute ceiling for precision {precision!r}; ceilings: {[c.name for c in compute]}")
    top = max(candidates, key=lambda c: c.rate)
    names = [c.name for c in memory]
    ops = [o for o in result.ops if o.flop > 0 and o.latency_s > 0]
    placed = levels if levels is not None else [n for n in names if any(o.bytes_by_level.get(n, 0) > 0 for o in ops)]
    unknown = [lv for lv in placed if lv not in names]
    if unknown:
        raise PlotError(f"levels {unknown} have no ceiling; levels: {names}")
    ridges = {c.name: top.rate / c.rate for c in memory}
    intensities = [o.flop / o.bytes_by_level[lv] for o in ops for lv in placed if o.bytes_by_level.get(lv, 0) > 0]
    lo = min([*ridges.values(), *intensities]) / 10
    hi = max([*ridges.values(), *intensities]) * 10
    x = np.geomspace(lo, hi, 256)
    f, unit = _prefix(np.array([c.rate for c in compute]), "FLOP/s")
    with style(style_name):
        fig, (ax,) = figure(1, height_in=2.6)
        import matplotlib.pyplot as plt

        colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
        colour = {c.name: colours[i % len(colours)] for i, c in enumerate(memory)}
        peak = max(r.rate for r in compute)
        for c in memory:
            ax.plot(x, np.minimum(c.rate * x, peak) / f, color=colour[c.name], label=f"ceiling: {c.name}",
                    gid=f"ceiling:{c.name}")
        best_bw = max(c.rate for c in memory)
        for i, c in enumerate(sorted(compute, key=lambda c: -c.rate)):
            ax.plot(x, np.minimum(c.rate, best_bw * x) / f, color="0.3", linestyle="--", linewidth=0.8,
                    label=f"ceiling: {c.name}", gid=f"ceiling:{c.name}")
            # Neighbouring ceilings are often 2x apart: alternate the label's end of the line so the
            # labels of close ceilings do not print on top of each other.
            at = hi if i % 2 == 0 else hi / 40.0
            ax.annotate(c.name, (at, c.rate / f), xytext=(-2, 2), textcoords="offset points", ha="right",
                        va="bottom", fontsize=6, color="0.3")
        for i, c in enumerate(memory):
            r = ridges[c.name]
            ax.plot([r], [top.rate / f], marker="o", color=colour[c.name], markersize=3, gid=f"ridge:{c.name}")
            ax.annotate(f"{r:.3g}", (r, top.rate / f), xytext=(0, -9 if i % 2 == 0 else 4),
                        textcoords="offset points", ha="center", fontsize=6, color=colour[c.name],
                        gid=f"ridge-label:{c.name}")
        total = sum(o.latency_s for o in ops) or 1.0
        for lv in placed:
            pts = [(o.flop / o.bytes_by_level[lv], o.flop / o.latency_s, o.latency_s / total)
                   for o in ops if o.bytes_by_level.get(lv, 0) > 0]
            if pts:
                xs, ys, share = (np.array(v) for v in zip(*pts, strict=True))
                ax.scatter(xs, ys / f, s=8 + 120 * share, color=colour[lv], edgecolor="black", linewidth=0.3,
                           alpha=0.8, label=f"ops @ {lv}", zorder=3, gid=f"ops:{lv}")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("arithmetic intensity (FLOP/B)")
        ax.set_ylabel(f"performance ({unit})")
        ax.set_xlim(lo, hi)
        ax.set_title(title if title is not None else getattr(result, "workload", ""))
        handles = [h for h in ax.get_lines() if not h.get_label().startswith("_") and h.get_gid() and
                   h.get_gid().startswith("ceiling:") and h.get_gid()[8:] in names]
        handles += [h for h in ax.collections if str(h.get_label()).startswith("ops @")]
        ax.legend(handles=handles, labels=[h.get_label().removeprefix("ceiling: ") for h in handles],
                  loc="lower right", fontsize=6)
    return fig
