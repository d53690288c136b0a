"""Sweep axes: dotted paths into a hardware model (or workload parameters) and the values they take.

A hardware axis is a dotted path of TOML field names into the base model, as ``model_dump()`` spells
them: ``"gpu.dram.bandwidth"``, ``"gpu.sm_count"``, ``"gpu.l2.size"``, ``"host.cores"`` on a
:class:`~archsim.hardware.System`. A list of tables is indexed by position or by the ``name`` of
the entry (``"host.caches.l3.size"`` == ``"host.caches.2.size"``); a table of precisions by its key
(``"gpu.tensor_core.flop_per_cycle_per_sm.fp16"``). On a bare device (GPU, CPU or PIM) the device's
kind may be written as an optional first segment, so ``"gpu.dram.bandwidth"`` and
``"dram.bandwidth"`` name the same field of a :class:`~archsim.hardware.GPUDevice`.

A workload axis is ``"workload.<parameter>"`` (``workload.batch``, ``workload.dtype``,
``workload.model``, ``workload.training``): its values are passed to the workload factory.

Values are a list (``["1 TB/s", "2 TB/s"]``) or a range table
``{"from": "1 TB/s", "to": "8 TB/s", "num": 16, "scale": "log"}``. A dimensioned field takes strings
with units, parsed with the field's own dimension (a bare number is an error naming the axis); counts
take ints; a field with fixed choices (``dram.kind``) takes only those choices.

Each parsed axis knows its output column: the path with the SI unit suffix of its dimension
(``gpu.dram.bandwidth_bytes_per_s``, ``gpu.l2.size_bytes``, ``gpu.clock_hz``); unitless axes keep
their path (``gpu.sm_count``, ``workload.batch``).
"""

from __future__ import annotations

import difflib
import math
import types
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_args, get_origin

import numpy as np
from pydantic import BaseModel

from archsim import units
from archsim.errors import SweepError, UnitError

__all__ = ["Axis", "parse_axes", "valid_paths", "WORKLOAD_PREFIX", "DEVICE_KINDS"]

WORKLOAD_PREFIX = "workload."
SOFTWARE_PREFIX = "software."  # fields of the software profile (options={"software": ...}), per point
DEVICE_KINDS = ("cpu", "gpu", "pim")

# SI suffix of each dimension, as the units policy names serialised numbers.
_SUFFIX = {
    "bandwidth": "_bytes_per_s", "frequency": "_hz", "size": "_bytes", "time": "_s", "energy": "_j",
    "power": "_w", "energy_per_byte": "_j_per_byte", "energy_per_flop": "_j_per_flop",
    "flop_rate": "_flop_per_s",
}

# Fields that describe a model rather than parametrise it: never sweep axes.
_NOT_AXES = {"sources", "name"}


def _is_axis(name: str, info: Any) -> bool:
    # A Literal with a single choice (a device's ``kind`` tag) has nothing to sweep.
    tp = _unwrap_optional(info.annotation)
    return name not in _NOT_AXES and not (get_origin(tp) is Literal and len(get_args(tp)) == 1)

LeafKind = Literal["dimensioned", "int", "float", "bool", "choice", "str"]


def _dimension_of_validators() -> dict[Any, str]:
    # The dimensioned field types of archsim.units carry one BeforeValidator each; its function
    # identifies the dimension of any field built from that type.
    types_by_dim = {
        "bandwidth": units.Bandwidth, "frequency": units.Frequency, "size": units.Size, "time": units.Time,
        "energy": units.Energy, "power": units.Power, "energy_per_byte": units.EnergyPerByte,
        "energy_per_flop": units.EnergyPerFlop, "flop_rate": units.FlopRate,
    }
    out: dict[Any, str] = {}
    for dim, tp in types_by_dim.items():
        for meta in get_args(tp)[1:]:
            func = getattr(meta, "func", None)
            if func is not None and type(meta).__name__ == "BeforeValidator":
                out[func] = dim
    return out


