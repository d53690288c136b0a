"""Plots of sweep tables: metric-vs-axis lines, two-axis heatmaps, Pareto fronts.

They take the table :meth:`archsim.Sweep.run` returns (tidy or wide) and use points with status
``ok``; axes are labelled with the unit their column's suffix names.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from archsim.plot._common import PlotError, attach_data, figure, label, need, ok_rows, style


def _filtered(table: pd.DataFrame, where: Mapping[str, Any] | None, columns: list[str]) -> pd.DataFrame:
    wide = ok_rows(table)
    need(wide, [*columns, *(where or {})])
    for col, value in (where or {}).items():
        wide = wide[wide[col] == value]
    if wide.empty:
        raise PlotError(f"no point with status 'ok' is left after filtering by {dict(where or {})}")
    return wide


def _check_unique(wide: pd.DataFrame, keys: list[str]) -> None:
    if wide.duplicated(keys).any():
        from archsim.sweep.analysis import parameter_columns

        varying = [c for c in parameter_columns(wide) if c not in keys and wide[c].nunique() > 1]
        raise PlotError(f"several points share each {keys}: the axes {varying} also vary; fix them with where={{...}}")


def _quiet_minor_ticks(ax: Any) -> None:
    """No labels on the minor ticks of a log axis spanning a decade or more: matplotlib labels them
    (2x10^4, 3x10^4, ...) on short spans, and they print over each other."""
    from matplotlib.ticker import NullFormatter

    for axis, lim in ((ax.xaxis, ax.get_xlim()), (ax.yaxis, ax.get_ylim())):
        if axis.get_scale() == "log" and min(lim) > 0 and max(lim) / min(lim) >= 10:
            axis.set_minor_formatter(NullFormatter())


_MARKERS = ("o", "s", "^", "D", "v", "P", "X")


def _title(ax: Any, title: str | None) -> None:
    if title:
        ax.set_title(title, fontsize=7)


def sweep_lines(table: pd.DataFrame, x: str, y: str = "latency_s", hue: str | None = None, *,
                where: Mapping[str, Any] | None = None, logx: bool = False, logy: bool = False,
                width: str | float = "column", title: str | None = None, style_name: str | None = "paper") -> Any:
    """``y`` against axis ``x``, one line per value of ``hue``; ``where`` fixes other axes; ``title`` names
    what was swept (a sweep spec's plots get its model and base hardware)."""
    cols = [x, y, *([hue] if hue else [])]
    wide = _filtered(table, where, cols)
    _check_unique(wide, [x, *([hue] if hue else [])])
    x_label, fx = label(x, wide[x])
    y_label, fy = label(y, wide[y])
    with style(style_name):
        fig, (ax,) = figure(1, width=width)
        groups = wide.groupby(hue, sort=True) if hue else [(None, wide)]
        for i, (key, grp) in enumerate(groups):
            grp = grp.sort_values(x)
            if hue:
                h_label, fh = label(hue, wide[hue])
                name = f"{key / fh:.3g}" if isinstance(key, int | float | np.number) else str(key)
                text = f"{h_label.split(' (')[0]} = {name}" + (f" {h_label.split('(')[-1][:-1]}" if "(" in h_label
                                                               else "")
            else:
                text = y_label
            # a marker shape per line, each a little smaller than the last: lines that coincide (two SM
            # counts equally memory-bound) still show every series
            ax.plot(grp[x] / fx, grp[y] / fy, marker=_MARKERS[i % len(_MARKERS)], markersize=max(2.5, 4.5 - 0.6 * i),
                    label=text, gid=f"line:{key}")
        ax.set_xlabel(x_label)
        ax.set_ylabel(y_label)
        if logx:
            ax.set_xscale("log")
        if logy:
            ax.set_yscale("log")
        _quiet_minor_ticks(ax)
        _title(ax, title)
        if hue:
            ax.legend(fontsize=6)
    return attach_data(fig, wide[[c for c in dict.fromkeys(cols)]].sort_values(cols[::-1][-1:] + cols[:1])
                       .reset_index(drop=True))


def heatmap(table: pd.DataFrame, x: str, y: str, value: str = "latency_s", *,
            where: Mapping[str, Any] | None = None, annotate: bool = True, width: str | float = "column",
            title: str | None = None, style_name: str | None = "paper") -> Any:
    """``value`` over the grid of axes ``x`` and ``y`` (missing or invalid cells are left blank); cells
    print three significant digits."""
    wide = _filtered(table, where, [x, y, value])
    _check_unique(wide, [x, y])
    grid = wide.pivot(index=y, columns=x, values=value).sort_index().sort_index(axis=1)
    v_label, fv = label(value, wide[value])
    x_label, fx = label(x, grid.columns.to_numpy())
    y_label, fy = label(y, grid.index.to_numpy())
    data = grid.to_numpy(dtype=float) / fv
    with style(style_name):
        fig, (ax,) = figure(1, width=width, height_in=2.8)
        mesh = ax.imshow(np.ma.masked_invalid(data), origin="lower", aspect="auto", gid="heatmap")
        ax.set_xticks(range(grid.shape[1]), [f"{v / fx:.3g}" for v in grid.columns], fontsize=6)
        ax.set_yticks(range(grid.shape[0]), [f"{v / fy:.3g}" for v in grid.index], fontsize=6)
        ax.set_xlabel(x_label)
        ax.set_ylabel(y_label)
        ax.grid(False)
        bar = fig.colorbar(mesh, ax=ax)
        bar.set_label(v_label)
        _title(ax, title)
        if annotate and data.size <= 100:
            for (i, j), v in np.ndenumerate(data):
                if np.isfinite(v):
                    # Dark text on light cells, white on dark ones (WCAG relative luminance of the cell).
                    r, g, b, _ = mesh.cmap(mesh.norm(v))
                    lum = 0.2126 * r + 0.7152 * g + 0.0722 * b
                    ax.text(j, i, f"{v:#.3g}".rstrip("."), ha="center", va="center", fontsize=5,
                            color="black" if lum > 0.4 else "white", gid=f"cell:{i}:{j}")
    return attach_data(fig, grid.reset_index())


def pareto(table: pd.DataFrame, x: str = "latency_s", y: str = "energy_j", *, hue: str | None = None,
           objectives: Mapping[str, str] | None = None, width: str | float = "column",
           title: str | None = None, style_name: str | None = "paper") -> Any:
    """Every point of ``x`` against ``y`` with the Pareto front (both minimised unless ``objectives``)."""
    from archsim.sweep.analysis import pareto_front

    wide = _filtered(table, None, [x, y, *([hue] if hue else [])])
    front = pareto_front(wide, objectives or {x: "min", y: "min"})
    x_label, fx = label(x, wide[x])
    y_label, fy = label(y, wide[y])
    with style(style_name):
        fig, (ax,) = figure(1, width=width)
        if hue:
            h_label, fh = label(hue, wide[hue])
            for key, grp in wide.groupby(hue, sort=True):
                name = f"{key / fh:.3g}" if isinstance(key, int | float | np.number) else str(key)
                ax.scatter(grp[x] / fx, grp[y] / fy, s=8, alpha=0.7, label=f"{h_label} = {name}", gid=f"points:{key}")
        else:
            ax.scatter(wide[x] / fx, wide[y] / fy, s=8, color="0.6", label="points", gid="points")
        ax.step(front[x] / fx, front[y] / fy, where="post", color="black", linewidth=1.0, gid="front")
        ax.scatter(front[x] / fx, front[y] / fy, s=16, facecolor="none", edgecolor="black", label="Pareto front",
                   zorder=3, gid="front-points")
        ax.set_xlabel(x_label)
        ax.set_ylabel(y_label)
        _title(ax, title)
        ax.legend(fontsize=6)
    return attach_data(fig, wide[[c for c in dict.fromkeys([x, y, *([hue] if hue else [])])]].reset_index(drop=True),
                       front=front.reset_index(drop=True))
