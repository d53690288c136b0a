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


@settings(max_examples=20, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 1 << 24), st.sampled_from(["h2d", "d2h", "relu"])), min_size=2, max_size=7),
       st.integers(1, 3), st.floats(1.0, 8.0))
def test_more_link_bandwidth_never_slower(items, streams, factor):
    ops = []
    for i, (n, kind) in enumerate(items):
        t = TensorSpec((n,), "fp32")
        ops.append(HostToDevice(t, name=f"x{i}") if kind == "h2d" else DeviceToHost(t, name=f"x{i}")
                   if kind == "d2h" else Elementwise((n,), "relu", "fp32", name=f"x{i}"))
    edges = tuple(Edge(i, i + 2) for i in range(len(ops) - 2))  # two interleaved chains
    g = OpGraph("links", tuple(ops), edges)
    slow = estimate(g, _DGX, engine="des", streams=streams)
    link = _DGX.host_link.model_copy(update={"bandwidth_bytes_per_s": _DGX.host_link.bandwidth_bytes_per_s * factor})
    fast = estimate(g, _DGX.model_copy(update={"host_link": link}), engine="des", streams=streams)
    assert fast.latency_s <= slow.latency_s * (1 + 1e-9)


@settings(max_examples=15, deadline=None)
@given(st.lists(st.sampled_from([1 << 16, 1 << 18, 1 << 20, 1 << 22]), min_size=2, max_size=6), st.integers(2, 4))
def test_streams_between_critical_path_and_serial_sum(sizes, streams):
    ops = tuple(Elementwise((n,), "add", "fp32", name=f"e{i}") for i, n in enumerate(sizes))
    g = OpGraph("independent", ops)
    serial = estimate(g, _DGX, engine="des").latency_s
    par = estimate(g, _DGX, engine="des", streams=streams)
    assert max(o.extra["solo_latency_s"] for o in par.ops) * (1 - 1e-9) <= par.latency_s <= serial * (1 + 1e-9)
    assert sum(par.energy_breakdown_j.values()) == pytest.approx(par.energy_j)