def _unwrap_optional(tp: Any) -> Any:
    origin = get_origin(tp)
    if origin in (types.UnionType, typing.Union):
        args = [a for a in get_args(tp) if a is not type(None)]
        if len(args) == 1:
            return args[0]
    return tp


@dataclass(frozen=True)
class _Leaf:
    kind: LeafKind
    dimension: str | None = None
    choices: tuple[Any, ...] = ()


def _leaf_of(annotation: Any, metadata: Sequence[Any], validators: Mapping[Any, str]) -> _Leaf:
    tp = _unwrap_optional(annotation)
    metas = list(metadata)
    if get_origin(tp) is typing.Annotated:
        args = get_args(tp)
        tp, metas = args[0], [*metas, *args[1:]]
    for meta in metas:
        dim = validators.get(getattr(meta, "func", None))
        if dim is not None:
            return _Leaf("dimensioned", dim)
    if get_origin(tp) is Literal:
        return _Leaf("choice", None, tuple(get_args(tp)))
    if tp is bool:
        return _Leaf("bool")
    if tp is int:
        return _Leaf("int")
    if tp is float:
        return _Leaf("float")
    return _Leaf("str")


@dataclass(frozen=True)
class _Resolved:
    path: tuple[str | int, ...]  # keys into model_dump(): TOML names, list positions, dict keys
    leaf: _Leaf


def _field_by_toml_name(cls: type[BaseModel], name: str) -> tuple[str, Any] | None:
    for attr, info in cls.model_fields.items():
        if name == (info.alias or attr):
            return attr, info
    return None


def _walk(cls: type[BaseModel], dump: Mapping[str, Any], segments: list[str],
          validators: Mapping[Any, str]) -> _Resolved | None:
    """Follow ``segments`` through the model class and its dump; None if the path does not exist."""
    path: list[str | int] = []
    current_cls: Any = cls
    current: Any = dump
    i = 0
    while i < len(segments):
        seg = segments[i]
        if not (isinstance(current_cls, type) and issubclass(current_cls, BaseModel)):
            return None
        found = _field_by_toml_name(current_cls, seg)
        if found is None or not isinstance(current, Mapping) or seg not in current:
            return None
        _attr, info = found
        if not _is_axis(seg, info):
            return None
        path.append(seg)
        tp = _unwrap_optional(info.annotation)
        value = current[seg]
        origin = get_origin(tp)
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            if value is None or i == len(segments) - 1:
                return None
            current_cls, current = tp, value
            i += 1
            continue
        if origin is list:
            (item_tp,) = get_args(tp)
            if i + 1 >= len(segments) or not isinstance(value, list):
                return None
            key = segments[i + 1]
            index = _list_index(value, key)
            if index is None:
                return None
            path.append(index)
            if isinstance(item_tp, type) and issubclass(item_tp, BaseModel):
                current_cls, current = item_tp, value[index]
                i += 2
                continue
            return _Resolved(tuple(path), _leaf_of(item_tp, (), validators)) if i + 2 == len(segments) else None
        if origin is dict:
            _key_tp, value_tp = get_args(tp)
            if i + 2 != len(segments) or not isinstance(value, Mapping):
                return None
            key = segments[i + 1]
            allowed = get_args(_key_tp) if get_origin(_key_tp) is Literal else tuple(value)
            if key not in allowed:
                return None
            path.append(key)
            return _Resolved(tuple(path), _leaf_of(value_tp, (), validators))
        if i != len(segments) - 1:
            return None
        return _Resolved(tuple(path), _leaf_of(info.annotation, info.metadata, validators))
    return None


def _list_index(items: list[Any], key: str) -> int | None:
    if key.isdigit():
        index = int(key)
        return index if index < len(items) else None
    for index, item in enumerate(items):
        if isinstance(item, Mapping) and item.get("name") == key:
            return index
    return None


