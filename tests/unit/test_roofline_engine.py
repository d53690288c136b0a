"""Hand-computed roofline cases on the V100 SXM2 preset, options and the sweep path."""

import math

import numpy as np
import pytest

import archsim.presets as presets
from archsim import ops
from archsim.engines import estimate, estimate_many
from archsim.errors import EngineError
from archsim.results import RunResult


@pytest.fixture(scope="module")
def v100():
    return presets.load_preset("gpu/v100-sxm2-16gb")


def test_compute_bound_gemm(v100):
    # 8192^3 fp16 GEMM on V100 (80 SMs, 1.53 GHz, 1024 Tensor-Core FLOP/cycle/SM, efficiency 0.9).
    # 128x128 tiles: 2 blocks/SM (registers: 256 threads x 128 regs = 32 K of 64 K), 64 x 64 = 4096
    # blocks over 160 slots = 26 waves (the tail of 96 blocks still puts 2 on some SM); 256x128 tiles:
    # 1 block/SM (224 regs), 2048 blocks over 80 slots = 26 waves. Either way, per wave:
    # 32768 tile outputs per SM x 2 x 8192 FLOP / (1024 x 1.53e9 x 0.9 FLOP/s) = 380.8 us;
    # compute = 26 x 380.8 us = 9.899 ms (a plain peak roofline: 1.1e12 / 125.3e12 = 8.78 ms).
    # The power limit is lifted so the clock stays at 1.53 GHz (at 300 W the governor lowers it:
    # test_power_limit_lowers_the_clock).
    op = ops.Gemm(8192, 8192, 8192, dtype="fp16")
    r = estimate(op, v100.model_copy(update={"power_limit_w": "1 MW"}))
    o = r.ops[0]
    per_wave = 2 * 2 * 128 * 128 * 8192 / (1024 * 1.53e9 * 0.9)
    assert o.bound == "compute:tensor"
    assert o.time_by_unit_s["compute:tensor"] == pytest.approx(26 * per_wave, rel=1e-9)
    assert o.extra["waves"] == 26
    assert o.extra["tile_m"] * o.extra["tile_n"] * o.extra["blocks_per_sm"] == 32768
    # latency = compute + one fill latency per wave (<= L2 + DRAM latency) + 4 us launch
    fill_max = 26 * (193 / 1.53e9 + 317e-9)
    assert 26 * per_wave + 4e-6 < o.latency_s <= 26 * per_wave + 4e-6 + fill_max
    assert r.latency_s == o.latency_s


def test_power_limit_lowers_the_clock(v100):
    # The same GEMM at a 250 W limit: the boost-clock power (~295 W) exceeds it, so the op runs at
    # the clock whose power is 250 W, and its compute time grows by the clock ratio.
    op = ops.Gemm(8192, 8192, 8192, dtype="fp16")
    free = estimate(op, v100.model_copy(update={"power_limit_w": "1 MW"})).ops[0]
    o = estimate(op, v100.model_copy(update={"power_limit_w": "250 W"})).ops[0]
    assert free.extra["power_w"] > 250.0 and free.extra["power_limited"] == 0.0
    assert o.bound == "power" and o.extra["power_limited"] == 1.0
    assert o.extra["power_w"] == pytest.approx(250.0, rel=1e-5)
    ratio = o.extra["clock_hz"] / 1.53e9
    assert 0.5 < ratio < 1.0
    assert o.time_by_unit_s["compute:tensor"] == pytest.approx(free.time_by_unit_s["compute:tensor"] / ratio)
    # Energy components still sum to the total.
    assert sum(o.energy_breakdown_j.values()) == pytest.approx(o.energy_j, rel=1e-12)


