"""`archsim estimate`: table, json and csv outputs, and a one-line error for a bad preset."""

import json

from archsim.cli import main
from archsim.results import RunResult


def test_estimate_table_json_csv(capsys):
    args = ["estimate", "--hw", "gpu/v100-sxm2-16gb", "--model", "resnet18", "--batch", "2", "--dtype", "fp16"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "latency" in out and "time by bound:" in out and "energy by component:" in out
    assert main([*args, "--per-op"]) == 0
    per_op = capsys.readouterr().out.splitlines()
    assert len(per_op) == 2 + 68 and any(line.split()[0] == "conv1" for line in per_op[2:])  # title, header, ops
    assert main([*args, "--format", "json"]) == 0
    res = RunResult.from_json(capsys.readouterr().out)
    assert res.latency_s > 0 and json.loads(res.to_json())["engine"] == "roofline"
    assert main([*args, "--format", "csv", "--training"]) == 0
    header = capsys.readouterr().out.splitlines()[0]
    assert header.startswith("name,kind,phase,device,bound,flop")


def test_estimate_bad_preset(capsys):
    assert main(["estimate", "--hw", "gpu/nope", "--model", "resnet18"]) == 2
    assert "unknown preset" in capsys.readouterr().err
