"""Predicted against measured: the validation scatter (log-log, the y = x line and an error band)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from archsim.plot._common import PlotError, attach_data, figure, label, need, style


def validation_scatter(frame: pd.DataFrame, predicted: str = "predicted_s", measured: str = "measured_s", *,
                       hue: str | None = "family", band: float = 2.0, width: str | float = "column",
                       style_name: str | None = "paper") -> Any:
    """One point per kernel; the legend gives each group's MAPE, |pred - meas| / meas, in percent.

    ``band`` draws the region within a factor ``band`` of the measurement (2: from half to twice).
    """
    need(frame, [predicted, measured, *([hue] if hue and hue in frame.columns else [])])
    if band <= 1:
        raise PlotError(f"band must be a factor > 1, got {band!r}")
    data = frame[(frame[predicted] > 0) & (frame[measured] > 0)]
    if data.empty:
        raise PlotError("no row has positive predicted and measured values")
    values = np.concatenate([data[predicted].to_numpy(float), data[measured].to_numpy(float)])
    m_label, f = label(measured, values, title="measured")
    p_label, _ = label(predicted, values, title="predicted")
    lo, hi = values.min() / f / 2, values.max() / f * 2
    with style(style_name):
        fig, (ax,) = figure(1, width=width, height_in=3.0)
        line = np.array([lo, hi])
        ax.plot(line, line, color="black", linewidth=0.8, gid="identity", label="_")
        ax.fill_between(line, line / band, line * band, color="0.85", linewidth=0, gid="band",
                        label=f"within {band:g}x")
        groups = data.groupby(hue, sort=True) if hue and hue in data.columns else [("all", data)]
        for key, grp in groups:
            mape = float(np.mean(np.abs(grp[predicted] - grp[measured]) / grp[measured]) * 100)
            ax.scatter(grp[measured] / f, grp[predicted] / f, s=10, label=f"{key} (MAPE {mape:.0f}%)",
                       gid=f"kernels:{key}", zorder=3)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(lo, hi)
        ax.set_ylim(lo, hi)
        ax.set_aspect("equal")
        ax.set_xlabel(m_label)
        ax.set_ylabel(p_label)
        ax.legend(fontsize=6, loc="upper left")
    return attach_data(fig, data.reset_index(drop=True))
