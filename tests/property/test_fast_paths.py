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


_FACTORS = st.sampled_from([0.0, 0.5, 0.999, 1.0, 1.5, 2.0, 64.0, -1.0])
"""Factors a leaf is moved by: 0 and negative included, so range and cross-field rules fail too."""


def _whole_dump(builder: Any, overrides: list) -> Any:
    """The reference for a point: ``validate_hardware`` of the base dump with ``overrides`` applied,
    or the SchemaError it raises."""
    from archsim.presets import validate_hardware
    from archsim.sweep.evaluate import apply_overrides

    try:
        return validate_hardware(apply_overrides(builder.base_dump, overrides), builder.where)
    except SchemaError as exc:
        return exc


def _assert_same_model(fast: Any, slow: Any) -> None:
    assert type(fast) is type(slow)
    assert fast == slow
    assert fast.model_dump() == slow.model_dump()


def _drawn_leaves(builder: Any, data: Any) -> list[tuple[Any, Any]]:
    """One to three distinct (path, value) leaves of the builder's base dump, drawn."""
    leaves = _leaves(builder.base_dump)
    picks = data.draw(st.lists(st.sampled_from(range(len(leaves))), min_size=1, max_size=3, unique=True))
    return [leaves[i] for i in picks]


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
    builder = _builder(preset)
    overrides = []
    for path, value in _drawn_leaves(builder, data):
        overrides.append((path, _perturbed(value, data.draw(_FACTORS), data.draw(st.booleans()))))
    slow = _whole_dump(builder, overrides)
    if isinstance(slow, SchemaError):
        with pytest.raises(SchemaError) as fast_exc:
            builder.build(overrides)
        assert str(fast_exc.value) == str(slow)
        return
    _assert_same_model(builder.build(overrides), slow)


_PREFIXED_NUMBERS = st.one_of(
    st.floats(min_value=0.0, max_value=1e12, allow_nan=False).map(repr),
    st.integers(0, 10**24).map(str),
    st.tuples(st.floats(min_value=0.0, max_value=1e4), st.integers(0, 9)).map(lambda t: f"{t[0]:.{t[1]}f}"),
    st.floats(min_value=0.0, max_value=1e6).map(lambda v: f"{v:.4e}"),
)


@settings(max_examples=400, deadline=None)
@given(_DIMS, st.sampled_from(sorted(units._PREFIX_FACTORS)), st.data(), _PREFIXED_NUMBERS)
def test_prefixed_strings_parse_as_pint_does(dimension: str, prefix: str, data: Any, number: str) -> None:
    # "3.35 TB/s", "96 KiB", "3.9 pJ/bit": the table lookup must give pint's float to the last bit.
    symbol = data.draw(st.sampled_from(sorted(units._SYMBOL_FACTORS[dimension])))
    text = f"{number} {prefix}{symbol}"
    fast = units._prefixed_si(text, units.DIMENSIONS[dimension])
    slow = _pint_si(text, dimension)
    assert fast == slow or (fast is None and not np.isfinite(slow))


def test_every_preset_string_parses_as_pint_does() -> None:
    # Every dimensioned string the shipped presets hold, through both paths.
    import tomllib

    from archsim.presets import models_dir

    def strings(node: Any) -> list[str]:
        if isinstance(node, dict):
            return [s for v in node.values() for s in strings(v)]
        if isinstance(node, list):
            return [s for v in node for s in strings(v)]
        return [node] if isinstance(node, str) and " " in node else []

    checked = 0
    for path in models_dir().rglob("*.toml"):
        for text in strings(tomllib.loads(path.read_text())):
            for dimension, dim in units.DIMENSIONS.items():
                fast = units._prefixed_si(text, dim)
                if fast is not None:
                    assert fast == _pint_si(text, dimension), (path.name, text)
                    checked += 1
    assert checked > 500  # the presets' numbers with units (986 at the time of writing)


@pytest.mark.parametrize("text", ["3.35 TB / s", "3.35TB/s", "-1 GB/s", "3 GB/s/s", "1 Gb/s", "3 kiB/s",
                                  "2 min", "1e999 TB/s", "nan GB/s", "1 GBps", "1_000 B/s"])
def test_other_forms_take_pint_path(text: str) -> None:
    assert units._prefixed_si(text, units.DIMENSIONS["bandwidth"]) is None
    assert units._prefixed_si(text, units.DIMENSIONS["time"]) is None


def test_loading_presets_does_not_import_pint() -> None:
    # pint (and the dask probe it runs) is imported only for a string off the fast paths.
    import subprocess
    import sys
    from pathlib import Path

    code = ("import sys, archsim\n"
            "for p in archsim.list_presets(): archsim.load_preset(p)\n"
            "print('pint' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**__import__("os").environ, "PYTHONPATH": str(Path(units.__file__).parents[1])})
    assert out.stdout.strip() == "False"


@settings(max_examples=120, deadline=None)
@given(st.sampled_from(_PRESETS), st.data())
def test_chunk_builder_is_whole_dump_validation_point_by_point(preset: str, data: Any) -> None:
    # A chunk of points overriding the same leaves (columns), values repeated across points: each
    # point built together equals validate_hardware of its whole dump, or fails with its error type
    # and message (the column path's shared tables and per-value checks change nothing).
    from archsim.sweep.columns import ChunkBuilder

    builder = _builder(preset)
    picked = _drawn_leaves(builder, data)
    levels = [[_perturbed(value, data.draw(_FACTORS), data.draw(st.booleans())) for _ in range(3)]
              for _path, value in picked]
    n = data.draw(st.integers(1, 8))
    paths = [path for path, _value in picked]
    points = [[(path, column[data.draw(st.integers(0, 2))]) for path, column in zip(paths, levels, strict=True)]
              for _ in range(n)]
    got = ChunkBuilder(builder).build(points)
    assert len(got) == n
    for overrides, fast in zip(points, got, strict=True):
        slow = _whole_dump(builder, overrides)
        if isinstance(slow, SchemaError):
            assert isinstance(fast, SchemaError) and str(fast) == str(slow)
            continue
        _assert_same_model(fast, slow)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(["gpu/h100-sxm5-80gb", "gpu/v100-sxm2-16gb", "gpu/a100-sxm4-40gb", "gpu/t4"]), st.data())
def test_gpu_rows_together_are_each_device_row(preset: str, data: Any) -> None:
    # Rows packed together (parts shared between devices converted once) are, to the bit, each
    # device's own row list converted on its own.
    from archsim.cost import params

    builder = _builder(preset)
    leaves = [leaf for leaf in _leaves(builder.base_dump) if isinstance(leaf[1], int | float | str)]
    devices = [builder.base]
    for _ in range(data.draw(st.integers(1, 6))):
        path, value = leaves[data.draw(st.integers(0, len(leaves) - 1))]
        try:
            devices.append(builder.build([(path, _perturbed(value, data.draw(st.sampled_from([0.5, 1.0, 2.0])),
                                                            False))]))
        except SchemaError:
            continue
    devices = [devices[data.draw(st.integers(0, len(devices) - 1))] for _ in range(len(devices) + 1)]
    together = params._gpu_rows(devices, {})
    alone = np.stack([np.asarray(params._gpu_row(g), dtype=np.float64) for g in devices])
    assert together.dtype == alone.dtype and together.tobytes() == alone.tobytes()
