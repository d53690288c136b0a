"""Chunks built and reported as columns: ChunkBuilder's points, ChunkRows' frames."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from archsim.errors import SchemaError
from archsim.presets import load_preset, validate_hardware
from archsim.sweep.columns import ChunkBuilder
from archsim.sweep.points import PointBuilder, apply_overrides
from archsim.sweep.rows import ChunkRows, RowsBuilder, rows_frame


@pytest.fixture(scope="module")
def v100():
    return load_preset("gpu/v100-sxm2-16gb")


def _grid(bandwidths, sm_counts):
    return [[(("dram", "bandwidth"), b), (("sm_count",), s)] for b in bandwidths for s in sm_counts]


def test_grid_points_share_tables_per_distinct_value_and_equal_whole_dumps(v100, monkeypatch):
    # 2 bandwidths x 3 SM counts: two DRAM tables (one per bandwidth, shared by its three points),
    # six roots, no point through the one-by-one path; each equals its whole-dump validation.
    builder = PointBuilder(v100.model_dump())
    points = _grid(["600000000000.0 B/s", "700000000000.0 B/s"], [40, 60, 80])
    monkeypatch.setattr(builder, "build", lambda overrides: pytest.fail("built point by point"))
    got = ChunkBuilder(builder).build(points)
    assert len({id(hw.dram) for hw in got}) == 2 and got[0].dram is got[2].dram
    assert [hw.sm_count for hw in got] == [40, 60, 80] * 2
    assert all(hw.sm is builder.base.sm and hw.l2 is builder.base.l2 for hw in got)  # untouched: the base's
    for overrides, hw in zip(points, got, strict=True):
        assert hw == validate_hardware(apply_overrides(v100.model_dump(), overrides), "point")


def test_invalid_combinations_report_the_whole_dump_error(v100):
    # 5,000,000 B is no multiple of 16 ways x 128 B lines (a field of its own table's rule);
    # 100 kW static power breaks the root's rule: both points get validate_hardware's message,
    # their valid neighbours are built.
    points = [[(("l2", "size"), size), (("static_power",), power)]
              for size in ("6291456.0 B", "5000000.0 B") for power in ("50.0 W", "100000.0 W")]
    got = ChunkBuilder(PointBuilder(v100.model_dump(), "point")).build(points)
    for overrides, hw in zip(points, got, strict=True):
        try:
            want = validate_hardware(apply_overrides(v100.model_dump(), overrides), "point")
        except SchemaError as exc:
            assert isinstance(hw, SchemaError) and str(hw) == str(exc)
        else:
            assert hw == want
    assert [isinstance(hw, SchemaError) for hw in got] == [False, True, True, True]


def test_values_equal_but_of_another_type_or_sign_are_checked_apart():
    from archsim.sweep.columns import _value_key

    assert _value_key(1) != _value_key(1.0) != _value_key(True)
    assert _value_key(0.0) != _value_key(-0.0) and _value_key(2.5) == _value_key(2.5)
    with pytest.raises(TypeError):
        _value_key({"size": "6 MiB"})


def test_structures_outside_the_column_path_go_point_by_point(v100):
    # A whole table replaced (an unhashable dict), the kind, no overrides: the PointBuilder's result.
    builder = PointBuilder(v100.model_dump(), "point")
    dram = {**builder.base_dump["dram"], "bandwidth": "700000000000.0 B/s"}
    points = [[(("dram",), dram)], [(("dram",), dram)], [(("kind",), "cpu")], [(("kind",), "cpu")], [], []]
    got = ChunkBuilder(builder).build(points)
    assert got[0] == got[1] == validate_hardware({**builder.base_dump, "dram": dram})
    assert isinstance(got[2], SchemaError) and isinstance(got[3], SchemaError)
    assert got[4] is builder.base and got[5] is builder.base


def _rows():
    out = RowsBuilder(["a", "b", "c", "d"])
    out.failed(0, "invalid", "l2: size 5000000 B is not divisible")
    out.ok([3, 1], {"latency_s": [3.0, 1.0], "energy_j": np.array([30.0, np.nan])})
    out.ok([2], {"energy_dram_j": [0.5], "latency_s": [2.0]})
    return out.result()


def test_chunk_rows_read_as_their_dicts_and_frame_as_them():
    rows = _rows()
    dicts = [{"key": "a", "status": "invalid", "error": "l2: size 5000000 B is not divisible"},
             {"key": "b", "status": "ok", "error": None, "latency_s": 1.0, "energy_j": np.nan},
             {"key": "c", "status": "ok", "error": None, "latency_s": 2.0, "energy_dram_j": 0.5},
             {"key": "d", "status": "ok", "error": None, "latency_s": 3.0, "energy_j": 30.0}]
    assert len(rows) == 4 and rows[-1] == dicts[3] and list(rows[1]) == list(dicts[1])
    assert np.isnan(rows[1]["energy_j"]) and "energy_j" not in rows[2]
    assert [r["key"] for r in rows] == ["a", "b", "c", "d"]
    assert list(rows.metrics) == ["latency_s", "energy_j", "energy_dram_j"]  # order of first appearance
    fast, slow = rows.frame(), rows_frame(dicts)
    pd.testing.assert_frame_equal(fast, slow, check_exact=True)
    assert fast.equals(slow) and list(fast.columns) == list(slow.columns)
    assert list(fast["error"]) == ["l2: size 5000000 B is not divisible", None, None, None]
    with pytest.raises(IndexError):
        rows[4]


def test_chunk_rows_refuse_ragged_columns_and_unset_rows():
    with pytest.raises(ValueError):
        ChunkRows(["a"], ["ok"], [None], {"latency_s": np.zeros(2)}, {"latency_s": np.ones(2, bool)})
    out = RowsBuilder(["a", "b"])
    out.ok([0], {"latency_s": [1.0]})
    with pytest.raises(ValueError):
        out.result()
