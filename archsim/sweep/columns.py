"""Building a chunk's sweep points together, as column overrides of one validated base.

The points of a sweep chunk override the same few leaves of the base (one per hardware axis) and
differ only in the values. :class:`ChunkBuilder` treats each override path as a column: it codes
each column's values (equal values of the same type share a code), checks every table on the paths
once per distinct combination of what it holds, bottom-up, and keeps the per-point work to the
tables whose combinations are all distinct (usually the root alone):

* field-level checks (a leaf's own schema: type, units, range) run once per distinct value of a
  column, through the same per-field validators as :class:`~archsim.sweep.points.PointBuilder`;
* a table's cross-field (``mode="after"``) rules run once per distinct combination of its changed
  leaves and changed sub-tables, on the table built from the base's by replacing those fields
  (:meth:`PointBuilder.assemble_columns`: the tables of all combinations built together, and a
  rule that declares the fields it reads, none of them changed, not run again); points with equal
  combinations share the table object;
* anything else (a structure the column path does not cover: list entries, plain tables, whole
  tables or the ``kind`` replaced, unhashable values, a class whose validation reads its raw
  input) and every combination that fails a check goes point by point through
  :meth:`PointBuilder.build`, which falls back to validating the whole dump, so an invalid point
  is reported with the error type and message it always had.

Each point is the model ``PointBuilder.build`` returns for it (a property test checks equality
with whole-dump validation over random overrides of several presets).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from itertools import repeat
from operator import is_
from typing import Any

import numpy as np
from annotated_types import Ge, Gt, Le, Lt
from pydantic import BaseModel, BeforeValidator, PlainSerializer, WithJsonSchema

from archsim.errors import ArchsimError
from archsim.hardware.base import reads_raw_input
from archsim.sweep.points import PointBuilder

__all__ = ["ChunkBuilder"]

Path = tuple[str | int, ...]
Overrides = Sequence[tuple[Path, Any]]

_FAILED = object()
"""A combination whose table did not build: its points go through PointBuilder.build."""


def _value_key(value: Any) -> Any:
    """A hashable key under which two values share their validation: equal, of the same type, and
    for floats of the same sign (``0.0`` and ``-0.0`` are equal but need not validate alike).
    Raises TypeError for an unhashable value."""
    if type(value) is float and value == 0.0:
        return (float, math.copysign(1.0, value))
    key = (type(value), value)
    hash(key)
    return key


def _codes(column: list[Any], n: int) -> np.ndarray:
    """Each value's code (``n`` values): equal :func:`_value_key` keys share a code, numbered by first
    appearance. Keyed once per distinct value object (a chunk's values repeat each axis level's
    objects), then looked up by identity (the same key, the same code)."""
    ids = list(map(id, column))
    seen: dict[Any, int] = {}
    code_of = {key: seen.setdefault(_value_key(v), len(seen))
               for key, v in dict(zip(ids, column, strict=True)).items()}
    return np.fromiter(map(code_of.__getitem__, ids), dtype=np.int64, count=n)


def _dense(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(first index of each distinct code in order of appearance, the dense code of every entry)."""
    _, first, inverse = np.unique(codes, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")  # dense codes numbered by first appearance
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return first[order], rank[inverse.reshape(-1)]


_BOUNDS = {Gt: (operator.gt, "gt"), Ge: (operator.ge, "ge"), Lt: (operator.lt, "lt"), Le: (operator.le, "le")}
"""The bound classes a float field's metadata may hold: each one's comparison and attribute."""


def _canonical_field(cls: type[BaseModel], name: str) -> tuple[Any, Any] | None:
    """For a plain dimensioned float field of ``cls`` (its type ``float``, its units validator,
    bounds ``gt``/``ge``/``lt``/``le`` and nothing else that validates) or a plain count (type
    ``int``, bounds only), ``(read, within)``: ``read`` gives the number of a canonical text
    (``"<number> <SI symbol>"``, what :func:`archsim.units.parse` reads without pint, the form the
    sweep's axes write), or of a count the int itself, else None; ``within`` whether a number
    passes the bounds. What validating the value gives, number for number (the units validator
    returns that float, and a float passes pydantic's float schema as it is, an int its int schema).
    None for any other field."""
    from archsim import units
    from archsim.sweep.axes import _dimension_of_validators

    info = cls.model_fields.get(name)
    if info is None or info.annotation not in (float, int):
        return None
    dimensions = _dimension_of_validators()
    dimension, bounds = None, []
    for meta in info.metadata:
        kind = type(meta)
        if kind in _BOUNDS:
            check, attribute = _BOUNDS[kind]
            bound = getattr(meta, attribute)
            if type(bound) not in (int, float) or not math.isfinite(bound):
                return None
            bounds.append((check, bound))
        elif kind is BeforeValidator and dimension is None and meta.func in dimensions:
            dimension = units.DIMENSIONS[dimensions[meta.func]]
        elif kind not in (PlainSerializer, WithJsonSchema):
            return None

    def within(number: float) -> bool:
        return all(check(number, bound) for check, bound in bounds)

    if info.annotation is int:
        return (_count, within) if dimension is None else None
    if dimension is None:
        return None

    def read(value: Any) -> float | None:
        if type(value) is not str:
            return None
        text = value.strip()
        return units._canonical_si(text, dimension) if len(text) <= units.MAX_TEXT else None

    return read, within


def _count(value: Any) -> int | None:
    """``value`` if it is an int (not a bool), else None."""
    return value if type(value) is int else None


class _Node:
    """A table on the override paths: its path, its validated base model and its dump, the dump keys
    of the leaves overridden in it (with their column numbers) and its changed sub-tables."""

    __slots__ = ("at", "model", "dump", "leaves", "children")

    def __init__(self, at: Path, model: Any, dump: Any) -> None:
        self.at, self.model, self.dump = at, model, dump
        self.leaves: list[tuple[str | int, int]] = []
        self.children: list[tuple[str | int, _Node]] = []


class ChunkBuilder:
    """Builds the hardware models of many points of one base (see the module documentation).

    Args:
        builder: the :class:`PointBuilder` of the base; its caches (field plans, sub-tables) are shared.
    """

    def __init__(self, builder: PointBuilder) -> None:
        self.builder = builder
        self._structures: dict[tuple[Path, ...], _Node | None] = {}
        self._checked: dict[tuple[type, str | int, Any], Any] = {}
        self._canonical: dict[tuple[type, str | int], Any] = {}

    def build(self, overrides: Sequence[Overrides]) -> list[Any]:
        """The hardware model of every point (its dump paths and dumped values), or the ArchsimError
        its validation raised, in point order."""
        out: list[Any] = [None] * len(overrides)
        groups: dict[tuple[Path, ...], list[int]] = {}
        for i, point in enumerate(overrides):
            groups.setdefault(tuple([p for p, _ in point]), []).append(i)
        for paths, members in groups.items():
            root = self._structure(paths)
            done = None
            if root is not None and len(members) > 1:
                try:
                    done = self._columns(root, len(paths), [overrides[i] for i in members])
                except (TypeError, KeyError):  # an unhashable value, a key no field takes: point by point
                    done = None
            if done is None:
                done = [_FAILED] * len(members)
            for i, hw in zip(members, done, strict=True):
                out[i] = self._one(overrides[i]) if hw is _FAILED else hw
        return out

    def build_columns(self, paths: Sequence[Path], values: Sequence[Sequence[Any]], n: int) -> list[Any]:
        """:meth:`build` of ``n`` points that all override ``paths``: point ``i`` sets ``paths[j]`` to
        ``values[j][i]``. The columns are taken as they are (no override tuples per point)."""
        paths = tuple(paths)
        root = self._structure(paths)
        done = None
        if root is not None and n > 1:
            try:
                done = self._columns_of(root, [list(column) for column in values], n)
            except (TypeError, KeyError):  # an unhashable value, a key no field takes: point by point
                done = None
        if done is None:
            done = [_FAILED] * n
        elif not any(map(is_, done, repeat(_FAILED))):
            return done  # every point built on the column path
        return [self._one(tuple(zip(paths, [column[i] for column in values], strict=True))) if hw is _FAILED else hw
                for i, hw in enumerate(done)]

    def _one(self, overrides: Overrides) -> Any:
        try:
            return self.builder.build(overrides)
        except ArchsimError as exc:
            return exc

    def _structure(self, paths: tuple[Path, ...]) -> _Node | None:
        """The tree of tables on ``paths`` (the root node), made once per set of paths; None where
        the column path does not apply (see the module documentation)."""
        if paths in self._structures:
            return self._structures[paths]
        root = self._tree(paths)
        self._structures[paths] = root
        return root

    def _tree(self, paths: tuple[Path, ...]) -> _Node | None:
        if not paths or len(set(paths)) != len(paths):
            return None
        for p in paths:
            if not p or p[0] == "kind" or any(q != p and q[:len(p)] == p for q in paths):
                return None  # the kind, or a table replaced and also overridden inside
        base = self.builder
        root = _Node((), base.base, base.base_dump)
        nodes: dict[Path, _Node] = {(): root}
        for column, path in enumerate(paths):
            node = root
            for depth, key in enumerate(path[:-1]):
                at = path[:depth + 1]
                child = nodes.get(at)
                if child is None:
                    if not isinstance(node.model, BaseModel) or not isinstance(node.dump, dict):
                        return None
                    model = PointBuilder._child(node.model, key, base._fields)
                    if not isinstance(model, BaseModel) or not isinstance(node.dump.get(key), dict):
                        return None  # a list of tables or a plain table: point by point
                    child = nodes[at] = _Node(at, model, node.dump[key])
                    node.children.append((key, child))
                node = child
            node.leaves.append((path[-1], column))
        for node in nodes.values():
            cls = type(node.model)
            if reads_raw_input(cls) or base.plan(cls) is False:
                return None
        return root

    def _columns(self, root: _Node, n_columns: int, points: list[Overrides]) -> list[Any]:
        """The models of ``points`` (all with the structure of ``root``); ``_FAILED`` for a point
        whose tables did not all build on the column path."""
        return self._columns_of(root, [[point[j][1] for point in points] for j in range(n_columns)], len(points))

    def _columns_of(self, root: _Node, values: list[list[Any]], n: int) -> list[Any]:
        """:meth:`_columns` of the ``n`` points whose column ``j`` of values is ``values[j]``."""
        codes = [_codes(column, n) for column in values]
        built, combo = self._node(root, values, codes)
        return list(map(built.__getitem__, combo.tolist()))

    def _node(self, node: _Node, values: list[list[Any]], codes: list[np.ndarray]) -> tuple[list[Any], np.ndarray]:
        """(the table built for each distinct combination at ``node``, each point's combination).
        A combination whose table fails a check (or whose sub-table did) builds ``_FAILED``."""
        cls, base = type(node.model), self.builder
        # Every input of the table (a changed leaf or a changed sub-table): its field name, each
        # point's code, and the validated value (or _FAILED) of each code.
        inputs: list[tuple[str, np.ndarray, list[Any]]] = []
        for key, column in node.leaves:
            first, _ = _dense(codes[column])
            checked = self._fields(cls, key, [values[column][i] for i in first.tolist()])
            inputs.append((self._name(cls, key), codes[column], checked))
        for key, child in node.children:
            tables, combo = self._node(child, values, codes)
            inputs.append((self._name(cls, key), combo, tables))
        combined = inputs[0][1]
        for _, more, _ in inputs[1:]:  # pairs of dense codes (each < points) -> dense codes again: no overflow
            combined = np.unique(combined * (int(more.max()) + 1) + more, return_inverse=True)[1].reshape(-1)
        first, combo = _dense(combined)
        # Each input's value at each combination's first point, and the combinations with an input
        # that failed (no table: their points go point by point).
        names = [name for name, _, _ in inputs]
        columns, failed = [], np.zeros(len(first), dtype=bool)
        for _, at, got in inputs:
            codes_at = at[first]
            columns.append(list(map(got.__getitem__, codes_at.tolist())))
            bad = np.fromiter(map(is_, got, repeat(_FAILED)), dtype=bool, count=len(got))
            if bad.any():
                failed |= bad[codes_at]
        built = base.assemble_columns(cls, node.model, names, columns, failed.tolist())
        if any(map(is_, built, repeat(None))):
            built = [_FAILED if new is None else new for new in built]
        return built, combo

    def _name(self, cls: type[BaseModel], key: str | int) -> str:
        """The field name of dump key ``key`` of table class ``cls`` (its per-field plan exists)."""
        names = self.builder.plan(cls)[0]
        return names[key]  # type: ignore[no-any-return]

    def _fields(self, cls: type[BaseModel], key: str | int, values: list[Any]) -> list[Any]:
        """:meth:`_field` of each of ``values``: a canonical text of a plain dimensioned field, or an
        int of a plain count (:func:`_canonical_field`), read as its number and checked against the
        field's bounds here, what the field's own validation gives it; any other value through
        :meth:`_field`."""
        plan = self._canonical.get((cls, key), _FAILED)
        if plan is _FAILED:
            plan = self._canonical[cls, key] = _canonical_field(cls, self._name(cls, key))
        if plan is None:
            return [self._field(cls, key, v) for v in values]
        read, bounds = plan
        out = []
        for value in values:
            number = read(value)
            out.append(number if number is not None and bounds(number) else self._field(cls, key, value))
        return out

    def _field(self, cls: type[BaseModel], key: str | int, value: Any) -> Any:
        """The value of :meth:`PointBuilder.field` (``_FAILED`` where it raises), once per distinct
        value of a column."""
        memo = (cls, key, _value_key(value))
        got = self._checked.get(memo)
        if got is None:
            try:
                got = self.builder.field(cls, key, value)[1]
            except (KeyError, ValueError, TypeError):
                got = _FAILED
            self._checked[memo] = got
        return got
