"""Hierarchical roofline: one ceiling per memory level and per compute unit, ops as points.

Williams, Waterman & Patterson, "Roofline: an insightful visual performance model", CACM 2009; the
hierarchical form (one bandwidth ceiling per level, each op placed once per level at its intensity
for that level's bytes) is Yang et al., "Hierarchical Roofline Analysis for GPUs", 2020. Ceilings
are the hardware's peak rates (datasheet peaks, before efficiency factors); an op sits at
(FLOP / bytes at the level, FLOP / latency), with marker area proportional to its share of the run's
time. Ridge points (peak / bandwidth, in FLOP/B) of the top compute ceiling are marked and labelled.
Ops that a software profile's fusion pass produced (``OpResult.fused``) are diamonds, the others
circles, with a "fused op" legend entry when there are any.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from archsim.plot._common import PlotError, attach_data, bottom_legend, figure, freeze_layout, place_labels, style


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


# A light box behind in-axes labels: they stay legible over ops and ceiling lines.
_HALO = {"boxstyle": "square,pad=0.1", "facecolor": "white", "edgecolor": "none", "alpha": 0.75}


FUSED_MARKER = "D"
"""Marker of ops that a software profile's fusion pass produced (``OpResult.fused`` not empty)."""


def level_title(name: str) -> str:
    """A memory level as a reader writes it: ``l1`` -> ``L1``, ``dram`` -> ``DRAM`` (a serif "l1" reads as
    "11"); other names as they are."""
    return name.upper() if name in ("l1", "l1d", "l2", "l3", "dram", "hbm", "llc") else name


def placed_flop(op: Any) -> float:
    """The FLOP an op is placed at on the roofline (its x is this over bytes, its y this over time).

    The one place the plot reads an op's work, so that a result reporting executed next to nominal
    FLOP changes the placement here only.
    """
    return float(op.flop)


def run_precision(result: Any) -> str | None:
    """The precision of the run's workload (``"fp16"``), from the result's provenance; None if unknown."""
    workload = (getattr(result, "_meta", None) or {}).get("workload") or {}
    return workload.get("precision")


def run_title(result: Any, hardware_name: str | None = None) -> str:
    """``"resnet50, batch 256, fp16, training"`` over ``"on NVIDIA H200 SXM 141GB"`` (two lines), from the
    result's provenance; the workload name alone when it has none."""
    workload = (getattr(result, "_meta", None) or {}).get("workload") or {}
    name = workload.get("model") or getattr(result, "workload", "")
    parts = [name]
    if workload.get("batch") is not None:
        parts.append(f"batch {workload['batch']}")
    if workload.get("dtype"):
        parts.append(str(workload["dtype"]))
    if workload.get("training"):
        parts.append("training")
    hw = hardware_name or getattr(result, "hardware", "")
    return ", ".join(p for p in parts if p) + (f"\non {hw}" if hw else "")


def _for_precision(compute: list[Ceiling], precision: str) -> list[Ceiling]:
    return [c for c in compute if precision in c.name.rpartition(" ")[2].split("/")]


