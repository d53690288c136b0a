"""The interval core model: hand-computed limits and the orderings it must get right."""

from __future__ import annotations

import pytest

from archsim.errors import SchemaError
from archsim.microarch import traces as T
from archsim.microarch.branch import PredictorConfig
from archsim.microarch.cache import CacheLevelConfig, HierarchyConfig
from archsim.microarch.core import CoreModel, CoreParams, MemoryParams, predict

CORE = CoreParams(clock_hz=3e9, issue_width=6, load_ports=3, store_ports=2, fp_pipes=4, rob_entries=320,
                  max_outstanding_misses=24, mispredict_penalty_cycles=13)
MEM = MemoryParams(level_latency_cycles=(4, 14, 50), level_bandwidth_bytes_per_s=(200e9, 100e9, 200e9),
                   shared=(False, False, True), dram_latency_s=100e-9, dram_bandwidth_bytes_per_s=20e9)
HIER = HierarchyConfig((CacheLevelConfig("l1d", 32768, 8, prefetcher="stride"),
                        CacheLevelConfig("l2", 1 << 20, 8, inclusive=True),
                        CacheLevelConfig("l3", 8 << 20, 16, shared=True)))
MODEL = CoreModel(CORE, MEM, HIER, PredictorConfig(kind="tage", history_bits=64))


def test_warm_l1_resident_reduction_runs_at_the_add_latency():
    # Run back to back, 2048 doubles (16 KiB) stay in L1: one dependent add per element at 3 cycles
    # = 6144 cycles, and nothing else.
    p = predict(T.reduction(2048), MODEL)
    assert p.bound == "dependency"
    assert (p.cycles, p.memory_stall_cycles, p.bandwidth_cycles) == (6144, 0, 0)


def test_cold_reduction_hides_its_misses_behind_the_add_chain():
    # From cold caches: the stride prefetcher needs 3 lines of a new 4 KiB page to confirm a
    # stride, and the last access of a page prefetches the next page's first line: 3 + 3 x 2 = 9
    # demand misses, all from DRAM (100 ns = 300 cycles). The add chain makes the base IPC
    # 2304 / 6144 = 0.375, so the 320-entry ROB holds W = 320 / 0.375 = 853 cycles of work: more
    # than the 300-cycle latency, which is hidden. As dependent loads (no window, MLP 1) the same
    # misses cost 9 x 300 = 2700 cycles.
    p = predict(T.reduction(2048), MODEL, repeated=False)
    assert p.bound == "dependency"
    assert (p.cycles, p.memory_stall_cycles) == (pytest.approx(6144), 0.0)
    chase = predict(T.reduction(2048), MODEL, repeated=False, dependent_loads=True)
    assert chase.mlp == 1.0
    assert chase.memory_stall_cycles == pytest.approx(2700)


def test_large_triad_is_dram_bandwidth_bound():
    # 3 arrays of 4 Mi doubles (32 MiB each, 4x the L3): reads of b, c and a (write-allocate) plus
    # the write-back of a: 4 x 32 MiB = 134 MB at 20 GB/s = 6.7 ms.
    n = 1 << 22
    p = predict(T.triad(n), MODEL)
    assert p.bound == "bandwidth"
    assert p.bandwidth_cycles / CORE.clock_hz == pytest.approx(4 * n * 8 / 20e9, rel=0.05)


def test_two_cores_share_dram_bandwidth():
    n = 1 << 22
    one, two = predict(T.triad(n), MODEL), predict(T.triad(n), MODEL, cores=2)
    assert two.bandwidth_cycles == pytest.approx(2 * one.bandwidth_cycles, rel=0.05)


def test_orderings():
    ijk, ikj = predict(T.matmul(128, "ijk"), MODEL), predict(T.matmul(128, "ikj"), MODEL)
    assert ijk.time_s > 3 * ikj.time_s
    n = 1 << 18
    uns = predict(T.branchy(n, sorted_=False), MODEL)
    srt = predict(T.branchy(n, sorted_=True), MODEL)
    # Random signs: ~n/2 mispredictions at 13 + 7 + 3 cycles each dominate the unsorted loop.
    assert uns.mispredictions == pytest.approx(n / 2, rel=0.05)
    assert srt.mispredictions < 100
    assert uns.time_s > 3 * srt.time_s
    sel_u = predict(T.branchy(n, sorted_=False, variant="select"), MODEL)
    sel_s = predict(T.branchy(n, sorted_=True, variant="select"), MODEL)
    assert sel_u.mispredictions == 0 and sel_u.time_s == pytest.approx(sel_s.time_s, rel=0.02)


def test_from_preset():
    from archsim import load_preset

    m = CoreModel.from_device(load_preset("cpu/epyc-genoa-2vcpu"))
    assert m.core.fp_pipes == 4 and m.memory.level_latency_cycles == (4, 14, 50)
    assert [lv.name for lv in m.hierarchy.levels] == ["l1d", "l2", "l3"]
    assert m.predictor.kind == "tage"


def test_bad_params():
    with pytest.raises(SchemaError, match="issue_width"):
        CoreParams(clock_hz=3e9, issue_width=0, load_ports=3, store_ports=2, fp_pipes=4, rob_entries=320,
                   max_outstanding_misses=24, mispredict_penalty_cycles=13)
    with pytest.raises(SchemaError, match="cores"):
        predict(T.reduction(16), MODEL, cores=0)
