"""Publication plots of archsim results and sweep tables (matplotlib; paper style; PDF and PNG).

Plots read results and frames and return matplotlib figures; they never run an engine. Every plot
uses ``paper.mplstyle`` (serif text, column-width figures, the Okabe-Ito palette) unless
``style_name=None``; :func:`save` writes vector PDF and PNG with no timestamps.
"""

from archsim.plot._common import (
    COLUMN_WIDTH_IN,
    PAPER_STYLE,
    TEXT_WIDTH_IN,
    PlotError,
    attach_data,
    figure_data,
    layout_problems,
    save,
    style,
)
from archsim.plot.bars import bars
from archsim.plot.breakdown import breakdown, timeline
from archsim.plot.roofline import Ceiling, ceilings, roofline
from archsim.plot.sweeps import heatmap, pareto, sweep_lines
from archsim.plot.validation import validation_scatter

__all__ = ["bars", "roofline", "ceilings", "Ceiling", "breakdown", "timeline", "sweep_lines", "heatmap", "pareto",
           "validation_scatter", "save", "style",
           "attach_data", "figure_data", "layout_problems", "PAPER_STYLE", "COLUMN_WIDTH_IN", "TEXT_WIDTH_IN",
           "PlotError"]
