"""The three research scenarios the discrete-event engine must make possible (issue 5, point 5)."""

import pytest

import archsim
from archsim import zoo
from archsim.engines import estimate
from archsim.engines.des import InputPipeline, PIMOffload
from archsim.hardware import System
from archsim.workload import DeviceToHost, Elementwise, Gemv, HostToDevice, OpGraph, TensorSpec


def _mlp_layers(dims):
    ops = []
    for i in range(len(dims) - 1):
        ops += [Gemv(dims[i + 1], dims[i], "fp32", weight=True, name=f"fc{i}"),
                Elementwise((dims[i + 1],), "relu", "fp32", name=f"relu{i}")]
    return ops


def test_batch1_inference_launch_and_copies_dominate_and_the_cpu_wins():
    # A compiled CPU path (the measured 2-vCPU Zen 4 guest: 0.65 us per op, numba kernels) beside a
    # K80 on the cloud VM's PCIe link: a 64-wide MLP at batch 1.
    k80 = archsim.load_preset("system/cloud-k80")
    hw = System(name="Zen 4 2-vCPU + K80", host=archsim.load_preset("cpu/epyc-genoa-2vcpu"), gpu=k80.gpu,
                gpu_count=1, host_link=k80.host_link)
    layers = _mlp_layers([64, 64, 64, 10])
    on_gpu = OpGraph.chain("mlp", [HostToDevice(TensorSpec((64,), "fp32"), name="in"), *layers,
                                   DeviceToHost(TensorSpec((10,), "fp32"), name="out")])
    gpu = estimate(on_gpu, hw, engine="des")
    cpu = estimate(OpGraph.chain("mlp", layers), hw, engine="des", device="host", threads=1)
    overhead = sum(o.extra["overhead_s"] for o in gpu.ops)
    assert overhead / gpu.latency_s > 0.5          # launches and link latencies dominate the GPU run
    assert sum(o.latency_s for o in gpu.ops if o.kind in ("h2d", "d2h")) > 0
    assert cpu.latency_s < gpu.latency_s           # and the CPU answers first


@pytest.fixture(scope="module")
def cifar_step():
    return zoo.cifar10_cnn(batch=128, training=True)


def test_training_epoch_with_and_without_a_cpu_bottleneck(cifar_step):
    hw = archsim.load_preset("system/cloud-p100")
    gpu_step = estimate(cifar_step, hw, engine="des").latency_s
    sample = 3 * 32 * 32 * 4
    per_sample = gpu_step / 128  # one core needs one GPU step per batch
    steps = 8
    # 2 workers: a batch every half GPU step: the GPU is the bottleneck.
    fed = estimate(cifar_step, hw, engine="des", steps=steps,
                   loader=InputPipeline(cores=2, batch=128, seconds_per_sample=per_sample, sample_bytes=sample))
    # 1 worker at 2x the per-sample time: a batch every 2 GPU steps: the CPU is the bottleneck.
    starved = estimate(cifar_step, hw, engine="des", steps=steps,
                       loader=InputPipeline(cores=1, batch=128, seconds_per_sample=2 * per_sample,
                                            sample_bytes=sample))
    assert fed._meta["des"]["step_time_s"] == pytest.approx(gpu_step, rel=0.02)
    assert starved._meta["des"]["step_time_s"] == pytest.approx(2 * per_sample * 128, rel=0.02)
    assert starved.utilisation["gpu0.stream0"] < 0.6 < fed.utilisation["gpu0.stream0"]
    assert starved.latency_s > fed.latency_s


def test_pim_offload_of_a_gemv_heavy_layer():
    hw = archsim.load_preset("system/upmem-server")
    layer = OpGraph.chain("gemv_layer", [Gemv(16384, 16384, "int8", weight=True, name="fc"),
                                         Elementwise((16384,), "relu", "int8", name="relu")])
    host = estimate(layer, hw, engine="des")
    pim = estimate(layer, hw, engine="des", offload=PIMOffload(kinds=("gemv",)))
    fc = next(o for o in pim.ops if o.name == "fc")
    assert fc.device == "pim" and fc.bytes_by_level["link"] > 0
    assert pim.latency_s < host.latency_s
    assert pim.utilisation["pim.units"] > 0.9
    assert "pim" in pim.energy_breakdown_j and pim.energy_breakdown_j["static"] > 0
