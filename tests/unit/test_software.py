"""Software profiles: loading, host work priced on the host CPU, the graph passes, the host bound."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import archsim
from archsim.errors import ArchsimError, EngineError
from archsim.software import (
    FusionRules,
    PrecisionPolicy,
    apply_precision,
    fuse,
    list_software,
    load_software,
    with_updates,
)


@pytest.fixture(scope="module")
def node():
    from scenarios.input_pipeline import v100_node
    return v100_node()


def test_every_profile_loads_with_sources():
    names = list_software()
    for required in ("none", "pytorch-eager", "pytorch-cuda-graphs", "tensorrt", "tf1-keras", "onnxruntime-cpu"):
        assert required in names
    for n in names:
        p = load_software(n)
        assert p.name == n and p.sources
        covered = {f for s in p.sources for f in s.fields}
        assert "launch_mode" in covered


def test_unknown_profile_and_field_are_one_line_errors():
    with pytest.raises(ArchsimError, match="allowed"):
        load_software("pytorch-eagre")
    with pytest.raises(ArchsimError, match="no such field"):
        with_updates(load_software("pytorch-eager"), {"software.op_dispatch_instrs": 1})
    with pytest.raises(ArchsimError):
        with_updates(load_software("pytorch-eager"), {"launch_mode": "lazy"})


def test_dispatch_is_host_work_priced_on_the_host():
    p = load_software("pytorch-eager")
    host = archsim.load_preset("cpu/epyc-rome-7742")
    # 114,400 instructions / (min(IPC 1.0, issue 6) x 2.25 GHz) = 50.8 us per operator, and each
    # further launch of the operator 7,830 / 2.25 GHz = 3.48 us
    assert p.dispatch_s(host) == pytest.approx(114_400 / 2.25e9)
    assert p.launch_api_s(host) == pytest.approx(7_830 / 2.25e9)
    fast = host.model_copy(update={"core": host.core.model_copy(update={"clock_hz": "4.5 GHz"})})
    assert p.dispatch_s(fast) == pytest.approx(p.dispatch_s(host) / 2)  # a faster host dispatches faster


def test_none_profile_is_todays_behaviour(node):
    g = archsim.zoo.resnet50(batch=1)
    a, b = archsim.estimate(g, node), archsim.estimate(g, node, software="none")
    assert a.latency_s == b.latency_s and b.host_s == 0 and b.device_s == b.latency_s


def test_eager_batch1_is_host_bound_and_the_split_adds_up(node):
    r = archsim.estimate(archsim.zoo.resnet50(batch=1), node, software="pytorch-eager")
    assert r.bound == "host"
    assert r.host_s + r.device_s == pytest.approx(r.latency_s)
    assert r.bound_counts.get("host", 0) > 100
    # 174 ops x 47.1 us each is a floor of the host-bound latency
    assert r.latency_s >= 174 * 106_000 / 2.25e9 * 0.99
    d = archsim.estimate(archsim.zoo.resnet50(batch=1), node, software="pytorch-eager", engine="des")
    assert d.latency_s == pytest.approx(r.latency_s, rel=1e-6)


def test_graph_mode_removes_dispatch(node):
    g = archsim.zoo.resnet50(batch=1)
    eager = archsim.estimate(g, node, software="pytorch-eager")
    graphs = archsim.estimate(g, node, software="pytorch-cuda-graphs")
    assert graphs.latency_s < 0.5 * eager.latency_s and graphs.bound == "device"


def test_lone_gpu_with_host_work_is_an_error():
    with pytest.raises(EngineError, match="host"):
        archsim.estimate(archsim.zoo.resnet50(batch=1), archsim.load_preset("gpu/v100-sxm2-16gb"),
                         software="pytorch-eager")


def test_tensorrt_fuses_conv_bn_relu_and_shows_it(node):
    g = archsim.zoo.resnet50(batch=1)
    fused = fuse(g, FusionRules(conv_bn_act=True, elementwise_chains=True))
    # 53 conv+bn(+relu) groups: 53 bn and 49 relu gone; the 16 add+relu pairs become 16 chains
    kinds = fused.count_by_kind()
    assert kinds.get("batchnorm", 0) == 0 and kinds["conv2d"] == 53
    assert len(fused.ops) == 53 + 16 + 2 + 1  # convs, add+relu chains, two pools, the fc GEMM
    hw = node
    frame = archsim.estimate(g, hw, software="tensorrt").to_frame()
    assert frame.loc[frame["name"] == "conv1", "fused_from"].iloc[0] == "conv1, bn1, relu"
    # intermediates never touch DRAM: the fused graph moves fewer DRAM bytes
    plain = archsim.estimate(g, hw, software="pytorch-eager-amp").to_frame()["dram_bytes"].sum()
    assert frame["dram_bytes"].sum() < 0.7 * plain


def test_training_graphs_are_not_fused():
    g = archsim.zoo.resnet18(batch=2, training=True)
    assert fuse(g, FusionRules(conv_bn_act=True, elementwise_chains=True)) is g


def test_amp_policy_retypes_matmul_ops_and_keeps_the_fp32_list():
    g = archsim.zoo.mlp(batch=4, training=True, optimizer="adam")
    policy = PrecisionPolicy(matmul_dtype="fp16", other_dtype="fp16", keep_fp32=("softmax", "optimizer"))
    out = apply_precision(g, policy)
    for op in out.ops:
        if op.kind == "gemm":
            assert str(op.dtype) == "fp16"
        if op.kind in ("softmax", "optimizer"):
            assert str(op.dtype) == "fp32"


@settings(max_examples=15, deadline=None)
@given(st.lists(st.sampled_from(["relu", "add", "gelu", "mul"]), min_size=1, max_size=6), st.integers(1, 4096))
def test_elementwise_chain_keeps_flop_and_never_moves_more_bytes(fns, n):
    ops = [archsim.ops.Elementwise((n,), fn=f, name=f"e{i}") for i, f in enumerate(fns)]
    g = archsim.OpGraph.chain("chain", ops)
    f = fuse(g, FusionRules(elementwise_chains=True))
    assert sum(o.flop() for o in f.ops) == sum(o.flop() for o in g.ops)
    assert sum(o.min_bytes() for o in f.ops) <= sum(o.min_bytes() for o in g.ops)
    assert len(f.ops) == 1


def test_kernel_efficiency_slows_only_its_kind(node):
    p = load_software("pytorch-eager")
    q = with_updates(p, {"kernel_efficiency.gpu": {"conv2d": 0.5}})
    g = archsim.zoo.resnet50(batch=64)
    a = archsim.estimate(g, node, software=p).to_frame()
    b = archsim.estimate(g, node, software=q).to_frame()
    conv = a["kind"] == "conv2d"
    assert (b.loc[conv, "latency_s"] > 1.5 * a.loc[conv, "latency_s"]).all()
    assert (b.loc[~conv, "latency_s"] == a.loc[~conv, "latency_s"]).all()


def test_cli_software_flag(capsys):
    from archsim.cli import main

    assert main(["estimate", "--hw", "system/dgx-a100", "--model", "mnist_cnn", "--software", "pytorch-eager"]) == 0
    assert "software pytorch-eager: host" in capsys.readouterr().out


def test_estimate_many_equals_estimate_under_a_profile(node):
    g = archsim.zoo.resnet50(batch=1)
    fast = node.model_copy(update={"host": node.host.model_copy(
        update={"core": node.host.core.model_copy(update={"clock_hz": "4.5 GHz"})})})
    frame = archsim.estimate_many(g, [node, fast], software="pytorch-eager")
    for i, hw in enumerate((node, fast)):
        one = archsim.estimate(g, hw, software="pytorch-eager")
        assert frame["latency_s"].iloc[i] == pytest.approx(one.latency_s, rel=1e-12)
        assert frame["energy_j"].iloc[i] == pytest.approx(one.energy_j, rel=1e-9)
    # mostly host-bound: twice the host clock takes ~40 % off (the device part, ~20 % of the step with
    # the sector-granular traffic and DVFS clocks, does not shrink)
    assert frame["latency_s"].iloc[1] < 0.65 * frame["latency_s"].iloc[0]


def test_software_fields_are_sweep_axes(node):
    # mostly host-bound batch 1: latency ~ 174 ops x instructions / 2.25 GHz plus a device part that
    # does not shrink, so halving the instructions takes off somewhat less than half
    sweep = archsim.Sweep(node, axes={"software.op_dispatch_instructions": [53_000, 106_000]})
    table = sweep.run(archsim.zoo.resnet50(batch=1), options={"software": "pytorch-eager"}, executor="serial")
    lat = table[table["metric"] == "latency_s"].sort_values("software.op_dispatch_instructions")["value"].to_numpy()
    assert lat[1] / 2 < lat[0] < 0.65 * lat[1]
    bad = archsim.Sweep(node, axes={"software.op_dispatch_instrs": [1]}).run(
        archsim.zoo.mlp(batch=1), options={"software": "pytorch-eager"}, executor="serial")
    assert (bad["status"] == "invalid").all() and "no such field" in bad["error"].iloc[0]


def test_nccl_all_reduce_takes_sms_and_memory_bandwidth():
    from archsim import DataParallel

    dgx = archsim.load_preset("system/dgx-a100")
    g = archsim.zoo.resnet18(batch=32, training=True, optimizer="sgd_momentum")
    dp = DataParallel(gpus=8)
    plain = with_updates(load_software("pytorch-eager"), {"collectives.sm_blocks": 0,
                                                          "collectives.memory_bytes_per_byte": 0.0})
    nccl = load_software("pytorch-eager")
    a = archsim.estimate(g, dgx, engine="des", software=plain, data_parallel=dp)
    b = archsim.estimate(g, dgx, engine="des", software=nccl, data_parallel=dp)
    # the collective's blocks and memory traffic slow the backward kernels it overlaps
    assert b.latency_s > a.latency_s
    assert any(t.op == "allreduce" for t in b.timeline)


def test_channels_last_drops_the_layout_transforms(node):
    # fp16 3x3 convolutions on Tensor Cores: NCHW tensors are transposed by extra kernels first
    g = archsim.zoo.resnet50(batch=8)
    nchw = with_updates(load_software("pytorch-eager-amp"), {"channels_last": False})
    nhwc = load_software("pytorch-eager-amp")
    a = archsim.estimate(g, node, software=nchw).to_frame()
    b = archsim.estimate(g, node, software=nhwc).to_frame()
    conv = a["kind"] == "conv2d"
    assert a.loc[conv, "launches"].sum() > b.loc[conv, "launches"].sum()
    assert b.loc[conv, "dram_bytes"].sum() < a.loc[conv, "dram_bytes"].sum()


def test_data_parallel_host_time_is_one_replicas(node):
    from archsim import DataParallel

    dgx = archsim.load_preset("system/dgx-a100")
    g = archsim.zoo.mlp(batch=8, training=True, optimizer="sgd_momentum")
    one = archsim.estimate(g, dgx, engine="des", software="pytorch-eager")
    four = archsim.estimate(g, dgx, engine="des", software="pytorch-eager", data_parallel=DataParallel(gpus=4))
    # every replica's host thread dispatches its own kernels in parallel: the same host time per step
    assert four.host_s == pytest.approx(one.host_s, rel=1e-6)
    assert four.host_s + four.device_s == pytest.approx(four.latency_s)


def _heuristic(base: str = "none"):
    return with_updates(load_software(base), {"algorithm_selection": "heuristic"})


def test_heuristic_algorithm_selection_runs_implicit_gemm_only():
    from archsim.cost import CostOptions, op_cost
    from archsim.cost import gpu as gpu_cost
    from archsim.cost.params import GPUParams

    gpu = archsim.load_preset("gpu/v100-sxm2-16gb")
    # 5x5 stride 1, fp32: Winograd F(2x2, 5x5) needs 9 multiplies per output instead of 25, and the
    # autotuned choice takes it; the heuristic pick is the implicit GEMM
    conv5 = archsim.ops.Conv2d(16, 512, 48, 14, 14, kernel=(5, 5), padding=(2, 2), dtype="fp32")
    auto = op_cost(conv5, gpu)
    heur = op_cost(conv5, gpu, CostOptions(software=_heuristic()))
    assert auto.extra["winograd"] == 1.0 and "winograd" not in heur.extra
    direct = gpu_cost._implicit_gemm(conv5, GPUParams.from_devices([gpu]))
    assert heur.latency_s == float(direct.latency_s[0]) > auto.latency_s
    # a 1x1 convolution has no Winograd candidate: the same cost under both selections
    conv1 = archsim.ops.Conv2d(16, 256, 64, 14, 14, kernel=(1, 1), dtype="fp32")
    assert op_cost(conv1, gpu).latency_s == op_cost(conv1, gpu, CostOptions(software=_heuristic())).latency_s
    assert not _heuristic().is_none  # a profile that changes the device work is not the device-only one


def test_autotuning_times_each_candidate_at_its_governed_clock():
    from archsim.cost import CostOptions, op_cost, power
    from archsim.cost import gpu as gpu_cost
    from archsim.cost.params import GPUParams

    gpu = archsim.load_preset("gpu/t4")
    p = GPUParams.from_devices([gpu])
    op = archsim.ops.Conv2d(2, 64, 64, 56, 56, kernel=(3, 3), padding=(1, 1), dtype="fp32")
    direct, winograd = gpu_cost._conv_algorithms(op, p)
    timed_direct, timed_winograd = power.apply([direct, winograd], p, gpu=True)
    # At the 1590 MHz boost clock implicit GEMM is the faster (86.3 vs 94.8 us), but its FMAs need
    # more than the T4's 70 W there: the governor runs it at ~1137 MHz (118.9 us), while Winograd,
    # bound by DRAM, keeps its 94.8 us at ~1118 MHz. cudnnFind times both on the device: Winograd.
    assert direct.latency_s[0] < winograd.latency_s[0]
    assert timed_winograd.latency_s[0] < timed_direct.latency_s[0]
    auto = op_cost(op, gpu)
    heur = op_cost(op, gpu, CostOptions(software=_heuristic()))
    assert auto.extra["winograd"] == 1.0
    assert auto.latency_s == pytest.approx(float(timed_winograd.latency_s[0]), rel=1e-12)
    assert heur.latency_s == pytest.approx(float(timed_direct.latency_s[0]), rel=1e-12)
    assert heur.latency_s > auto.latency_s


@settings(max_examples=15, deadline=None)
@given(st.integers(1, 32), st.sampled_from([16, 64, 256]), st.sampled_from([16, 64, 256]),
       st.sampled_from([7, 14, 28, 56]), st.sampled_from([(3, 3), (5, 5), (1, 1)]), st.sampled_from(["fp32", "fp16"]))
# A power-limited T4 case where the pick once compared nominal-clock times (Winograd chosen, slower
# than implicit GEMM at the clocks the two run at).
@example(19, 256, 256, 28, (3, 3), "fp16")
def test_heuristic_is_never_faster_than_autotuned(n, c, k, hw, kernel, dtype):
    from archsim.cost import CostOptions, op_cost

    gpu = archsim.load_preset("gpu/t4")
    op = archsim.ops.Conv2d(n, c, k, hw, hw, kernel=kernel, padding=(kernel[0] // 2, kernel[1] // 2), dtype=dtype)
    # autotuning keeps the faster of the candidates, implicit GEMM among them
    assert op_cost(op, gpu, CostOptions(software=_heuristic())).latency_s >= op_cost(op, gpu).latency_s


def test_algorithm_selection_is_a_sweep_axis_with_a_one_line_error(node):
    g = archsim.zoo.resnet18(batch=8)
    sweep = archsim.Sweep(node, axes={"software.algorithm_selection": ["autotuned", "heuristic"]})
    table = sweep.run(g, options={"software": "pytorch-eager"}, executor="serial")
    lat = table[table["metric"] == "latency_s"].set_index("software.algorithm_selection")["value"]
    assert lat["autotuned"] == pytest.approx(archsim.estimate(g, node, software="pytorch-eager").latency_s, rel=1e-12)
    assert lat["heuristic"] == pytest.approx(archsim.estimate(g, node, software=_heuristic("pytorch-eager")).latency_s,
                                             rel=1e-12)
    assert lat["heuristic"] >= lat["autotuned"]
    with pytest.raises(ArchsimError, match=r"^software/pytorch-eager: algorithm_selection: .*'autotuned' or "
                                           r"'heuristic' \(got 'fastest'\)$"):
        with_updates(load_software("pytorch-eager"), {"algorithm_selection": "fastest"})
    bad = archsim.Sweep(node, axes={"software.algorithm_selection": ["fastest"]}).run(
        archsim.zoo.mlp(batch=1), options={"software": "pytorch-eager"}, executor="serial")
    assert (bad["status"] == "invalid").all() and "algorithm_selection" in bad["error"].iloc[0]


def test_allow_tf32_runs_fp32_matrix_ops_in_tf32_only_where_the_gpu_has_it(node):
    # PyTorch 1.7-1.11 default (allow_tf32): fp32 convolutions on an A100 take TF32 Tensor-Core math,
    # storage stays fp32 (same bytes); a V100 has no TF32 rate, so the same profile leaves them fp32.
    from archsim.engines.host import prepare, tf32_available

    g = archsim.zoo.resnet50(batch=8, training=False)
    prof = load_software("pytorch-eager")
    assert prof.precision.allow_tf32
    a100 = node.model_copy(update={"gpu": archsim.load_preset("gpu/a100-sxm4-40gb")})
    assert tf32_available(a100) and not tf32_available(node) and not tf32_available(a100, device="host")
    on_a100, on_v100 = prepare(g, a100, prof), prepare(g, node, prof)
    convs = [op for op in on_a100.ops if op.kind == "conv2d"]
    assert convs and all(str(op.compute_dtype) == "tf32" and str(op.dtype) == "fp32" for op in convs)
    assert all(getattr(op, "compute_dtype", None) is None for op in on_v100.ops)
    assert sum(op.min_bytes() for op in on_a100.ops) == sum(op.min_bytes() for op in g.ops)
    # TF32 is faster than fp32 on the CUDA cores (156 vs 19.5 TFLOP/s peak on an A100)
    tf32 = archsim.estimate(g, a100, software=prof)
    fp32 = archsim.estimate(g, a100, software=with_updates(prof, {"precision.allow_tf32": False}))
    assert tf32.latency_s < fp32.latency_s
    # a sweep over points that disagree on TF32 shares one rewritten graph: a clear error
    with pytest.raises(EngineError, match="disagree on whether the GPU has TF32"):
        archsim.estimate_many(g, [a100, node], software=prof)
