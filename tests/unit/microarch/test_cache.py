"""Hand-computed cases of the cache simulator (the arithmetic is in each comment)."""

from __future__ import annotations

import numpy as np
import pytest

from archsim.errors import SchemaError
from archsim.microarch.cache import CacheLevelConfig, CacheSimulator, HierarchyConfig, simulate_trace


def one_level(size, ways, line=64, **kw):
    return HierarchyConfig((CacheLevelConfig("l1d", size, ways, line, **kw),))


def test_stream_of_8_byte_loads_misses_one_in_eight():
    # 8000 loads x 8 B over fresh 64 B lines: one miss per line = 8000 / 8 = 1000 misses, ratio 1/8.
    cfg = HierarchyConfig((CacheLevelConfig("l1d", 32768, 8), CacheLevelConfig("l2", 1 << 20, 8)))
    s = simulate_trace(cfg, np.arange(8000, dtype=np.int64) * 8, 8)
    assert s["l1d"].misses == 1000
    assert s["l1d"].miss_ratio == pytest.approx(1 / 8)
    # Every L1 miss is one L2 read that also misses (cold), and moves one line: 1000 x 64 B.
    assert s["l2"].reads == 1000 and s["l2"].misses == 1000
    assert s.bytes_between() == {"l1d-l2": 64000, "l2-dram": 64000}


def test_capacity_evictions_of_a_stream():
    # 1000 lines through a 512-line cache: every line past the 512th evicts one: 488 evictions.
    s = simulate_trace(one_level(32768, 8), np.arange(8000, dtype=np.int64) * 8, 8)
    assert s["l1d"].evictions == 1000 - 512
    assert s["l1d"].writebacks == 0  # clean lines are dropped


def test_lru_versus_fifo():
    # One set, 2 ways; lines A B A C A.  LRU: m m h m(evicts B) h = 3 misses.
    # FIFO: m m h m(evicts A, the oldest insertion) m = 4 misses.
    trace = np.array([0, 64, 0, 128, 0])
    assert simulate_trace(one_level(128, 2), trace)["l1d"].misses == 3
    assert simulate_trace(one_level(128, 2, replacement="fifo"), trace)["l1d"].misses == 4


def test_tree_plru_differs_from_lru():
    # One set, 4 ways: A B C D fill ways 0-3, A is touched, E evicts. Tree bits after the fills
    # point at way 0's half; touching way 0 flips root -> right, node 2 -> way 2 (C) is the victim.
    # True LRU evicts B instead. Then B: PLRU hit (4 + 1 misses... total misses 5), LRU miss (6).
    lines = [0, 1, 2, 3, 0, 4, 1]
    trace = np.array(lines) * 64
    assert simulate_trace(one_level(256, 4, replacement="plru"), trace)["l1d"].misses == 5
    assert simulate_trace(one_level(256, 4), trace)["l1d"].misses == 6


def test_direct_mapped_conflicts():
    # Direct-mapped, 2 sets: lines 0 and 2 share set 0, so alternating them misses every time.
    s = simulate_trace(one_level(128, 1), np.array([0, 128] * 10))
    assert s["l1d"].misses == 20 and s["l1d"].evictions == 19


def test_write_back_writes_a_dirty_victim_once():
    # Store to line 0 (write-allocate: 1 write miss, fill 64 B), then 2 loads that evict it from a
    # 1-line cache: one write-back of 64 B. Bytes below: 3 fills x 64 = 192 in, 64 out.
    cfg = HierarchyConfig((CacheLevelConfig("l1d", 64, 1), CacheLevelConfig("l2", 4096, 4)))
    s = simulate_trace(cfg, np.array([0, 64, 128]), 8, np.array([True, False, False]))
    assert s["l1d"].write_misses == 1 and s["l1d"].writebacks == 1
    assert (s["l1d"].bytes_from_below, s["l1d"].bytes_to_below) == (192, 64)
    assert s["l2"].writes == 1 and s["l2"].write_misses == 0  # the victim is still in L2


def test_write_through_no_allocate_forwards_each_store():
    # Three 8 B stores to one line, write-through without allocation: 3 write misses, nothing
    # installed, 3 x 8 = 24 B forwarded, no fills, no write-backs.
    s = simulate_trace(one_level(4096, 4, write_policy="write-through"), np.array([0, 8, 16]), 8, True)
    lv = s["l1d"]
    assert (lv.write_misses, lv.bytes_to_below, lv.bytes_from_below, lv.writebacks) == (3, 24, 0, 0)


def test_next_line_prefetcher_hides_a_stream():
    # 100 lines read in order: the first miss prefetches line 1; each prefetched line is a hit, but
    # hits do not trigger next-line prefetches, so the misses alternate: lines 0, 2, 4... = 50
    # misses and 50 prefetches.
    s = simulate_trace(one_level(1 << 16, 8, prefetcher="next-line"), np.arange(100) * 64)
    assert s["l1d"].misses == 50 and s["l1d"].prefetches == 50