def test_memory_bound_relu(v100):
    # ReLU over 2^26 fp32: reads and writes 2 x 256 MiB = 536.9 MB. Peak x STREAM efficiency =
    # 900 GB/s x 0.9 = 810 GB/s. In flight: N = 80 SMs x 8 blocks x 256 threads x 16 B = 2.62 MB;
    # idle latency L0 = 193 / 1.53 GHz + 317 ns = 443.1 ns (N / L0 = 5.92 TB/s). HBM2's loaded
    # latency (c = 0.111): x = N / 810 GB/s = 3236.3 ns, rho = 2x / (L0 + x + sqrt((L0 - x)^2 +
    # 4 c L0 x)) = 6472.7 / (443.1 + 3236.3 + 2905.0) = 0.98303 -> 796.3 GB/s -> 536.9e6 / 796.3e9
    # = 674.2 us (662.8 us at the sharp knee, c = 0).
    op = ops.Elementwise((1 << 26,), "relu", dtype="fp32")
    o = estimate(op, v100).ops[0]
    assert o.bound == "memory:dram"
    assert o.bytes_by_level["dram"] == 2 * 4 * (1 << 26)
    lat = 193 / 1.53e9 + 317e-9
    x = (80 * 8 * 256 * 16) / 810e9
    bw = 810e9 * 2 * x / (lat + x + math.sqrt((lat - x) ** 2 + 4 * 0.111 * lat * x))
    assert o.time_by_unit_s["memory:dram"] == pytest.approx(2 * 4 * (1 << 26) / bw, rel=1e-9)


def test_small_gemm_is_not_a_peak_roofline(v100):
    # 1760 x 16 x 1760 fp16: the peak roofline says 6.2 MB / 900 GB/s = 6.9 us; DeepBench measures 20 us.
    # Launch overhead, Little's-law bandwidth and tiles keep the estimate well above the peak bound.
    o = estimate(ops.Gemm(1760, 16, 1760, dtype="fp16"), v100).ops[0]
    assert o.latency_s > 2 * (2 * (1760 * 1760 + 2 * 1760 * 16)) / 900e9


def test_options_are_validated(v100):
    op = ops.Gemm(64, 64, 64)
    with pytest.raises(EngineError, match="allowed: roofline, des"):
        estimate(op, v100, engine="magic")
    with pytest.raises(EngineError, match="device='gpu' applies to a System"):
        estimate(op, v100, device="gpu")
    with pytest.raises(EngineError, match="allowed: gpu, host, pim"):
        estimate(op, v100, device="tpu")
    with pytest.raises(EngineError, match=r"unknown option\(s\) \['bogus'\]; allowed: device"):
        estimate(op, v100, bogus=1)  # a clear error listing the options, not a TypeError
    with pytest.raises(EngineError, match="needs a link"):
        estimate(ops.HostToDevice(1 << 20), v100)


def test_graph_sum_overlap_and_json(v100):
    a = ops.Gemm(1024, 1024, 1024, dtype="fp16", name="a")
    b = ops.Elementwise((1024, 1024), "relu", dtype="fp16", name="b")
    from archsim.workload.graph import OpGraph
    chain = OpGraph.chain("pair", [a, b])
    r = estimate(chain, v100)
    assert r.latency_s == pytest.approx(sum(o.latency_s for o in r.ops), rel=1e-12)
    assert sum(r.energy_breakdown_j.values()) == pytest.approx(r.energy_j, rel=1e-12)
    free = OpGraph("free", (a, b))
    ro = estimate(free, v100, overlap=True)
    assert ro.latency_s == pytest.approx(max(o.latency_s for o in ro.ops), rel=1e-12)
    assert sum(ro.energy_breakdown_j.values()) == pytest.approx(ro.energy_j, rel=1e-12)
    back = RunResult.from_json(r.to_json())
    assert back == r
    assert {"archsim_version", "hardware_hash", "options"} <= set(r._meta)
    frame = r.to_frame()
    assert {"latency_s", "dram_bytes", "energy_dram_j", "time_compute:tensor_s"} <= set(frame.columns)


def test_estimate_many_equals_estimate(v100):
    from archsim.workload.graph import OpGraph
    ops_list = [ops.Gemm(512, 384, 1024, dtype="fp16", name="g1"),
                ops.Conv2d(8, 64, 128, 28, 28, kernel=(3, 3), padding=(1, 1), dtype="fp16", name="c"),
                ops.Elementwise((512, 384), "gelu", dtype="fp16", name="e")]
    graph = OpGraph("g", tuple(ops_list))
    dump = v100.model_dump()
    points = []
    for bw in ("300 GB/s", "600 GB/s", "900 GB/s"):
        d = {**dump, "dram": {**dump["dram"], "bandwidth": bw}}
        points.append(presets.validate_hardware(d))
    frame = estimate_many(graph, points)
    assert list(frame.index) == [0, 1, 2]
    for i, hw in enumerate(points):
        r = estimate(graph, hw)
        assert frame.loc[i, "latency_s"] == pytest.approx(r.latency_s, rel=1e-9)
        assert frame.loc[i, "energy_j"] == pytest.approx(r.energy_j, rel=1e-9)
        assert frame.loc[i, "data_movement_fraction"] == pytest.approx(r.data_movement_fraction, rel=1e-9)
        for k, v in r.energy_breakdown_j.items():
            assert frame.loc[i, f"energy_{k}_j"] == pytest.approx(v, rel=1e-9)
    assert np.all(np.diff(frame["latency_s"].to_numpy()) <= 0)


