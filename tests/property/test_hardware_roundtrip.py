"""Property tests: random valid hardware components round-trip through dump -> validate."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from archsim.hardware import DRAM, Cache, CPUCore
from archsim.presets import validate_hardware
from archsim.units import format_si, parse

pow2 = st.integers(min_value=4, max_value=9).map(lambda e: 2**e)  # 16 .. 512 B lines


@st.composite
def caches(draw: st.DrawFn) -> Cache:
    line = draw(pow2)
    ways = draw(st.integers(1, 32))
    sets = draw(st.integers(1, 1 << 14))
    return Cache(
        name=draw(st.sampled_from(["l1d", "l2", "l3", "l1"])),
        size=f"{sets * ways * line} B",
        ways=ways,
        line_size=line,
        latency_cycles=draw(st.integers(1, 500)),
        bandwidth=f"{draw(st.floats(1e6, 1e14))} B/s",
        read_energy=f"{draw(st.floats(0, 1e-9))} J/B",
        write_energy=f"{draw(st.floats(0, 1e-9))} J/B",
        replacement=draw(st.sampled_from(["lru", "plru", "fifo", "random"])),
        write_policy=draw(st.sampled_from(["write-back", "write-through"])),
        shared=draw(st.booleans()),
        inclusive=draw(st.booleans()),
    )


@st.composite
def drams(draw: st.DrawFn) -> DRAM:
    channels = draw(st.integers(1, 128))
    width = draw(st.sampled_from([16, 32, 64, 128]))
    rate = draw(st.integers(100, 12000))
    wire = channels * width / 8 * rate * 1e6
    ns = st.floats(0.1, 1000)
    return DRAM(
        kind=draw(st.sampled_from(["ddr4", "ddr5", "lpddr5", "gddr6", "hbm2", "hbm3e"])),
        capacity=f"{draw(st.integers(1, 1 << 40))} B",
        bandwidth=f"{wire * draw(st.floats(0.01, 1.0))} B/s",
        channels=channels, bus_width_bits=width, data_rate_mtps=rate,
        latency=f"{draw(ns)} ns", t_rcd=f"{draw(ns)} ns", t_cl=f"{draw(ns)} ns", t_rp=f"{draw(ns)} ns",
        row_buffer=f"{draw(st.integers(1, 64))} KiB", banks_per_channel=draw(st.integers(1, 64)),
        read_energy=f"{draw(st.floats(0.1, 100))} pJ/bit", write_energy=f"{draw(st.floats(0.1, 100))} pJ/bit",
        activation_energy=f"{draw(st.floats(0.01, 100))} nJ", background_power=f"{draw(st.floats(0, 50))} W",
    )


@st.composite
def cores(draw: st.DrawFn) -> CPUCore:
    precisions = draw(st.sets(st.sampled_from(["fp64", "fp16", "bf16", "int8"])))
    fma = {"fp32": draw(st.integers(0, 4)), **{p: draw(st.integers(0, 4)) for p in precisions}}
    return CPUCore(
        clock=f"{draw(st.floats(0.1, 6.0))} GHz",
        issue_width=draw(st.integers(1, 12)), pipeline_depth=draw(st.integers(1, 40)),
        rob_entries=draw(st.integers(1, 1024)), simd_width_bits=64 * draw(st.integers(1, 16)),
        fma_units=fma, matrix_flop_per_cycle=draw(st.dictionaries(st.sampled_from(["bf16", "int8"]),
                                                                  st.integers(1, 4096))),
        load_ports=draw(st.integers(1, 4)), max_outstanding_misses=draw(st.integers(1, 64)),
    )


@settings(max_examples=60, deadline=None)
@given(caches())
def test_cache_round_trip(cache: Cache) -> None:
    dump = cache.model_dump(mode="json")
    again = Cache.model_validate(dump)
    assert again == cache and again.model_dump(mode="json") == dump
    assert again.sets * again.ways * again.line_bytes == again.size_bytes


@settings(max_examples=60, deadline=None)
@given(drams())
def test_dram_round_trip(dram: DRAM) -> None:
    dump = dram.model_dump(mode="json")
    again = validate_hardware(dump)  # DRAM kinds dispatch to the DRAM model
    assert again == dram and again.model_dump(mode="json") == dump
    assert again.bandwidth_bytes_per_s <= again.wire_bandwidth_bytes_per_s * 1.01


@settings(max_examples=60, deadline=None)
@given(cores())
def test_core_round_trip_and_peak(core: CPUCore) -> None:
    dump = core.model_dump(mode="json")
    again = CPUCore.model_validate(dump)
    assert again == core and again.model_dump(mode="json") == dump
    # peak FLOP/cycle = lanes x units x 2, lanes = width / 32 for fp32
    assert again.vector_flop_per_cycle("fp32") == (again.simd_width_bits // 32) * again.fma_units["fp32"] * 2


@settings(max_examples=100, deadline=None)
@given(st.floats(1e-15, 1e20, allow_nan=False), st.sampled_from(["bandwidth", "size", "time", "frequency",
                                                                   "energy_per_byte", "flop_rate", "power"]))
def test_format_parse_relative_error(value: float, dimension: str) -> None:
    # format_si keeps 3 significant digits: the parsed value is within 0.5% of the original
    back = parse(format_si(value, dimension), dimension)
    assert math.isclose(back, value, rel_tol=5e-3)
