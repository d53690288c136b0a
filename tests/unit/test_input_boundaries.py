"""Every class of bad input the issue tracker listed is a one-line ArchsimError naming the field.

One case per reported input (files, units, values, coercion, Python API, limits, paths); the fuzz
suite (tests/property/test_fuzz_inputs.py) covers the classes beyond these examples.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

import archsim
from archsim import ops, zoo
from archsim.errors import ArchsimError, EngineError, PresetError, SchemaError, SweepError, UnitError, WorkloadError
from archsim.presets import load_hardware, load_preset, validate_hardware
from archsim.units import parse
from archsim.workload import TensorSpec

V100 = load_preset("gpu/v100-sxm2-16gb")
UPMEM = load_preset("pim/upmem-2560")
GEMM = ops.Gemm(64, 64, 64)


def _with(hw, path: str, value):
    dump = hw.model_dump()
    node = dump
    *parents, leaf = path.split(".")
    for p in parents:
        node = node[p]
    node[leaf] = value
    return dump


CASES = {
    # units
    "1 GB/0s": (lambda: parse("1 GB/0s", "bandwidth"), UnitError, "1 GB/0s"),
    "2000 parentheses": (lambda: parse("(" * 2000 + "1 GB/s" + ")" * 2000, "bandwidth"), UnitError, "characters"),
    "integer power": (lambda: parse("9**9**9 B/s", "bandwidth"), UnitError, "powers of numbers"),
    # values
    "node_nm = inf": (lambda: validate_hardware(_with(V100, "node_nm", float("inf"))), SchemaError, "node_nm"),
    "vdd_v = inf": (lambda: validate_hardware(_with(V100, "energy.vdd_v", float("inf"))), SchemaError, "vdd_v"),
    "vdd_v = 1e200": (lambda: validate_hardware(_with(V100, "energy.vdd_v", 1e200)), SchemaError, "vdd_v"),
    "pim fp32 ops = nan": (lambda: validate_hardware(_with(UPMEM, "units.ops_per_cycle", {"fp32": float("nan")})),
                           SchemaError, "ops_per_cycle"),
    "negative fma_lanes": (lambda: validate_hardware(_with(V100, "sm.fma_lanes", {"fp32": 64, "fp16": -1})),
                           SchemaError, "fma_lanes"),
    "negative tensor peak": (lambda: validate_hardware(_with(V100, "tensor_core.flop_per_cycle_per_sm",
                                                             {"fp16": -1024})), SchemaError, "flop_per_cycle_per_sm"),
    "sm_count = true": (lambda: validate_hardware(_with(V100, "sm_count", True)), SchemaError, "sm_count"),
    'sm_count = "80"': (lambda: validate_hardware(_with(V100, "sm_count", "80")), SchemaError, "sm_count"),
    'shared = "yes"': (lambda: validate_hardware(_with(V100, "l2.shared", "yes")), SchemaError, "l2.shared"),
    "bandwidth 1e40 B/s": (lambda: validate_hardware(_with(V100, "dram.bandwidth", "1e40 B/s")), SchemaError,
                           "dram.bandwidth"),
    # coercion
    "kernel=(2.7, 3)": (lambda: ops.Conv2d(1, 3, 8, 32, 32, kernel=(2.7, 3)), WorkloadError, r"kernel\[0\]"),
    "stride=(1.9, 1.9)": (lambda: ops.Conv2d(1, 3, 8, 32, 32, stride=(1.9, 1.9)), WorkloadError, r"stride\[0\]"),
    'kernel="33"': (lambda: ops.Conv2d(1, 3, 8, 32, 32, kernel="33"), WorkloadError, "kernel"),
    "Elementwise((2.5,))": (lambda: ops.Elementwise((2.5,)), WorkloadError, r"shape\[0\]"),
    "TensorSpec((2.5,))": (lambda: TensorSpec((2.5,)), WorkloadError, r"shape\[0\]"),
    "Gemm(m=(1, 1))": (lambda: ops.Gemm((1, 1), 2, 2), WorkloadError, "Gemm.m"),
    "resnet50(image_size=224.5)": (lambda: zoo.resnet50(image_size=224.5), WorkloadError, "image_size"),
    "resnet50(depth=3)": (lambda: zoo.resnet50(depth=3), WorkloadError, "depth"),
    # Python API
    "estimate(foo=1)": (lambda: archsim.estimate(GEMM, V100, foo=1), EngineError, "foo"),
    "Link() missing fields": (lambda: archsim.hardware.Link(kind="pcie4"), SchemaError, "bandwidth"),
    "model_validate({})": (lambda: archsim.hardware.GPUDevice.model_validate({}), SchemaError, "sm_count"),
    "model_copy(sm_count=-5)": (lambda: V100.model_copy(update={"sm_count": -5}), SchemaError, "sm_count"),
    "model_copy(bogus=1)": (lambda: V100.model_copy(update={"bogus": 1}), SchemaError, "bogus"),
    "DES HostToDevice on PIM": (lambda: archsim.estimate(ops.HostToDevice(1000), UPMEM, engine="des"), EngineError,
                                "host link"),
    "sweep options bogus": (lambda: archsim.Sweep(V100, {"gpu.sm_count": [40, 80]}).run(
        "mlp", options={"bogus": 1}, executor="serial"), EngineError, "bogus"),
    "workload.nonsense axis": (lambda: archsim.Sweep(V100, {"workload.nonsense": [1, 2]}).run(
        "mlp", executor="serial"), SweepError, "nonsense"),
    "metrics checked first": (lambda: archsim.Sweep(V100, {"gpu.sm_count": [40, 80]}).run(
        "mlp", metrics=["latency"], executor="serial"), SweepError, "latency"),
    "chunk_size=0": (lambda: archsim.Sweep(V100, {"gpu.sm_count": [40, 80]}).run(
        "mlp", chunk_size=0, executor="serial"), SweepError, "chunk_size"),
    "seed=-1": (lambda: archsim.Sweep(V100, {"gpu.sm_count": {"from": 40, "to": 80}}, sampler="random", n=4,
                                      seed=-1), SweepError, "seed"),
    "dask 'not a url'": (lambda: archsim.Sweep(V100, {"gpu.sm_count": [40, 80]}).run(
        "mlp", executor="dask", address="not a url"), SweepError, "address"),
    # limits
    "1e9-point grid": (lambda: archsim.Sweep(V100, {"gpu.sm_count": list(range(1, 1001)),
                                                    "gpu.clock": {"from": "1 GHz", "to": "2 GHz", "num": 1000},
                                                    "gpu.l2.ways": list(range(1, 1001))}), SweepError, "limit"),
    "DES steps=1e9": (lambda: archsim.estimate(GEMM, V100, engine="des", steps=10**9), EngineError, "steps"),
    # paths
    'load_preset("../evil")': (lambda: load_preset("../evil"), PresetError, "../evil"),
    'load_preset("gpu/../x")': (lambda: load_preset("gpu/../x"), PresetError, "gpu/../x"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_bad_input_is_a_one_line_error_naming_the_field(name):
    call, error, match = CASES[name]
    t0 = time.perf_counter()
    with pytest.raises(error, match=match) as info:
        call()
    lines = [ln for ln in str(info.value).splitlines() if ln.strip()]
    assert len(lines) == 1 or (len(lines) >= 2 and "problem(s)" in lines[0]), str(info.value)
    assert time.perf_counter() - t0 < 5.0  # refused before any allocation or simulation


def test_non_utf8_deep_and_fanning_out_files(tmp_path, monkeypatch):
    bad = tmp_path / "bad.toml"
    bad.write_bytes(b'name = "\xff\xfe"\n')
    with pytest.raises(PresetError, match="not UTF-8"):
        load_hardware(bad)
    deep = tmp_path / "deep.toml"
    deep.write_text("a = " + "[" * 3000 + "]" * 3000 + "\n")
    with pytest.raises(PresetError, match="nested too deeply"):
        load_hardware(deep)
    # Each level references the next one ten times: 10^6 resolutions at depth 6 without the budget.
    models = tmp_path / "models"
    for d in ("cpu", "gpu", "memory", "pim", "system"):
        (models / d).mkdir(parents=True)
    for level in range(6):
        refs = "\n".join(f'[t{i}]\npreset = "memory/l{level + 1}"' for i in range(10))
        (models / "memory" / f"l{level}.toml").write_text(f'kind = "hbm2"\n{refs}\n')
    (models / "memory" / "l6.toml").write_text('kind = "hbm2"\n')
    monkeypatch.setenv("ARCHSIM_MODELS", str(models))
    t0 = time.perf_counter()
    with pytest.raises(PresetError, match="more than 256 preset references"):
        load_preset("memory/l0")
    assert time.perf_counter() - t0 < 5.0


def test_one_broken_preset_does_not_hide_the_others(tmp_path, monkeypatch, capsys):
    from archsim import cli
    from archsim.presets import models_dir

    models = tmp_path / "models"
    for d in ("cpu", "gpu", "memory", "pim", "system"):
        (models / d).mkdir(parents=True)
    (models / "memory" / "hbm2.toml").write_bytes((models_dir() / "memory" / "hbm2.toml").read_bytes())
    (models / "gpu" / "broken.toml").write_bytes(b'name = "\xff"\n')
    monkeypatch.setenv("ARCHSIM_MODELS", str(models))
    assert cli.main(["presets", "list"]) == 1
    out, err = capsys.readouterr()
    assert "memory/hbm2" in out and "broken.toml: not UTF-8" in err


def test_a_spec_plot_name_cannot_leave_out(tmp_path):
    from archsim.sweep.spec import load_spec

    spec = tmp_path / "s.toml"
    spec.write_text('[base]\npreset = "gpu/v100-sxm2-16gb"\n[axes]\n"gpu.sm_count" = [40, 80]\n'
                    '[[plots]]\nkind = "sweep_lines"\nname = "../../x"\n')
    with pytest.raises(SweepError, match=r"plots\[0\].name"):
        load_spec(spec)


def _spec(tmp_path: Path, body: str) -> Path:
    spec = tmp_path / "s.toml"
    spec.write_text('[base]\npreset = "gpu/v100-sxm2-16gb"\n[sweep]\nexecutor = "serial"\n' + body)
    return spec


def test_cli_exit_codes(tmp_path, capsys):
    from archsim import cli

    ok = _spec(tmp_path, '[work]\nmodel = "mlp"\nbatch = 4\n[axes]\n"gpu.sm_count" = [40, 80]\n')
    assert cli.main(["sweep", str(ok), "--out", str(tmp_path / "a"), "--no-progress"]) == 0
    # Every point invalid (an L2 size not divisible by ways x line): done, but not all points ok.
    invalid = _spec(tmp_path, '[work]\nmodel = "mlp"\n[axes]\n"gpu.l2.size" = ["1000 B", "1001 B"]\n')
    assert cli.main(["sweep", str(invalid), "--out", str(tmp_path / "b"), "--no-progress"]) == 1
    bad_engine = _spec(tmp_path, '[work]\nmodel = "mlp"\n[engine]\nname = "warp"\n[axes]\n"gpu.sm_count" = [40]\n')
    assert cli.main(["sweep", str(bad_engine), "--out", str(tmp_path / "c"), "--no-progress"]) == 2
    bad_model = _spec(tmp_path, '[work]\nmodel = "nope"\n[axes]\n"gpu.sm_count" = [40]\n')
    assert cli.main(["sweep", str(bad_model), "--out", str(tmp_path / "d"), "--no-progress"]) == 2
    (tmp_path / "file").write_text("")
    assert cli.main(["sweep", str(ok), "--out", str(tmp_path / "file"), "--no-progress"]) == 2
    capsys.readouterr()
    t0 = time.perf_counter()
    assert cli.main(["roofline", "--hw", "gpu/t4", "--model", "resnet50", "-o", str(tmp_path / "x.jpg")]) == 2
    assert cli.main(["roofline", "--hw", "gpu/t4", "--model", "resnet50", "-o", str(tmp_path)]) == 2
    assert time.perf_counter() - t0 < 2.0  # checked before computing
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and all(line.startswith("archsim: error: -o ") for line in err)


def test_cli_output_errors_are_one_line(tmp_path):
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root)}
    run = [sys.executable, "-m", "archsim.cli", "presets", "show", "gpu/h100-sxm5-80gb"]
    if Path("/dev/full").exists():
        with open("/dev/full", "w") as full:
            res = subprocess.run(run, stdout=full, stderr=subprocess.PIPE, env=env, timeout=60)
        assert res.returncode == 2 and res.stderr.decode().strip() == (
            "archsim: error: cannot write the output: No space left on device")
    r, w = os.pipe()
    os.close(r)  # the reader is gone before the first write
    res = subprocess.run(run, stdout=w, stderr=subprocess.PIPE, env=env, timeout=60)
    os.close(w)
    # A closed pipe (`archsim ... | head`) is the reader's choice: silent, 128 + SIGPIPE.
    assert res.returncode == 141 and res.stderr.decode().strip() == "", res.stderr


def test_accepted_inputs_give_finite_results_even_at_extreme_magnitudes():
    # A 1e29 Hz clock and a 1e30 B/s DRAM are accepted (below units.MAX_SI): the compute and memory
    # times shrink towards 0, the launch overhead (a few us) keeps the latency positive and finite.
    hw = validate_hardware(_with(V100, "clock", "1e29 Hz"))
    hw = hw.model_copy(update={"dram": hw.dram.model_copy(update={"bandwidth": "1e30 B/s"})})
    res = archsim.estimate(GEMM, hw)
    assert 0 < res.latency_s < float("inf") and 0 <= res.energy_j < float("inf")
    assert res.latency_s >= hw.efficiency.launch_overhead_s
    with pytest.raises(ArchsimError, match=r"clock: Input should be less than or equal to 10{30}"):
        validate_hardware(_with(V100, "clock", "2e30 Hz"))
