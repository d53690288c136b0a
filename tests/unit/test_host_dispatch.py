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
    # One kernel class (a GEMM: 1 launch, 2 with split-K): latency = max(device, the op's dispatch
    # + each further launch's API call).
    op = ops.Gemm(m, n, k, dtype=dtype)
    system = _with_dispatch(node, dispatch_us * 1e-6)
    host = op_cost(op, system)
    bare = op_cost(op, node.gpu)
    eff = system.host.efficiency
    assert host.latency_s == max(bare.latency_s, eff.op_overhead_s + (bare.launches - 1) * eff.launch_api_s)
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


# -- per-operator dispatch (issue 15): the framework dispatches an operator once; each further kernel
# its library launches costs the host the launch API call alone.

def _three_launch_conv():
    # A 7x7 stride-2 fp32 convolution in TF32 math on the H100: cuDNN's Tensor-Core path transposes the
    # NCHW input and filter to NHWC (two kernels) before the convolution (efficiency.conv_nchw_transposes),
    # and Winograd does not apply to a 7x7 stride-2 filter: 3 launches, one framework operator.
    return ops.Conv2d(8, 64, 64, 56, 56, kernel=(7, 7), stride=(2, 2), padding=(3, 3), dtype="fp32",
                      compute_dtype="tf32", name="conv7x7")


def _fixed_profile(**updates):
    from archsim.software import load_software, with_updates

    return with_updates(load_software("pytorch-eager"),
                        {"op_dispatch_instructions": 100_000, "launch_api_instructions": 8_000, **updates})


def test_three_launch_operator_pays_one_dispatch_under_a_profile(node):
    # system/h100-node's host is a Xeon 8480+ at 2.0 GHz (issue width 6 > host_ipc 1):
    #   framework dispatch 100,000 instructions / (1 x 2.0 GHz) = 50 us, once for the operator;
    #   launch API          8,000 instructions / (1 x 2.0 GHz) =  4 us for each of the 2 further kernels;
    #   the operator's host dispatch = 1 x 50 + 2 x 4 = 58 us (per launch, as before issue 15: 3 x 50 = 150 us).
    sw = _fixed_profile()
    assert node.host.core.clock_hz == pytest.approx(2.0e9)
    c = op_cost(_three_launch_conv(), node, CostOptions(software=sw))
    assert c.launches == 3
    assert c.extra["host_dispatch_s"] == pytest.approx(50e-6 + 2 * 4e-6, rel=1e-12)
    bare = op_cost(_three_launch_conv(), node.gpu)
    # the first kernel waits for the 50 us dispatch, each further one for at least its 4 us launch call
    assert 58e-6 * (1 - 1e-12) <= c.latency_s <= 58e-6 + bare.latency_s


def test_three_launch_operator_without_a_profile(node):
    # No profile: the host preset's efficiency.op_overhead (10 us) once, efficiency.launch_api (3.5 us)
    # for each further launch: 10 + 2 x 3.5 = 17 us.
    eff = node.host.efficiency
    assert (eff.op_overhead_s, eff.launch_api_s) == (pytest.approx(10e-6), pytest.approx(3.5e-6))
    c = op_cost(_three_launch_conv(), node)
    assert c.launches == 3
    assert c.extra["host_dispatch_s"] == pytest.approx(10e-6 + 2 * 3.5e-6, rel=1e-12)


def test_one_launch_operator_is_unchanged_by_the_launch_api_cost(node):
    op = ops.Gemm(64, 64, 64)
    eff = node.host.efficiency
    dear = node.model_copy(update={"host": node.host.model_copy(update={
        "efficiency": eff.model_copy(update={"launch_api_s": 1e-3})})})
    assert op_cost(op, dear).latency_s == op_cost(op, node).latency_s


