"""Units at the boundary: parsing, formatting, SI vs binary prefixes, rejected inputs."""

from __future__ import annotations

import pytest

from archsim.errors import UnitError
from archsim.units import format_si, parse, to_si, ureg


@pytest.mark.parametrize(("text", "dimension", "si"), [
    ("3.35 TB/s", "bandwidth", 3.35e12),
    ("1.98 GHz", "frequency", 1.98e9),
    ("50 MiB", "size", 50 * 2**20),
    ("50 MB", "size", 50e6),
    ("1 GB", "size", 1e9),
    ("1 GiB", "size", 2**30),
    ("4 us", "time", 4e-6),
    ("1.3 nJ", "energy", 1.3e-9),
    ("700 W", "power", 700.0),
    ("3.9 pJ/bit", "energy_per_byte", 3.9e-12 * 8),   # 8 bits per byte
    ("2.5 pJ/B", "energy_per_byte", 2.5e-12),
    ("0.9 pJ/FLOP", "energy_per_flop", 0.9e-12),
    ("989.4 TFLOP/s", "flop_rate", 989.4e12),
    ("628.23 MB/s", "bandwidth", 628.23e6),
    ("  1530 MHz ", "frequency", 1.53e9),
])
def test_parse(text: str, dimension: str, si: float) -> None:
    assert parse(text, dimension) == pytest.approx(si)


def test_gb_is_not_gib() -> None:
    assert parse("1 GiB", "size") / parse("1 GB", "size") == pytest.approx(2**30 / 1e9)


@pytest.mark.parametrize("value", [3.35, 3, "3.35", True])
def test_bare_numbers_rejected(value) -> None:
    with pytest.raises(UnitError, match="field 'bandwidth'"):
        parse(value, "bandwidth", "bandwidth")


@pytest.mark.parametrize(("text", "dimension"), [
    ("3 GHz", "bandwidth"),   # frequency is not a bandwidth (bit is not dimensionless here)
    ("3 Gbit", "frequency"),
    ("4 pJ", "energy_per_byte"),
    ("1 TFLOP", "flop_rate"),
    ("5 s", "size"),
])
def test_wrong_dimension_rejected(text: str, dimension: str) -> None:
    with pytest.raises(UnitError, match=f"not a {dimension}"):
        parse(text, dimension)


@pytest.mark.parametrize("text", ["3 parsecs/s", "fast", "1 GHz GHz x"])
def test_unparseable_rejected(text: str) -> None:
    with pytest.raises(UnitError):
        parse(text, "bandwidth")


def test_unknown_dimension() -> None:
    with pytest.raises(UnitError, match="unknown dimension"):
        parse("1 s", "duration")


def test_not_finite() -> None:
    with pytest.raises(UnitError, match="finite"):
        parse("inf GB/s", "bandwidth")


def test_pint_quantity_accepted() -> None:
    assert parse(ureg.Quantity(2, "GB/s"), "bandwidth") == pytest.approx(2e9)
    with pytest.raises(UnitError):
        parse(ureg.Quantity(2, "GHz"), "bandwidth")


def test_to_si_accepts_floats() -> None:
    assert to_si(5.0, "time") == 5.0
    assert to_si("5 ms", "time") == pytest.approx(5e-3)


@pytest.mark.parametrize(("value", "dimension", "text"), [
    (3.35e12, "bandwidth", "3.35 TB/s"),
    (1.98e9, "frequency", "1.98 GHz"),
    (50 * 2**20, "size", "50 MiB"),
    (50e6, "size", "50 MB"),
    (4e-6, "time", "4 us"),
    (3.9e-12 * 8, "energy_per_byte", "3.9 pJ/bit"),
    (989.4e12, "flop_rate", "989 TFLOP/s"),
    (0.0, "power", "0 W"),
])
def test_format_si(value: float, dimension: str, text: str) -> None:
    assert format_si(value, dimension) == text


@pytest.mark.parametrize(("text", "dimension"), [("3.35 TB/s", "bandwidth"), ("48 KiB", "size"), ("3.9 pJ/bit",
                                                 "energy_per_byte"), ("4 us", "time")])
def test_format_then_parse_is_close(text: str, dimension: str) -> None:
    value = parse(text, dimension)
    assert parse(format_si(value, dimension), dimension) == pytest.approx(value, rel=1e-3)
