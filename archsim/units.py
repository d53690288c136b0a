"""Units at the boundary: parse human strings to SI floats, format SI floats for humans.

One pint registry serves the whole package. pint parses only at the boundary (TOML, constructors,
sweep axes); engines work on plain floats in SI base units (pint arithmetic is ~40x slower). The
strings presets and dumps are made of (a number, one space, an optional prefix and the dimension's
symbol: ``"3.35 TB/s"``, ``"96 KiB"``, ``"3.9 pJ/bit"``) take a table lookup that gives pint's float
to the last bit (``tests/property/test_fast_paths.py``); pint (~0.2 s to import, with the dask
probe it runs) is imported and its registry built the first time any other string is parsed.

Conventions:

* ``GB`` is 10**9 bytes, ``GiB`` is 2**30 bytes (pint's SI and binary prefixes).
* ``flop`` is a unit of its own dimension (pint has none), so ``"989 TFLOP/s"`` parses.
* pint's ``cycle`` is an angle, so cycles are never parsed as a unit: they are plain ints.
* A bare number for a dimensioned field is an error naming the field: ``"3.35"`` is not a bandwidth.

Dimensioned pydantic field types (``Bandwidth``, ``Frequency``, ...) are defined here. They store
the SI float and serialise back to a string in SI base units (``"3350000000000.0 B/s"``), so
``model_dump()`` -> ``model_validate()`` is the identity and a dumped model is still unit-checked.
"""

from __future__ import annotations

import functools
import math
import re
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

from annotated_types import Ge, Le
from pydantic import BeforeValidator, PlainSerializer, ValidationInfo, WithJsonSchema  # noqa: F401

from archsim.errors import UnitError

if TYPE_CHECKING:
    import pint

__all__ = [
    "ureg",  # noqa: F822 - built on first use (module __getattr__)
    "Dimension",
    "DIMENSIONS",
    "parse",
    "to_si",
    "format_si",
    "Bandwidth",
    "Frequency",
    "Size",
    "Time",
    "Energy",
    "Power",
    "EnergyPerByte",
    "EnergyPerFlop",
    "FlopRate",
    "Area",
    "PowerPerArea",
    "EnergyPerArea",
    "EnergyPerByteLength",
]


# archsim's own, small unit system. pint's default file makes ``bit`` dimensionless, which would let
# "3 GHz" pass as a bandwidth; here information, FLOP, energy and time are independent dimensions.
_DEFINITIONS = """
yotta- = 1e24 = Y-
zetta- = 1e21 = Z-
exa- = 1e18 = E-
peta- = 1e15 = P-
tera- = 1e12 = T-
giga- = 1e9 = G-
mega- = 1e6 = M-
kilo- = 1e3 = k- = K-
milli- = 1e-3 = m-
micro- = 1e-6 = u- = µ- = μ-
nano- = 1e-9 = n-
pico- = 1e-12 = p-
femto- = 1e-15 = f-
atto- = 1e-18 = a-
kibi- = 2**10 = Ki-
mebi- = 2**20 = Mi-
gibi- = 2**30 = Gi-
tebi- = 2**40 = Ti-
pebi- = 2**50 = Pi-
exbi- = 2**60 = Ei-
second = [time] = s = sec
minute = 60 * second = min
hour = 60 * minute = h = hr
hertz = 1 / second = Hz
byte = [information] = B = octet = bytes
bit = byte / 8 = b = bits
joule = [energy] = J
watt = joule / second = W
flop = [flop] = FLOP = flops = FLOPs
op = flop = OP = ops = OPs
meter = [length] = m = metre
""".strip().splitlines()


@functools.cache
def _registry() -> pint.UnitRegistry:
    """The package's pint registry, built on first use (``units.ureg``)."""
    import pint

    reg = pint.UnitRegistry(None, on_redefinition="raise", autoconvert_offset_to_baseunit=False)
    for line in _DEFINITIONS:
        reg.define(line)
    return reg


def __getattr__(name: str) -> Any:
    if name == "ureg":  # the registry is public as ``units.ureg``; built when first asked for
        return _registry()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass(frozen=True)
class Dimension:
    """A physical dimension a field may have: its pint unit in SI, a name and an example."""

    name: str
    si_unit: str  # pint expression of the SI unit values are stored in
    symbol: str  # short symbol used when serialising and formatting
    example: str


