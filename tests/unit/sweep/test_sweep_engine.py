"""Sweeps on the real roofline engine: per-point equality with estimate, Dask equality, zoo workloads."""

from __future__ import annotations

import pandas.testing as pdt
import pytest

pytest.importorskip("archsim.engines.roofline", reason="the roofline engine is not in this build")
pytest.importorskip("archsim.zoo", reason="the model zoo is not in this build")

import archsim  # noqa: E402
from archsim.presets import validate_hardware  # noqa: E402
from archsim.sweep import Sweep  # noqa: E402
from archsim.sweep.analysis import to_wide  # noqa: E402
from archsim.sweep.evaluate import apply_overrides  # noqa: E402

AXES = {"gpu.dram.bandwidth": ["300 GB/s", "900 GB/s"], "gpu.sm_count": [40, 80], "gpu.l2.size": ["3 MiB", "6 MiB"]}


@pytest.fixture(scope="module")
def v100():
    return archsim.load_preset("gpu/v100-sxm2-16gb")


@pytest.fixture(scope="module")
def gemm():
    return archsim.ops.Gemm(1024, 1024, 1024, dtype="fp16")


def test_each_point_equals_estimate(v100, gemm):
    sweep = Sweep(v100, AXES)
    wide = to_wide(sweep.run(gemm, executor="serial"))
    assert (wide["status"] == "ok").all()
    dump = v100.model_dump()
    for _, row in wide.iterrows():
        point = apply_overrides(dump, [(a.path, a.encode(row[a.column])) for a in sweep.axes])
        ref = archsim.estimate(gemm, validate_hardware(point))
        assert row["latency_s"] == pytest.approx(ref.latency_s, rel=1e-9)
        assert row["energy_j"] == pytest.approx(ref.energy_j, rel=1e-9)
        assert row["data_movement_fraction"] == pytest.approx(ref.data_movement_fraction, rel=1e-9, abs=1e-15)


def test_dask_local_cluster_equals_local_processes(v100, gemm):
    distributed = pytest.importorskip("distributed", reason="the dask extra is not installed")
    sweep = Sweep(v100, AXES)
    local = sweep.run(gemm, executor="processes", workers=2, chunk_size=2)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        on_dask = sweep.run(gemm, executor="dask", client=client, chunk_size=3)
    pdt.assert_frame_equal(local, on_dask)


def test_zoo_workload_axes(v100):
    sweep = Sweep(v100, {"gpu.sm_count": [40, 80], "workload.batch": [1, 4]})
    wide = to_wide(sweep.run({"model": "mlp", "dtype": "fp16"}, executor="serial"))
    assert (wide["status"] == "ok").all()
    # more work per batch on the same hardware takes longer; more SMs never slow a point down
    by = wide.set_index(["gpu.sm_count", "workload.batch"])["latency_s"]
    assert by[(40, 4)] > by[(40, 1)] and by[(80, 4)] <= by[(40, 4)]
    ref = archsim.estimate(archsim.zoo.mlp(batch=4, dtype="fp16"), v100)
    assert by[(80, 4)] == pytest.approx(ref.latency_s, rel=1e-9)


def test_cli_sweep_end_to_end(tmp_path, capsys):
    import matplotlib

    matplotlib.use("Agg")
    from archsim.cli import main

    spec = tmp_path / "mlp.toml"
    spec.write_text("""
[base]
preset = "gpu/v100-sxm2-16gb"
[work]
model = "mlp"
batch = 32
dtype = "fp16"
[sweep]
executor = "serial"
metrics = ["latency_s", "energy_j"]
[axes]
"gpu.dram.bandwidth" = { from = "300 GB/s", to = "900 GB/s", num = 3 }
"gpu.sm_count" = [40, 80]
[[plots]]
kind = "heatmap"
x = "gpu.dram.bandwidth_bytes_per_s"
y = "gpu.sm_count"
""")
    out = tmp_path / "out"
    assert main(["sweep", str(spec), "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert text.startswith("6 points: 6 ok, 0 invalid, 0 failed") and "fastest: point" in text
    assert (out / "00-heatmap.pdf").is_file() and (out / "results.parquet").is_file()
    assert main(["sweep", str(spec), "--out", str(out)]) == 2  # the store holds results: needs --resume
    assert "already holds results" in capsys.readouterr().err
    assert main(["sweep", str(spec), "--out", str(out), "--resume"]) == 0
