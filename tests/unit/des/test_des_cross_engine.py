"""Cross-engine checks: the discrete-event engine against the roofline on the same cost function."""

import pytest

import archsim
from archsim.engines import estimate
from archsim.workload import Conv2d, DeviceToHost, Edge, Elementwise, Gemm, Gemv, HostToDevice, OpGraph, TensorSpec


@pytest.fixture(scope="module")
def dgx():
    return archsim.load_preset("system/dgx-a100")


def _chain(ops):
    return OpGraph.chain("chain", ops)


def test_single_op_equals_roofline(dgx):
    op = Gemm(4096, 4096, 4096, "fp16", name="g")
    r, d = estimate(op, dgx), estimate(op, dgx, engine="des")
    assert d.latency_s == pytest.approx(r.latency_s, rel=0.01)
    assert d.energy_j == pytest.approx(r.energy_j, rel=0.01)
    assert d.ops[0].start_s == 0.0 and d.ops[0].latency_s == pytest.approx(r.ops[0].latency_s, rel=1e-9)


def test_chain_on_gpu_cpu_and_pim_equals_roofline(dgx):
    ops = [Conv2d(32, 64, 64, 56, 56, kernel=(3, 3), padding=(1, 1), dtype="fp16", name="conv"),
           Elementwise((32, 64, 56, 56), "relu", "fp16", name="relu"),
           Gemm(2048, 1024, 512, "fp16", name="fc"), Gemv(1024, 1024, "fp16", weight=True, name="gemv")]
    g = _chain(ops)
    for hw, device in ((dgx, None), (dgx, "host"), (archsim.load_preset("system/upmem-server"), "pim")):
        if device == "pim":
            g = _chain([Gemv(4096, 4096, "int8", weight=True, name=f"v{i}") for i in range(3)])
        r = estimate(g, hw, device=device)
        d = estimate(g, hw, engine="des", device=device)
        assert d.latency_s == pytest.approx(r.latency_s, rel=0.01), device
        assert d.energy_j == pytest.approx(r.energy_j, rel=0.01), device
        assert [o.name for o in d.ops] == [o.name for o in r.ops]
        # One serial stream: each op starts when the previous one ends.
        for a, b in zip(d.ops, d.ops[1:], strict=False):
            assert b.start_s == pytest.approx(a.end_s, rel=1e-12)


def test_copies_in_a_chain_do_not_overlap(dgx):
    g = _chain([HostToDevice(TensorSpec((1 << 22,), "fp32"), name="in"), Elementwise((1 << 22,), "relu", "fp32"),
                DeviceToHost(TensorSpec((1 << 22,), "fp32"), name="out")])
    r, d = estimate(g, dgx), estimate(g, dgx, engine="des")
    assert d.latency_s == pytest.approx(r.latency_s, rel=0.01)
    assert {t.resource for t in d.timeline} == {"gpu0.copy.h2d", "gpu0.stream0", "gpu0.copy.d2h"}


def _two_chains(n=1 << 18, length=4):
    a = [Elementwise((n,), "add", "fp32", name=f"a{i}") for i in range(length)]
    b = [Elementwise((n,), "add", "fp32", name=f"b{i}") for i in range(length)]
    edges = [Edge(i, i + 1) for i in range(length - 1)] + [Edge(length + i, length + i + 1) for i in range(length - 1)]
    return OpGraph.chain("a", a), OpGraph("ab", tuple(a + b), tuple(edges))


def test_two_streams_sharing_dram(dgx):
    alone_g, both_g = _two_chains()
    alone = estimate(alone_g, dgx, engine="des").latency_s
    both = estimate(both_g, dgx, engine="des", streams=2)
    serial = estimate(both_g, dgx, engine="des", streams=1).latency_s
    assert {t.resource for t in both.timeline} == {"gpu0.stream0", "gpu0.stream1"}
    assert alone < both.latency_s <= serial * (1 + 1e-9)
    # They overlap (the makespan is well under the sum) and contend for DRAM (longer than alone).
    assert both.latency_s < 0.9 * serial
    assert serial == pytest.approx(2 * alone, rel=1e-9)


def test_more_pcie_bandwidth_never_slows(dgx):
    n = 1 << 24
    ops = [HostToDevice(TensorSpec((n,), "fp32"), name="in0"), Elementwise((n,), "relu", "fp32", name="r0"),
           HostToDevice(TensorSpec((n,), "fp32"), name="in1"), Elementwise((n,), "relu", "fp32", name="r1"),
           DeviceToHost(TensorSpec((n,), "fp32"), name="out")]
    g = OpGraph("copies", tuple(ops), (Edge(0, 1), Edge(2, 3), Edge(1, 4), Edge(3, 4)))
    times = []
    for gbps in (8, 16, 31.5, 64, 128):
        link = dgx.host_link.model_copy(update={"bandwidth_bytes_per_s": gbps * 1e9})
        hw = dgx.model_copy(update={"host_link": link})
        times.append(estimate(g, hw, engine="des", streams=2).latency_s)
    assert times == sorted(times, reverse=True)
    assert times[0] > times[-1]