def test_stride_prefetcher_learns_a_constant_stride():
    # Lines 0, 2, ..., 62 within one 4 KiB page (64 lines of 64 B): line 0 allocates the table
    # entry, line 2 sets stride 2 (confidence 0), line 4 confirms it and prefetches line 6; every
    # later access prefetches line + 2. Misses: lines 0, 2, 4 = 3. Prefetches: issued by lines
    # 4, 6, ..., 62 = 30 accesses, for lines 6..64 = 30. Fills: (3 + 30) x 64 B = 2112 B.
    s = simulate_trace(one_level(1 << 16, 8, prefetcher="stride"), np.arange(0, 64, 2) * 64)
    assert s["l1d"].misses == 3
    assert s["l1d"].prefetches == 30
    assert s["l1d"].bytes_from_below == 2112


def test_inclusive_level_back_invalidates():
    # L1: 2 ways, 1 set; L2 inclusive, 1 way. Read A, read B: L2 evicts A and removes it from L1.
    # Reading A again misses in L1 (it would hit in a non-inclusive hierarchy), and its fill makes
    # L2 evict B, removing B from L1: 2 back-invalidations.
    def run(inclusive):
        cfg = HierarchyConfig((CacheLevelConfig("l1d", 128, 2),
                               CacheLevelConfig("l2", 64, 1, inclusive=inclusive)))
        return simulate_trace(cfg, np.array([0, 64, 0]))
    inc, nine = run(True), run(False)
    assert inc["l1d"].misses == 3 and inc["l1d"].back_invalidations == 2
    assert nine["l1d"].misses == 2 and nine["l1d"].back_invalidations == 0


def test_private_l1_shared_l2_between_two_cores():
    # Both cores read line 0: two private L1 misses, one shared L2 miss then one hit.
    cfg = HierarchyConfig((CacheLevelConfig("l1d", 4096, 4), CacheLevelConfig("l2", 65536, 8, shared=True)),
                          n_cores=2)
    s = simulate_trace(cfg, np.array([0, 0]), 8, False, np.array([0, 1]))
    assert s["l1d"].misses == 2
    assert (s["l2"].reads, s["l2"].misses) == (2, 1)


def test_unaligned_access_spans_two_lines():
    # 16 B at address 56 touch lines 0 and 1: two line requests, two misses.
    s = simulate_trace(one_level(4096, 4), np.array([56]), 16)
    assert s["l1d"].reads == 2 and s["l1d"].misses == 2


def test_random_replacement_is_deterministic_per_seed():
    trace = np.random.default_rng(3).integers(0, 1 << 14, 2000) * 8
    cfg = HierarchyConfig((CacheLevelConfig("l1d", 1024, 4, replacement="random"),), seed=7)
    assert simulate_trace(cfg, trace) == simulate_trace(cfg, trace)
    other = HierarchyConfig((CacheLevelConfig("l1d", 1024, 4, replacement="random"),), seed=8)
    assert simulate_trace(other, trace) != simulate_trace(cfg, trace)


def test_chunks_equal_one_run():
    trace = np.random.default_rng(0).integers(0, 1 << 16, 5000) * 8
    cfg = HierarchyConfig((CacheLevelConfig("l1d", 2048, 4), CacheLevelConfig("l2", 16384, 8)))
    sim = CacheSimulator(cfg)
    for chunk in np.array_split(trace, 7):
        sim.run(chunk)
    assert sim.stats() == simulate_trace(cfg, trace)


@pytest.mark.parametrize(("kw", "field"), [
    ({"replacement": "mru"}, "replacement"),
    ({"write_policy": "write-around"}, "write_policy"),
    ({"prefetcher": "markov"}, "prefetcher"),
    ({"ways": 3, "replacement": "plru", "size_bytes": 3 * 64}, "PLRU"),
    ({"size_bytes": 1000}, "divisible"),
    ({"line_bytes": 48, "size_bytes": 48 * 8}, "power of two"),
])
def test_bad_level_config_names_the_field(kw, field):
    args = {"name": "l1d", "size_bytes": 4096, "ways": 8} | kw
    with pytest.raises(SchemaError, match=field):
        CacheLevelConfig(**args)


def test_bad_hierarchies():
    l1 = CacheLevelConfig("l1d", 4096, 8)
    with pytest.raises(SchemaError, match="line size"):
        HierarchyConfig((l1, CacheLevelConfig("l2", 1 << 16, 8, line_bytes=128)))
    with pytest.raises(SchemaError, match="below a shared"):
        HierarchyConfig((CacheLevelConfig("l1d", 4096, 8, shared=True), CacheLevelConfig("l2", 1 << 16, 8)))
    with pytest.raises(SchemaError, match="cores"):
        simulate_trace(HierarchyConfig((l1,)), np.array([0]), 8, False, np.array([1]))
    with pytest.raises(SchemaError, match="non-negative"):
        simulate_trace(HierarchyConfig((l1,)), np.array([-8]))


def test_from_device_maps_the_preset_caches():
    from archsim import load_preset

    cpu = load_preset("cpu/epyc-genoa-2vcpu")
    h = HierarchyConfig.from_device(cpu, prefetcher="stride")
    assert [(lv.name, lv.size_bytes, lv.ways, lv.shared, lv.inclusive) for lv in h.levels] == [
        ("l1d", 32768, 8, False, False), ("l2", 1 << 20, 8, False, True), ("l3", 32 << 20, 16, True, False)]
    assert h.levels[0].prefetcher == "stride" and h.levels[1].prefetcher == "none"
    assert h.n_cores == 2
    assert CacheLevelConfig.from_cache(cpu.caches[1]).sets == 2048  # 1 MiB / (8 x 64 B)
