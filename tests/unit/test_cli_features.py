"""The command line's workload, hardware and output options: preset files, model arguments, the
summary, archsim plot, and the messages a user reads."""

from __future__ import annotations

from pathlib import Path

import pytest

from archsim import cli
from archsim.cli_format import human
from archsim.results import RunResult


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    code = cli.main(list(argv))
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return captured.out


def test_human_keeps_three_significant_digits() -> None:
    # 0.9996 J used to print as "1e+03 mJ": it rounds up to the next prefix
    assert human(0.9996, "energy") == "1.00 J"
    assert human(2e-3, "time") == "2.00 ms" and human(12.34e-3, "time") == "12.3 ms"
    assert human(989.4e12, "flop_rate") == "989 TFLOP/s"


def test_hw_takes_a_file_path(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "my.toml").write_text('preset = "gpu/h100-sxm5-80gb"\nname = "My H100"\n')
    out = _run(capsys, "estimate", "--hw", "./my.toml", "--model", "resnet18", "--dtype", "fp16")
    assert out.startswith("resnet18, batch 1, fp16 on My H100 (roofline engine)")
    assert cli.main(["estimate", "--hw", "./missing.toml", "--model", "resnet18"]) == 2
    assert "no such file" in capsys.readouterr().err


def test_model_arguments_reach_the_zoo(capsys: pytest.CaptureFixture[str]) -> None:
    out = _run(capsys, "estimate", "--hw", "gpu/h100-sxm5-80gb", "--model", "gpt2", "--mode", "decode",
               "--seq-len", "256", "--batch", "4", "--dtype", "fp16")
    assert out.startswith("gpt2.decode, batch 4, fp16") and "tokens/s" in out
    out = _run(capsys, "estimate", "--hw", "gpu/h100-sxm5-80gb", "--model", "resnet18", "--image-size", "112",
               "--arg", "optimizer=adam", "--training")
    assert "training step" in out
    assert cli.main(["estimate", "--hw", "gpu/h100-sxm5-80gb", "--model", "resnet18", "--seq-len", "4"]) == 2
    assert "seq_len" in capsys.readouterr().err


def test_summary_by_default_and_every_op_on_request(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["estimate", "--hw", "gpu/h100-sxm5-80gb", "--model", "resnet50", "--batch", "8", "--training"]
    summary = _run(capsys, *args).splitlines()
    assert len(summary) < 25
    assert any(line.startswith("time by phase: forward") for line in summary)
    # fp32 (the model's default) runs on the vector units; the summary says what fp16/bf16 would use
    assert summary[-1].startswith("note: fp32 peaks at 66.9 TFLOP/s (vector fp32)")
    every = _run(capsys, *args, "--per-op").splitlines()
    assert len(every) == 2 + 509  # title, header, one line per op (conv1.dX is not computed)
    assert not any(line.split()[0] == "conv1.dX" for line in every[2:])
    assert sum(1 for line in every if line.split()[0] == "elementwise") == 0  # named by role
    assert any(line.split()[0] == "layer1.0.relu" for line in every[2:])


def test_save_and_plot_redraw_a_result(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    saved = tmp_path / "run.json"
    _run(capsys, "estimate", "--hw", "gpu/h100-sxm5-80gb", "--model", "bert_base", "--batch", "2", "--seq-len", "64",
         "--dtype", "fp16", "--save", str(saved))
    result = RunResult.from_json(saved.read_text())
    assert result._meta["workload"] == {"model": "bert_base", "batch": 2, "dtype": "fp16", "precision": "fp16",
                                        "training": False}
    fig = tmp_path / "roof.png"
    out = _run(capsys, "plot", "roofline", str(saved), "--hw", "gpu/h100-sxm5-80gb", "-o", str(fig))
    assert fig.is_file() and (tmp_path / "roof.csv").is_file() and (tmp_path / "roof.ceilings.csv").is_file()
    assert str(fig) in out
    _run(capsys, "plot", "breakdown", str(saved), "-o", str(tmp_path / "bd.pdf"))
    assert (tmp_path / "bd.pdf").is_file() and (tmp_path / "bd.csv").is_file()
    assert cli.main(["plot", "roofline", str(saved), "-o", str(fig)]) == 2
    assert "needs --hw" in capsys.readouterr().err
    assert cli.main(["plot", "timeline", str(saved), "-o", str(tmp_path / "t.png")]) == 2
    assert "engine='des'" in capsys.readouterr().err


def test_des_flags(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = _run(capsys, "estimate", "--hw", "system/dgx-a100", "--model", "resnet18", "--batch", "8", "--training",
               "--dtype", "fp16", "--engine", "des", "--data-parallel", "2", "--save", str(tmp_path / "dp.json"))
    assert "(des engine)" in out
    _run(capsys, "plot", "timeline", str(tmp_path / "dp.json"), "-o", str(tmp_path / "dp.png"))
    frame_csv = (tmp_path / "dp.csv").read_text().splitlines()
    assert frame_csv[0] == "op,resource,start_s,end_s,phase,colour_key"
    assert cli.main(["estimate", "--hw", "gpu/h100-sxm5-80gb", "--model", "resnet18", "--streams", "2"]) == 2
    assert "--streams applies to --engine des" in capsys.readouterr().err


def test_schema_says_where_it_wrote(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = _run(capsys, "schema", "--out", str(tmp_path / "s.json"))
    assert out.startswith(f"wrote the JSON Schema of preset files to {tmp_path / 's.json'}")


def test_sweep_rerun_names_resume(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                  allocator_calls: list[str]) -> None:
    spec = tmp_path / "s.toml"
    spec.write_text('[base]\npreset = "gpu/v100-sxm2-16gb"\n[work]\nmodel = "resnet18"\n[sweep]\nexecutor = "serial"\n'
                    '[axes]\n"gpu.sm_count" = [40, 80]\n')
    _run(capsys, "sweep", str(spec), "--out", str(tmp_path / "out"), "--no-progress")
    # the command's own process keeps freed memory for reuse (archsim.allocator), once per sweep run
    assert allocator_calls == ["keep_freed_memory"]
    assert cli.main(["sweep", str(spec), "--out", str(tmp_path / "out")]) == 2
    assert "pass --resume to reuse them" in capsys.readouterr().err
    _run(capsys, "sweep", str(spec), "--out", str(tmp_path / "out"), "--resume", "--no-progress")


def test_sweep_spec_plot_without_its_axes_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "s.toml"
    spec.write_text('[base]\npreset = "gpu/v100-sxm2-16gb"\n[work]\nmodel = "resnet18"\n'
                    '[axes]\n"gpu.sm_count" = [40, 80]\n[[plots]]\nkind = "heatmap"\n')
    assert cli.main(["sweep", str(spec), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "plots[0] (heatmap): needs x and y" in err and "missing" not in err