def roofline(result: Any, hardware: Any, *, device: str | None = None, levels: list[str] | None = None,
             precision: str | None = None, title: str | None = None, width: str | float = "column",
             height_in: float | None = None, style_name: str | None = "paper") -> Any:
    """Plot ``result``'s ops on the hierarchical roofline of ``hardware``; returns the figure.

    ``precision`` picks the compute ceilings drawn: ``"fp16"`` draws the fp16 ceilings of every unit
    (vector and tensor), ``"all"`` every precision; the default is the run's own precision (from the
    result's provenance; every precision when the result does not say). Ridge points (peak / bandwidth,
    FLOP/B) are those of the highest drawn ceiling. ``levels`` picks the memory levels to place ops at
    (default: every level the ops report bytes for that has a ceiling); ops without FLOP or without
    bytes at a level are not placed there. Labels are placed where they overlap nothing
    (:func:`~archsim.plot._common.place_labels`); the data is attached for :func:`~archsim.plot.save`
    (``<stem>.csv``: one row per op and level; ``<stem>.ceilings.csv``).
    """
    import pandas as pd

    roofs = ceilings(hardware, device)
    memory = [c for c in roofs if c.kind == "memory"]
    compute = [c for c in roofs if c.kind == "compute"]
    if not memory or not compute:
        raise PlotError("the hardware has no memory or no compute ceiling to draw")
    chosen = precision if precision is not None else run_precision(result)
    if chosen not in (None, "all"):
        picked = _for_precision(compute, chosen)
        if not picked:
            if precision is not None:
                raise PlotError(f"no compute ceiling for precision {precision!r}; ceilings: "
                                f"{[c.name for c in compute]}")
            picked = compute  # the run's precision has no unit of its own here: show them all
        compute = picked
    top = max(compute, key=lambda c: c.rate)
    names = [c.name for c in memory]
    ops = [o for o in result.ops if placed_flop(o) > 0 and o.latency_s > 0]
    placed = levels if levels is not None else [n for n in names if any(o.bytes_by_level.get(n, 0) > 0 for o in ops)]
    unknown = [lv for lv in placed if lv not in names]
    if unknown:
        raise PlotError(f"levels {unknown} have no ceiling; levels: {names}")
    ridges = {c.name: top.rate / c.rate for c in memory}
    total = sum(o.latency_s for o in ops) or 1.0
    rows = [{"name": o.name, "phase": o.phase, "kind": o.kind, "level": lv, "flop": placed_flop(o),
             "bytes": o.bytes_by_level[lv], "intensity_flop_per_byte": placed_flop(o) / o.bytes_by_level[lv],
             "performance_flop_per_s": placed_flop(o) / o.latency_s, "latency_s": o.latency_s,
             "time_share": o.latency_s / total, "bound": o.bound, "fused_from": ", ".join(o.fused)}
            for o in ops for lv in placed if o.bytes_by_level.get(lv, 0) > 0]
    data = pd.DataFrame(rows, columns=["name", "phase", "kind", "level", "flop", "bytes", "intensity_flop_per_byte",
                                       "performance_flop_per_s", "latency_s", "time_share", "bound", "fused_from"])
    fused = data["fused_from"] != ""
    intensities = list(data["intensity_flop_per_byte"])
    lo = min([*ridges.values(), *intensities]) / 10
    hi = max([*ridges.values(), *intensities]) * 10
    x = np.geomspace(lo, hi, 256)
    f, unit = _prefix(np.array([c.rate for c in compute]), "FLOP/s")
    peak = top.rate
    best_bw = max(c.rate for c in memory)
    y_lo = min([*(c.rate * lo for c in memory), *data["performance_flop_per_s"]]) / 2
    with style(style_name):
        fig, (ax,) = figure(1, width=width, height_in=height_in or 2.8)
        import matplotlib.pyplot as plt

        colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
        colour = {c.name: colours[i % len(colours)] for i, c in enumerate(memory)}
        for c in memory:
            ax.plot(x, np.minimum(c.rate * x, peak) / f, color=colour[c.name], label=f"ceiling: {c.name}",
                    gid=f"ceiling:{c.name}")
        labels = []
        for c in sorted(compute, key=lambda c: -c.rate):
            ax.plot(x, np.minimum(c.rate, best_bw * x) / f, color="0.3", linestyle="--", linewidth=0.8,
                    label=f"ceiling: {c.name}", gid=f"ceiling:{c.name}")
            labels.append(ax.annotate(c.name, (hi, c.rate / f), xytext=(-2, 2), textcoords="offset points",
                                      ha="right", va="bottom", fontsize=6, color="0.3", gid=f"ceiling-label:{c.name}",
                                      zorder=4, bbox=_HALO))
        ridge_labels = []
        for c in memory:
            r = ridges[c.name]
            ax.plot([r], [top.rate / f], marker="o", color=colour[c.name], markersize=3, gid=f"ridge:{c.name}")
            ridge_labels.append(ax.annotate(f"{r:.3g}", (r, top.rate / f), xytext=(0, -4), textcoords="offset points",
                                            ha="center", va="bottom", fontsize=6, color=colour[c.name],
                                            gid=f"ridge-label:{c.name}", zorder=4, bbox=_HALO))
        for lv in placed:
            at = data["level"] == lv
            # Ops a software profile's fusion pass produced are diamonds (FUSED_MARKER), the rest
            # circles; the level's colour and its legend entry are shared.
            named = False
            for which, marker, gid in ((~fused, "o", f"ops:{lv}"), (fused, FUSED_MARKER, f"fused-ops:{lv}")):
                pts = data[at & which]
                if len(pts):
                    ax.scatter(pts["intensity_flop_per_byte"], pts["performance_flop_per_s"] / f,
                               s=8 + 120 * pts["time_share"], color=colour[lv], edgecolor="black", linewidth=0.3,
                               alpha=0.8, marker=marker, label="_" if named else f"ops @ {level_title(lv)}",
                               zorder=3, gid=gid)
                    named = True
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("arithmetic intensity (FLOP/B)")
        ax.set_ylabel(f"performance ({unit})")
        ax.set_xlim(lo, hi)
        # Room above the top roof for its labels (an eighth of the log range), and below the slowest op.
        ax.set_ylim(y_lo / f, peak / f * max(3.0, (peak / y_lo) ** 0.125))
        ax.set_title(title if title is not None else run_title(result, getattr(hardware, "name", None)))
        handles = [h for h in ax.get_lines() if (h.get_gid() or "").startswith("ceiling:") and h.get_gid()[8:] in names]
        handles += [h for h in ax.collections if str(h.get_label()).startswith("ops @")]
        legend_labels = [level_title(h.get_label().removeprefix("ceiling: ")) for h in handles]
        if fused.any():
            from matplotlib.lines import Line2D

            handles.append(Line2D([], [], marker=FUSED_MARKER, linestyle="none", markersize=4, color="white",
                                  markeredgecolor="black", markeredgewidth=0.5, gid="legend:fused"))
            legend_labels.append("fused op")
        # Below the axes, not over the ops: a legend inside a roofline always covers some point.
        bottom_legend(fig, handles, legend_labels, max_cols=6)
        for t in [*labels, *ridge_labels]:
            t.set_in_layout(False)  # placed inside the axes below; must not move the layout
        along = (0.0, -25.0, -50.0, -80.0, -110.0)
        # keep the labels off the ops where a free place exists (they stay above them when none does)
        from archsim.plot._common import marker_boxes

        points = marker_boxes(ax, data["intensity_flop_per_byte"], data["performance_flop_per_s"] / f,
                              8 + 120 * data["time_share"])
        place_labels(ax, labels, [[(dx - 2, dy, "right", va) for dx in along for dy, va in ((2, "bottom"), (-2, "top"))]
                                  for _ in labels], avoid_boxes=points)
        place_labels(ax, ridge_labels, [[(0, 4, "center", "bottom"), (0, -4, "center", "top"), (4, -3, "left", "top"),
                                         (-4, -3, "right", "top"), (4, 3, "left", "bottom"), (-4, 3, "right", "bottom"),
                                         (0, -12, "center", "top"), (0, 12, "center", "bottom")]
                                        for _ in ridge_labels], avoid=labels, avoid_boxes=points)
        freeze_layout(fig)  # the labels were placed for this layout
    ceilings_frame = pd.DataFrame([{"name": c.name, "kind": c.kind, "rate": c.rate,
                                    "unit": "B/s" if c.kind == "memory" else "FLOP/s",
                                    "ridge_flop_per_byte": ridges.get(c.name)} for c in [*memory, *compute]])
    return attach_data(fig, data, ceilings=ceilings_frame)
