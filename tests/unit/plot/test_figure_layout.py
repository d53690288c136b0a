"""Every figure type at one-column (3.5 in) and text (7.16 in) width: no text box overlaps another and
none leaves the figure (matplotlib's window extents), every legend entry has a visible swatch, and the
data behind the figure is attached for the CSV beside it."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pytest

from archsim import plot

gallery = pytest.importorskip("scenarios._gallery")


@pytest.fixture(scope="module")
def figure_types():
    return gallery.figure_types()


@pytest.mark.parametrize("width", ["column", "text"])
def test_every_figure_type_is_legible(figure_types, width):
    from archsim.plot._common import COLUMN_WIDTH_IN, TEXT_WIDTH_IN

    for kind, draw in figure_types.items():
        fig = draw(width)
        assert fig.get_figwidth() == pytest.approx(COLUMN_WIDTH_IN if width == "column" else TEXT_WIDTH_IN), kind
        assert plot.layout_problems(fig) == [], kind
        legends = [*fig.legends, *(ax.get_legend() for ax in fig.axes if ax.get_legend() is not None)]
        for legend in legends:
            handles = legend.legend_handles
            assert len(handles) == len(legend.get_texts()), kind
            for h in handles:  # a swatch: a patch, line or marker that is drawn and not fully transparent
                assert h is not None and h.get_visible() and h.get_alpha() != 0, (kind, h)
        assert plot.figure_data(fig), f"{kind}: no data attached for the CSV"
        plt.close(fig)


def test_layout_problems_finds_overlaps_and_clipping():
    fig, ax = plt.subplots(figsize=(2, 2))
    ax.text(0.5, 0.5, "first label", transform=ax.transAxes)
    ax.text(0.5, 0.5, "second label", transform=ax.transAxes)
    ax.set_title("a title far too long for a two-inch figure to hold on one line")
    found = plot.layout_problems(fig)
    assert "overlap: 'first label' and 'second label'" in found
    assert any(p.startswith("outside the figure: 'a title") for p in found)
    plt.close(fig)


def test_roofline_draws_the_runs_precision(figure_types):
    import archsim

    h100 = archsim.load_preset("gpu/h100-sxm5-80gb")
    res = archsim.estimate(archsim.zoo.bert_base(batch=2, seq_len=64, dtype="fp16"), h100)
    names = {t.get_text() for t in plot.roofline(res, h100).axes[0].texts if (t.get_gid() or "").startswith("ceiling")}
    # fp16 run: the fp16 vector and tensor ceilings only (no fp8, int8, fp64)
    assert names == {"vector fp16/bf16", "tensor fp16/bf16"}
    every = plot.roofline(res, h100, precision="all")
    assert len([t for t in every.axes[0].texts if (t.get_gid() or "").startswith("ceiling")]) > 4
    title = plot.roofline(res, h100).axes[0].get_title()
    assert title == "bert_base, batch 2, fp16\non NVIDIA H100 SXM5 80GB"
    plt.close("all")