def test_unsynchronised_iteration_counts_each_operator_dispatch_once(node):
    # Without a synchronisation per iteration the host's busy time is the iteration work plus every
    # operator's dispatch (the op's host_dispatch_s already holds all of its launches).
    sw = _fixed_profile(sync_per_iteration=False, iteration_instructions=20_000_000)  # 10 ms at 2 GHz
    graph = archsim.OpGraph(name="one conv", ops=(_three_launch_conv(),))
    res = estimate(graph, node, software=sw)
    assert res.latency_s == pytest.approx(10e-3 + 58e-6, rel=1e-9)


@pytest.mark.parametrize("software", [None, "profile"])
def test_des_agrees_with_the_roofline_on_multi_launch_operators(node, software):
    sw = _fixed_profile() if software else None
    graph = archsim.OpGraph(name="multi-launch", ops=(
        _three_launch_conv(), ops.Conv2d(8, 64, 64, 28, 28, kernel=(3, 3), padding=(1, 1), name="conv3x3"),
        ops.Gemm(8, 1000, 50176, name="fc")))
    roof = estimate(graph, node, software=sw)
    des = estimate(graph, node, engine="des", software=sw)
    assert des.latency_s == pytest.approx(roof.latency_s, rel=1e-9)
    launches = [o.extra["launches"] for o in roof.ops]
    assert max(launches) > 1


def test_profile_launch_api_field_is_validated():
    from archsim.errors import ArchsimError
    from archsim.software import load_software, with_updates

    with pytest.raises(ArchsimError, match="launch_api_instructions"):
        with_updates(load_software("pytorch-eager"), {"launch_api_instructions": -1})
    with pytest.raises(ArchsimError, match="no such field"):
        with_updates(load_software("pytorch-eager"), {"launch_api_instruction": 7830})
    with pytest.raises(ArchsimError, match="launch_api_instructions must be 0"):
        with_updates(load_software("pytorch-cuda-graphs"), {"launch_api_instructions": 7830})
    with pytest.raises(ArchsimError, match="host instruction counts must be 0"):
        with_updates(load_software("none"), {"launch_api_instructions": 7830})


def test_tiled_continuation_keeps_tiled_fields_and_swaps_the_dispatch():
    # A pack whose launch API call costs less than its dispatch: the continuation of its tiled view
    # reads the launch cost, shares the fields already tiled, and is kept on the view.
    from archsim.cost.params import GPUParams

    gpu = presets.load_preset("gpu/v100-sxm2-16gb")
    p = GPUParams.from_devices([gpu, gpu], [50e-6, 40e-6], [4e-6, 3e-6])
    tiled = p.tiled(3)
    clock = tiled.clock_hz  # tiled on first read
    cont = tiled.continuation()
    assert cont is tiled.continuation()
    assert cont.clock_hz is clock
    np.testing.assert_array_equal(cont.host_dispatch_s, np.tile([4e-6, 3e-6], 3))
    np.testing.assert_array_equal(tiled.host_dispatch_s, np.tile([50e-6, 40e-6], 3))
    # no host: dispatch and launch are both 0 and the continuation is the pack itself
    bare = GPUParams.from_devices([gpu, gpu])
    assert bare.continuation() is bare
    pair = bare.tiled(2)
    assert pair.continuation() is pair


def test_a_pack_that_is_its_own_continuation_is_freed_without_the_cycle_collector():
    # The pack (and its tiled view) keep a marker, not a reference to themselves: once the last
    # reference goes, reference counting frees them and their arrays at once.
    import gc
    import weakref

    from archsim.cost.params import GPUParams

    gpu = presets.load_preset("gpu/v100-sxm2-16gb")
    bare = GPUParams.from_devices([gpu, gpu])
    pair = bare.tiled(2)
    assert bare.continuation() is bare and pair.continuation() is pair
    gone = [weakref.ref(bare), weakref.ref(pair)]
    was = gc.isenabled()
    gc.disable()
    try:
        del bare, pair
        assert [r() for r in gone] == [None, None]
    finally:
        if was:
            gc.enable()
