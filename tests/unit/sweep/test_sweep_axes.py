"""Axis parsing: paths, units, ranges, errors that name the axis and list the valid paths."""

from __future__ import annotations

import pytest

from archsim.errors import SweepError
from archsim.presets import load_preset
from archsim.sweep.axes import parse_axes, valid_paths


@pytest.fixture(scope="module")
def v100():
    return load_preset("gpu/v100-sxm2-16gb")


def test_paths_with_and_without_kind_prefix(v100):
    a, b = parse_axes(v100, {"gpu.dram.bandwidth": ["1 TB/s"], "sm_count": [40]})
    assert a.path == ("dram", "bandwidth") and a.dimension == "bandwidth"
    assert a.column == "gpu.dram.bandwidth_bytes_per_s"
    assert a.levels == (1e12,)
    assert b.path == ("sm_count",) and b.kind == "int" and b.column == "sm_count"


def test_same_field_twice_is_an_error(v100):
    with pytest.raises(SweepError, match="name the same field"):
        parse_axes(v100, {"gpu.sm_count": [40], "sm_count": [80]})


def test_units_are_parsed_with_the_field_dimension(v100):
    (size,) = parse_axes(v100, {"gpu.l2.size": ["4 MiB", "6 MiB"]})
    # 4 MiB = 4 x 2^20 B = 4194304 B
    assert size.levels == (4194304.0, 6291456.0) and size.column == "gpu.l2.size_bytes"
    (energy,) = parse_axes(v100, {"gpu.energy.vector_flop.fp16": ["1 pJ/FLOP"]})
    assert energy.dimension == "energy_per_flop" and energy.levels == pytest.approx((1e-12,))
    (clock,) = parse_axes(v100, {"gpu.clock": ["1 GHz"]})
    assert clock.column == "gpu.clock_hz"


def test_unitless_value_for_dimensioned_field_names_the_axis(v100):
    with pytest.raises(SweepError, match=r"axis 'gpu.dram.bandwidth'.*no unit"):
        parse_axes(v100, {"gpu.dram.bandwidth": [900e9]})
    with pytest.raises(SweepError, match=r"axis 'gpu.l2.size'.*not a size"):
        parse_axes(v100, {"gpu.l2.size": ["1 TB/s"]})


def test_unknown_path_lists_valid_paths(v100):
    with pytest.raises(SweepError) as info:
        parse_axes(v100, {"gpu.dram.bandwith": ["1 TB/s"]})
    text = str(info.value)
    assert "did you mean 'dram.bandwidth'" in text
    assert "sm_count" in text and "l2.size" in text and "valid paths" in text


def test_valid_paths_skip_names_sources_and_kind_tags(v100):
    paths = valid_paths(v100)
    assert "dram.bandwidth" in paths and "sm.l1.size" in paths and "dram.kind" in paths
    assert "tensor_core.flop_per_cycle_per_sm.fp16" in paths
    assert not any(p.endswith(".name") or p == "kind" or "sources" in p for p in paths)


def test_log_range_and_integer_rounding(v100):
    (bw,) = parse_axes(v100, {"gpu.dram.bandwidth": {"from": "100 GB/s", "to": "900 GB/s", "num": 3,
                                                      "scale": "log"}})
    # geometric: 100, sqrt(100 x 900) = 300, 900 GB/s
    assert bw.levels == pytest.approx((1e11, 3e11, 9e11))
    (sm,) = parse_axes(v100, {"sm_count": {"from": 1, "to": 4, "num": 5, "scale": "log"}})
    # 4^(i/4): 1, 1.41, 2, 2.83, 4 -> rounded 1, 1, 2, 3, 4 -> each level once
    assert sm.levels == (1, 2, 3, 4)


@pytest.mark.parametrize("spec, message", [
    ({"from": "1 TB/s"}, "needs 'from' and 'to'"),
    ({"from": "2 TB/s", "to": "1 TB/s", "num": 3}, "must be below"),
    ({"from": "1 TB/s", "to": "2 TB/s", "num": 1}, "'num' must be an integer >= 2"),
    ({"from": "1 TB/s", "to": "2 TB/s", "scale": "cubic"}, "scale 'cubic'"),
    ([], "non-empty list"),
    (["1 TB/s", "1000 GB/s"], "repeated values"),
])
def test_bad_values(v100, spec, message):
    with pytest.raises(SweepError, match=message):
        parse_axes(v100, {"gpu.dram.bandwidth": spec})


def test_counts_and_choices(v100):
    with pytest.raises(SweepError, match="not an integer"):
        parse_axes(v100, {"sm_count": [40.5]})
    with pytest.raises(SweepError, match=r"'ddr9' is not allowed; allowed: .*'hbm3'"):
        parse_axes(v100, {"dram.kind": ["ddr9"]})
    with pytest.raises(SweepError, match="range needs a numeric field"):
        parse_axes(v100, {"dram.kind": {"from": 1, "to": 2}})


def test_list_entries_by_position(v100):
    (lanes,) = parse_axes(v100, {"gpu.sm.fma_lanes.fp16": [64, 128]})
    assert lanes.path == ("sm", "fma_lanes", "fp16") and lanes.kind == "int"


def test_workload_axes(v100):
    batch, dtype = parse_axes(v100, {"workload.batch": [1, 8], "workload.dtype": ["fp16", "fp32"]})
    assert batch.target == "workload" and batch.path == ("batch",) and batch.column == "workload.batch"
    assert dtype.levels == ("fp16", "fp32")
    with pytest.raises(SweepError, match="batch must be >= 1"):
        parse_axes(v100, {"workload.batch": [0, 1]})
    with pytest.raises(SweepError, match="not an integer"):
        parse_axes(v100, {"workload.batch": ["8"]})


def test_empty_axes(v100):
    with pytest.raises(SweepError, match="non-empty"):
        parse_axes(v100, {})
