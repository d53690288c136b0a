"""The command line, driven through cli.main([...]) with captured output."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from archsim import cli
from archsim.presets import list_presets, load_preset, validate_hardware


def test_presets_list(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["presets", "list"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["id", "kind", "name"]
    ids = [line.split()[0] for line in out[1:]]
    assert ids == list_presets()
    # The name read from the TOML is the validated model's (the H200 inherits nothing: it has its own).
    start = out[0].index("name")
    for line in out[1:]:
        preset_id = line.split()[0]
        assert line[start:] == load_preset(preset_id).name, preset_id


def test_presets_list_reads_no_model_code() -> None:
    # A TOML scan: neither pydantic, pint nor numba is imported to list the presets.
    code = ("import sys, io, contextlib; from archsim.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()): assert main(['presets', 'list']) == 0\n"
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'pydantic', 'pint', 'numba', 'numpy'}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": str(Path(cli.__file__).parents[1])}).stdout
    assert out.strip() == "[]"


def test_presets_check(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["presets", "check"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["id", "kind", "name", "headline"]
    assert [line.split()[0] for line in out[1:]] == list_presets()
    h100 = next(line for line in out if line.startswith("gpu/h100-sxm5-80gb "))
    assert "989 TFLOP/s fp16" in h100 and "3.35 TB/s" in h100


def test_software_choices_are_the_profiles() -> None:
    from archsim.software import list_software

    estimate = next(a for a in cli.build_parser()._subparsers._group_actions[0].choices["estimate"]._actions
                    if "--software" in a.option_strings)
    assert list(estimate.choices) == list_software()


def test_presets_list_by_kind(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["presets", "list", "--kind", "memory"]) == 0
    rows = capsys.readouterr().out.splitlines()[1:]
    assert rows and all(r.startswith("memory/") and " memory " in r for r in rows)


def test_presets_show_gpu(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["presets", "show", "gpu/h100-sxm5-80gb"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("gpu/h100-sxm5-80gb: NVIDIA H100 SXM5 80GB (gpu)")
    for text in ("clock               1.98 GHz", "tensor_clock        1.83 GHz", "shared_memory                228 KiB",
                 "capacity                    80 GiB", "bandwidth                   3.35 TB/s",
                 "latency                     375 ns", "loaded_latency_coefficient  0.111",
                 "peak fp16 tensor  989 TFLOP/s", "peak fp32 vector  66.9 TFLOP/s", "sources:"):
        assert text in out, text


def test_presets_show_every_kind(capsys: pytest.CaptureFixture[str]) -> None:
    for preset_id, expected in [("cpu/epyc-genoa-2vcpu", "peak fp32 vector  214 GFLOP/s"),
                                ("memory/hbm3", "wire bandwidth  819 GB/s"),
                                ("pim/hbm2-pim", "peak fp16"),
                                ("system/dgx-a100", "all 8 gpus")]:
        assert cli.main(["presets", "show", preset_id]) == 0
        assert expected in capsys.readouterr().out


def test_unknown_preset_is_a_one_line_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["presets", "show", "gpu/h100"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("archsim: error: unknown preset 'gpu/h100'")
    assert "Traceback" not in captured.err


def test_schema_error_is_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "memory").mkdir()
    (tmp_path / "memory" / "bad.toml").write_text('preset = "memory/hbm2"\nlatency = 3\nchannels = 0\n')
    (tmp_path / "memory" / "hbm2.toml").write_text(
        (Path(cli.__file__).resolve().parents[1] / "models" / "memory" / "hbm2.toml").read_text())
    monkeypatch.setenv("ARCHSIM_MODELS", str(tmp_path))
    assert cli.main(["presets", "show", "memory/bad"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    assert "latency" in err and "channels" in err


def test_usage_errors_return_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main([]) == 2
    assert cli.main(["presets"]) == 2
    assert cli.main(["frobnicate"]) == 2
    assert "usage:" in capsys.readouterr().err


def test_help_returns_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["--help"]) == 0
    assert "presets" in capsys.readouterr().out


def test_schema_to_stdout_and_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert cli.main(["schema"]) == 0
    schema = json.loads(capsys.readouterr().out)
    assert schema["$schema"].endswith("2020-12/schema")
    names = set(schema["$defs"])
    assert {"GPUDevice", "CPUDevice", "PIMDevice", "System", "DRAM", "Cache"} <= names
    out = tmp_path / "hardware.schema.json"
    assert cli.main(["schema", "--out", str(out)]) == 0
    assert json.loads(out.read_text()) == schema


def test_schema_write_failure_is_an_error(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert cli.main(["schema", "--out", str(tmp_path / "no" / "such" / "dir.json")]) == 2
    err = capsys.readouterr().err
    assert "--out" in err and "cannot write: the folder" in err and "does not exist" in err


def test_schema_describes_units_as_strings() -> None:
    schema = cli.hardware_json_schema()
    gpu = schema["$defs"]["GPUDevice"]["anyOf"][0]
    assert gpu["properties"]["clock"]["type"] == "string"
    assert gpu["additionalProperties"] is False


def test_schema_validates_every_preset_file() -> None:
    jsonschema = pytest.importorskip("jsonschema", reason="jsonschema is an optional test helper")
    import tomllib

    validator = jsonschema.Draft202012Validator(cli.hardware_json_schema())
    root = Path(cli.__file__).resolve().parents[1] / "models"
    for path in sorted(root.glob("*/*.toml")):
        if path.parent.name == "software":
            continue  # software profiles, not hardware (tests/unit/test_software.py loads them)
        errors = list(validator.iter_errors(tomllib.loads(path.read_text())))
        assert not errors, f"{path}: {errors[0].message}"
    # and catches a typo in a complete table
    bad = load_preset("memory/hbm2").model_dump(mode="json")
    bad["bandwith"] = "1 TB/s"
    assert list(validator.iter_errors(bad))
    assert validate_hardware(load_preset("memory/hbm2").model_dump(mode="json"))


def test_presets_check_reports_a_schema_error_that_list_does_not_read(tmp_path, monkeypatch, capsys) -> None:
    from archsim.presets import models_dir

    models = tmp_path / "models"
    for d in ("cpu", "gpu", "memory", "pim", "system", "software"):
        (models / d).mkdir(parents=True)
    (models / "memory" / "hbm2.toml").write_bytes((models_dir() / "memory" / "hbm2.toml").read_bytes())
    (models / "memory" / "bad.toml").write_text('preset = "memory/hbm2"\nname = "bad"\nbandwidth = "3 GHz"\n')
    monkeypatch.setenv("ARCHSIM_MODELS", str(models))
    assert cli.main(["presets", "list"]) == 0  # read and parsed: listed
    assert "memory/bad" in capsys.readouterr().out
    assert cli.main(["presets", "check"]) == 1  # validated: the bandwidth is not a bandwidth
    out, err = capsys.readouterr()
    assert "memory/hbm2" in out and "memory/bad" not in out and "bandwidth" in err
