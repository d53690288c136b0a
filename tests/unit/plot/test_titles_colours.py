"""Per-run figures say what they show (model, batch, dtype, hardware), colours mean one thing in every
figure, and a timeline coloured by op keeps communication visible."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pytest

import archsim
from archsim import plot
from archsim.plot.breakdown import FIXED_COLOURS


@pytest.fixture(scope="module")
def dp_run():
    step = archsim.zoo.lenet5(batch=64, dtype="fp16", training=True)
    return archsim.estimate(step, archsim.load_preset("system/dgx-a100"), engine="des",
                            data_parallel=archsim.DataParallel(gpus=4))


def _colours_by_label(fig):
    out = {}
    for legend in fig.legends + [leg for sub in fig.subfigs for leg in sub.legends]:
        for handle, text in zip(legend.legend_handles, legend.get_texts(), strict=True):
            out[text.get_text()] = handle.get_facecolor()
    return out


def test_breakdown_title_and_fixed_colours():
    h100 = archsim.load_preset("gpu/h100-sxm5-80gb")
    res = archsim.estimate(archsim.zoo.resnet18(batch=8, dtype="fp16", training=True), h100)
    cpu = archsim.estimate(archsim.zoo.mlp(batch=8), archsim.load_preset("cpu/epyc-genoa-9654"))
    for width in ("column", "text"):
        fig = plot.breakdown(res, width=width)
        title = fig.get_suptitle()
        assert "resnet18" in title and "batch 8" in title and "fp16" in title and "training" in title
        assert "NVIDIA H100 SXM5 80GB" in title
        assert plot.layout_problems(fig) == []
        # one column: the two panels stack (two subfigures), each with its own legend
        assert len(fig.subfigs) == (2 if width == "column" else 0)
        plt.close(fig)
    a, b = _colours_by_label(plot.breakdown(res)), _colours_by_label(plot.breakdown(cpu, by="component"))
    shared = set(a) & set(b)
    assert {"compute", "static"} <= shared
    for key in shared:  # a component has the same colour on a GPU and a CPU figure
        assert tuple(a[key]) == tuple(b[key]), key
    from matplotlib.colors import to_rgba

    assert tuple(a["dram"]) == to_rgba(FIXED_COLOURS["dram"])
    plt.close("all")


def test_timeline_title_and_communication_by_op(dp_run):
    fig = plot.timeline(dp_run, color_by="op", width="column")
    title = fig.axes[0].get_title()
    assert "lenet5, batch 64, fp16, training, 4 GPUs data-parallel" in title and "DGX A100" in title
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "communication" in labels  # the all-reduce is never folded into "other ops"
    assert plot.layout_problems(fig) == []
    assert plot.timeline(dp_run, title="mine").axes[0].get_title() == "mine"
    plt.close("all")


def test_legend_rows_are_balanced():
    fig, ax = plt.subplots(figsize=(3.5, 2.4), layout="constrained")
    lines = [ax.plot([0, 1], [i, i], label=f"series {i}")[0] for i in range(6)]
    from archsim.plot._common import bottom_legend

    legend = bottom_legend(fig, lines, max_cols=5)
    # 6 entries fit 5 to a row: drawn as 3 + 3, read row by row (matplotlib fills by column)
    assert legend._ncols == 3
    assert [t.get_text() for t in legend.get_texts()] == [f"series {i}" for i in (0, 3, 1, 4, 2, 5)]
    plt.close(fig)
