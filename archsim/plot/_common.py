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
           "scale_for", "PlotError", "figure", "ok_rows", "need", "attach_data", "figure_data",
           "layout_problems", "place_labels", "marker_boxes", "axis_title", "bottom_legend", "settle",
           "freeze_layout"]

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


# Human names of the sweep axes and columns people plot most; any other dotted path reads as its last
# segments ("gpu.sm.l1.size_bytes" -> "L1 size"). Only labels change: columns keep their SI names.
_AXIS_TITLES = {
    "dram.bandwidth": "DRAM bandwidth", "sm_count": "SM count", "l2.size": "L2 size", "l2.bandwidth": "L2 bandwidth",
    "sm.l1.size": "L1 size", "clock": "clock", "tensor_clock": "tensor-core clock", "cores": "cores",
    "host_link.bandwidth": "host link bandwidth", "dram.capacity": "DRAM capacity", "dram.channels": "DRAM channels",
    "workload.batch": "batch size", "workload.dtype": "element type", "workload.model": "model",
}


def axis_title(name: str) -> str:
    """A human title for a column's name (its unit suffix already removed): ``"gpu.sm_count"`` -> ``"SM count"``."""
    key = name.replace(" ", "_")  # unit_of has turned underscores into spaces
    for prefix in ("gpu.", "cpu.", "host.", "pim.", "dram."):
        if key.startswith(prefix) and key[len(prefix):] in _AXIS_TITLES:
            return _AXIS_TITLES[key[len(prefix):]]
    if key in _AXIS_TITLES:
        return _AXIS_TITLES[key]
    if "." in key:
        parts = [p for p in key.split(".") if p not in ("gpu", "cpu", "host", "pim", "workload")]
        return " ".join(p.replace("_", " ") for p in parts[-2:]) if parts else key
    return key.replace("_", " ")


def label(column: str, values: Any = None, title: str | None = None) -> tuple[str, float]:
    """An axis label with the unit in parentheses, and the factor the values must be divided by.

    Dotted sweep paths get a human name (``gpu.dram.bandwidth_bytes_per_s`` -> ``DRAM bandwidth (TB/s)``).
    """
    name, unit, _ = unit_of(column)
    name = axis_title(name) if "." in name else name
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


def attach_data(fig: Any, frame: pd.DataFrame, **extra: pd.DataFrame) -> Any:
    """Keep the data a figure draws on the figure, so :func:`save` writes it beside it as CSV.

    ``frame`` becomes ``<stem>.csv``; each ``extra`` frame ``<stem>.<key>.csv`` (e.g. a roofline's ceilings).
    Returns ``fig``.
    """
    fig.archsim_data = {"": frame, **extra}
    return fig


def figure_data(fig: Any) -> dict[str, pd.DataFrame]:
    """The frames :func:`attach_data` kept on ``fig`` (key ``""`` is the main one); empty if none."""
    return dict(getattr(fig, "archsim_data", {}) or {})


def _extent(text: Any, renderer: Any) -> Any:
    """A text's window extent with its background box (a label's halo hides what lies under it too)."""
    from matplotlib.transforms import Bbox

    box = text.get_window_extent(renderer)
    patch = text.get_bbox_patch()
    if patch is not None and patch.get_visible():
        text.update_bbox_position_size(renderer)
        box = Bbox.union([box, patch.get_window_extent(renderer)])
    return box


def _overlap(a: Any, b: Any, tol: float) -> bool:
    return (min(a.x1, b.x1) - max(a.x0, b.x0) > tol) and (min(a.y1, b.y1) - max(a.y0, b.y0) > tol)