DIMENSIONS: dict[str, Dimension] = {
    d.name: d
    for d in (
        Dimension("bandwidth", "byte / second", "B/s", "3.35 TB/s"),
        Dimension("frequency", "hertz", "Hz", "1.98 GHz"),
        Dimension("size", "byte", "B", "48 KiB"),
        Dimension("time", "second", "s", "4 us"),
        Dimension("energy", "joule", "J", "1.3 nJ"),
        Dimension("power", "watt", "W", "700 W"),
        Dimension("energy_per_byte", "joule / byte", "J/B", "3.9 pJ/bit"),
        Dimension("energy_per_flop", "joule / flop", "J/FLOP", "0.9 pJ/FLOP"),
        Dimension("flop_rate", "flop / second", "FLOP/s", "989 TFLOP/s"),
        Dimension("area", "meter ** 2", "m^2", "826 mm^2"),
        Dimension("power_per_area", "watt / meter ** 2", "W/m^2", "0.04 W/mm^2"),
        Dimension("energy_per_area", "joule / meter ** 2", "J/m^2", "59 pJ/mm^2"),
        Dimension("energy_per_byte_length", "joule / byte / meter", "J/B/m", "0.121 pJ/bit/mm"),
    )
}


MAX_TEXT = 200
"""Longest unit string parsed, characters: real ones are a number and a unit; longer text (say 2,000
nested parentheses) is refused before pint's recursive parser sees it."""

MAX_SI = 1e30
"""Largest magnitude a dimensioned field accepts, in SI units (10^30 B/s, Hz, J, s...): far above
any machine, far below float overflow, so products of a few fields stay finite."""


_NUMBER_POWER = re.compile(r"[\d.)]\s*(\*\*|\^)")


def _quantity(text: str) -> pint.Quantity:
    # Common shorthands that pint does not know: "B/s" is fine, "Bps" is not; keep input honest.
    return _registry().Quantity(text)


# "<decimal float> <SI symbol>", the form the serialisers below write (``repr`` of a float, then the
# dimension's own symbol): a sweep re-validates such a string per point, and pint's expression
# parser costs ~100 us where ``float`` costs 0.2.
_CANONICAL = re.compile(r"(-?[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?) (\S+)")


def _canonical_si(text: str, dim: Dimension) -> float | None:
    """The value of ``text`` if it is a finite number followed by exactly ``dim``'s SI symbol (whose
    factor to the SI unit is 1, so ``float`` of the number is what pint's parse and ``.to`` give);
    None for anything else, which takes pint's path and its checks."""
    match = _CANONICAL.fullmatch(text)
    if match is None or match.group(2) != dim.symbol:
        return None
    value = float(match.group(1))
    return value if math.isfinite(value) else None


# The prefixes of the registry above with their factors as pint holds them (floats for the decimal
# ones, ints for the binary ones), and per dimension the unit symbols whose own factor to the SI unit
# is exact: "<number> <prefix><symbol>" is then number x (prefix x factor), one product as pint's
# conversion computes it (its factor is the product of the units' scales; scaling by a power of two
# is exact). Anything else, including prefixes on a denominator, takes pint's path.
_PREFIX_FACTORS: dict[str, float | int] = {
    "": 1, "Y": 1e24, "Z": 1e21, "E": 1e18, "P": 1e15, "T": 1e12, "G": 1e9, "M": 1e6, "k": 1e3, "K": 1e3,
    "m": 1e-3, "u": 1e-6, "µ": 1e-6, "μ": 1e-6, "n": 1e-9, "p": 1e-12, "f": 1e-15, "a": 1e-18,
    "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
}
_SYMBOL_FACTORS: dict[str, dict[str, float]] = {
    "bandwidth": {"B/s": 1.0}, "frequency": {"Hz": 1.0}, "size": {"B": 1.0}, "time": {"s": 1.0},
    "energy": {"J": 1.0}, "power": {"W": 1.0}, "energy_per_byte": {"J/B": 1.0, "J/bit": 8.0},
    "energy_per_flop": {"J/FLOP": 1.0}, "flop_rate": {"FLOP/s": 1.0},
    # An area's prefix applies to the length before the power ("826 mm^2" is 826 x (1e-3)^2 m^2,
    # _SYMBOL_POWERS); the densities' prefix applies to the watt or joule, per mm^2 or per bit-mm.
    "area": {"m^2": 1.0}, "power_per_area": {"W/mm^2": 1e6}, "energy_per_area": {"J/mm^2": 1e6},
    "energy_per_byte_length": {"J/bit/mm": 8000.0},
}
_SYMBOL_POWERS: dict[str, int] = {"m^2": 2}
"""Symbols whose prefix is raised to a power (the prefix belongs to the unit inside the power)."""
_PREFIXED = re.compile(r"([0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?) (Ki|Mi|Gi|Ti|Pi|Ei|[YZEPTGMkKmuµμnpfa]?)(\S+)")


