"""Where time and energy go: stacked per-op or per-component bars, and the discrete-event Gantt chart."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from archsim.plot._common import PlotError, figure, label, style
from archsim.results import ENERGY_ARITHMETIC, ENERGY_STATIC


def _components(result: Any) -> list[str]:
    comps = list(dict.fromkeys(k for o in result.ops for k in o.energy_breakdown_j))
    comps = comps or list(result.energy_breakdown_j)
    # Arithmetic and static first, then data movement (from the core outwards as the engine lists them).
    return [c for c in comps if c in ENERGY_ARITHMETIC] + [c for c in comps if c in ENERGY_STATIC] + \
        [c for c in comps if c not in ENERGY_ARITHMETIC and c not in ENERGY_STATIC]


def breakdown(result: Any, by: Literal["op", "component"] = "op", *, top: int = 10, width: str | float = "text",
              style_name: str | None = "paper") -> Any:
    """Latency and energy, stacked: per op (the ``top`` slowest, the rest as ``other``) or per component.

    Latency is split by each op's bound (what limits it), energy by component; the energy panel is
    annotated with the run's data-movement share (everything but arithmetic and static energy).
    """
    if by not in ("op", "component"):
        raise PlotError(f"by={by!r} is not allowed; allowed: 'op', 'component'")
    if not result.ops:
        raise PlotError("the result has no ops to break down")
    comps = _components(result)
    bounds = list(dict.fromkeys(o.bound for o in result.ops))
    if by == "op":
        ranked = sorted(result.ops, key=lambda o: -o.latency_s)
        groups = [(o.name, [o]) for o in ranked[:top]]
        if len(ranked) > top:
            groups.append(("other", ranked[top:]))
    else:
        groups = [("run", list(result.ops))]
    names = [g for g, _ in groups]
    lat = {b: np.array([sum(o.latency_s for o in ops if o.bound == b) for _, ops in groups]) for b in bounds}
    energy = {c: np.array([sum(o.energy_breakdown_j.get(c, 0.0) for o in ops) for _, ops in groups]) for c in comps}
    lat_label, lat_f = label("latency_s", [result.latency_s])
    en_label, en_f = label("energy_j", [result.energy_j])
    with style(style_name):
        fig, (ax_t, ax_e) = figure(2, width=width, height_in=2.6)
        pos = np.arange(len(names))
        for ax, parts, f, ylabel in ((ax_t, lat, lat_f, lat_label), (ax_e, energy, en_f, en_label)):
            bottom = np.zeros(len(names))
            for key, vals in parts.items():
                ax.bar(pos, vals / f, bottom=bottom, label=key, width=0.7, gid=f"bar:{key}")
                bottom += vals / f
            ax.set_xticks(pos, names, rotation=60 if by == "op" else 0, ha="right" if by == "op" else "center",
                          fontsize=6)
            ax.set_ylabel(ylabel)
            ax.legend(fontsize=6, loc="upper right")
        ax_t.set_title("latency by bound")
        ax_e.set_title("energy by component")
        share = result.data_movement_fraction
        ax_e.set_ylim(top=ax_e.get_ylim()[1] * 1.15)  # room for the note above the tallest bar
        ax_e.text(0.02, 0.97, f"data movement: {100 * share:.1f}% of energy", transform=ax_e.transAxes,
                  ha="left", va="top", fontsize=7, gid="data-movement")
    return fig


def timeline(result: Any, *, color_by: Literal["op", "resource"] = "op", width: str | float = "text",
             style_name: str | None = "paper") -> Any:
    """Gantt chart of a discrete-event result: one row per resource, one bar per busy interval.

    Bars are drawn as one ``broken_barh`` collection per (resource, colour) pair, gid
    ``busy:<resource>:<colour>``: a collection per interval costs milliseconds each, so a run of a
    few thousand kernels took seconds. The legend (up to 12 keys) uses one patch per key.
    """
    if not result.timeline:
        raise PlotError(f"the {result.engine!r} result has no timeline; run the workload with engine='des'")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    entries = result.timeline
    resources = sorted({t.resource for t in entries})
    row = {r: i for i, r in enumerate(resources)}
    end = max(t.end_s for t in entries)
    t_label, f = label("time_s", [end])
    with style(style_name):
        fig, (ax,) = figure(1, width=width, height_in=0.6 + 0.3 * len(resources))
        colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
        keys = list(dict.fromkeys(getattr(t, color_by) for t in sorted(entries, key=lambda t: (t.resource, t.start_s))))
        colour = {k: colours[i % len(colours)] for i, k in enumerate(keys)}
        groups: dict[tuple[str, str], list[tuple[float, float]]] = {}
        for t in entries:
            groups.setdefault((t.resource, colour[getattr(t, color_by)]), []).append(
                (t.start_s / f, (t.end_s - t.start_s) / f))
        # Limits are set explicitly below; autoscaling after every collection is wasted work.
        ax.set_autoscale_on(False)
        for (res, c), spans in groups.items():
            ax.broken_barh(spans, (row[res] - 0.4, 0.8), facecolors=c, edgecolor="black", linewidth=0.2,
                           gid=f"busy:{res}:{c}")
        ax.set_yticks(range(len(resources)), resources)
        ax.set_xlabel(t_label)
        ax.set_ylabel("resource")
        ax.set_xlim(0, end / f)
        ax.set_ylim(-0.6, len(resources) - 0.4)
        if len(keys) <= 12:
            handles = [Patch(facecolor=colour[k], edgecolor="black", linewidth=0.2, label=k) for k in keys]
            ax.legend(handles=handles, fontsize=6, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return fig
