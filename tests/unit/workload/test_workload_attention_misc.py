"""Hand-computed costs of attention, embedding, data movement, optimizer steps and kernels."""

import pytest

from archsim.errors import WorkloadError
from archsim.ops import (
    Attention,
    Concat,
    Copy,
    DeviceToHost,
    Embedding,
    Gemm,
    HostToDevice,
    Kernel,
    OptimizerStep,
    Softmax,
    TensorSpec,
)


def test_attention_unfused_matches_decomposition():
    a = Attention(batch=2, heads=12, seq_q=128, seq_kv=128, head_dim=64, dtype="fp16")
    ops = a.decompose()
    assert [type(o) for o in ops] == [Gemm, Softmax, Gemm]
    # two GEMMs of 2 * (2*12) * 128 * 128 * 64 = 50,331,648 FLOP each
    assert a.flop_breakdown()["matmul"] == 2 * 50_331_648
    assert a.flop() == sum(o.flop() for o in ops)
    q = 2 * 12 * 128 * 64 * 2  # bytes of Q (= K = V = O)
    s = 2 * 12 * 128 * 128 * 2  # bytes of the score matrix
    assert a.min_bytes() == 4 * q + 4 * s


def test_attention_fused_skips_scores_and_masked_tiles():
    a = Attention(1, 8, 256, 256, 64, causal=True, fused=True)
    # visible entries 256*257/2 = 32896 per head; matmul 2 products * 2 * 8 * 32896 * 64
    assert a.visible_entries == 32_896
    assert a.flop_breakdown()["matmul"] == 2 * 2 * 8 * 32_896 * 64
    assert a.min_bytes() == 4 * 8 * 256 * 64 * 4
    unfused = Attention(1, 8, 256, 256, 64, causal=True)
    assert unfused.flop_breakdown()["matmul"] == 2 * 2 * 8 * 256 * 256 * 64
    assert len(unfused.decompose()) == 4  # with the mask add


def test_attention_gqa_decode():
    a = Attention(batch=4, heads=32, seq_q=1, seq_kv=1024, head_dim=128, kv_heads=8, causal=True, fused=True)
    # one query sees all 1024 keys; K, V are read at 8 heads
    assert a.visible_entries == 1024
    kv = 4 * 8 * 1024 * 128 * 4
    q = 4 * 32 * 1 * 128 * 4
    assert a.min_bytes() == 2 * q + 2 * kv
    with pytest.raises(WorkloadError, match="kv_heads"):
        Attention(1, 32, 1, 8, 64, kv_heads=5)


def test_attention_backward():
    f = Attention(1, 4, 64, 64, 32, fused=True)
    (b,) = f.backward()
    assert b.flop_breakdown()["matmul"] == 5 * 2 * 4 * 64 * 64 * 32
    u = Attention(1, 4, 64, 64, 32, kv_heads=2)
    ops = u.backward()
    assert sum(o.flop_breakdown()["matmul"] for o in ops) == 4 * 2 * 4 * 64 * 64 * 32
    assert len(ops) == 7  # 4 GEMMs, softmax backward, two GQA group sums


def test_embedding():
    e = Embedding(30522, 768, lookups=512)
    assert e.flop() == 0 and e.param_count() == 30522 * 768
    assert e.min_bytes() == 2 * 512 * 768 * 4
    (b,) = e.backward()
    assert b.flop() == 512 * 768 and b.min_bytes() == 3 * 512 * 768 * 4


def test_copy_concat_transfers():
    assert Copy((10, 10), "fp16").min_bytes() == 400
    c = Concat(((2, 3), (2, 5)), axis=1)
    assert c.out_shape == (2, 8) and c.min_bytes() == (6 + 10 + 16) * 4
    with pytest.raises(WorkloadError, match="input_shapes"):
        Concat(((2, 3), (3, 5)), axis=1)
    h = HostToDevice(TensorSpec((32, 3, 224, 224), "fp32"))
    assert h.nbytes == 32 * 3 * 224 * 224 * 4 and h.min_bytes() == h.nbytes and h.flop() == 0
    assert DeviceToHost(1000).min_bytes() == 1000
    with pytest.raises(WorkloadError, match="nbytes"):
        HostToDevice(0)


def test_optimizer_steps():
    sgd = OptimizerStep(1000, "sgd")
    assert sgd.flop() == 2000 and sgd.min_bytes() == 3 * 1000 * 4  # read w, g; write w
    adam = OptimizerStep(1000, "adam", "fp32")
    assert adam.flop_breakdown() == {"matmul": 0, "vector": 13_000, "special": 2000}
    assert adam.min_bytes() == 7 * 1000 * 4  # read w, g, m, v; write w, m, v
    mixed = OptimizerStep(1000, "adam", "fp16")
    assert mixed.master_weights is True
    # read g (2 B) + master, m, v (3 * 4 B); write master, m, v (3 * 4 B) + fp16 weights (2 B)
    assert mixed.min_bytes() == 1000 * (2 + 12 + 12 + 2)
    with pytest.raises(WorkloadError, match="optimizer"):
        OptimizerStep(10, "lion")


def test_kernel_description():
    k = Kernel("chase", flop_vector=0, dram_read_bytes=4096, dram_write_bytes=8, grid=1, block=(32,),
               dependent_accesses=1024)
    assert k.min_bytes() == 4104 and k.block == (32, 1, 1) and k.total_threads == 32
    assert k.flop() == 0 and k.kind == "kernel"
    with pytest.raises(WorkloadError, match="Kernel.flop_vector"):
        Kernel("bad", flop_vector=-1)
    with pytest.raises(WorkloadError, match="Kernel.block"):
        Kernel("bad", block=(0, 1))
