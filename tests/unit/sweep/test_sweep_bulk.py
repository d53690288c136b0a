"""The sweep's bulk helpers against their one-value forms: _ByValue.many, the chunk builder's column
codes and PointBuilder.assemble_all."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import archsim
from archsim.sweep import _ByValue
from archsim.sweep.columns import _codes, _value_key
from archsim.sweep.points import PointBuilder

_values = st.one_of(st.integers(-3, 3), st.floats(-2.0, 2.0), st.sampled_from([0.0, -0.0, 1, 1.0, True, "1", "a"]))


@settings(max_examples=200, deadline=None)
@given(st.lists(_values, max_size=30), st.data())
def test_many_is_each_call(levels: list[Any], data: Any) -> None:
    # a column repeats its level objects, as a grid's points do
    column = [levels[data.draw(st.integers(0, len(levels) - 1))] for _ in range(20)] if levels else []
    calls: list[Any] = []
    one = _ByValue(lambda v: calls.append(v) or repr((type(v), v)))
    bulk = _ByValue(lambda v: repr((type(v), v)))
    assert bulk.many(iter(column)) == [one(v) for v in column]
    assert bulk.many(column[::-1]) == [one(v) for v in column[::-1]]


@settings(max_examples=200, deadline=None)
@given(st.lists(_values, max_size=40))
def test_codes_are_first_appearance_numbers_of_value_keys(column: list[Any]) -> None:
    seen: dict[Any, int] = {}
    want = [seen.setdefault(_value_key(v), len(seen)) for v in column]
    got = _codes(column, len(column))
    assert got.dtype == np.int64 and got.tolist() == want


def test_assemble_all_is_each_assemble() -> None:
    builder = PointBuilder(archsim.load_preset("gpu/h100-sxm5-80gb").model_dump())
    base = builder.base
    changes: list[Any] = [{"sm_count": s} for s in (1, 66, 132, 10_000)]
    changes.insert(2, None)
    bulk = builder.assemble_all(type(base), base, changes)
    for change, got in zip(changes, bulk, strict=True):
        if change is None:
            assert got is None
            continue
        one = builder.assemble(type(base), base, change)
        assert (got is None) == (one is None)
        if one is not None:
            assert got == one and got.__pydantic_fields_set__ == one.__pydantic_fields_set__
            assert got.__pydantic_fields_set__ is not one.__pydantic_fields_set__