def _prefixed_si(text: str, dim: Dimension) -> float | None:
    """The value of ``text`` if it is a non-negative decimal number, one space, an optional prefix
    and one of the dimension's symbols (``"3.35 TB/s"``): pint's float for it; None for anything
    else (pint's path, with its checks and messages)."""
    match = _PREFIXED.fullmatch(text)
    if match is None:
        return None
    number, prefix, symbol = match.groups()
    factor = _SYMBOL_FACTORS[dim.name].get(symbol)
    if factor is None and prefix and prefix + symbol in _SYMBOL_FACTORS[dim.name]:
        # "5 m^2": the regex took the unit's own first letter for a prefix
        prefix, symbol = "", prefix + symbol
        factor = _SYMBOL_FACTORS[dim.name][symbol]
    if factor is None:
        return None
    scale = _PREFIX_FACTORS[prefix] ** _SYMBOL_POWERS.get(symbol, 1)
    value = float(number) * (scale * factor)
    return value if math.isfinite(value) else None


@functools.lru_cache(maxsize=65536)
def _parse_text(text: str, dimension: str) -> float:
    dim = DIMENSIONS[dimension]
    if len(text) > MAX_TEXT:
        raise UnitError(f"{text[:40]!r}... is {len(text)} characters; a {dim.name} is a number and a unit of "
                        f"at most {MAX_TEXT} (e.g. {dim.example!r})")
    fast = _canonical_si(text, dim)
    if fast is None:
        fast = _prefixed_si(text, dim)
    if fast is not None:
        return fast
    import pint
    if _NUMBER_POWER.search(text):
        # pint evaluates integer powers exactly: "9**9**9 B/s" would compute a 370-million-digit int.
        raise UnitError(f"cannot parse {text!r} as a {dim.name}: powers of numbers are not accepted; "
                        f"write the number in e-notation (e.g. '1e9 B/s', {dim.example!r})")
    try:
        q = _quantity(text)
    except Exception as exc:  # noqa: BLE001 - pint's parser raises many types ("1 GB/0s": ZeroDivisionError)
        reason = " ".join(str(exc).split())[:120] or type(exc).__name__
        raise UnitError(f"cannot parse {text!r} as a {dim.name} (e.g. {dim.example!r}): {reason}") from None
    if not isinstance(q, pint.Quantity) or q.dimensionless:
        raise UnitError(
            f"{text!r} has no unit; a {dim.name} needs one (e.g. {dim.example!r})"
        )
    try:
        value = float(q.to(dim.si_unit).magnitude)
    except pint.errors.DimensionalityError:
        raise UnitError(
            f"{text!r} is a {q.dimensionality}, not a {dim.name} (expected units like {dim.example!r})"
        ) from None
    except (TypeError, ValueError, OverflowError, ZeroDivisionError):
        raise UnitError(f"{text!r} is not a number with units (e.g. {dim.example!r})") from None
    if not math.isfinite(value):
        raise UnitError(f"{text!r} is not a finite {dim.name}")
    return value


def parse(value: Any, dimension: str, field: str | None = None) -> float:
    """Parse ``value`` (a string with units or a pint quantity) into an SI float.

    ``dimension`` is a key of :data:`DIMENSIONS`. A bare int/float is rejected: the unit must be
    explicit. ``field`` names the field in the error message.
    """
    if dimension not in DIMENSIONS:
        raise UnitError(f"unknown dimension {dimension!r}; allowed: {sorted(DIMENSIONS)}")
    where = f"field {field!r}: " if field else ""
    dim = DIMENSIONS[dimension]
    if isinstance(value, bool) or isinstance(value, int | float):
        raise UnitError(
            f"{where}bare number {value!r} has no unit; write a {dim.name} with units, e.g. {dim.example!r}"
        )
    pint = sys.modules.get("pint")  # a pint quantity implies pint is imported
    if pint is not None and isinstance(value, pint.Quantity):
        try:
            si = float(value.to(dim.si_unit).magnitude)
        except pint.errors.DimensionalityError:
            raise UnitError(f"{where}{value!r} is not a {dim.name} (e.g. {dim.example!r})") from None
        except (TypeError, ValueError, OverflowError):
            raise UnitError(f"{where}{value!r} is not a number with units (e.g. {dim.example!r})") from None
        if not math.isfinite(si):
            raise UnitError(f"{where}{value!r} is not a finite {dim.name}")
        return si
    if not isinstance(value, str):
        raise UnitError(f"{where}expected a {dim.name} string like {dim.example!r}, got {type(value).__name__}")
    try:
        return _parse_text(value.strip(), dimension)
    except UnitError as exc:
        raise UnitError(f"{where}{exc}") from None


