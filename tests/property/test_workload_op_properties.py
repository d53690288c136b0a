"""Invariants of every operator, over random sizes (hypothesis)."""

from hypothesis import given, settings
from hypothesis import strategies as st

from archsim.ops import (
    ELEMENTWISE_COSTS,
    Attention,
    BatchNorm,
    Conv2d,
    DType,
    Elementwise,
    Gemm,
    Gemv,
    LayerNorm,
    Op,
    Pool,
    Softmax,
)

dims = st.integers(1, 300)
dtypes = st.sampled_from(list(DType))


@st.composite
def convs(draw):
    groups = draw(st.sampled_from([1, 2, 4]))
    c = groups * draw(st.integers(1, 16))
    k = groups * draw(st.integers(1, 16))
    r = draw(st.integers(1, 5))
    h = draw(st.integers(r, 40))
    return Conv2d(draw(st.integers(1, 4)), c, k, h, h, kernel=r, stride=draw(st.integers(1, 3)),
                  padding=draw(st.integers(0, 2)), groups=groups, dtype=draw(dtypes), bias=draw(st.booleans()))


@st.composite
def attentions(draw):
    kv = draw(st.integers(1, 4))
    sq = draw(st.integers(1, 64))
    return Attention(draw(st.integers(1, 3)), kv * draw(st.integers(1, 4)), sq, sq + draw(st.integers(0, 64)),
                     draw(st.integers(1, 128)), kv_heads=kv, causal=draw(st.booleans()), fused=draw(st.booleans()),
                     dtype=draw(dtypes))


unary = sorted(k for k, c in ELEMENTWISE_COSTS.items() if c.n_inputs == 1)
ops = st.one_of(
    st.builds(Gemm, dims, dims, dims, dtypes, batch=st.integers(1, 8), weight=st.booleans(), bias=st.booleans()),
    st.builds(Gemv, dims, dims, dtypes, batch=st.integers(1, 4)),
    convs(),
    attentions(),
    st.builds(Elementwise, st.tuples(dims, dims), st.sampled_from(unary), dtypes),
    st.builds(Softmax, st.tuples(dims, dims), dtypes),
    st.builds(LayerNorm, st.tuples(dims, dims), dtypes, rms=st.booleans()),
    st.builds(BatchNorm, st.integers(1, 8), dims, st.integers(1, 16), st.integers(1, 16), dtypes),
    st.builds(Pool, st.integers(1, 4), dims, st.integers(4, 32), st.integers(4, 32), kernel=st.integers(1, 4),
              mode=st.sampled_from(["max", "avg"])),
)


@settings(max_examples=300, deadline=None)
@given(ops)
def test_flop_bytes_positive_and_breakdown_sums(op: Op):
    bd = op.flop_breakdown()
    assert set(bd) == {"matmul", "vector", "special"}
    assert all(v >= 0 for v in bd.values())
    assert sum(bd.values()) == op.flop()
    assert op.min_bytes() > 0
    assert op.min_bytes() >= sum(t.bytes for t in op.outputs())
    for b in op.backward():
        assert b.phase == "backward" and b.param_count() == 0
        assert sum(b.flop_breakdown().values()) == b.flop() and b.min_bytes() > 0


@settings(max_examples=200, deadline=None)
@given(dims, dims, dims, st.integers(1, 8), dtypes, st.booleans(), st.booleans())
def test_gemm_backward_is_twice_forward(m, n, k, batch, dtype, ta, tb):
    g = Gemm(m, n, k, dtype, batch=batch, trans_a=ta, trans_b=tb)
    assert sum(o.flop() for o in g.backward()) == 2 * g.flop()


@settings(max_examples=200, deadline=None)
@given(convs())
def test_conv_passes_share_macs_and_implicit_gemm(conv: Conv2d):
    fwd = conv.flop_breakdown()
    for b in conv.backward():
        if isinstance(b, Conv2d):
            assert b.macs() == conv.macs()
            assert b.as_gemm().macs() == conv.macs()
    assert conv.as_gemm().macs() == conv.macs()
    assert fwd["matmul"] + fwd["vector"] >= 2 * conv.macs()


@settings(max_examples=200, deadline=None)
@given(attentions())
def test_fused_attention_never_moves_more_than_unfused(a: Attention):
    import dataclasses

    other = dataclasses.replace(a, fused=not a.fused)
    fused, unfused = (a, other) if a.fused else (other, a)
    assert fused.min_bytes() < unfused.min_bytes()
    assert fused.flop() <= unfused.flop()
    assert fused.visible_entries <= a.seq_q * a.seq_kv
