"""Validation plots: predicted vs measured (log-log) and signed error vs problem size, PNG and PDF.

Figures are built on ``matplotlib.figure.Figure`` with the Agg canvas: no pyplot state, no backend set.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

__all__ = ["write_plots"]


def _save(fig: Figure, stem: Path) -> list[Path]:
    FigureCanvasAgg(fig)
    paths = []
    for ext in ("png", "pdf"):
        p = stem.with_suffix(f".{ext}")
        fig.savefig(p, dpi=150, bbox_inches="tight")
        paths.append(p)
    return paths


def write_plots(rep: Any, dest: Path, budgets: dict[str, float]) -> list[Path]:
    """``scatter.{png,pdf}`` and ``error_vs_size.{png,pdf}`` of a device report into ``dest``."""
    families = sorted({r.family for r in rep.rows})
    # Ten colours, then the same colours with another marker: no two families look alike.
    colours = {f: f"C{i % 10}" for i, f in enumerate(families)}
    markers = {f: "osD^v"[(i // 10) % 5] for i, f in enumerate(families)}

    fig = Figure(figsize=(5.5, 5.0))
    ax = fig.add_subplot()
    lo = min(min(r.measured_s, r.predicted_s) for r in rep.rows)
    hi = max(max(r.measured_s, r.predicted_s) for r in rep.rows)
    ax.plot([lo, hi], [lo, hi], color="0.3", lw=0.8, label="predicted = measured")
    for bound in (0.9, 1.1):
        ax.plot([lo, hi], [lo * bound, hi * bound], color="0.6", lw=0.6, ls="--")
    for fam in families:
        rows = [r for r in rep.rows if r.family == fam]
        ax.scatter(
            [r.measured_s for r in rows], [r.predicted_s for r in rows], s=14, color=colours[fam],
            marker=markers[fam], label=fam,
        )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("measured median time (s)")
    ax.set_ylabel("archsim predicted time (s)")
    ax.set_title(f"{rep.device}: archsim ({rep.preset}) vs measured")
    ax.legend(fontsize=7, loc="upper left")
    paths = _save(fig, dest / "scatter")

    fig = Figure(figsize=(6.5, 4.0))
    ax = fig.add_subplot()
    for fam in families:
        rows = [r for r in rep.rows if r.family == fam]
        size = [r.bytes_moved if r.bytes_moved > 0 else max(r.flop, 1) for r in rows]
        ax.scatter(size, [r.error_pct for r in rows], s=14, color=colours[fam], marker=markers[fam], label=fam)
    ax.axhline(0.0, color="0.3", lw=0.8)
    for b in sorted(set(budgets.values())):
        ax.axhline(b, color="0.6", lw=0.6, ls="--")
        ax.axhline(-b, color="0.6", lw=0.6, ls="--")
    ax.set_xscale("log")
    ax.set_xlabel("bytes moved (FLOP where no bytes)")
    ax.set_ylabel("prediction error (% of measured)")
    ax.set_title(f"{rep.device}: error vs problem size")
    ax.legend(fontsize=7, ncol=2)
    return paths + _save(fig, dest / "error_vs_size")
