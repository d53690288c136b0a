"""Invariants of the discrete-event engine (hypothesis)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import archsim
from archsim.engines import estimate
from archsim.workload import DeviceToHost, Edge, Elementwise, Gemm, HostToDevice, OpGraph, TensorSpec

_DGX = archsim.load_preset("system/dgx-a100")


def _op(kind, size, i):
    if kind == "gemm":
        return Gemm(size, size, size, "fp16", name=f"g{i}")
    if kind == "relu":
        return Elementwise((size, size), "relu", "fp16", name=f"r{i}")
    return HostToDevice(TensorSpec((size, size), "fp16"), name=f"h{i}")


op_st = st.tuples(st.sampled_from(["gemm", "relu", "h2d"]), st.sampled_from([64, 256, 1024, 2048]))


@settings(max_examples=25, deadline=None)
@given(st.lists(op_st, min_size=1, max_size=8))
def test_serial_chain_equals_roofline_sum(specs):
    g = OpGraph.chain("c", [_op(k, n, i) for i, (k, n) in enumerate(specs)])
    roof = estimate(g, _DGX)
    des = estimate(g, _DGX, engine="des")
    assert des.latency_s == pytest.approx(roof.latency_s, rel=0.01)
    assert des.latency_s == pytest.approx(sum(o.latency_s for o in roof.ops), rel=0.01)


def _links_graph(items):
    ops = []
    for i, (n, kind) in enumerate(items):
        t = TensorSpec((n,), "fp32")
        ops.append(HostToDevice(t, name=f"x{i}") if kind == "h2d" else DeviceToHost(t, name=f"x{i}")
                   if kind == "d2h" else Elementwise((n,), "relu", "fp32", name=f"x{i}"))
    edges = tuple(Edge(i, i + 2) for i in range(len(ops) - 2))  # two interleaved chains
    return OpGraph("links", tuple(ops), edges)


def _faster_link(factor):
    link = _DGX.host_link.model_copy(update={"bandwidth_bytes_per_s": _DGX.host_link.bandwidth_bytes_per_s * factor})
    return _DGX.model_copy(update={"host_link": link})


@settings(max_examples=20, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 1 << 24), st.sampled_from(["h2d", "d2h", "relu"])), min_size=2, max_size=7),
       st.floats(1.0, 8.0))
def test_more_link_bandwidth_never_slower_on_one_stream(items, factor):
    # On one stream the ops run in order and each op's time falls with the link bandwidth, so the
    # run's does too. (On several streams it need not: see the next test.)
    g = _links_graph(items)
    slow = estimate(g, _DGX, engine="des", streams=1)
    fast = estimate(g, _faster_link(factor), engine="des", streams=1)
    assert fast.latency_s <= slow.latency_s * (1 + 1e-9)


def test_a_faster_copy_can_reorder_the_block_scheduler_on_several_streams():
    # A scheduling anomaly of greedy list scheduling (Graham, "Bounds on multiprocessing timing
    # anomalies", SIAM J. Appl. Math. 17(2), 1969), reproduced as the hardware block scheduler
    # behaves: SM slots go to kernels in the order they ask. Three streams on a DGX A100:
    # x0 = a 32,000 B D2H copy; x1, x3 = small ReLUs (x3 after x1); x2 = a 441,867-element ReLU
    # after x0 whose 864 blocks (8 per SM: 2,048 threads) hold every SM for 2.65 us. x1 asks for its
    # one block's slot after its 9.44 us of overheads; x2 asks at x0's end + 7.35 us. At the stock
    # link x0 ends at 2.77 us, so x2 asks at 10.12 us, after x1 (9.44 us): x1 runs, x3 follows at
    # 10 us, the run takes 20 us. With an 8x faster link x0 ends at 1.66 us, x2 asks at 9.01 us and
    # takes every slot until 11.66 us: x1 waits, x3 starts at 12.22 us, the run takes 22.2 us (+11 %).
    g = _links_graph([(8000, "d2h"), (512, "relu"), (441867, "relu"), (2924, "relu")])
    slow = estimate(g, _DGX, engine="des", streams=3)
    fast = estimate(g, _faster_link(8.0), engine="des", streams=3)
    assert slow.latency_s == pytest.approx(20e-6, rel=1e-3)
    assert fast.latency_s == pytest.approx(22.22e-6, rel=1e-3)
    x1 = {o.name: o for o in fast.ops}["x1"]
    assert x1.latency_s == pytest.approx(12.22e-6, rel=1e-3)  # waited behind x2's full wave


@settings(max_examples=15, deadline=None)
@given(st.lists(st.sampled_from([1 << 16, 1 << 18, 1 << 20, 1 << 22]), min_size=2, max_size=6), st.integers(2, 4))
def test_streams_between_critical_path_and_serial_sum(sizes, streams):
    ops = tuple(Elementwise((n,), "add", "fp32", name=f"e{i}") for i, n in enumerate(sizes))
    g = OpGraph("independent", ops)
    serial = estimate(g, _DGX, engine="des").latency_s
    par = estimate(g, _DGX, engine="des", streams=streams)
    assert max(o.extra["solo_latency_s"] for o in par.ops) * (1 - 1e-9) <= par.latency_s <= serial * (1 + 1e-9)
    assert sum(par.energy_breakdown_j.values()) == pytest.approx(par.energy_j)
