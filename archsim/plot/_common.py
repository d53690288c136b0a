"""Shared plot helpers: the paper style, unit-aware axis labels, deterministic saving.

Columns carry their SI unit in the name (``latency_s``, ``gpu.dram.bandwidth_bytes_per_s``); labels
turn that into a human unit with an SI prefix chosen from the data (``latency (ms)``). This is one of
the two places (with the CLI) where values leave SI.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from archsim.errors import ArchsimError

__all__ = ["PAPER_STYLE", "COLUMN_WIDTH_IN", "TEXT_WIDTH_IN", "style", "save", "unit_of", "label",
           "scale_for", "PlotError", "figure", "ok_rows", "need"]

PAPER_STYLE = Path(__file__).resolve().with_name("paper.mplstyle")
COLUMN_WIDTH_IN = 3.5  # one column of the IEEE/ACM two-column formats
TEXT_WIDTH_IN = 7.16  # the full text width of the IEEE two-column format


class PlotError(ArchsimError, ValueError):
    """A plot asked of data that cannot give it (a missing column, a result without a timeline)."""


# Suffix -> (unit symbol, whether SI prefixes apply). Longest suffixes first.
_UNITS: Sequence[tuple[str, str, bool]] = (
    ("_bytes_per_s", "B/s", True), ("_flop_per_s", "FLOP/s", True), ("_j_per_byte", "J/B", True),
    ("_j_per_flop", "J/FLOP", True), ("_fraction", "%", False), ("_bytes", "B", True), ("_flop", "FLOP", True),
    ("_hz", "Hz", True), ("_s", "s", True), ("_j", "J", True), ("_w", "W", True),
)
_PREFIX = {-15: "f", -12: "p", -9: "n", -6: "µ", -3: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E"}


def unit_of(column: str) -> tuple[str, str, bool]:
    """``(name, unit, prefixable)`` of a column: ``"latency_s"`` -> ``("latency", "s", True)``."""
    if column == "flop":
        return "work", "FLOP", True
    for suffix, unit, prefixable in _UNITS:
        if column.endswith(suffix) and len(column) > len(suffix):
            return column[: -len(suffix)].replace("_", " "), unit, prefixable
    return column.replace("_", " "), "", False


def scale_for(column: str, values: Any) -> tuple[float, str]:
    """The factor to divide values by and the unit text: ``(1e-3, "ms")`` for latencies around 0.02 s."""
    _name, unit, prefixable = unit_of(column)
    if unit == "%":
        return 0.01, "%"
    if not prefixable:
        return 1.0, unit
    arr = np.asarray(values, dtype=float)
    arr = np.abs(arr[np.isfinite(arr) & (arr != 0)])
    if arr.size == 0:
        return 1.0, unit
    exp = int(math.floor(math.log10(float(np.median(arr))) / 3) * 3)
    exp = max(min(exp, 18), -15)
    return 10.0**exp, _PREFIX[exp] + unit


def label(column: str, values: Any = None, title: str | None = None) -> tuple[str, float]:
    """An axis label with the unit in parentheses, and the factor the values must be divided by."""
    name, unit, _ = unit_of(column)
    factor, text = scale_for(column, values if values is not None else [1.0])
    name = title or name
    return (f"{name} ({text})" if text else name), factor


@contextlib.contextmanager
def style(name: str | None = "paper") -> Iterator[None]:
    """The paper style as a context (``None``: the caller's current rcParams)."""
    import matplotlib.pyplot as plt

    if name is None:
        yield
        return
    with plt.style.context(str(PAPER_STYLE) if name == "paper" else name):
        yield


def figure(ncols: int = 1, width: str | float = "column", height_in: float | None = None) -> Any:
    """A figure of column or text width (inches) with ``ncols`` axes; call inside :func:`style`."""
    import matplotlib.pyplot as plt

    w = COLUMN_WIDTH_IN if width == "column" else TEXT_WIDTH_IN if width == "text" else float(width)
    h = height_in if height_in is not None else plt.rcParams["figure.figsize"][1]
    fig, axes = plt.subplots(1, ncols, figsize=(w, h), squeeze=False)
    return fig, list(axes[0])


def save(fig: Any, path_stem: str | Path, formats: Sequence[str] = ("pdf", "png"), style_name: str | None = "paper",
         ) -> list[Path]:
    """Write ``<stem>.pdf`` and ``<stem>.png``; the same figure always gives the same bytes.

    matplotlib stamps PDFs with a creation date and PNGs with its version (``Software``); both are
    removed (``metadata={"CreationDate": None}`` and ``{"Software": None}``, matplotlib's
    ``savefig`` documentation), so output depends only on the figure and the matplotlib version.
    """
    stem = Path(path_stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    written = []
    metadata = {"pdf": {"CreationDate": None, "ModDate": None}, "png": {"Software": None},
                "svg": {"Date": None}}
    with style(style_name):
        for fmt in formats:
            if fmt not in metadata:
                raise PlotError(f"format {fmt!r} is not supported; allowed: {', '.join(metadata)}")
            path = stem.with_suffix(f".{fmt}")
            fig.savefig(path, format=fmt, metadata=metadata[fmt])
            written.append(path)
    return written


def ok_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """Rows of a sweep table whose point evaluated (status ``ok``), as a wide frame."""
    from archsim.sweep.analysis import to_wide

    wide = to_wide(frame)
    return wide[wide["status"] == "ok"] if "status" in wide.columns else wide


def need(frame: pd.DataFrame, columns: Sequence[str]) -> None:
    """Raise a :class:`PlotError` naming the columns ``frame`` lacks."""
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise PlotError(f"columns {missing} are not in the table; it has {list(frame.columns)}")
