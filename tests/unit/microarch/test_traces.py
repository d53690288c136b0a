"""Trace generators against plain-Python enumerations of the same loop nests; sampling."""

from __future__ import annotations

import numpy as np
import pytest

from archsim.errors import WorkloadError
from archsim.microarch import traces as T
from archsim.microarch.cache import CacheLevelConfig, CacheSimulator, HierarchyConfig


def collect(kernel):
    parts = [tuple(x.copy() for x in c) for c in kernel.memory_chunks(0, kernel.total_units, max_units=2)]
    return [np.concatenate([p[i] for p in parts]) for i in range(3)]


def test_ijk_trace_is_the_loop_nest():
    n, e = 4, 8
    k = T.matmul(n, "ijk")
    a0, b0, c0 = k._bases
    want = []
    for i in range(n):
        for j in range(n):
            for kk in range(n):
                want += [(a0 + (i * n + kk) * e, e, False), (b0 + (kk * n + j) * e, e, False)]
            want.append((c0 + (i * n + j) * e, e, True))
    addr, size, wr = collect(k)
    assert list(zip(addr.tolist(), size.tolist(), wr.tolist(), strict=True)) == want
    assert k.mix.flop == 2 * n**3


def test_ikj_trace_uses_vectors_with_a_remainder():
    # n = 12 with 8-double vectors: per (i, k) one A load, then vectors of 8 and 4 elements.
    n = 12
    k = T.matmul(n, "ikj")
    a0, b0, c0 = k._bases
    addr, size, wr = collect(k)
    first = list(zip(addr[:7].tolist(), size[:7].tolist(), wr[:7].tolist(), strict=True))
    assert first == [(a0, 8, False), (b0, 64, False), (c0, 64, False), (c0, 64, True),
                     (b0 + 64, 32, False), (c0 + 64, 32, False), (c0 + 64, 32, True)]
    assert addr.size == n * n * (1 + 3 * 2)


def test_blocked_touches_what_ijk_touches():
    # Same multiset of (address, is_write) line requests modulo order: each C element is loaded
    # and stored n times in blocked order (once per k), A and B elements n times each.
    n, t = 6, 4
    addr, size, wr = collect(T.matmul(n, "blocked", tile=t))
    k = T.matmul(n, "blocked", tile=t)
    a0, b0, c0 = k._bases
    b_loads = np.count_nonzero((addr >= b0) & (addr < b0 + n * n * 8))
    c_stores = np.count_nonzero(wr)
    assert b_loads == n**3 and c_stores == n**3
    assert np.count_nonzero((addr >= a0) & (addr < a0 + n * n * 8)) == n * n * -(-n // t)


def test_conv_stream_and_branchy_counts():
    conv = T.conv2d(2, 3, 6, 5, k=3)
    addr, _, wr = collect(conv)
    # outputs 3 x 4 x 3 = 36; each does 2 x 3 x 3 = 18 MACs: 36 x 36 loads + 36 stores.
    assert np.count_nonzero(wr) == 36 and np.count_nonzero(~wr) == 36 * 36
    tri = T.triad(100, block=64)
    addr, size, wr = collect(tri)
    assert size[~wr].sum() == 2 * 800 and size[wr].sum() == 800
    br = T.branchy(1000, sorted_=False, variant="store", seed=3, block=256)
    addr, _, wr = collect(br)
    x = T.branchy_data(1000, False, 3)
    assert np.count_nonzero(wr) == np.count_nonzero(x > 0)
    pc, taken = br.branch_trace(0, br.total_units)
    assert np.array_equal(taken, x > 0)
    assert T.branchy(1000, sorted_=True, variant="select").branch_trace(0, 1) is None


def test_full_simulation_equals_the_raw_simulator():
    cfg = HierarchyConfig((CacheLevelConfig("l1d", 4096, 4), CacheLevelConfig("l2", 32768, 8)))
    k = T.matmul(32, "ijk")
    stats, factor = T.simulate_cache(k, cfg, sample_units=0, repeated=False)
    sim = CacheSimulator(cfg)
    for a, s, w in k.memory_chunks(0, k.total_units):
        sim.run(a, s, w)
    assert factor == 1.0 and stats == sim.stats().scaled(1.0)


def test_sample_estimates_a_stationary_loop():
    # Rows of i-j-k are alike once B is resident: a 4-row sample after a warm-up row gives the
    # L1 misses of the whole run within 5% (row 0's compulsory misses are the difference).
    cfg = HierarchyConfig((CacheLevelConfig("l1d", 4096, 4), CacheLevelConfig("l2", 1 << 16, 8)))
    k = T.matmul(48, "ijk")
    full, _ = T.simulate_cache(k, cfg, sample_units=0, repeated=False)
    est, factor = T.simulate_cache(k, cfg, sample_units=4, repeated=False)
    assert factor == 48 / 4
    assert est.levels[0].misses == pytest.approx(full.levels[0].misses, rel=0.05)


def test_repeated_short_kernel_is_simulated_warm():
    # 512 doubles (4 KiB) in a 32 KiB L1: the second, counted run hits on every line.
    cfg = HierarchyConfig((CacheLevelConfig("l1d", 32768, 8),))
    warm, factor = T.simulate_cache(T.reduction(512), cfg)
    cold, _ = T.simulate_cache(T.reduction(512), cfg, repeated=False)
    assert factor == 1.0 and warm.levels[0].misses == 0 and cold.levels[0].misses == 512 // 8


def test_bad_kernels():
    with pytest.raises(WorkloadError, match="order"):
        T.matmul(8, "jik")
    with pytest.raises(WorkloadError, match="k <= h"):
        T.conv2d(1, 1, 2, 2, k=3)
    with pytest.raises(WorkloadError, match="units"):
        next(T.triad(10).memory_chunks(0, 5))