def valid_paths(base: BaseModel) -> list[str]:
    """Every hardware axis path the base model offers (TOML names, list entries by name), sorted."""
    out: list[str] = []

    def visit(cls: type[BaseModel], dump: Mapping[str, Any], prefix: str) -> None:
        for attr, info in cls.model_fields.items():
            name = info.alias or attr
            if not _is_axis(name, info) or name not in dump:
                continue
            tp = _unwrap_optional(info.annotation)
            value = dump[name]
            origin = get_origin(tp)
            here = f"{prefix}{name}"
            if isinstance(tp, type) and issubclass(tp, BaseModel):
                if value is not None:
                    visit(tp, value, here + ".")
            elif origin is list:
                (item_tp,) = get_args(tp)
                for index, item in enumerate(value or []):
                    label = item.get("name", str(index)) if isinstance(item, Mapping) else str(index)
                    if isinstance(item_tp, type) and issubclass(item_tp, BaseModel):
                        visit(item_tp, item, f"{here}.{label}.")
                    else:
                        out.append(f"{here}.{label}")
            elif origin is dict:
                key_tp = get_args(tp)[0]
                keys = get_args(key_tp) if get_origin(key_tp) is Literal else tuple(value or {})
                out.extend(f"{here}.{k}" for k in keys if k in (value or {}))
            else:
                out.append(here)

    visit(type(base), base.model_dump(), "")
    return sorted(out)


@dataclass(frozen=True)
class Axis:
    """One parsed sweep axis.

    Attributes:
        name: the axis as given (``"gpu.dram.bandwidth"``).
        target: ``"hardware"``, ``"workload"`` or ``"software"``.
        path: keys into the base model's ``model_dump()`` (hardware), ``(parameter,)`` (workload), or
            ``(axis name,)`` (software: a dotted field of the run's software profile).
        kind: ``dimensioned``, ``int``, ``float``, ``bool``, ``choice`` or ``str``.
        dimension: key of :data:`archsim.units.DIMENSIONS` for a dimensioned axis, else None.
        column: output column (path + SI suffix, e.g. ``gpu.dram.bandwidth_bytes_per_s``).
        levels: the discrete values (SI floats, ints, strings, bools), or None for a continuous range.
        low, high, scale: the continuous range (SI) that random samplers draw from.
    """

    name: str
    target: Literal["hardware", "workload", "software"]
    path: tuple[str | int, ...]
    kind: LeafKind
    dimension: str | None
    column: str
    levels: tuple[Any, ...] | None
    low: float | None = None
    high: float | None = None
    scale: Literal["linear", "log"] = "linear"

    def from_unit(self, u: np.ndarray) -> list[Any]:
        """Map samples in [0, 1) to axis values: a level index, or a point of the range."""
        if self.levels is not None:
            idx = np.minimum((u * len(self.levels)).astype(np.int64), len(self.levels) - 1)
            return [self.levels[i] for i in idx]
        assert self.low is not None and self.high is not None  # set by the parser for ranges
        if self.scale == "log":
            values = np.exp(np.log(self.low) + u * (np.log(self.high) - np.log(self.low)))
        else:
            values = self.low + u * (self.high - self.low)
        if self.kind == "int":
            return [int(v) for v in np.rint(values)]
        return [float(v) for v in values]

    def encode(self, value: Any) -> Any:
        """The value as it goes into a dumped model: a dimensioned SI float becomes ``"<SI> <unit>"``."""
        if self.kind == "dimensioned" and self.dimension is not None:
            return f"{float(value)!r} {units.DIMENSIONS[self.dimension].symbol}"
        return value


