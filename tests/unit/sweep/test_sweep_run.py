"""Running sweeps with a cheap deterministic evaluator: tables, invalid points, executors, store."""

from __future__ import annotations

import math

import pandas as pd
import pandas.testing as pdt
import pytest
from sweep_toys import ToyEvaluator, toy_workload

from archsim.errors import SweepError
from archsim.presets import load_preset, validate_hardware
from archsim.sweep import Sweep
from archsim.sweep.analysis import to_wide

WORK = (2e12, 4e9)  # 2 TFLOP, 4 GB


@pytest.fixture(scope="module")
def v100():
    return load_preset("gpu/v100-sxm2-16gb")


def grid(v100, **kw):
    axes = {"gpu.dram.bandwidth": ["300 GB/s", "600 GB/s", "900 GB/s"], "gpu.sm_count": [40, 80]}
    return Sweep(v100, axes, **kw)


def test_tidy_table_shape_and_values(v100):
    table = grid(v100).run(WORK, evaluator=ToyEvaluator(), executor="serial")
    # 3 bandwidths x 2 SM counts = 6 points; 4 metrics each
    assert len(table) == 6 * 4
    assert list(table.columns) == ["point", "gpu.dram.bandwidth_bytes_per_s", "gpu.sm_count", "status", "error",
                                   "metric", "value"]
    assert list(table["metric"][:4]) == ["latency_s", "energy_j", "echo_bandwidth", "echo_sm_count"]
    row = table[(table.point == 0) & (table.metric == "latency_s")].iloc[0]
    # point 0: 300 GB/s, 40 SMs: 2e12 / (40 x 1.53e9 x 128) + 4e9 / 3e11 = 0.2553 + 0.01333 s
    expected = 2e12 / (40 * 1.53e9 * 128) + 4e9 / 3e11
    assert row["value"] == pytest.approx(expected, rel=1e-12)
    assert row["gpu.dram.bandwidth_bytes_per_s"] == 3e11 and row["gpu.sm_count"] == 40
    assert (table["status"] == "ok").all() and table["error"].isna().all()


def test_base_is_not_modified(v100):
    before = v100.model_dump()
    grid(v100).run(WORK, evaluator=ToyEvaluator(), executor="serial")
    assert v100.model_dump() == before


def test_invalid_point_is_reported_not_fatal(v100):
    # V100's 6 MiB L2 with 128-B lines: 16 ways divide it, 7 ways do not.
    sweep = Sweep(v100, {"gpu.l2.ways": [16, 7]})
    wide = to_wide(sweep.run(WORK, evaluator=ToyEvaluator(), executor="serial"))
    assert list(wide["status"]) == ["ok", "invalid"]
    assert "divisible by ways x line_size" in wide["error"][1] and wide["error"][0] is None
    assert math.isnan(wide["latency_s"][1]) and wide["latency_s"][0] > 0


def test_engine_refusal_marks_only_that_point(v100):
    table = grid(v100).run(WORK, evaluator=ToyEvaluator(refuse_below=60), executor="serial", chunk_size=6)
    wide = to_wide(table)
    assert list(wide["status"]) == ["failed", "ok"] * 3
    assert all("refuses sm_count 40" in e for e in wide["error"][::2])


@pytest.mark.parametrize("sampler, n", [("random", 20), ("lhs", 20), ("sobol", 16)])
def test_same_seed_same_table(v100, sampler, n):
    axes = {"gpu.dram.bandwidth": {"from": "100 GB/s", "to": "900 GB/s", "scale": "log"},
            "gpu.sm_count": {"from": 20, "to": 80}, "gpu.l2.size": ["4 MiB", "6 MiB"]}
    runs = [Sweep(v100, axes, sampler=sampler, n=n, seed=7).run(WORK, evaluator=ToyEvaluator(), executor="serial")
            for _ in range(2)]
    pdt.assert_frame_equal(runs[0], runs[1])
    other = Sweep(v100, axes, sampler=sampler, n=n, seed=8).points()
    assert not other.equals(Sweep(v100, axes, sampler=sampler, n=n, seed=7).points())
    pts = Sweep(v100, axes, sampler=sampler, n=n, seed=7).points()
    assert pts["gpu.dram.bandwidth_bytes_per_s"].between(1e11, 9e11).all()
    assert pts["gpu.sm_count"].between(20, 80).all() and pts["gpu.sm_count"].map(type).eq(int).all()


