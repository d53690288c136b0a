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


def _colours(keys: list[str]) -> dict[str, str]:
    """A fixed colour per energy component or bound where one is known, palette colours for the rest."""
    fixed = {"compute": "#0072B2", "static": "#999999", "register": "#56B4E9", "l1": "#009E73", "shared": "#44AA99",
             "l2": "#E69F00", "dram": "#D55E00", "link": "#CC79A7", "pim": "#882255",
             "compute:tensor": "#0072B2", "compute:vector": "#56B4E9", "memory:dram": "#D55E00",
             "memory:l2": "#E69F00", "memory:l1": "#009E73", "overhead": "#999999"}
    free = [c for c in _PALETTE if c not in {fixed[k] for k in keys if k in fixed}]
    out = {}
    for k in keys:
        out[k] = fixed.get(k) or (free.pop(0) if free else "#332288")
    return out


def breakdown(result: Any, by: Literal["op", "component"] = "op", *, top: int = 10, width: str | float = "text",
              style_name: str | None = "paper") -> Any:
    """Latency and energy, stacked: per op (the ``top`` slowest, the rest as ``other``) or per component.

    Latency is split by each op's bound (what limits it), energy by component; the energy panel is
    titled with the run's data-movement share (everything but arithmetic and static energy). Bars are
    horizontal, the slowest op on top; with ``by="component"`` the one bar is named after the run
    (model, batch, dtype). Each legend sits below its panel, every entry with its colour.
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
    with style(style_name):
        # Horizontal bars: op names read left to right, slowest on top, whatever their length.
        fig, (ax_t, ax_e) = figure(2, width=width, height_in=1.5 + 0.15 * len(names))
        pos = np.arange(len(names))
        for ax, parts, f, xlabel in ((ax_t, lat, lat_f, lat_label), (ax_e, energy, en_f, en_label)):
            left = np.zeros(len(names))
            for key, vals in parts.items():
                ax.barh(pos, vals / f, left=left, label=key, height=0.7, color=colour[key], gid=f"bar:{key}")
                left += vals / f
            ax.set_yticks(pos, names if ax is ax_t else [""] * len(names), fontsize=6)
            ax.set_ylim(len(names) - 0.5, -0.5)
            ax.set_xlabel(xlabel)
            ax.grid(axis="y", visible=False)
            shown = [k for k in parts if parts[k].sum() > 0]
            # Below the figure, one legend per panel at its side: never over a bar or an axis label.
            fig.legend(handles=[Patch(facecolor=colour[k], edgecolor="none", label=k) for k in shown], fontsize=6,
                       loc="outside lower left" if ax is ax_t else "outside lower right", ncols=2)
        serial = sum(o.latency_s for o in result.ops) or 1.0
        named = 1.0 - sum(o.latency_s for o in rest) / serial
        note = f"\ntop {len(names)} of {len(result.ops)} ops: {100 * named:.0f}% of time" if rest else ""
        ax_t.set_title("latency by bound" + note, fontsize=6)
        share = result.data_movement_fraction
        ax_e.set_title(f"energy by component\ndata movement {100 * share:.1f}%", fontsize=6, gid="data-movement")
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


# Fixed colours per phase (Okabe & Ito), so every timeline reads the same: compute phases in blue,
# orange, green; communication, loading and copies in the remaining hues; never black.
PHASE_COLOURS = {"forward": "#0072B2", "backward": "#D55E00", "update": "#009E73", "communication": "#CC79A7",
                 "data loading": "#E69F00", "transfer": "#56B4E9", "other": "#999999"}
# Categorical colours without black (it reads as an outline) and with grey kept for "other".
_PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#882255", "#44AA99",
            "#332288")
_MAX_KEYS = len(_PALETTE)


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
             width: str | float = "text", style_name: str | None = "paper") -> Any:
    """Gantt chart of a discrete-event result: one row per resource, one bar per busy interval.

    ``color_by``: ``"phase"`` (forward, backward, update, communication, data loading, transfer; fixed
    colours), ``"op"`` (the 9 busiest ops by name, the rest ``other ops``), ``"kind"`` (conv2d, gemm, ...)
    or ``"resource"`` (by resource type: every GPU's stream alike, the link apart). The legend names
    every colour. Bars have no outline, so thousands of short kernels read as blocks, not a barcode.
    Bars are drawn as one ``broken_barh`` collection per (resource, colour) pair, gid
    ``busy:<resource>:<key>``. The data (one row per interval, with its key) is attached for
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
        busy: dict[str, float] = {}
        for k, t in zip(raw, entries, strict=True):
            busy[k] = busy.get(k, 0.0) + (t.end_s - t.start_s)
        ranked = sorted(busy, key=lambda k: -busy[k])
        keep = ranked if len(ranked) <= _MAX_KEYS else ranked[:_MAX_KEYS - 1]
        other = f"other {color_by}s" if color_by != "kind" else "other kinds"
        key_of = [k if k in keep else other for k in raw]
        order = [k for k in keep] + ([other] if len(keep) < len(ranked) else [])
        colour = {k: _PALETTE[i] for i, k in enumerate(keep)}
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
        handles = [Patch(facecolor=colour[k], edgecolor="none", label=k) for k in order]
        bottom_legend(fig, handles)
    data = pd.DataFrame([{"op": t.op, "resource": t.resource, "start_s": t.start_s, "end_s": t.end_s,
                          "phase": _phase_of(t, phases), "colour_key": k}
                         for k, t in zip(key_of, entries, strict=True)])
    return attach_data(fig, data)
