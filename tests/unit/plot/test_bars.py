"""Grouped bars: one bar per (group, hue), markers where given, unit-scaled axis, errors named."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from archsim import plot
from archsim.plot import PlotError


def _frame():
    return pd.DataFrame({
        "model": ["mlp", "mlp", "cnn", "cnn"],
        "gpu": ["K80", "P100", "K80", "P100"],
        "latency_s": [0.002, 0.001, 0.020, 0.010],
        "published_s": [0.003, math.nan, 0.030, 0.012],
    })


def test_bars_structure():
    fig = plot.bars(_frame(), "model", "latency_s", "gpu", marker="published_s", reference=0.005)
    fig.canvas.draw()
    (ax,) = fig.axes
    # two hues x two groups = 4 rectangles; values in ms (median 0.006 s -> ms): 2, 1, 20, 10
    heights = sorted(r.get_height() for c in ax.containers for r in c)
    assert heights == pytest.approx([1.0, 2.0, 10.0, 20.0])
    assert ax.get_ylabel() == "latency (ms)"
    # 3 published values are finite (one NaN is skipped): 2 for K80, 1 for P100
    marks = {c.get_gid(): len(c.get_offsets()) for c in ax.collections}
    assert marks == {"marker:K80": 2, "marker:P100": 1}
    ref = [ln for ln in ax.get_lines() if ln.get_gid() == "reference"]
    assert ref and ref[0].get_ydata()[0] == pytest.approx(5.0)


def test_bars_without_unit_and_hue():
    frame = pd.DataFrame({"model": ["a", "b"], "speedup": [3.0, 12.0]})
    fig = plot.bars(frame, "model", "speedup", ylabel="GPU speedup (x)", logy=True)
    (ax,) = fig.axes
    assert ax.get_yscale() == "log" and ax.get_ylabel() == "GPU speedup (x)"
    assert [r.get_height() for r in ax.containers[0]] == [3.0, 12.0]


def test_bars_errors():
    with pytest.raises(PlotError, match="nope"):
        plot.bars(_frame(), "model", "nope")
    with pytest.raises(PlotError, match="several rows"):
        plot.bars(_frame(), "model", "latency_s")
    with pytest.raises(PlotError, match="no rows"):
        plot.bars(_frame().iloc[:0], "model", "latency_s", "gpu")
