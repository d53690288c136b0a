"""Input pipeline, data parallelism, PIM offload, option validation."""

import math

import pytest

import archsim
from archsim.energy.chip import static_board_w
from archsim.engines import estimate
from archsim.engines.des import DataParallel, InputPipeline, PIMOffload, prepare_des, steady_step_s
from archsim.engines.desim.collective import ring_allreduce_s
from archsim.errors import EngineError
from archsim.workload import Elementwise, Gemm, Gemv, OpGraph, training_step


@pytest.fixture(scope="module")
def dgx():
    return archsim.load_preset("system/dgx-a100")


def _mlp_train(batch=256, width=1024, layers=3):
    ops = []
    for i in range(layers):
        ops += [Gemm(batch, width, width, "fp16", weight=True, name=f"fc{i}"),
                Elementwise((batch, width), "relu", "fp16", name=f"relu{i}")]
    return training_step(OpGraph.chain("mlp", ops), "sgd")


def test_slow_loader_sets_the_step_time(dgx):
    g = _mlp_train()
    gpu_step = estimate(g, dgx, engine="des").latency_s
    # One worker, 64 samples: the batch takes 64 x s; make it 3x the GPU step.
    sps = 3 * gpu_step / 64
    res = estimate(g, dgx, engine="des", steps=6, loader=InputPipeline(cores=1, batch=64, seconds_per_sample=sps))
    step = res._meta["des"]["step_time_s"]
    assert step == pytest.approx(64 * sps, rel=0.01)
    # With 4 workers the loader delivers a batch every 0.75 GPU steps: the GPU is the bound again.
    fast = estimate(g, dgx, engine="des", steps=8,
                    loader=InputPipeline(cores=4, batch=64, seconds_per_sample=sps, prefetch_depth=4))
    assert fast._meta["des"]["step_time_s"] == pytest.approx(gpu_step, rel=0.01)
    assert res.utilisation["host.loader"] > 0.9


def test_short_cpu_bound_run_reports_the_loader_bound_step(dgx):
    g = _mlp_train()
    gpu_step = estimate(g, dgx, engine="des").latency_s
    # 4 workers, each taking 12 GPU steps per batch: a batch every 3 GPU steps, CPU-bound. The four
    # first batches arrive together, so 3 steps run back to back at the GPU's speed; the steady step
    # is still the loader's 12 / 4 = 3 GPU steps.
    sps = 12 * gpu_step / 64
    res = estimate(g, dgx, engine="des", steps=3, loader=InputPipeline(cores=4, batch=64, seconds_per_sample=sps))
    des = res._meta["des"]
    assert des["step_s"][1] == pytest.approx(gpu_step, rel=0.01)  # inside the first burst
    assert des["loader_period_s"] == pytest.approx(3 * gpu_step, rel=1e-9)
    assert des["step_time_s"] == pytest.approx(3 * gpu_step, rel=0.01)


@pytest.mark.parametrize("per_batch_gpu_steps", [0.5, 6.0, 12.0])
def test_steady_step_matches_a_long_run_over_whole_loader_cycles(dgx, per_batch_gpu_steps):
    # Over whole cycles of 4 workers after the first fill the mean step is exact; the reported
    # steady step of the same run agrees, GPU-bound (0.5: a batch every 1/8 GPU step) or not.
    g = _mlp_train()
    gpu_step = estimate(g, dgx, engine="des").latency_s
    cores = 4
    sps = per_batch_gpu_steps * gpu_step / 64
    res = estimate(g, dgx, engine="des", steps=5 * cores + 2,
                   loader=InputPipeline(cores=cores, batch=64, seconds_per_sample=sps))
    step_s = res._meta["des"]["step_s"]
    cycles = sum(step_s[-3 * cores:]) / (3 * cores)
    assert res._meta["des"]["step_time_s"] == pytest.approx(cycles, rel=0.01)
    assert cycles == pytest.approx(max(gpu_step, per_batch_gpu_steps * gpu_step / cores), rel=0.01)


def test_steady_step_by_hand():
    # Mean after the first step (0.008) against the loader period (0.04): the loader binds.
    assert steady_step_s([0.2, 0.008, 0.008], 0.04) == pytest.approx(0.04)
    # Mean (0.01 + 0.02) / 2 = 0.015 above the period 0.004: the device binds.
    assert steady_step_s([0.05, 0.01, 0.02], 0.004) == pytest.approx(0.015)
    # One step: no interval to measure, the step itself (load included).
    assert steady_step_s([0.3]) == 0.3
    with pytest.raises(EngineError, match="at least one step"):
        steady_step_s([])


def test_loader_can_cost_its_preprocessing_op(dgx):
    pre = Elementwise((3, 224, 224), "mul", "fp32", name="normalise")
    res = estimate(_mlp_train(), dgx, engine="des", steps=3,
                   loader=InputPipeline(cores=2, batch=32, preprocess=pre, sample_bytes=3 * 224 * 224 * 2))
    assert res._meta["des"]["loader_batch_s"] > 0
    assert any(t.resource == "gpu0.copy.h2d" for t in res.timeline)
    assert any(t.resource.startswith("host.loader0") for t in res.timeline)


