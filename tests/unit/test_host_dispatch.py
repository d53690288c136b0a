"""Host dispatch of GPU kernels on a System: max(kernel + launch latency, host framework dispatch)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import archsim
import archsim.presets as presets
from archsim import ops
from archsim.engines import CostOptions, estimate, estimate_many, op_cost


@pytest.fixture(scope="module")
def node():
    return presets.load_preset("system/h100-node")


def _with_dispatch(system, op_overhead_s):
    """``system`` with its host's framework dispatch per op set to ``op_overhead_s``."""
    eff = system.host.efficiency.model_copy(update={"op_overhead_s": op_overhead_s})
    return system.model_copy(update={"host": system.host.model_copy(update={"efficiency": eff})})


def test_tiny_gemm_waits_for_the_host(node):
    # 64x64x64 fp32 GEMM on the H100 of system/h100-node: the kernel itself is ~0.56 us (L2-bound at sector granularity,
    # 4 blocks of 32x32), plus the GPU's 3 us launch latency and ~0.51 us pipeline fill = 4.07 us on
    # the device. The Xeon 8480+ host spends efficiency.op_overhead = 10 us dispatching it, and the
    # GPU cannot start before the launch arrives: latency = max(4.12 us, 1 launch x 10 us) = 10 us,
    # bound "overhead" (exposed overhead 10 - 0.56 = 9.44 us).
    op = ops.Gemm(64, 64, 64)
    host = estimate(op, node).ops[0]
    device_only = estimate(op, node, host_dispatch=False).ops[0]
    bare = estimate(op, node.gpu).ops[0]
    assert node.host.efficiency.op_overhead_s == pytest.approx(10e-6)
    assert device_only.latency_s == bare.latency_s == pytest.approx(4.069e-6, rel=1e-3)
    assert host.latency_s == pytest.approx(10e-6, rel=1e-12)
    assert host.bound == "overhead"
    assert host.extra["host_dispatch_s"] == pytest.approx(10e-6, rel=1e-12)
    kernel_s = max(v for k, v in host.time_by_unit_s.items() if k != "overhead")
    assert kernel_s == pytest.approx(0.5602e-6, rel=1e-3)
    assert host.time_by_unit_s["overhead"] == pytest.approx(10e-6 - kernel_s, rel=1e-9)
    assert host.latency_s == pytest.approx(kernel_s + host.extra["overhead_s"], rel=1e-12)
    # The host pays the same framework dispatch when it runs the op itself: the GPU is not favoured.
    assert host.latency_s >= node.host.efficiency.op_overhead_s * (1 - 1e-12)


def test_long_kernel_hides_the_dispatch(node):
    # 8192^3 fp16 GEMM: ~1.56 ms on the H100, far longer than 10 us of dispatch; the host queues the
    # launch while earlier work runs, so the latency is the bare device's to the last bit.
    op = ops.Gemm(8192, 8192, 8192, dtype="fp16")
    host = estimate(op, node).ops[0]
    bare = estimate(op, node.gpu).ops[0]
    assert host.latency_s == bare.latency_s
    assert host.latency_s > 1e-3
    assert host.bound != "overhead" and host.bound == bare.bound
    assert host.extra["overhead_s"] == bare.extra["overhead_s"]


def test_bare_gpu_has_no_host(node):
    op = ops.Gemm(64, 64, 64)
    on = op_cost(op, node.gpu, CostOptions(host_dispatch=True))
    off = op_cost(op, node.gpu, CostOptions(host_dispatch=False))
    assert on.latency_s == off.latency_s and on.extra["host_dispatch_s"] == 0.0


def test_host_role_is_unchanged(node):
    # The host CPU running an op pays its own op_overhead (plus fork/join); host_dispatch is about GPUs.
    op = ops.Gemm(64, 64, 64)
    assert (estimate(op, node, device="host").latency_s
            == estimate(op, node, device="host", host_dispatch=False).latency_s)


def test_option_is_validated(node):
    with pytest.raises(archsim.errors.EngineError, match="host_dispatch"):
        estimate(ops.Gemm(64, 64, 64), node, host_dispatch="yes")


@settings(max_examples=25, deadline=None)
@given(m=st.integers(1, 4096), n=st.integers(1, 4096), k=st.integers(1, 4096),
       dtype=st.sampled_from(["fp16", "fp32"]), dispatch_us=st.floats(0.0, 200.0))
def test_single_kernel_latency_is_the_max(node, m, n, k, dtype, dispatch_us):
    # One kernel class (a GEMM: 1 launch, 2 with split-K): latency = max(device, launches x dispatch).
    op = ops.Gemm(m, n, k, dtype=dtype)
    system = _with_dispatch(node, dispatch_us * 1e-6)
    host = op_cost(op, system)
    bare = op_cost(op, node.gpu)
    assert host.latency_s == max(bare.latency_s, bare.launches * system.host.efficiency.op_overhead_s)
    assert host.latency_s >= bare.latency_s


def test_estimate_many_equals_estimate_across_hosts(node):
    graph = archsim.zoo.get("mnist_cnn", batch=4)
    points = [_with_dispatch(node, d) for d in (0.0, 2e-6, 10e-6, 50e-6)]
    frame = estimate_many(graph, points)
    single = np.array([estimate(graph, p).latency_s for p in points])
    np.testing.assert_allclose(frame["latency_s"].to_numpy(), single, rtol=1e-9)
    np.testing.assert_allclose(frame["energy_j"].to_numpy(),
                               [estimate(graph, p).energy_j for p in points], rtol=1e-9)
    assert np.all(np.diff(single) >= 0), "more host dispatch is never faster"
    # No dispatch at all is the bare device.
    assert single[0] == pytest.approx(estimate(graph, node.gpu).latency_s, rel=1e-12)


def test_des_sees_the_same_dispatch(node):
    graph = archsim.zoo.get("mnist_cnn", batch=1)
    roof = estimate(graph, node)
    des = estimate(graph, node, engine="des")
    assert des.latency_s == pytest.approx(roof.latency_s, rel=1e-9)
    assert roof.latency_s > estimate(graph, node, host_dispatch=False).latency_s