def test_sampler_arguments(v100):
    axes = {"gpu.sm_count": {"from": 20, "to": 80}}
    with pytest.raises(SweepError, match="needs levels on every axis"):
        Sweep(v100, axes)
    with pytest.raises(SweepError, match="not a power of two"):
        Sweep(v100, axes, sampler="sobol", n=10)
    with pytest.raises(SweepError, match="needs n"):
        Sweep(v100, axes, sampler="lhs")
    with pytest.raises(SweepError, match="allowed: grid, random, lhs, sobol"):
        Sweep(v100, axes, sampler="halton", n=4)
    with pytest.raises(SweepError, match="do not pass n"):
        Sweep(v100, {"gpu.sm_count": [1, 2]}, n=4)


def test_lhs_fills_every_stratum(v100):
    # A Latin hypercube of 8 points over 8 equal levels hits each level exactly once.
    levels = [f"{100 * (i + 1)} GB/s" for i in range(8)]
    pts = Sweep(v100, {"gpu.dram.bandwidth": levels}, sampler="lhs", n=8, seed=3).points()
    assert sorted(pts["gpu.dram.bandwidth_bytes_per_s"]) == [1e11 * (i + 1) for i in range(8)]


def test_processes_equal_serial(v100):
    sweep = grid(v100)
    serial = sweep.run(WORK, evaluator=ToyEvaluator(), executor="serial")
    procs = sweep.run(WORK, evaluator=ToyEvaluator(), executor="processes", workers=2, chunk_size=1)
    pdt.assert_frame_equal(serial, procs)


def test_dask_local_cluster_equals_local_run(v100):
    distributed = pytest.importorskip("distributed", reason="the dask extra is not installed")
    sweep = grid(v100)
    local = sweep.run(WORK, evaluator=ToyEvaluator(), executor="processes", workers=2, chunk_size=2)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        on_client = sweep.run(WORK, evaluator=ToyEvaluator(), executor="dask", client=client, chunk_size=2)
        by_address = sweep.run(WORK, evaluator=ToyEvaluator(), executor="dask", address=cluster.scheduler_address)
    pdt.assert_frame_equal(local, on_client)
    pdt.assert_frame_equal(local, by_address)


def test_executor_arguments(v100):
    sweep = grid(v100)
    with pytest.raises(SweepError, match="allowed: serial, processes, dask"):
        sweep.run(WORK, evaluator=ToyEvaluator(), executor="threads")
    with pytest.raises(SweepError, match="needs address"):
        sweep.run(WORK, evaluator=ToyEvaluator(), executor="dask")
    with pytest.raises(SweepError, match="for executor='dask'"):
        sweep.run(WORK, evaluator=ToyEvaluator(), executor="serial", address="tcp://x:1")


def test_store_skips_finished_points(v100, tmp_path):
    log = tmp_path / "evaluated.txt"
    ev = ToyEvaluator(log=str(log))
    sweep = grid(v100)
    first = sweep.run(WORK, evaluator=ev, executor="serial", store=tmp_path / "store", chunk_size=2)
    assert len(log.read_text().splitlines()) == 6
    log.write_text("")
    second = sweep.run(WORK, evaluator=ev, executor="serial", store=tmp_path / "store")
    assert log.read_text() == ""
    pdt.assert_frame_equal(first, second)
    # A bigger sweep computes only its new points.
    bigger = Sweep(v100, {"gpu.dram.bandwidth": ["300 GB/s", "600 GB/s", "900 GB/s"], "gpu.sm_count": [40, 80, 20]})
    bigger.run(WORK, evaluator=ev, executor="serial", store=tmp_path / "store")
    assert sorted(log.read_text().splitlines()) == sorted(f"{b!r},20" for b in (3e11, 6e11, 9e11))
    with pytest.raises(SweepError, match="already holds results"):
        sweep.run(WORK, evaluator=ev, executor="serial", store=tmp_path / "store", resume=False)


def test_key_depends_on_evaluator_and_work(v100, tmp_path):
    log = tmp_path / "evaluated.txt"
    sweep = Sweep(v100, {"gpu.sm_count": [40, 80]})
    sweep.run(WORK, evaluator=ToyEvaluator(log=str(log)), executor="serial", store=tmp_path / "s")
    sweep.run((1e12, 1e9), evaluator=ToyEvaluator(log=str(log)), executor="serial", store=tmp_path / "s")
    sweep.run(WORK, evaluator=ToyEvaluator(key="toy-v2", log=str(log)), executor="serial", store=tmp_path / "s")
    assert len(log.read_text().splitlines()) == 6