def to_si(value: Any, dimension: str) -> float:
    """Like :func:`parse` but also accepts an SI float as-is (for internal, already-parsed values)."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return parse(value, dimension)


_PREFIXES = [(1e24, "Y"), (1e21, "Z"), (1e18, "E"), (1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"),
             (1e3, "k"), (1.0, ""), (1e-3, "m"), (1e-6, "u"), (1e-9, "n"), (1e-12, "p"), (1e-15, "f")]
_BINARY = [(2.0**50, "Pi"), (2.0**40, "Ti"), (2.0**30, "Gi"), (2.0**20, "Mi"), (2.0**10, "Ki")]


def format_si(value: float, dimension: str, digits: int = 3, binary: bool | None = None) -> str:
    """Format an SI float for humans: ``format_si(3.35e12, "bandwidth") == "3.35 TB/s"``.

    Sizes that are whole multiples of a power of two are shown with binary prefixes (``"50 MiB"``)
    unless ``binary`` says otherwise.
    """
    dim = DIMENSIONS[dimension]
    sym = dim.symbol
    if dimension == "energy_per_byte":
        # pJ/bit is how datasheets state interface energy.
        value, sym = value / 8.0, "J/bit"
    if value == 0 or not math.isfinite(value):
        return f"{value:g} {sym}"
    mag = abs(value)
    use_binary = binary if binary is not None else (
        dimension == "size" and mag >= 1024 and any(mag % f == 0 for f, _ in _BINARY)
    )
    if use_binary:
        for factor, prefix in _BINARY:
            if mag >= factor:
                return f"{value / factor:.{digits}g} {prefix}{sym}"
    for i, (factor, prefix) in enumerate(_PREFIXES):
        if mag >= factor * 0.9999999:
            if i > 0 and float(f"{mag / factor:.{digits}g}") >= 1000:
                # 999.6 mJ rounds to "1e+03 mJ": say "1 J" instead
                factor, prefix = _PREFIXES[i - 1]
            return f"{value / factor:.{digits}g} {prefix}{sym}"
    return f"{value:.{digits}g} {sym}"


def _validator(dimension: str) -> BeforeValidator:
    def check(value: Any, _info: ValidationInfo) -> float:
        # pydantic's error location already names the field (by its TOML name).
        return parse(value, dimension)

    return BeforeValidator(check)


def _serializer(dimension: str) -> PlainSerializer:
    sym = DIMENSIONS[dimension].symbol

    def dump(value: float) -> str:
        # repr() keeps every bit of the float, so dumping and re-validating is the identity.
        return f"{value!r} {sym}"

    return PlainSerializer(dump, return_type=str)


def _json_schema(dimension: str) -> WithJsonSchema:
    # Inputs and dumps are strings with units, so the JSON Schema (for editors validating TOML
    # presets) says "string" rather than the stored float.
    dim = DIMENSIONS[dimension]
    return WithJsonSchema({
        "type": "string",
        "description": f"a {dim.name} with units, e.g. {dim.example!r}",
        "examples": [dim.example],
    })


def _field_type(dimension: str) -> Any:
    # Physical quantities in a hardware description are never negative; fields that must be
    # strictly positive say so with ``Field(gt=0)``. The upper bound keeps derived figures finite.
    return Annotated[float, _validator(dimension), Ge(0.0), Le(MAX_SI), _serializer(dimension),
                     _json_schema(dimension)]


Bandwidth = _field_type("bandwidth")
Frequency = _field_type("frequency")
Size = _field_type("size")
Time = _field_type("time")
Energy = _field_type("energy")
Power = _field_type("power")
EnergyPerByte = _field_type("energy_per_byte")
EnergyPerFlop = _field_type("energy_per_flop")
FlopRate = _field_type("flop_rate")
Area = _field_type("area")
PowerPerArea = _field_type("power_per_area")
EnergyPerArea = _field_type("energy_per_area")
EnergyPerByteLength = _field_type("energy_per_byte_length")