def test_data_parallel_adds_the_ring_all_reduce(dgx):
    g = _mlp_train()
    one = estimate(g, dgx, engine="des").latency_s
    # One bucket after the backward pass: step = forward + backward + all-reduce + updates (no overlap).
    res = estimate(g, dgx, engine="des", data_parallel=DataParallel(gpus=8, bucket_bytes=None))
    grad_bytes = sum(op.params * op.dtype.bytes for op in g.ops if op.kind == "optimizer")
    link = dgx.gpu_link
    ring = ring_allreduce_s(grad_bytes, 8, link.bandwidth_bytes_per_s * link.efficiency, link.latency_s)
    assert res.latency_s == pytest.approx(one + ring, rel=0.01)
    assert len([t for t in res.timeline if t.op == "allreduce"]) == 1
    assert {f"gpu{r}.stream0" for r in range(8)} <= {t.resource for t in res.timeline}
    assert len(res.ops) == 8 * len(g.ops)
    # Buckets overlap communication with the rest of the backward pass: never slower.
    bucketed = estimate(g, dgx, engine="des", data_parallel=DataParallel(gpus=8, bucket_bytes=2**20))
    assert one <= bucketed.latency_s <= res.latency_s * (1 + 1e-9)
    assert res.energy_breakdown_j["static"] == pytest.approx(
        8 * (static_board_w(dgx.gpu) + dgx.gpu.dram.background_power_w) * res.latency_s, rel=1e-9)


def test_pim_offload_waiting_or_overlapping():
    hw = archsim.load_preset("system/upmem-server")
    ops = (Gemv(8192, 8192, "int8", weight=True, name="fc"), Elementwise((1 << 22,), "relu", "fp32", name="side"))
    g = OpGraph("two", ops)  # independent: the host may run "side" while the PIM runs "fc"
    wait = estimate(g, hw, engine="des", offload=PIMOffload(kinds=("gemv",), host_waits=True))
    over = estimate(g, hw, engine="des", offload=PIMOffload(kinds=("gemv",), host_waits=False))
    fc_w = next(o for o in wait.ops if o.name == "fc")
    side = next(o for o in wait.ops if o.name == "side")
    assert fc_w.device == "pim"
    assert side.start_s == pytest.approx(fc_w.end_s)  # the waiting host runs nothing else meanwhile
    assert over.latency_s < wait.latency_s
    assert over.latency_s == pytest.approx(max(o.latency_s for o in over.ops), rel=1e-6)
    assert {"pim", "pim.link.h2d", "pim.link.d2h"} <= {t.resource for t in wait.timeline}


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"streams": 0}, "streams"), ({"overlap_copies": "yes"}, "overlap_copies"), ({"steps": 1.5}, "steps"),
    ({"loader": {"cores": 2}}, "InputPipeline"), ({"data_parallel": DataParallel(gpus=9)}, "1..8"),
    ({"offload": PIMOffload(kinds=("gemv",))}, "PIM"),
])
def test_bad_options_are_named(dgx, kwargs, match):
    with pytest.raises(EngineError, match=match):
        estimate(Gemm(64, 64, 64, name="g"), dgx, engine="des", **kwargs)


def test_roofline_refuses_des_options(dgx):
    with pytest.raises(EngineError, match="streams"):
        estimate(Gemm(64, 64, 64), dgx, streams=2)


@pytest.mark.parametrize(("cls", "kwargs", "match"), [
    (InputPipeline, {"cores": 0, "batch": 1, "seconds_per_sample": 1.0}, "cores"),
    (InputPipeline, {"cores": 1, "batch": 1}, "exactly one"),
    (InputPipeline, {"cores": 1, "batch": 1, "seconds_per_sample": -1.0}, "seconds_per_sample"),
    (DataParallel, {"gpus": 2, "bucket_bytes": 0}, "bucket_bytes"),
    (PIMOffload, {}, "at least one"),
    (PIMOffload, {"kinds": "gemv"}, "tuple"),
])
def test_config_validation(cls, kwargs, match):
    with pytest.raises(EngineError, match=match):
        cls(**kwargs)


def test_deterministic_and_fresh_per_run(dgx):
    _, g = None, _mlp_train()
    a = estimate(g, dgx, engine="des", streams=3)
    b = estimate(g, dgx, engine="des", streams=3)
    assert a.timeline == b.timeline and a.latency_s == b.latency_s


def test_kernels_late_in_a_long_run_finish(dgx):
    # A slow loader (64 samples x 1 s on one core) pushes step s's kernels to t ~ 64 (s + 1) s, where
    # one ulp of the clock (1.4e-14 s) outweighs the fluid model's relative tolerance for these
    # microsecond kernels: a DRAM flow left a sub-ulp remainder by rounding was re-armed at zero delay
    # for ever (the hang of a 90-step ResNet-50 run at 16 s). Step the simulation with a bound on its
    # events so a regression fails here instead of hanging.
    g = _mlp_train(batch=64, width=256)
    gpu_step = estimate(g, dgx, engine="des").latency_s
    run = prepare_des(g, dgx, loader=InputPipeline(cores=1, batch=64, seconds_per_sample=1.0), steps=3)
    run.start()
    for _ in range(10_000):  # the finished run takes ~250 events
        if run.env.peek() == math.inf:
            break
        run.env.step()
    else:
        raise AssertionError("the simulation was still scheduling events after 10,000 steps")
    res = run.result()
    # Batches are ready at 64, 128 and 192 s; the last step then runs on an idle GPU.
    assert res.latency_s == pytest.approx(3 * 64.0 + gpu_step, rel=1e-12)