def test_workload_axes_with_a_factory(v100):
    sweep = Sweep(v100, {"gpu.sm_count": [40, 80], "workload.batch": [1, 4]})
    wide = to_wide(sweep.run(toy_workload, evaluator=ToyEvaluator(), executor="serial"))
    assert list(wide["workload.batch"]) == [1, 4, 1, 4]
    flop, nbytes = toy_workload(batch=4)
    # point 1: 40 SMs, batch 4: 8e9 / (40 x 1.53e9 x 128) + 1.04e8 / 9e11
    assert wide["latency_s"][1] == pytest.approx(flop / (40 * 1.53e9 * 128) + nbytes / 9e11, rel=1e-12)
    with pytest.raises(SweepError, match="need a workload that takes parameters"):
        sweep.run(WORK, evaluator=ToyEvaluator())


def test_metrics_selection(v100):
    table = grid(v100).run(WORK, evaluator=ToyEvaluator(), executor="serial", metrics=["energy_j"])
    assert set(table["metric"]) == {"energy_j"} and len(table) == 6
    with pytest.raises(SweepError, match="not reported"):
        grid(v100).run(WORK, evaluator=ToyEvaluator(), executor="serial", metrics=["power_w"])


def test_system_base_paths(v100):
    cpu = load_preset("cpu/epyc-genoa-2vcpu")
    system = validate_hardware({
        "kind": "system", "name": "test box", "host": cpu.model_dump(), "gpu": v100.model_dump(), "gpu_count": 1,
        "host_link": {"kind": "pcie3", "bandwidth": "15.75 GB/s", "latency": "10 us", "energy": "10 pJ/bit",
                      "efficiency": 0.8},
    })
    l3 = cpu.caches[-1].name
    sweep = Sweep(system, {"gpu.dram.bandwidth": ["450 GB/s"], "host.cores": [1, 2], f"host.caches.{l3}.ways": [16],
                           "host_link.bandwidth": ["32 GB/s"]})
    assert sweep.columns == ["gpu.dram.bandwidth_bytes_per_s", "host.cores", f"host.caches.{l3}.ways",
                             "host_link.bandwidth_bytes_per_s"]
    assert sweep.axes[2].path == ("host", "caches", len(cpu.caches) - 1, "ways")
    with pytest.raises(SweepError, match="valid paths"):
        Sweep(system, {"dram.bandwidth": ["1 TB/s"]})  # on a system the device segment is required

    class Host:
        key = "host"

        def __call__(self, work, hardware):
            return [{"latency_s": 1.0 / h.host.cores} for h in hardware]

    table = sweep.run(WORK, evaluator=Host(), executor="serial")
    assert list(table["value"]) == [1.0, 0.5]


def test_points_preview_matches_len(v100):
    sweep = grid(v100)
    assert len(sweep) == 6 and list(sweep.points()["point"]) == list(range(6))
    assert isinstance(sweep.points(), pd.DataFrame)


def test_progress_bar_only_when_asked_or_on_a_terminal(v100, capfd):
    sweep = grid(v100)
    sweep.run(WORK, evaluator=ToyEvaluator(), executor="serial", chunk_size=1)
    assert capfd.readouterr().err == ""  # stderr is not a terminal under pytest
    sweep.run(WORK, evaluator=ToyEvaluator(), executor="serial", chunk_size=1, progress=True)
    assert "6/6" in capfd.readouterr().err


def test_repeated_points_are_evaluated_once(v100, tmp_path):
    log = tmp_path / "evaluated.txt"
    # 16 random draws over 2 x 2 levels repeat points; each distinct point is computed once.
    sweep = Sweep(v100, {"gpu.sm_count": [40, 80], "gpu.dram.bandwidth": ["300 GB/s", "600 GB/s"]},
                  sampler="random", n=16, seed=1)
    table = to_wide(sweep.run(WORK, evaluator=ToyEvaluator(log=str(log)), executor="serial"))
    distinct = table[["gpu.sm_count", "gpu.dram.bandwidth_bytes_per_s"]].drop_duplicates()
    assert len(table) == 16 and len(log.read_text().splitlines()) == len(distinct) <= 4
