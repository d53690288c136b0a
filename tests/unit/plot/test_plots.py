"""Every plot renders and has the structure a paper figure needs: unit labels, ceilings, legends."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

from archsim import plot
from archsim.plot import PlotError


def _render(fig):
    fig.canvas.draw()  # raises if anything cannot be drawn
    return fig


def test_ceilings_of_the_v100(v100):
    roofs = {c.name: c for c in plot.ceilings(v100)}
    # tensor fp16: 80 SMs x 1.53 GHz x 1024 FLOP/cycle = 125.3 TFLOP/s; fp32: 80 x 1.53e9 x 128 = 15.7 TFLOP/s
    assert roofs["tensor fp16"].rate == pytest.approx(80 * 1.53e9 * 1024)
    assert roofs["vector fp32"].rate == pytest.approx(80 * 1.53e9 * 128)
    # L1: 193 GB/s per SM x 80 SMs
    assert roofs["l1"].rate == pytest.approx(193e9 * 80) and roofs["dram"].rate == pytest.approx(900e9)


def test_roofline_structure(v100, run_result):
    fig = _render(plot.roofline(run_result, v100))
    (ax,) = fig.axes
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert ax.get_xlabel() == "arithmetic intensity (FLOP/B)" and ax.get_ylabel() == "performance (TFLOP/s)"
    ceilings = [line for line in ax.get_lines() if (line.get_gid() or "").startswith("ceiling:")]
    # 3 memory levels (l1, l2, dram) + 5 compute units (vector fp64/fp32/fp16/int8, tensor fp16)
    assert len(ceilings) == len(plot.ceilings(v100)) == 8
    ridges = [t for t in ax.texts if (t.get_gid() or "").startswith("ridge-label:")]
    # dram ridge of the tensor roof: 125.3e12 / 900e9 = 139 FLOP/B
    assert {t.get_gid(): t.get_text() for t in ridges}["ridge-label:dram"] == "139"
    groups = {c.get_gid(): c for c in ax.collections}
    assert set(groups) == {"ops:l2", "ops:dram"}
    sizes = groups["ops:dram"].get_sizes()
    assert sizes[0] > sizes[2] > 0  # gemm1 (20 ms) is drawn larger than gemm2 (6 ms)
    (legend,) = fig.legends  # below the axes, over no op
    assert {"DRAM", "L2", "L1", "ops @ DRAM"} <= {t.get_text() for t in legend.get_texts()}  # readers write L1
    assert plot.layout_problems(fig) == []


def test_roofline_rejects_unknown_level(v100, run_result):
    with pytest.raises(PlotError, match="have no ceiling"):
        plot.roofline(run_result, v100, levels=["l3"])


@pytest.mark.parametrize("by", ["op", "component"])
def test_breakdown(run_result, by):
    fig = _render(plot.breakdown(run_result, by=by))
    ax_t, ax_e = fig.axes
    assert ax_t.get_xlabel() == "latency (ms)" and ax_e.get_xlabel() == "energy (J)"  # horizontal bars
    # energy: compute 1.901 + dram 0.44 + l2 0.24 + static 1.4 = 3.981 J; data movement 0.68 / 3.981 = 17.1%
    assert ax_e.get_title() == "energy by component\ndata movement 17.1%"
    latency_legend, energy_legend = fig.legends
    assert {t.get_text() for t in energy_legend.get_texts()} == {"compute", "static", "dram", "l2"}
    # every legend entry has a coloured swatch
    assert all(p.get_facecolor()[3] > 0 for p in energy_legend.get_patches())
    ticks = [t.get_text() for t in ax_t.get_yticklabels()]
    assert ticks == (["gemm1", "relu1", "gemm2"] if by == "op" else ["toy net"])
    assert plot.layout_problems(fig) == []


def test_breakdown_groups_the_rest(run_result):
    fig = plot.breakdown(run_result, top=1)
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == ["gemm1"]
    # gemm1 is 20 of the 35 ms of op time: 57%
    assert fig.axes[0].get_title() == "latency by bound\ntop 1 of 3 ops: 57% of time"
    data = plot.figure_data(fig)[""]
    assert set(data["group"]) == {"gemm1", "other"}


def test_timeline(run_result):
    fig = _render(plot.timeline(run_result))
    (ax,) = fig.axes
    # resources in natural order from the top down: dram (row 1, on top), then sm (row 0)
    assert {t.get_text(): t.get_position()[1] for t in ax.get_yticklabels()} == {"dram": 1, "sm": 0}
    assert ax.get_xlabel() == "time (ms)"
    # by phase (the default): every op is forward, one collection per resource
    assert len([c for c in ax.collections if (c.get_gid() or "").startswith("busy:")]) == 2
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["forward"]
    by_op = _render(plot.timeline(run_result, color_by="op"))
    assert {t.get_text() for t in by_op.legends[0].get_texts()} == {"gemm1", "relu1", "gemm2"}
    assert len([c for c in by_op.axes[0].collections if (c.get_gid() or "").startswith("busy:")]) == 4
    with pytest.raises(PlotError, match="no timeline"):
        plot.timeline(dataclasses.replace(run_result, timeline=(), engine="roofline"))


def test_timeline_of_thousands_of_intervals_draws_one_collection_per_colour(run_result):
    from archsim.results import TimelineEntry

    # 2,000 intervals: 4 resources x 500 back-to-back 1 ms kernels, each its own op label (as in a
    # multi-step run): coloured by phase (inferred from the resource), one collection per resource.
    resources = ("gpu0.stream0", "gpu0.stream1", "gpu0.copy.h2d", "host.loader0.w0")
    entries = tuple(TimelineEntry(f"k{i}@step{r}", res, i * 1e-3, (i + 1) * 1e-3)
                    for r, res in enumerate(resources) for i in range(500))
    fig = _render(plot.timeline(dataclasses.replace(run_result, timeline=entries, latency_s=0.5)))
    (ax,) = fig.axes
    busy = [c for c in ax.collections if (c.get_gid() or "").startswith("busy:")]
    assert len(busy) <= len(resources) * 10
    assert sum(len(c.get_paths()) for c in busy) == 2000
    # Every bar is where its interval is (x in ms, 0.8 tall around its row).
    spans = set()
    for c in busy:
        for path in c.get_paths():
            (x0, y0), (x1, y1) = path.vertices.min(axis=0), path.vertices.max(axis=0)
            spans.add((round(x0, 9), round(x1 - x0, 9), round(y0, 9), round(y1 - y0, 9)))
    # first resource on top: gpu0.copy.h2d, gpu0.stream0, gpu0.stream1, host.loader0.w0 from the top down
    rows = {r: i for i, r in enumerate(reversed(sorted(resources)))}
    assert spans == {(round(t.start_s * 1e3, 9), 1.0, round(rows[t.resource] - 0.38, 9), 0.76) for t in entries}
    assert {t.get_text() for t in fig.legends[0].get_texts()} == {"other", "transfer", "data loading"}
    by_op = plot.timeline(dataclasses.replace(run_result, timeline=entries, latency_s=0.5), color_by="op")
    keys = [t.get_text() for t in by_op.legends[0].get_texts()]
    assert len(keys) == 10 and keys[-1] == "other ops"  # 9 busiest ops by name, the rest grey


def _table():
    rows = []
    for i, (bw, sm) in enumerate((bw, sm) for bw in (3e11, 6e11, 9e11) for sm in (40, 80)):
        lat = 1.0 / sm + 1e10 / bw
        rows += [{"point": i, "gpu.dram.bandwidth_bytes_per_s": bw, "gpu.sm_count": sm, "status": "ok",
                  "error": None, "metric": m, "value": v} for m, v in (("latency_s", lat), ("energy_j", sm * lat))]
    return pd.DataFrame(rows)


def test_sweep_lines():
    fig = _render(plot.sweep_lines(_table(), x="gpu.dram.bandwidth_bytes_per_s", y="latency_s", hue="gpu.sm_count"))
    (ax,) = fig.axes
    assert ax.get_xlabel() == "DRAM bandwidth (GB/s)" and ax.get_ylabel() == "latency (ms)"
    lines = [line for line in ax.get_lines() if (line.get_gid() or "").startswith("line:")]
    assert len(lines) == 2
    assert np.allclose(lines[0].get_xdata(), [300, 600, 900])
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["SM count = 40", "SM count = 80"]
    with pytest.raises(PlotError, match="also vary"):
        plot.sweep_lines(_table(), x="gpu.dram.bandwidth_bytes_per_s")
    fixed = plot.sweep_lines(_table(), x="gpu.dram.bandwidth_bytes_per_s", where={"gpu.sm_count": 40})
    assert len(fixed.axes[0].get_lines()) == 1


def test_heatmap():
    fig = _render(plot.heatmap(_table(), x="gpu.dram.bandwidth_bytes_per_s", y="gpu.sm_count", value="energy_j"))
    ax, bar = fig.axes
    assert ax.get_xlabel() == "DRAM bandwidth (GB/s)" and ax.get_ylabel() == "SM count"
    assert bar.get_ylabel() == "energy (J)"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["300", "600", "900"]
    (image,) = [im for im in ax.get_images() if im.get_gid() == "heatmap"]
    assert image.get_array().shape == (2, 3)
    # cell text contrasts with its cell: black on the light (yellow) end of viridis, white on the dark end
    cells = {t.get_gid(): t for t in ax.texts}
    values = image.get_array()
    light = np.unravel_index(np.argmax(values), values.shape)
    dark = np.unravel_index(np.argmin(values), values.shape)
    assert cells[f"cell:{light[0]}:{light[1]}"].get_color() == "black"
    assert cells[f"cell:{dark[0]}:{dark[1]}"].get_color() == "white"


def test_pareto_plot():
    table = _table()
    fig = _render(plot.pareto(table))
    (ax,) = fig.axes
    assert ax.get_xlabel() == "latency (ms)" and ax.get_ylabel() == "energy (J)"
    front = [c for c in ax.collections if c.get_gid() == "front-points"][0]
    from archsim.sweep.analysis import pareto_front

    assert len(front.get_offsets()) == len(pareto_front(table))
    assert "Pareto front" in {t.get_text() for t in ax.get_legend().get_texts()}


def test_validation_scatter():
    frame = pd.DataFrame({"kernel": ["a", "b", "c", "d"], "family": ["gemm", "gemm", "stream", "stream"],
                          "predicted_s": [1e-3, 2e-3, 1e-4, 3e-4], "measured_s": [1.1e-3, 1.6e-3, 1e-4, 2e-4]})
    fig = _render(plot.validation_scatter(frame))
    (ax,) = fig.axes
    # the median value is 0.65 ms = 650 µs, so the axes are in µs
    assert ax.get_xlabel() == "measured (µs)" and ax.get_ylabel() == "predicted (µs)"
    texts = [t.get_text() for t in ax.get_legend().get_texts()]
    # gemm: (0.1/1.1 + 0.4/1.6)/2 = 17%; stream: (0 + 0.5)/2 = 25%
    assert texts == ["within 2x", "gemm (MAPE 17%)", "stream (MAPE 25%)"]


def test_save_is_deterministic(tmp_path, run_result, v100):
    paths = []
    for name in ("a", "b"):
        fig = plot.roofline(run_result, v100)
        paths.append(plot.save(fig, tmp_path / name))
    for first, second in zip(*paths, strict=True):
        assert first.suffix in (".pdf", ".png", ".csv") and first.read_bytes() == second.read_bytes()
    # the data beside the figure: one row per op and level, and the ceilings
    assert [p.name for p in paths[0]] == ["a.pdf", "a.png", "a.csv", "a.ceilings.csv"]
    pdf = paths[0][0].read_bytes()
    assert pdf.startswith(b"%PDF") and b"CreationDate" not in pdf
    assert b"Software" not in paths[0][1].read_bytes()


def test_paper_style_is_applied(run_result, v100):
    fig = plot.roofline(run_result, v100)
    assert fig.get_figwidth() == pytest.approx(plot.COLUMN_WIDTH_IN)
    assert fig.axes[0].xaxis.label.get_fontfamily()[0] == "STIXGeneral"  # a serif face, named


def test_equal_compute_ceilings_are_drawn_once():
    from archsim.presets import load_preset

    h100 = load_preset("gpu/h100-sxm5-80gb")
    names = [c.name for c in plot.ceilings(h100)]
    # fp16 and bf16 Tensor Core peaks are equal on the H100, so they share one ceiling
    tensor = [n for n in names if n.startswith("tensor")]
    assert "tensor fp16/bf16" in tensor and len(set(tensor)) == len(tensor)
    rates = [c.rate for c in plot.ceilings(h100) if c.kind == "compute"]
    assert len(rates) == len(set(rates))


def test_ridges_for_a_precision(v100, run_result):
    fig = plot.roofline(run_result, v100, precision="fp32")
    labels = {t.get_gid(): t.get_text() for t in fig.axes[0].texts if (t.get_gid() or "").startswith("ridge-label:")}
    # fp32 vector peak 15.67 TFLOP/s over 900 GB/s of DRAM = 17.4 FLOP/B
    assert labels["ridge-label:dram"] == "17.4"
    with pytest.raises(PlotError, match="no compute ceiling for precision 'int4'"):
        plot.roofline(run_result, v100, precision="int4")


def test_roofline_marks_fused_ops_with_a_legend_entry():
    # TensorRT-style fusion (conv + bn + relu into one kernel): the fused ops are diamonds, the rest
    # circles, and the legend says which is which; the CSV beside the figure names what was fused.
    import archsim
    from archsim.plot._common import figure_data, layout_problems
    from archsim.workload import zoo

    node = archsim.load_preset("system/dgx-a100")
    run = archsim.estimate(zoo.get("resnet18", batch=2, dtype="int8"), node, software="tensorrt-int8")
    fused = {o.name for o in run.ops if o.fused}
    assert fused and len(fused) < len(run.ops)
    fig = plot.roofline(run, node.gpu)
    gids = {c.get_gid() for c in fig.axes[0].collections}
    assert any(g.startswith("fused-ops:") for g in gids) and any(g.startswith("ops:") for g in gids)
    assert "fused op" in [t.get_text() for t in fig.legends[0].get_texts()]
    data = figure_data(fig)[""]
    assert set(data.loc[data["fused_from"] != "", "name"]) == fused
    assert layout_problems(fig) == []
