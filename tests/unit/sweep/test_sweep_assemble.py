"""PointBuilder.assemble_columns (the chunk builder's tables of all combinations at once) against
assemble_each of the same entries: the same models, the same rejections; rules that read no changed
field are not run again."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import archsim
from archsim.errors import SchemaError
from archsim.hardware.base import reads
from archsim.presets import validate_hardware
from archsim.sweep.points import PointBuilder

_BUILDER = PointBuilder(archsim.load_preset("gpu/h100-sxm5-80gb").model_dump())
_BASE = _BUILDER.base
_SMALL_L2 = _BASE.l2.model_copy(update={"size": "128 KiB"})  # below the L1: GPUDevice rejects it

# Validated values of GPUDevice fields, some of which break its cross-field rule.
_VALUES: dict[str, list[Any]] = {
    "sm_count": [1, 66, 132],
    "static_power_w": [50.0, 1e6],  # 1e6 W exceeds the TDP
    "tdp_w": [700.0, 10.0],  # 10 W is below the static power
    "node_nm": [4.0, 5.0],  # 5 nm differs from energy.node_nm
    "sector_bytes": [32, 48],  # 128-byte L2 lines are not a multiple of 48
    "dram": [_BASE.dram, _BASE.dram.model_copy(update={"bandwidth": "1 TB/s"})],
    "l2": [_BASE.l2, _SMALL_L2],
}


@st.composite
def _entries(draw: Any) -> tuple[list[str], list[list[Any]], list[bool]]:
    names = draw(st.lists(st.sampled_from(sorted(_VALUES)), min_size=1, max_size=4))  # a repeated name: the later wins
    n = draw(st.integers(0, 12))
    columns = [[draw(st.sampled_from(_VALUES[name])) for _ in range(n)] for name in names]
    skip = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    return names, columns, skip


def _same(got: Any, want: Any) -> None:
    assert (got is None) == (want is None)
    if want is not None:
        assert type(got) is type(want) and got == want and got.__dict__ == want.__dict__
        assert got.__pydantic_fields_set__ == want.__pydantic_fields_set__
        assert got.__pydantic_extra__ is None and got.__pydantic_private__ is None


@settings(max_examples=300, deadline=None)
@given(_entries())
def test_assemble_columns_is_assemble_each(entries: tuple[list[str], list[list[Any]], list[bool]]) -> None:
    names, columns, skip = entries
    cls = type(_BASE)
    updates = [None if s else list(zip(names, [c[i] for c in columns], strict=True)) for i, s in enumerate(skip)]
    want = _BUILDER.assemble_each(cls, _BASE, updates, len(skip))
    got = _BUILDER.assemble_columns(cls, _BASE, names, columns, skip)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        _same(g, w)
    # one new set for the call's models: not the base's, nor the template's a later call starts from
    sets = [g.__pydantic_fields_set__ for g in got if g is not None]
    assert len({id(s) for s in sets}) <= 1 and all(s is not _BASE.__pydantic_fields_set__ for s in sets)
    again = _BUILDER.assemble_columns(cls, _BASE, names, columns, skip)
    assert all(a.__pydantic_fields_set__ is not s for a in again if a is not None for s in sets)


def test_assemble_columns_rejects_what_the_whole_dump_rejects() -> None:
    got = _BUILDER.assemble_columns(type(_BASE), _BASE, ["sm_count", "l2"], [[66, 66], [_BASE.l2, _SMALL_L2]],
                                    [False, False])
    assert got[0] is not None and got[0].sm_count == 66 and got[1] is None
    with pytest.raises(SchemaError, match="l2.size must be larger than sm.l1.size"):
        validate_hardware({**_BASE.model_dump(), "l2": _SMALL_L2.model_dump()})


def test_rules_reading_no_changed_field_are_not_run_again(monkeypatch: pytest.MonkeyPatch) -> None:
    builder = PointBuilder(_BASE.model_dump())
    cls = type(_BASE)
    calls: list[Any] = []

    @reads("static_power_w")
    def counted(self: Any) -> Any:
        calls.append(self)
        return self

    names, fields, validator, after, declared = builder.plan(cls)
    monkeypatch.setitem(builder._plans, cls, (names, fields, validator, [*after, counted],
                                              (*declared, frozenset({"static_power_w"}))))
    got = builder.assemble_columns(cls, _BASE, ["sm_count"], [[1, 2, 3]], [False] * 3)
    assert [g.sm_count for g in got] == [1, 2, 3] and calls == []
    got = builder.assemble_columns(cls, _BASE, ["sm_count", "static_power_w"], [[1, 2], [60.0, 61.0]],
                                   [False, True])
    assert calls == [got[0]] and got[1] is None


def test_models_sharing_a_fields_set_stay_apart_through_copies_and_assignments() -> None:
    cls = type(_BASE)
    got = _BUILDER.assemble_columns(cls, _BASE, ["sm_count"], [[1, 2, 3]], [False] * 3)
    shared = got[0].__pydantic_fields_set__
    before = set(shared)
    copies = [got[0].model_copy(), got[0].model_copy(update={"sm_count": 7}), got[1].model_copy(deep=True)]
    with pytest.raises(Exception, match="frozen"):
        got[2].sm_count = 9
    assert all(c.__pydantic_fields_set__ is not shared for c in copies)
    assert shared == before and all(g.__pydantic_fields_set__ is shared for g in got)
    assert [g.sm_count for g in got] == [1, 2, 3] and copies[1].sm_count == 7
