"""Where time and energy go: stacked per-op or per-component bars, and the discrete-event Gantt chart."""

from __future__ import annotations

import re
from typing import Any, Literal

import numpy as np

from archsim.plot._common import PlotError, attach_data, bottom_legend, figure, label, style
from archsim.results import ENERGY_ARITHMETIC, ENERGY_STATIC


def _components(result: Any) -> list[str]:
    comps = list(dict.fromkeys(k for o in result.ops for k in o.energy_breakdown_j))
    comps = comps or list(result.energy_breakdown_j)
    # Arithmetic and static first, then data movement (from the core outwards as the engine lists them).
    return [c for c in comps if c in ENERGY_ARITHMETIC] + [c for c in comps if c in ENERGY_STATIC] + \
        [c for c in comps if c not in ENERGY_ARITHMETIC and c not in ENERGY_STATIC]


def _run_label(result: Any) -> str:
    w = (getattr(result, "_meta", None) or {}).get("workload") or {}
    parts = [str(w.get("model") or result.workload or "run")]
    if w.get("batch") is not None:
        parts.append(f"batch {w['batch']}")
    if w.get("dtype"):
        parts.append(str(w["dtype"]))
    return ", ".join(parts)


# One colour per energy component and per bound in every figure (Okabe & Ito, then Tol's muted
# palette): arithmetic in blues, static power in greys and yellow, data movement from the core
# outwards in greens, oranges and reds. Keys not listed take the palette's free colours.
FIXED_COLOURS = {
    "compute": "#0072B2", "issue": "#56B4E9", "static": "#777777", "leakage": "#BBBBBB", "clock": "#F0E442",
    "register": "#332288", "tensor_operand": "#999933", "l1": "#009E73", "shared": "#44AA99", "l2": "#E69F00",
    "l3": "#DDCC77",
    "noc": "#117733", "dram": "#D55E00", "dram_interface": "#CC6677", "link": "#CC79A7", "pim": "#882255",
    "compute:tensor": "#0072B2", "compute:vector": "#56B4E9", "compute:special": "#332288",
    "compute:matrix": "#0072B2", "compute:pim": "#882255", "memory:register": "#332288",
    "memory:l1": "#009E73", "memory:l1d": "#009E73", "memory:l2": "#E69F00", "memory:l3": "#DDCC77",
    "memory:dram": "#D55E00", "memory:pim": "#AA4499", "memory:link": "#CC79A7", "overhead": "#999999",
    "host": "#44AA99", "power": "#F0E442",
}


def _colours(keys: list[str]) -> dict[str, str]:
    """A fixed colour per energy component or bound where one is known, palette colours for the rest."""
    fixed = FIXED_COLOURS
    free = [c for c in _PALETTE if c not in {fixed[k] for k in keys if k in fixed}]
    out = {}
    for k in keys:
        out[k] = fixed.get(k) or (free.pop(0) if free else "#332288")
    return out


def run_title(result: Any, wrap: bool = False) -> str:
    """``"resnet50, batch 64, fp16, training on NVIDIA A100 SXM4 80GB"``: what a per-run figure shows, from
    the result's provenance (data-parallel GPUs and steps of a discrete-event run included); ``wrap``
    puts the hardware on a second line (one-column figures)."""
    w = (getattr(result, "_meta", None) or {}).get("workload") or {}
    parts = [_run_label(result)]
    if w.get("training"):
        parts.append("training")
    opts = (getattr(result, "_meta", None) or {}).get("options") or {}
    gpus = (opts.get("data_parallel") or {}).get("gpus")
    if gpus:
        parts.append(f"{gpus} GPUs data-parallel")
    if (opts.get("steps") or 1) > 1:
        parts.append(f"{opts['steps']} steps")
    hw = getattr(result, "hardware", "")
    return ", ".join(parts) + (("\non " if wrap else " on ") + hw if hw else "")


