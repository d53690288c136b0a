"""What a first-time user met in the eight tasks of the docs: the data-parallel summary, the ONNX
precision hint, `presets show FILE`, `archsim plot` widths and titles, a sweep naming its plots."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image

from archsim import cli


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    code = cli.main(list(argv))
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return captured.out


@pytest.fixture(scope="module")
def dp_json(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    path = tmp_path_factory.mktemp("dp") / "dp.json"
    code = cli.main(["estimate", "--hw", "system/dgx-a100", "--model", "lenet5", "--batch", "64", "--dtype", "fp16",
                     "--training", "--engine", "des", "--data-parallel", "4", "--save", str(path)])
    assert code == 0
    return path, ""


def test_data_parallel_summary_counts_each_gpu_once(dp_json: tuple[Path, str], capsys: pytest.CaptureFixture[str],
                                                    ) -> None:
    from archsim.results import RunResult

    res = RunResult.from_json(dp_json[0].read_text())
    per_gpu = len(res.ops) // 4
    out = _run(capsys, "estimate", "--hw", "system/dgx-a100", "--model", "lenet5", "--batch", "64", "--dtype",
               "fp16", "--training", "--engine", "des", "--data-parallel", "4")
    lines = out.splitlines()
    assert lines[0].endswith(f"{len(res.ops)} ops (4 GPUs x {per_gpu})")
    # the peak quoted is that of the 4 A100s: 4 x 312 TFLOP/s (dense fp16 Tensor Core) = 1.25 PFLOP/s,
    # so the share can never pass 100% as it did against one GPU's peak
    achieved = next(line for line in lines if line.strip().startswith("achieved"))
    assert "of 1.25 PFLOP/s, tensor fp16/bf16 on 4 GPUs" in achieved
    assert any(line.startswith("time by bound (GPU time summed over 4 GPUs)") for line in lines)
    slow = next(i for i, line in enumerate(lines) if line.startswith("slowest"))
    assert lines[slow].startswith(f"slowest 5 of {per_gpu} ops, each on all 4 GPUs")
    names = [line.split()[0] for line in lines[slow + 2:slow + 7]]
    assert len(set(names)) == 5  # each op once, not once per GPU
    assert "redraw with `archsim plot timeline" not in out  # no --save here


def test_plot_width_and_title_apply_to_every_kind(dp_json: tuple[Path, str], tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    wide, narrow = tmp_path / "wide.png", tmp_path / "narrow.png"
    _run(capsys, "plot", "timeline", str(dp_json[0]), "-o", str(wide))
    _run(capsys, "plot", "timeline", str(dp_json[0]), "--width", "column", "--title", "LeNet-5, 4 GPUs",
         "-o", str(narrow))
    # 7.16 in and 3.5 in at 300 dpi (bbox "tight" trims a few pixels of margin)
    assert Image.open(wide).width > 1.8 * Image.open(narrow).width
    _run(capsys, "plot", "timeline", str(dp_json[0]), "--color-by", "kind", "-o", str(tmp_path / "kind.png"))
    _run(capsys, "plot", "breakdown", str(dp_json[0]), "--width", "column", "-o", str(tmp_path / "b.png"))


def test_onnx_hint_does_not_suggest_a_flag_it_refuses() -> None:
    import archsim
    from archsim.cli_format import precision_note

    h100 = archsim.load_preset("gpu/h100-sxm5-80gb")
    assert "--dtype bf16" in precision_note(h100, "fp32")
    onnx = precision_note(h100, "fp32", onnx=True)
    assert "--dtype" not in onnx and "ONNX file exported in bf16" in onnx


def test_fp32_hint_quotes_the_tf32_rate_a_tf32_allowing_profile_runs() -> None:
    import archsim
    from archsim.cli_format import precision_note

    a100 = archsim.load_preset("system/dgx-a100-80gb")
    # pytorch-eager allows TF32: fp32 matrix ops run at the A100's 156 TFLOP/s (108 SMs x 1.41 GHz x 1024
    # TF32 FLOP/cycle/SM), not the 19.5 TFLOP/s of the CUDA cores; software='none' keeps the fp32 rate
    tf32 = precision_note(a100, "fp32", software="pytorch-eager")
    assert tf32.startswith("note: fp32 matrix ops run as tf32 under pytorch-eager's allow_tf32, peaking at 156 TFLOP/s")
    assert precision_note(a100, "fp32", software="none").startswith("note: fp32 peaks at 19.5 TFLOP/s")
    # a V100 has no TF32 rate: the same profile leaves the plain fp32 hint
    v100 = archsim.load_preset("system/dgx-1-v100")
    assert precision_note(v100, "fp32", software="pytorch-eager").startswith("note: fp32 peaks at")


def test_presets_show_takes_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "mine.toml"
    f.write_text('preset = "gpu/h100-sxm5-80gb"\nname = "H100 6.7"\n[dram]\nbandwidth = "6.7 TB/s"\n')
    out = _run(capsys, "presets", "show", str(f))
    assert out.startswith(f"{f}: H100 6.7 (gpu)")
    assert any(line.split() == ["dram", "bandwidth", "6.7", "TB/s"] for line in out.splitlines())  # derived


def test_summary_formats(capsys: pytest.CaptureFixture[str]) -> None:
    out = _run(capsys, "estimate", "--hw", "gpu/h100-sxm5-80gb", "--model", "mlp", "--batch", "32")
    rows = dict(line.strip().split("  ", 1) for line in out.splitlines()[1:8])
    assert rows["work"].strip().endswith("FLOP") and "e+" not in rows["work"]
    assert "energy per sample" in rows
    assert "(1 ops" not in out


def test_sweep_names_its_plots_and_titles_them(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "s.toml"
    spec.write_text('[base]\npreset = "gpu/h100-sxm5-80gb"\n[work]\nmodel = "mlp"\nbatch = 8\n'
                    '[sweep]\nexecutor = "serial"\n[axes]\n"gpu.sm_count" = [66, 132]\n'
                    '[[plots]]\nkind = "sweep_lines"\nx = "gpu.sm_count"\n')
    out = _run(capsys, "sweep", str(spec), "--out", str(tmp_path / "out"), "--no-progress")
    assert f"plot: {tmp_path / 'out' / '00-sweep_lines'}.pdf, .png and .csv (sweep_lines)" in out

    from archsim.sweep.spec import load_spec, spec_title

    assert spec_title(load_spec(spec)) == "mlp, batch 8 on NVIDIA H100 SXM5 80GB"
    # the parquet table keeps that title, so `archsim plot` redraws it titled; the fastest point is in units
    import pandas as pd

    assert pd.read_parquet(tmp_path / "out" / "results.parquet").attrs["title"] == spec_title(load_spec(spec))
    assert "fastest: point" in out and "gpu.sm_count=" in out
    from archsim import plot

    fig = plot.sweep_lines(pd.read_parquet(tmp_path / "out" / "results.parquet"), "gpu.sm_count",
                           title="given")
    assert fig.axes[0].get_title() == "given"


def test_fastest_point_in_units() -> None:
    assert cli._axis_value("gpu.dram.bandwidth_bytes_per_s", 5e12) == "gpu.dram.bandwidth=5 TB/s"
    assert cli._axis_value("gpu.sm_count", 132) == "gpu.sm_count=132"
    assert cli._axis_value("workload.dtype", "fp16") == "workload.dtype=fp16"


def test_unknown_preset_suggests_the_ids_it_starts(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["presets", "show", "gpu/h100"]) == 2
    err = capsys.readouterr().err
    assert "did you mean gpu/h100-pcie-80gb, gpu/h100-sxm5-80gb," in err  # before gpu/mi100, gpu/k80...


def test_small_shares_keep_two_digits() -> None:
    from archsim.cli_format import _share

    # 777 GFLOP/s of 989 TFLOP/s is 0.0786%: "0%" would read as nothing achieved
    assert _share(777e9, 989e12) == "0.079%"
    assert _share(11.8e12, 989e12) == "1%" and _share(1.0, 2.0) == "50%" and _share(0.0, 1.0) == "0%"


def test_unnamed_onnx_nodes_get_distinct_names() -> None:
    pytest.importorskip("onnx")
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    import archsim

    w1 = numpy_helper.from_array(np.zeros((8, 4), np.float32), "w1")
    w2 = numpy_helper.from_array(np.zeros((4, 2), np.float32), "w2")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w1"], ["h"]), helper.make_node("Relu", ["h"], ["a"]),
         helper.make_node("MatMul", ["a", "w2"], ["y"])],
        "unnamed", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 2])], initializer=[w1, w2])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    names = [op.name for op in archsim.from_onnx(model).ops]
    assert names == ["MatMul_0", "Relu_1", "MatMul_2"]  # was "gemm", "elementwise", "gemm"
    assert not any(n.name for n in model.graph.node)  # the caller's model is left as it was