def _parse_scalar(axis: str, leaf: _Leaf, value: Any) -> Any:
    if leaf.kind == "dimensioned":
        assert leaf.dimension is not None  # dimensioned leaves always have one
        try:
            return units.parse(value, leaf.dimension)
        except UnitError as exc:
            raise SweepError(f"axis {axis!r}: {exc}") from None
    if leaf.kind == "int":
        if isinstance(value, bool) or not isinstance(value, int | np.integer):
            raise SweepError(f"axis {axis!r}: {value!r} is not an integer (this field is a count)")
        return int(value)
    if leaf.kind == "float":
        if isinstance(value, bool) or not isinstance(value, int | float | np.floating | np.integer):
            raise SweepError(f"axis {axis!r}: {value!r} is not a number")
        if not math.isfinite(float(value)):
            raise SweepError(f"axis {axis!r}: {value!r} is not a finite number")
        return float(value)
    if leaf.kind == "bool":
        if not isinstance(value, bool):
            raise SweepError(f"axis {axis!r}: {value!r} is not true/false")
        return value
    if leaf.kind == "choice":
        if value not in leaf.choices:
            raise SweepError(f"axis {axis!r}: {value!r} is not allowed; allowed: {', '.join(map(repr, leaf.choices))}")
        return value
    return value


def _check_levels(axis: str, num: int) -> None:
    from archsim.limits import limits

    cap = limits().max_axis_levels
    if num > cap:
        raise SweepError(f"axis {axis!r}: {num} levels exceeds the limit {cap} per axis "
                         "(set ARCHSIM_MAX_AXIS_LEVELS to raise it, or use a random sampler with n points)")


def _parse_values(axis: str, leaf: _Leaf, spec: Any) -> tuple[tuple[Any, ...] | None, float | None,
                                                            float | None, Literal["linear", "log"]]:
    if isinstance(spec, Mapping):
        unknown = set(spec) - {"from", "to", "num", "scale"}
        if unknown or "from" not in spec or "to" not in spec:
            raise SweepError(f"axis {axis!r}: a range needs 'from' and 'to' (and optionally 'num', 'scale'); "
                             f"got keys {sorted(spec)}")
        if leaf.kind not in ("dimensioned", "int", "float"):
            raise SweepError(f"axis {axis!r}: a range needs a numeric field; this one is {leaf.kind}: give a list")
        scale = spec.get("scale", "linear")
        if scale not in ("linear", "log"):
            raise SweepError(f"axis {axis!r}: scale {scale!r} is not allowed; allowed: 'linear', 'log'")
        low, high = (float(_parse_scalar(axis, leaf, spec[k])) for k in ("from", "to"))
        if not low < high:
            raise SweepError(f"axis {axis!r}: 'from' ({low:g}) must be below 'to' ({high:g}) in SI units")
        if scale == "log" and low <= 0:
            raise SweepError(f"axis {axis!r}: a log range needs 'from' > 0")
        levels: tuple[Any, ...] | None = None
        if "num" in spec:
            num = spec["num"]
            if isinstance(num, bool) or not isinstance(num, int) or num < 2:
                raise SweepError(f"axis {axis!r}: 'num' must be an integer >= 2, got {num!r}")
            _check_levels(axis, num)
            grid = np.geomspace(low, high, num) if scale == "log" else np.linspace(low, high, num)
            if leaf.kind == "int":
                # Rounding a log range of counts can repeat a level; each level appears once.
                levels = tuple(dict.fromkeys(int(v) for v in np.rint(grid)))
            else:
                levels = tuple(float(v) for v in grid)
        return levels, low, high, scale
    if isinstance(spec, str | bytes) or not isinstance(spec, Sequence) or len(spec) == 0:
        raise SweepError(f"axis {axis!r}: values must be a non-empty list or a range table "
                         "{from, to, num, scale}")
    _check_levels(axis, len(spec))
    values = tuple(_parse_scalar(axis, leaf, v) for v in spec)
    if len(set(values)) != len(values):
        raise SweepError(f"axis {axis!r}: repeated values {list(spec)}")
    return values, None, None, "linear"