def breakdown(result: Any, by: Literal["op", "component"] = "op", *, top: int = 10, width: str | float = "text",
              title: str | None = None, style_name: str | None = "paper") -> Any:
    """Latency and energy, stacked: per op (the ``top`` slowest, the rest as ``other``) or per component.

    Latency is split by each op's bound (what limits it), energy by component; the energy panel is
    titled with the run's data-movement share (everything but arithmetic and static energy). Bars are
    horizontal, the slowest op on top; with ``by="component"`` the one bar is named after the run
    (model, batch, dtype). Each legend sits below its panel, every entry with its colour; colours are
    fixed per component and bound (:data:`FIXED_COLOURS`), so figures compare. The figure's title is
    ``title`` or the run's model, batch, dtype and hardware (:func:`run_title`).
    """
    if by not in ("op", "component"):
        raise PlotError(f"by={by!r} is not allowed; allowed: 'op', 'component'")
    if not result.ops:
        raise PlotError("the result has no ops to break down")
    import pandas as pd
    from matplotlib.patches import Patch

    comps = _components(result)
    bounds = list(dict.fromkeys(o.bound for o in result.ops))
    if by == "op":
        ranked = sorted(result.ops, key=lambda o: -o.latency_s)
        # The rest is not drawn (a bar summing hundreds of ops would dwarf every named one); the title
        # says what share of the time the named ops take, and the data file keeps the rest as "other".
        groups = [(o.name, [o]) for o in ranked[:top]]
        rest = ranked[top:]
    else:
        groups = [(_run_label(result), list(result.ops))]
        rest = []
    names = [g for g, _ in groups]
    lat = {b: np.array([sum(o.latency_s for o in ops if o.bound == b) for _, ops in groups]) for b in bounds}
    energy = {c: np.array([sum(o.energy_breakdown_j.get(c, 0.0) for o in ops) for _, ops in groups]) for c in comps}
    # units from the bars drawn (the top ops are far below the run's total)
    lat_label, lat_f = label("latency_s", [max(sum(v) for v in zip(*lat.values(), strict=True))])
    en_label, en_f = label("energy_j", [max(sum(v) for v in zip(*energy.values(), strict=True))])
    colour = _colours([*bounds, *comps])
    serial = sum(o.latency_s for o in result.ops) or 1.0
    named = 1.0 - sum(o.latency_s for o in rest) / serial
    note = f"\ntop {len(names)} of {len(result.ops)} ops: {100 * named:.0f}% of time" if rest else ""
    panels = (("latency by bound" + note, lat, lat_f, lat_label),
              (f"energy by component\ndata movement {100 * result.data_movement_fraction:.1f}%", energy, en_f,
               en_label))
    fig_w = 3.5 if width == "column" else 7.16 if width == "text" else float(width)
    stacked = fig_w < 5.0  # one column: the panels one above the other, each as wide as the column
    with style(style_name):
        import matplotlib.pyplot as plt

        # Horizontal bars: op names read left to right, slowest on top, whatever their length.
        bars_in = 0.15 * len(names)
        if stacked:
            legend_rows = [-(-sum(parts[k].sum() > 0 for k in parts) // _legend_columns(len(parts), fig_w * 2))
                           for _, parts, _, _ in panels]
            heights = [1.1 + bars_in + 0.12 * r for r in legend_rows]
            fig = plt.figure(figsize=(fig_w, sum(heights) + 0.25))
            holders = list(fig.subfigures(2, 1, height_ratios=heights))
        else:
            fig = plt.figure(figsize=(fig_w, 1.5 + bars_in))
            holders = [fig, fig]
        axes = [holders[0].add_subplot(1, 1, 1) if stacked else fig.add_subplot(1, 2, 1),
                holders[1].add_subplot(1, 1, 1) if stacked else fig.add_subplot(1, 2, 2)]
        pos = np.arange(len(names))
        legends = []
        for i, (ax, holder, (panel_title, parts, f, xlabel)) in enumerate(zip(axes, holders, panels, strict=True)):
            left = np.zeros(len(names))
            for key, vals in parts.items():
                ax.barh(pos, vals / f, left=left, label=key, height=0.7, color=colour[key], gid=f"bar:{key}")
                left += vals / f
            ax.set_yticks(pos, names if (stacked or i == 0) else [""] * len(names), fontsize=6)
            ax.set_ylim(len(names) - 0.5, -0.5)
            ax.set_xlabel(xlabel)
            ax.grid(axis="y", visible=False)
            ax.set_title(panel_title, fontsize=6, gid="data-movement" if i == 1 else None)
            shown = [k for k in parts if parts[k].sum() > 0]
            handles = [Patch(facecolor=colour[k], edgecolor="none", label=k) for k in shown]
            columns = _legend_columns(len(shown), fig_w * 2 if stacked else fig_w)
            loc = "outside lower center" if stacked else "outside lower left" if i == 0 else "outside lower right"
            legends.append(holder.legend(handles=handles, fontsize=6, loc=loc, ncols=columns))
        fig.suptitle(title if title is not None else run_title(result, wrap=stacked), fontsize=7)
        if not stacked:
            _under_panels(fig, legends, tuple(axes))
    rows = [{"group": g, "panel": "latency", "part": k, "value": float(v[i]), "unit": "s"}
            for i, g in enumerate(names) for k, v in lat.items()]
    rows += [{"group": g, "panel": "energy", "part": k, "value": float(v[i]), "unit": "J"}
             for i, g in enumerate(names) for k, v in energy.items()]
    if rest:
        rows += [{"group": "other", "panel": "latency", "part": b, "unit": "s",
                  "value": sum(o.latency_s for o in rest if o.bound == b)} for b in bounds]
        rows += [{"group": "other", "panel": "energy", "part": c, "unit": "J",
                  "value": sum(o.energy_breakdown_j.get(c, 0.0) for o in rest)} for c in comps]
    return attach_data(fig, pd.DataFrame(rows))


def _legend_columns(entries: int, width_in: float) -> int:
    """Columns of a panel's legend: as few rows as fit half of ``width_in`` (about 1 in per column)."""
    return max(1, min(entries, int(width_in / 2 // 1.05)))


def _under_panels(fig: Any, legends: list[Any], axes: tuple[Any, ...]) -> None:
    """Centre each legend under its panel, tops aligned (constrained layout stacks figure legends at the
    bottom edge, which leaves the shorter one far below its panel), then keep that layout."""
    from archsim.plot._common import freeze_layout

    freeze_layout(fig)  # the space the legends reserve at the bottom is kept when they move
    renderer = fig.canvas.get_renderer()
    to_fig = fig.transFigure.inverted()
    top = max(to_fig.transform(leg.get_window_extent(renderer))[1][1] for leg in legends)
    for leg, ax in zip(legends, axes, strict=True):
        box = ax.get_position()
        leg.set_loc("upper center")
        leg.set_bbox_to_anchor(((box.x0 + box.x1) / 2, top), transform=fig.transFigure)


# Fixed colours per phase (Okabe & Ito), so every timeline reads the same: compute phases in blue,
# orange, green; communication, loading and copies in the remaining hues; never black.
PHASE_COLOURS = {"forward": "#0072B2", "backward": "#D55E00", "update": "#009E73", "communication": "#CC79A7",
                 "data loading": "#E69F00", "transfer": "#56B4E9", "other": "#999999"}
# Categorical colours without black (it reads as an outline) and with grey kept for "other".
_PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#882255", "#44AA99",
            "#332288")
# Phases that keep their own colour whatever a timeline is coloured by.
_APART = ("communication", "data loading", "transfer")


def _natural(text: str) -> list[Any]:
    """Sort key that puts gpu2 before gpu10."""
    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", text)]


def _phase_of(entry: Any, phases: dict[str, str]) -> str:
    if entry.op in phases:
        return phases[entry.op]
    res = entry.resource.lower()
    if "link" in res or "allreduce" in res or entry.op == "allreduce":
        return "communication"
    if "loader" in res:
        return "data loading"
    if "copy" in res or "pcie" in res:
        return "transfer"
    return "other"


def _resource_group(resource: str) -> str:
    """``gpu3.stream0`` -> ``GPU streams``: the eight GPUs of a data-parallel run share one colour."""
    group = re.sub(r"(?<=[a-z])\d+(?=\.|$)", "", resource)  # trailing indices only: h2d stays h2d
    return _GROUP_NAMES.get(group, group)


_GROUP_NAMES = {"gpu.stream": "GPU streams", "gpu.copy.h2d": "host-to-GPU copies", "gpu.copy.d2h": "GPU-to-host copies",
                "host.loader.w": "loader workers", "gpu_link.allreduce": "all-reduce (GPU link)",
                "host.stream": "host threads", "pim.units": "PIM units"}


def timeline(result: Any, *, color_by: Literal["phase", "op", "kind", "resource"] = "phase",
             width: str | float = "text", title: str | None = None, style_name: str | None = "paper") -> Any:
    """Gantt chart of a discrete-event result: one row per resource, one bar per busy interval.

    ``color_by``: ``"phase"`` (forward, backward, update, communication, data loading, transfer; fixed
    colours), ``"op"`` (the busiest ops by name, as many as the palette has free colours, the rest
    ``other ops``), ``"kind"`` (conv2d, gemm, ...) or ``"resource"`` (by resource type: every GPU's
    stream alike, the link apart); communication, data loading and transfers keep their phase colour in
    every mode. The legend names every colour; the title is ``title`` or the run's model, batch, dtype,
    GPUs and hardware (:func:`run_title`). Bars have no outline, so thousands of short kernels read as
    blocks, not a barcode. Bars are drawn as one ``broken_barh`` collection per (resource, colour) pair,
    gid ``busy:<resource>:<key>``. The data (one row per interval, with its key) is attached for
    :func:`~archsim.plot.save`.
    """
    if not result.timeline:
        raise PlotError(f"the {result.engine!r} result has no timeline; run the workload with engine='des'")
    if color_by not in ("phase", "op", "kind", "resource"):
        raise PlotError(f"color_by={color_by!r} is not allowed; allowed: 'phase', 'op', 'kind', 'resource'")
    import pandas as pd
    from matplotlib.patches import Patch

    entries = result.timeline
    phases = {o.name: o.phase for o in result.ops}
    kinds = {o.name: o.kind for o in result.ops}
    if color_by == "phase":
        key_of = [_phase_of(t, phases) for t in entries]
        order = [k for k in PHASE_COLOURS if k in set(key_of)]
        colour = {k: PHASE_COLOURS[k] for k in order}
    else:
        if color_by == "op":
            raw = [t.op for t in entries]
        elif color_by == "kind":
            raw = [kinds.get(t.op, _phase_of(t, phases)) for t in entries]
        else:
            raw = [_resource_group(t.resource) for t in entries]
        if color_by != "resource":
            # Communication, loading and copies keep their phase colour and name: they are what a
            # data-parallel or input-bound timeline is read for, and would else vanish into "other".
            raw = [k if _phase_of(t, phases) not in _APART else _phase_of(t, phases) for k, t in
                   zip(raw, entries, strict=True)]
        apart = [k for k in PHASE_COLOURS if k in _APART and k in set(raw)]
        busy: dict[str, float] = {}
        for k, t in zip(raw, entries, strict=True):
            if k not in apart:
                busy[k] = busy.get(k, 0.0) + (t.end_s - t.start_s)
        ranked = sorted(busy, key=lambda k: -busy[k])
        free = [c for c in _PALETTE if c not in {PHASE_COLOURS[k] for k in apart}]
        room = len(free)
        keep = ranked if len(ranked) <= room else ranked[:room - 1]
        other = f"other {color_by}s" if color_by != "kind" else "other kinds"
        key_of = [k if k in keep or k in apart else other for k in raw]
        order = [*keep, *apart] + ([other] if len(keep) < len(ranked) else [])
        colour = {k: free[i] for i, k in enumerate(keep)}
        colour.update({k: PHASE_COLOURS[k] for k in apart})
        colour[other] = PHASE_COLOURS["other"]
    resources = sorted({t.resource for t in entries}, key=_natural)
    row = {r: i for i, r in enumerate(reversed(resources))}  # first resource on top
    end = max(t.end_s for t in entries)
    t_label, f = label("time_s", [end])
    with style(style_name):
        fig, (ax,) = figure(1, width=width, height_in=1.2 + 0.22 * len(resources))
        groups: dict[tuple[str, str], list[tuple[float, float]]] = {}
        for k, t in zip(key_of, entries, strict=True):
            groups.setdefault((t.resource, k), []).append((t.start_s / f, (t.end_s - t.start_s) / f))
        # Limits are set explicitly below; autoscaling after every collection is wasted work.
        ax.set_autoscale_on(False)
        for (res, k), spans in groups.items():
            ax.broken_barh(spans, (row[res] - 0.38, 0.76), facecolors=colour[k], edgecolor="none", linewidth=0,
                           gid=f"busy:{res}:{k}")
        ax.set_yticks([row[r] for r in resources], resources, fontsize=6)
        ax.set_xlabel(t_label)
        ax.set_xlim(0, end / f)
        ax.set_ylim(-0.6, len(resources) - 0.4)
        ax.grid(axis="y", visible=False)
        narrow = (3.5 if width == "column" else 7.16 if width == "text" else float(width)) < 5.0
        ax.set_title(title if title is not None else run_title(result, wrap=narrow), fontsize=7)
        handles = [Patch(facecolor=colour[k], edgecolor="none", label=k) for k in order]
        bottom_legend(fig, handles)
    data = pd.DataFrame([{"op": t.op, "resource": t.resource, "start_s": t.start_s, "end_s": t.end_s,
                          "phase": _phase_of(t, phases), "colour_key": k}
                         for k, t in zip(key_of, entries, strict=True)])
    return attach_data(fig, data)