def _texts(fig: Any) -> list[Any]:
    """Every drawn text of ``fig``: titles, axis labels, visible tick labels, annotations, legends."""
    out: list[Any] = [*fig.texts]
    figures, legends = [fig], list(fig.legends)
    while figures:  # subfigures (a stacked breakdown) hold their own titles and legends
        for sub in figures.pop().subfigs:
            out.extend(sub.texts)
            legends.extend(sub.legends)
            figures.append(sub)
    for leg in [*legends, *(ax.get_legend() for ax in fig.axes)]:
        if leg is not None:
            out.extend(leg.get_texts())
            out.append(leg.get_title())
    for ax in fig.axes:
        out.extend([ax.title, ax._left_title, ax._right_title, ax.xaxis.label, ax.yaxis.label, *ax.texts])
        for axis in (ax.xaxis, ax.yaxis):
            # only the ticks inside the view are drawn (the locator also returns some beyond it)
            for tick in axis._update_ticks():
                out.extend((tick.label1, tick.label2))
        out.extend([ax.xaxis.get_offset_text(), ax.yaxis.get_offset_text()])
    return [t for t in out if t.get_visible() and t.get_text().strip()]


def layout_problems(fig: Any, tol_px: float = 0.5, style_name: str | None = "paper") -> list[str]:
    """Text a reader cannot read: overlapping text boxes, text outside the figure, labels clipped by axes.

    Draws ``fig`` and compares the window extents (matplotlib's bounding boxes in pixels) of every drawn
    text: titles, axis and tick labels, annotations, legend entries. An annotation inside an axes (a
    ceiling or value label) must also lie within that axes, or it is clipped. ``tol_px`` forgives
    sub-pixel touching. The figure is drawn in ``style_name`` (as :func:`save` writes it: fonts and
    mathtext are resolved at each draw). Returns one line per problem; an empty list means the layout
    is clean.
    """
    with style(style_name):
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        boxes = [(t, _extent(t, renderer)) for t in _texts(fig)]
    page = fig.bbox

    def outside(box: Any, frame: Any) -> bool:
        return (box.x0 < frame.x0 - tol_px or box.x1 > frame.x1 + tol_px or box.y0 < frame.y0 - tol_px
                or box.y1 > frame.y1 + tol_px)

    problems = []
    for t, box in boxes:
        if outside(box, page):
            problems.append(f"outside the figure: {t.get_text()!r}")
        elif t.axes is not None and t in t.axes.texts and outside(box, t.axes.bbox):
            problems.append(f"clipped by the axes: {t.get_text()!r}")
    for i, (a, box_a) in enumerate(boxes):
        for b, box_b in boxes[i + 1:]:
            if _overlap(box_a, box_b, tol_px):
                problems.append(f"overlap: {a.get_text()!r} and {b.get_text()!r}")
    return problems


def settle(fig: Any, draws: int = 3) -> None:
    """Draw until constrained layout stops moving the axes (it takes a pass or two after a legend or
    title is added), so what is measured next is what a saved file shows."""
    last = None
    for _ in range(draws):
        fig.canvas.draw()
        now = tuple(tuple(ax.get_position().bounds) for ax in fig.axes)
        if now == last:
            return
        last = now


def freeze_layout(fig: Any) -> None:
    """Settle the layout, then keep it: labels placed in points stay where they were placed when the
    figure is drawn or saved again."""
    settle(fig)
    fig.set_layout_engine("none")