def test_every_gpu_and_cpu_preset_runs():
    op = ops.Gemm(1024, 1024, 1024, dtype="fp32")
    for pid in presets.list_presets():
        if pid.split("/")[0] in ("gpu", "cpu"):
            r = estimate(op, presets.load_preset(pid))
            assert r.latency_s > op.flop() / 1e17 and np.isfinite(r.energy_j)


def test_op_results_are_complete_and_own_their_dicts(v100):
    # OpResults are built without the dataclass __init__: every field must be set, and equal ops
    # (ResNet-50 repeats its blocks) must not share mutable dicts.
    import dataclasses

    from archsim.results import OpResult
    from archsim.workload import zoo

    res = estimate(zoo.resnet50(batch=2, dtype="fp16"), v100)
    names = [f.name for f in dataclasses.fields(OpResult)]
    for o in res.ops:
        assert sorted(vars(o)) == sorted(names)
        assert OpResult(**{n: getattr(o, n) for n in names}) == o
    dicts = [id(d) for o in res.ops for d in (o.bytes_by_level, o.time_by_unit_s, o.energy_breakdown_j, o.extra)]
    assert len(set(dicts)) == len(dicts)
    # The serial sums in floats are the per-op values added in order.
    total = 0.0
    for o in res.ops:
        total = total + o.latency_s
    assert res.latency_s == total


def test_estimator_reuses_op_costs_and_gives_the_same_bits(v100):
    # An Estimator's cache never changes a result: inference, then training (its forward ops are
    # the inference ops, costed once), then both again and with overlap, all equal to estimate().
    import dataclasses

    from archsim.engines import Estimator
    from archsim.engines import roofline as rf
    from archsim.workload import zoo

    def same(a, b):
        da, db = dataclasses.asdict(a), dataclasses.asdict(b)
        return da == db

    est = Estimator()
    graphs = [zoo.resnet50(batch=4, dtype="fp16"), zoo.resnet50(batch=4, dtype="fp16", training=True)]
    for g in graphs:
        assert same(est.estimate(g, v100), estimate(g, v100))
    (cache,) = est._costs.values()
    n = len(cache)
    assert n == len({rf._op_key(op) for g in graphs for op in g.ops})
    for g in graphs:
        assert same(est.estimate(g, v100), estimate(g, v100))
        assert same(est.estimate(g, v100, overlap=True), estimate(g, v100, overlap=True))
    assert len(cache) == n  # nothing costed twice
    other = v100.model_copy(update={"sm_count": 40})
    assert same(est.estimate(graphs[0], other), estimate(graphs[0], other))
    assert len(est._costs) == 2  # per hardware content
    est.clear()
    assert not est._costs


def test_single_estimate_from_stacked_rows_equals_the_cost_arrays_path():
    # A plain estimate reads each GPU op's one-point cost from its class's stacked rows
    # (cost_all(point=0)); an Estimator, overlap and software profiles take the CostArrays and
    # CostArrays.at. The RunResults must be equal to the bit (repr: every float, key order, bound).
    from archsim.engines import Estimator
    from archsim.workload import zoo

    graphs = [zoo.resnet50(batch=2, dtype="fp16"), zoo.bert_base(batch=1, seq_len=64, dtype="fp16"),
              zoo.resnet18(batch=2, dtype="fp32", training=True)]
    for pid in ("gpu/v100-sxm2-16gb", "gpu/t4", "system/dgx-a100", "cpu/" + next(
            p.split("/")[1] for p in presets.list_presets() if p.startswith("cpu/"))):
        hw = presets.load_preset(pid)
        for g in graphs:
            assert repr(estimate(g, hw)) == repr(Estimator().estimate(g, hw)), (pid, g.name)
