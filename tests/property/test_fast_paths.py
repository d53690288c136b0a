"""Fast paths agree with the slow paths they replace (hypothesis)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from archsim import units
from archsim.cost.kernels import _unique_rows
from archsim.errors import SchemaError, UnitError

_TABLES = st.integers(1, 6).flatmap(lambda cols: st.lists(
    st.lists(st.sampled_from([0.0, 1.0, 2.0, 0.5, 48.0 * 1024, 1e9]), min_size=cols, max_size=cols),
    min_size=1, max_size=40))


@settings(max_examples=200, deadline=None)
@given(_TABLES)
def test_unique_rows_is_numpy_unique_axis0(rows: list[list[float]]) -> None:
    # The occupancy table's dedup must give numpy's rows, order and inverse exactly.
    table = np.asarray(rows, dtype=np.float64)
    keys, inverse = np.unique(table, axis=0, return_inverse=True)
    got_keys, got_inverse = _unique_rows(table)
    assert np.array_equal(got_keys, keys)
    assert np.array_equal(got_inverse, np.ravel(inverse))
    assert np.array_equal(got_keys[got_inverse], table)


def _pint_si(text: str, dimension: str) -> float:
    """The slow path: pint's parse and conversion to the dimension's SI unit."""
    dim = units.DIMENSIONS[dimension]
    return float(units.ureg.Quantity(text).to(dim.si_unit).magnitude)


_DIMS = st.sampled_from(sorted(units.DIMENSIONS))
_FLOATS = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e30, max_value=1e30)


@settings(max_examples=300, deadline=None)
@given(_DIMS, _FLOATS)
def test_canonical_si_strings_parse_as_pint_does(dimension: str, value: float) -> None:
    # What model_dump writes: repr of the SI float and the dimension's symbol. The fast path must
    # return pint's float to the last bit.
    text = f"{value!r} {units.DIMENSIONS[dimension].symbol}"
    fast = units._canonical_si(text, units.DIMENSIONS[dimension])
    assert fast is not None
    assert fast == _pint_si(text, dimension)
    assert units.parse(text, dimension) == fast


@settings(max_examples=100, deadline=None)
@given(_DIMS, _DIMS, st.floats(min_value=0.0, max_value=1e15))
def test_other_dimensions_symbols_are_still_rejected(dimension: str, other: str, value: float) -> None:
    # The fast path takes only the field's own symbol: "3.0 Hz" for a bandwidth still fails pint's
    # dimension check with the same error type.
    text = f"{value!r} {units.DIMENSIONS[other].symbol}"
    if units.DIMENSIONS[other].si_unit == units.DIMENSIONS[dimension].si_unit:
        return
    assert units._canonical_si(text, units.DIMENSIONS[dimension]) is None
    with pytest.raises(UnitError):
        units.parse(text, dimension)


@pytest.mark.parametrize("text", ["inf B/s", "-inf B/s", "nan B/s", "1e999 B/s", "3.0  B/s", "3.0 B/s/s",
                                  "3.0", "3.0 TB/s", "0x10 B/s", "3,0 B/s"])
def test_non_canonical_strings_take_pint_path(text: str) -> None:
    assert units._canonical_si(text, units.DIMENSIONS["bandwidth"]) is None


@pytest.mark.parametrize("text", ["inf B/s", "nan B/s", "1e999 B/s", "3.0 B/s/s", "3.0", "3.0 Hz"])
def test_rejected_strings_still_rejected(text: str) -> None:
    with pytest.raises(UnitError):
        units.parse(text, "bandwidth")


def _leaves(node: Any, at: tuple[Any, ...] = ()) -> list[tuple[tuple[Any, ...], Any]]:
    """(dump path, value) of every leaf of a dump, sources and names left out."""
    if isinstance(node, dict):
        return [leaf for k, v in node.items() if k not in ("sources", "name")
                for leaf in _leaves(v, (*at, k))]
    if isinstance(node, list):
        return [leaf for i, v in enumerate(node) for leaf in _leaves(v, (*at, i))]
    return [(at, node)]


def _perturbed(value: Any, factor: float, flip: bool) -> Any:
    """A leaf value moved by ``factor``: numbers with units scaled (0 and negative included, so
    range and cross-field rules fail too), counts scaled and rounded, flags flipped."""
    if isinstance(value, bool):
        return (not value) if flip else value
    if isinstance(value, int):
        return int(round(value * factor))
    if isinstance(value, float):
        return value * factor
    if isinstance(value, str) and " " in value:
        number, _, symbol = value.partition(" ")
        try:
            return f"{float(number) * factor!r} {symbol}"
        except ValueError:
            return value
    return value


_PRESETS = ["gpu/h100-sxm5-80gb", "gpu/v100-sxm2-16gb", "cpu/epyc-genoa-2vcpu", "system/dgx-a100"]
_BUILDERS: dict[str, Any] = {}


def _builder(preset: str) -> Any:
    from archsim.presets import load_preset
    from archsim.sweep.points import PointBuilder

    if preset not in _BUILDERS:
        _BUILDERS[preset] = PointBuilder(load_preset(preset).model_dump())
    return _BUILDERS[preset]


@settings(max_examples=250, deadline=None)
@given(st.sampled_from(_PRESETS), st.data())
def test_point_builder_is_whole_dump_validation(preset: str, data: Any) -> None:
    # A point built from the validated base equals validate_hardware of its whole dump; a point
    # the whole-dump validation rejects is rejected with the same error type and message.
    from archsim.presets import validate_hardware
    from archsim.sweep.evaluate import apply_overrides

    builder = _builder(preset)
    leaves = _leaves(builder.base_dump)
    picks = data.draw(st.lists(st.sampled_from(range(len(leaves))), min_size=1, max_size=3, unique=True))
    overrides = []
    for i in picks:
        path, value = leaves[i]
        factor = data.draw(st.sampled_from([0.0, 0.5, 0.999, 1.0, 1.5, 2.0, 64.0, -1.0]))
        overrides.append((path, _perturbed(value, factor, data.draw(st.booleans()))))
    try:
        slow = validate_hardware(apply_overrides(builder.base_dump, overrides), builder.where)
    except SchemaError as exc:
        with pytest.raises(SchemaError) as fast_exc:
            builder.build(overrides)
        assert str(fast_exc.value) == str(exc)
        return
    fast = builder.build(overrides)
    assert type(fast) is type(slow)
    assert fast == slow
    assert fast.model_dump() == slow.model_dump()
