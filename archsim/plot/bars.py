"""Grouped bars of a plain table: one group per category, one bar per hue, optional reference markers.

The figure scenarios use for "speedup per model and GPU" or "time per kernel and device": ``y`` is
a numeric column (its unit comes from the suffix, ``latency_s`` -> ms/s/...; a column without a
unit suffix, such as ``speedup``, is plotted as is), and ``marker`` names a second column drawn as a
black diamond on each bar, typically the published value the bar reproduces.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from archsim.plot._common import PlotError, attach_data, bottom_legend, figure, label, need, style

__all__ = ["bars"]


def bars(frame: pd.DataFrame, x: str, y: str, hue: str | None = None, *, marker: str | None = None,
         marker_label: str = "published", logy: bool = False, reference: float | None = None,
         annotate: bool = True, ylabel: str | None = None, title: str | None = None, width: str | float = "column",
         style_name: str | None = "paper") -> Any:
    """Bars of ``y`` per value of ``x`` (groups, in order of appearance), one bar per value of ``hue``.

    ``marker``: a column drawn as a diamond on each bar (NaN: none). ``reference``: a horizontal line at
    that value of ``y`` (e.g. 1 for "no speedup"). ``annotate`` writes each bar's value above it.
    Raises :class:`PlotError` for missing columns, an empty table or duplicate ``(x, hue)`` rows.
    """
    cols = [x, y, *([hue] if hue else []), *([marker] if marker else [])]
    need(frame, cols)
    if frame.empty:
        raise PlotError("the table has no rows to plot")
    keys = [x, *([hue] if hue else [])]
    if frame.duplicated(keys).any():
        raise PlotError(f"several rows share each {keys}: bars need one row per group and hue")
    groups = list(dict.fromkeys(frame[x]))
    hues = list(dict.fromkeys(frame[hue])) if hue else [None]
    values = frame[y].to_numpy(dtype=float)
    if marker:
        values = np.concatenate([values, frame[marker].to_numpy(dtype=float)])
    y_text, fy = label(y, values[np.isfinite(values)], title=ylabel)
    if ylabel and "(" not in y_text and fy == 1.0:
        y_text = ylabel
    step = 0.8 / len(hues)
    with style(style_name):
        fig, (ax,) = figure(1, width=width)
        pos = np.arange(len(groups))
        for i, h in enumerate(hues):
            sub = frame if h is None else frame[frame[hue] == h]
            by_group = dict(zip(sub[x], sub[y].astype(float), strict=True))
            xs = pos - 0.4 + step * (i + 0.5)
            ys = np.array([by_group.get(g, math.nan) for g in groups]) / fy
            ax.bar(xs, ys, width=step * 0.92, label=str(h) if h is not None else y_text, gid=f"bar:{h}")
            ms = np.full(len(groups), math.nan)
            if marker:
                by_mark = dict(zip(sub[x], sub[marker].astype(float), strict=True))
                ms = np.array([by_mark.get(g, math.nan) for g in groups]) / fy
                ok = np.isfinite(ms)
                ax.scatter(xs[ok], ms[ok], marker="D", s=10, color="black", zorder=3,
                           label=marker_label if i == 0 else None, gid=f"marker:{h}")
            if annotate:
                # Above the bar, or above its marker when that is higher: a label under a marker is unreadable.
                for xv, yv, mv in zip(xs, ys, ms, strict=True):
                    if np.isfinite(yv):
                        top = max(yv, mv) if np.isfinite(mv) else yv
                        ax.annotate(f"{yv:.3g}", (xv, top), xytext=(0, 4 if np.isfinite(mv) and mv >= yv else 1),
                                    textcoords="offset points", ha="center", va="bottom", fontsize=5,
                                    gid=f"value:{h}")
        if reference is not None:
            ax.axhline(reference / fy, color="0.3", linewidth=0.6, linestyle="--", gid="reference")
        ax.set_xticks(pos, [str(g) for g in groups], fontsize=6)
        ax.set_ylabel(y_text)
        ax.grid(axis="x", visible=False)
        if logy:
            from matplotlib.ticker import FuncFormatter, NullFormatter

            ax.set_yscale("log")
            # Plain numbers (0.5, 1, 10) rather than powers of ten: bars are read, not fitted. Within one
            # decade there is at most one major tick, so the minor ticks are labelled too.
            plain = FuncFormatter(lambda v, _pos: f"{v:g}")
            lo, hi = ax.get_ylim()
            ax.yaxis.set_major_formatter(plain)
            ax.yaxis.set_minor_formatter(plain if hi / lo < 10 else NullFormatter())
        if annotate:
            lo, hi = ax.get_ylim()
            # room for the value labels: a tenth of the axis more (of its decades on a log axis)
            ax.set_ylim(lo, hi * max(1.6, (hi / lo) ** 0.12) if logy else hi + 0.1 * (hi - lo))
        if title:
            ax.set_title(title)
        if hue or marker:
            handles, texts = ax.get_legend_handles_labels()
            bottom_legend(fig, handles, texts)  # below the axes: a legend inside covers some bar
    cols = [c for c in dict.fromkeys(cols) if c in frame.columns]
    return attach_data(fig, frame[cols].reset_index(drop=True))