def bottom_legend(fig: Any, handles: Sequence[Any], labels: Sequence[str] | None = None, max_cols: int = 5,
                  fontsize: float = 6) -> Any:
    """A legend below the axes (never over the data) with as many columns as fit the figure's width, its
    rows filled evenly."""
    labels = list(labels) if labels is not None else [h.get_label() for h in handles]
    legend = None
    for ncols in range(min(max_cols, len(handles)), 0, -1):
        legend = fig.legend(handles=handles, labels=labels, loc="outside lower center", ncols=ncols,
                            fontsize=fontsize)
        settle(fig)
        box = legend.get_window_extent(fig.canvas.get_renderer())
        # centred on the axes, not the page: it must fit on both sides; 2% spare for the small
        # differences of text widths between the screen and the 300 dpi of a saved file
        spare = 0.02 * fig.bbox.width
        if (box.x0 >= fig.bbox.x0 + spare and box.x1 <= fig.bbox.x1 - spare) or ncols == 1:
            # as many rows, but balanced: six entries in 3 + 3, not 5 + 1 (a lone entry reads as a note)
            balanced = -(-len(handles) // -(-len(handles) // ncols))
            rows = -(-len(handles) // balanced)
            if balanced < ncols or (rows > 1 and len(handles) == rows * balanced):
                # matplotlib fills a legend column by column; a full grid is reordered to read row by row
                order = [r * balanced + c for c in range(balanced) for r in range(rows)] \
                    if len(handles) == rows * balanced else list(range(len(handles)))
                legend.remove()
                legend = fig.legend(handles=[handles[i] for i in order], labels=[labels[i] for i in order],
                                    loc="outside lower center", ncols=balanced, fontsize=fontsize)
                settle(fig)
            return legend
        legend.remove()
    return legend


def marker_boxes(ax: Any, xs: Sequence[float], ys: Sequence[float], sizes_pt2: Sequence[float]) -> list[Any]:
    """Display boxes of scatter markers (data coordinates, areas in pt^2 as ``scatter``'s ``s``), for
    :func:`place_labels` to keep labels off the points."""
    from matplotlib.transforms import Bbox

    settle(ax.figure)
    px_per_pt = ax.figure.dpi / 72.0
    centres = ax.transData.transform(np.column_stack([np.asarray(xs, float), np.asarray(ys, float)]))
    half = np.sqrt(np.asarray(sizes_pt2, float)) / 2 * px_per_pt
    return [Bbox([[x - h, y - h], [x + h, y + h]]) for (x, y), h in zip(centres, half, strict=True)]


def place_labels(ax: Any, texts: Sequence[Any], candidates: Sequence[Sequence[tuple[float, float, str, str]]],
                 avoid: Sequence[Any] = (), avoid_boxes: Sequence[Any] = ()) -> None:
    """Move each annotation in ``texts`` to the first of its candidate offsets where it overlaps no
    label placed before it, no text in ``avoid``, and stays inside the axes.

    ``candidates[i]`` lists ``(dx_pt, dy_pt, ha, va)`` offsets from the annotated point. A label with no
    free candidate keeps the one that overlaps least (it then shows up in :func:`layout_problems`).
    ``avoid_boxes`` are display boxes of other things to keep clear of (:func:`marker_boxes`); covering
    one costs less than covering a label, so a crowded plot still gets every label placed.
    Layout is settled first (one draw), so positions are those of the saved figure.
    """
    fig = ax.figure
    settle(fig)
    renderer = fig.canvas.get_renderer()
    taken = [_extent(t, renderer) for t in avoid if t.get_visible() and t.get_text().strip()]
    frame = ax.bbox

    def area(box: Any, others: Sequence[Any]) -> float:
        return sum(max(0.0, min(box.x1, o.x1) - max(box.x0, o.x0)) * max(0.0, min(box.y1, o.y1) - max(box.y0, o.y0))
                   for o in others)

    def cost(box: Any) -> float:
        spill = max(0.0, frame.x0 - box.x0) + max(0.0, box.x1 - frame.x1) + max(0.0, frame.y0 - box.y0) + \
            max(0.0, box.y1 - frame.y1)
        return 1e3 * spill + area(box, taken) + 0.1 * area(box, avoid_boxes)

    for text, options in zip(texts, candidates, strict=True):
        best: tuple[float, Any] | None = None
        for dx, dy, ha, va in options:
            text.set_position((dx, dy))
            text.set_ha(ha)
            text.set_va(va)
            c = cost(_extent(text, renderer))
            if best is None or c < best[0]:
                best = (c, (dx, dy, ha, va))
            if c == 0:
                break
        assert best is not None
        dx, dy, ha, va = best[1]
        text.set_position((dx, dy))
        text.set_ha(ha)
        text.set_va(va)
        taken.append(_extent(text, renderer))


def save(fig: Any, path_stem: str | Path, formats: Sequence[str] = ("pdf", "png"), style_name: str | None = "paper",
         ) -> list[Path]:
    """Write ``<stem>.pdf`` and ``<stem>.png`` (and ``<stem>.csv``, the data the figure draws, when the
    plot attached it); the same figure always gives the same bytes.

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
    for key, frame in figure_data(fig).items():
        path = stem.with_name(f"{stem.name}.{key}.csv" if key else f"{stem.name}.csv")
        frame.to_csv(path, index=False)
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
