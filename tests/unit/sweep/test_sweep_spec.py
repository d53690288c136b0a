"""Sweep spec files and the 'archsim sweep' / 'archsim roofline' commands."""

from __future__ import annotations

import sys
import types

import matplotlib

matplotlib.use("Agg")

import pandas as pd  # noqa: E402
import pandas.testing as pdt  # noqa: E402
import pytest  # noqa: E402
from sweep_toys import ToyEvaluator, toy_workload  # noqa: E402

from archsim.cli import main  # noqa: E402
from archsim.errors import SweepError  # noqa: E402
from archsim.sweep import Sweep  # noqa: E402
from archsim.sweep.spec import load_spec, run_spec  # noqa: E402

SPEC = """
[base]
preset = "gpu/v100-sxm2-16gb"

[work]
model = "toy"
batch = 2

[sweep]
sampler = "grid"
executor = "serial"
chunk_size = 2

[axes]
"gpu.dram.bandwidth" = { from = "300 GB/s", to = "900 GB/s", num = 3 }
"gpu.sm_count" = [40, 80]

[[plots]]
kind = "sweep_lines"
x = "gpu.dram.bandwidth_bytes_per_s"
y = "latency_s"
hue = "gpu.sm_count"

[[plots]]
kind = "pareto"
name = "front"
"""


@pytest.fixture
def toy_zoo(monkeypatch):
    # A stand-in model zoo whose one model is the toy (flop, bytes) workload.
    zoo = types.ModuleType("archsim.zoo")
    zoo.toy = toy_workload
    monkeypatch.setitem(sys.modules, "archsim.zoo", zoo)
    return zoo


def test_run_spec_writes_table_store_and_plots(tmp_path, toy_zoo):
    path = tmp_path / "bw.toml"
    path.write_text(SPEC)
    spec = load_spec(path)
    table = run_spec(spec, tmp_path / "out", evaluator=ToyEvaluator())
    out = tmp_path / "out"
    for name in ("results.parquet", "results.csv", "00-sweep_lines.pdf", "00-sweep_lines.png", "front.pdf",
                 "front.png"):
        assert (out / name).is_file(), name
    assert len(list((out / "store" / "chunks").glob("*.parquet"))) == 3  # 6 points in chunks of 2
    pdt.assert_frame_equal(pd.read_parquet(out / "results.parquet"), table, check_dtype=False)
    direct = Sweep("gpu/v100-sxm2-16gb", {"gpu.dram.bandwidth": ["300 GB/s", "600 GB/s", "900 GB/s"],
                                          "gpu.sm_count": [40, 80]}).run(
        {"model": "toy", "batch": 2}, evaluator=ToyEvaluator(), executor="serial")
    pdt.assert_frame_equal(table, direct)
    with pytest.raises(SweepError, match="already holds results"):
        run_spec(spec, out, evaluator=ToyEvaluator())
    pdt.assert_frame_equal(run_spec(spec, out, evaluator=ToyEvaluator(), resume=True), table)


@pytest.mark.parametrize("edit, message", [
    (lambda s: s + "\n[extra]\na = 1\n", r"unknown table\(s\) \['extra'\]"),
    (lambda s: s.replace('sampler = "grid"', 'sampler = "grid"\nsamples = 3'), r"unknown key\(s\) \['samples'\]"),
    (lambda s: s.replace('kind = "pareto"', 'kind = "pie"'), "plots\\[1\\].kind is 'pie'"),
    (lambda s: s.replace('preset = "gpu/v100-sxm2-16gb"', ""), "exactly one of 'preset'"),
    (lambda s: s.replace('"gpu.sm_count" = [40, 80]', '"gpu.sm_cnt" = [40, 80]'), "did you mean 'sm_count'"),
    (lambda s: s.replace("[axes]", "[axes]\n").split("[axes]")[0], r"\[axes\] must list"),
])
def test_spec_errors(tmp_path, edit, message):
    path = tmp_path / "bad.toml"
    path.write_text(edit(SPEC))
    with pytest.raises(SweepError, match=message):
        spec = load_spec(path)
        Sweep(spec.base, spec.axes)


def test_bad_plot_option_names_the_plot(tmp_path, toy_zoo):
    path = tmp_path / "p.toml"
    path.write_text(SPEC.replace('name = "front"', 'name = "front"\ncolour = "red"'))
    with pytest.raises(SweepError, match=r"plots\[1\] \(pareto\).*colour"):
        run_spec(load_spec(path), tmp_path / "out", evaluator=ToyEvaluator())


def test_cli_sweep_reports_bad_input_in_one_line(tmp_path, capsys):
    assert main(["sweep", str(tmp_path / "missing.toml")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("archsim: error: ") and "cannot read" in err and err.count("\n") == 1
    bad = tmp_path / "bad.toml"
    bad.write_text(SPEC.replace('"gpu.sm_count"', '"gpu.sm_cnt"'))
    assert main(["sweep", str(bad), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "axis 'gpu.sm_cnt'" in err and err.count("\n") == 1
    assert main(["sweep", str(bad), "--executor", "serial", "--address", "tcp://x:1"]) == 2
    assert "--address is for --executor dask" in capsys.readouterr().err


def test_cli_roofline(tmp_path, capsys):
    pytest.importorskip("archsim.zoo", reason="the model zoo is not in this build")
    pytest.importorskip("archsim.engines.roofline", reason="the roofline engine is not in this build")
    out = tmp_path / "fig.pdf"
    assert main(["roofline", "--hw", "gpu/v100-sxm2-16gb", "--model", "resnet50", "-o", str(out)]) == 0
    assert out.read_bytes().startswith(b"%PDF")
    assert main(["roofline", "--hw", "gpu/v100-sxm2-16gb", "--model", "nosuchnet", "-o", str(out)]) == 2
    assert "unknown model" in capsys.readouterr().err