def _resolve_hardware(base: BaseModel, name: str, dump: Mapping[str, Any], validators: Mapping[Any, str]) -> _Resolved:
    segments = name.split(".")
    resolved = _walk(type(base), dump, segments, validators)
    kind = dump.get("kind")
    if resolved is None and kind in DEVICE_KINDS and segments[0] == kind and len(segments) > 1:
        resolved = _walk(type(base), dump, segments[1:], validators)
    if resolved is None:
        paths = valid_paths(base)
        prefix = f"{kind}." if kind in DEVICE_KINDS else ""
        close = difflib.get_close_matches(name.removeprefix(prefix), paths, n=3, cutoff=0.6)
        hint = f" (did you mean {', '.join(repr(c) for c in close)}?)" if close else ""
        raise SweepError(
            f"axis {name!r} is not a field of the base hardware {dump.get('name', '')!r}{hint}; valid paths"
            f"{' (optionally prefixed by ' + repr(kind) + ')' if prefix else ''}: {', '.join(paths)}; "
            f"workload axes: {WORKLOAD_PREFIX}<parameter>"
        )
    return resolved


def _column(name: str, leaf: _Leaf) -> str:
    suffix = _SUFFIX.get(leaf.dimension or "", "")
    return name + suffix


_WORKLOAD_LEAVES: dict[str, _Leaf] = {
    "batch": _Leaf("int"), "training": _Leaf("bool"), "dtype": _Leaf("str"), "model": _Leaf("str"),
}


def parse_axes(base: BaseModel, axes: Mapping[str, Any]) -> tuple[Axis, ...]:
    """Parse and check every axis against ``base``; the order of ``axes`` is kept."""
    if not isinstance(axes, Mapping) or not axes:
        raise SweepError("axes must be a non-empty table of {path: values}")
    dump = base.model_dump()
    validators = _dimension_of_validators()
    out: list[Axis] = []
    seen: dict[tuple[str, tuple[Any, ...]], str] = {}
    for name, spec in axes.items():
        if not isinstance(name, str) or not name:
            raise SweepError(f"axis name {name!r} must be a non-empty dotted path")
        if name.startswith(WORKLOAD_PREFIX):
            param = name[len(WORKLOAD_PREFIX):]
            if not param.isidentifier():
                raise SweepError(f"axis {name!r}: workload parameter {param!r} is not a valid keyword name")
            leaf = _WORKLOAD_LEAVES.get(param) or _guess_leaf(spec)
            target: Literal["hardware", "workload", "software"] = "workload"
            path: tuple[str | int, ...] = (param,)
        elif name.startswith(SOFTWARE_PREFIX):
            # checked against the profile when a point is evaluated (archsim.software.with_updates)
            leaf, target, path = _guess_leaf(spec), "software", (name,)
        else:
            resolved = _resolve_hardware(base, name, dump, validators)
            leaf, target, path = resolved.leaf, "hardware", resolved.path
        levels, low, high, scale = _parse_values(name, leaf, spec)
        if name.startswith(WORKLOAD_PREFIX) and param == "batch":
            bad = [v for v in (levels or (low, high)) if v is not None and v < 1]
            if bad:
                raise SweepError(f"axis {name!r}: batch must be >= 1, got {bad}")
        key = (target, path)
        if key in seen:
            raise SweepError(f"axes {seen[key]!r} and {name!r} name the same field")
        seen[key] = name
        out.append(Axis(name=name, target=target, path=path, kind=leaf.kind, dimension=leaf.dimension,
                        column=_column(name, leaf), levels=levels, low=low, high=high, scale=scale))
    return tuple(out)


def _guess_leaf(spec: Any) -> _Leaf:
    # A workload parameter archsim does not know: ints, floats, bools or strings as the user gives them.
    sample = [spec["from"], spec["to"]] if isinstance(spec, Mapping) and "from" in spec and "to" in spec else spec
    if isinstance(sample, Sequence) and not isinstance(sample, str) and sample:
        if all(isinstance(v, bool) for v in sample):
            return _Leaf("bool")
        if all(isinstance(v, int) and not isinstance(v, bool) for v in sample):
            return _Leaf("int")
        if all(isinstance(v, int | float) and not isinstance(v, bool) for v in sample):
            return _Leaf("float")
    return _Leaf("str")

