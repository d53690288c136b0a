"""Building a sweep point from a validated base: re-validate only the tables its overrides touch.

A point is the base's ``model_dump()`` with a few leaves overridden. Validating that whole dump
again costs ~60 us per point (every field of every table parsed and checked), most of it on tables
the point leaves as they were. :class:`PointBuilder` validates instead, for each override path,
the innermost table holding the leaf (from its dump, so every field-level check runs: types,
units, ranges) and then each table above it up to the root, from a dict whose untouched sub-tables
are the base's already-validated model instances (pydantic takes an instance of the field's model
as it is) and whose changed sub-tables are the new ones. Every cross-field rule of every table on
a path therefore runs on the point's values, and tables off the paths are the base's, which the
same dump validated to.

The result is the model that ``validate_hardware(point_dump)`` returns (equal field by field; a
property test checks it over many overrides of several presets). Whenever the fast build fails
for any reason, or a path crosses a table with a validator that reads its raw input (``mode``
other than ``"after"``, which might not accept an instance), the point is validated whole by
:func:`archsim.presets.validate_hardware`, so an invalid point fails with the same error type and
message as before.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from archsim.errors import ArchsimError

__all__ = ["PointBuilder", "apply_overrides"]

Path = tuple[str | int, ...]


def apply_overrides(dump: Mapping[str, Any], overrides: Sequence[tuple[tuple[str | int, ...], Any]]) -> dict[str, Any]:
    """A new dump with each ``(path, value)`` set; the input and its sub-tables are never modified.

    Only the tables along each path are copied (copy-on-write); untouched sub-tables are shared,
    which is safe because validation reads its input and never writes it.
    """
    root: Any = dict(dump)
    for path, value in overrides:
        node = root
        for key in path[:-1]:
            child = node[key]
            child = list(child) if isinstance(child, list) else dict(child)
            node[key] = child
            node = child
        node[path[-1]] = value
    return root


def _reads_raw_input(cls: type[BaseModel]) -> bool:
    """True when ``cls`` has a validator that sees its input before the model is built."""
    decorators = cls.__pydantic_decorators__
    if any(d.info.mode != "after" for d in decorators.model_validators.values()):
        return True
    return any(d.info.mode != "after" for d in decorators.field_validators.values())


def _is_model_valued(value: Any) -> bool:
    return isinstance(value, BaseModel) or (isinstance(value, list) and bool(value)
                                            and all(isinstance(v, BaseModel) for v in value))


def _instance_fields(model: BaseModel, dump: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    """(dump key, validated value) of every field of ``model`` that holds a sub-model or a list of
    them: what the table's input takes as instances instead of dumps."""
    out = []
    for name, info in type(model).model_fields.items():
        key = info.alias or name
        if key in dump:
            value = getattr(model, name)
            if _is_model_valued(value):
                out.append((key, value))
    return tuple(out)


class PointBuilder:
    """Validates sweep points as overrides of one base model (see the module documentation).

    Args:
        base_dump: the base model's ``model_dump()``.
        where: the name validation errors give the point.
    """

    def __init__(self, base_dump: Mapping[str, Any], where: str = "point") -> None:
        from archsim.presets import validate_hardware

        self.base_dump = base_dump
        self.where = where
        self.base = validate_hardware(base_dump, where)
        # Sub-tables already rebuilt, by (path, the overrides below it): a grid sweep gives each
        # axis a few dozen values, so most points reuse their DRAM, L2... tables from a neighbour.
        self._tables: dict[tuple[Any, ...], Any] = {}
        self._instances: dict[Path, tuple[tuple[str, Any], ...]] = {}
        self._raw: dict[type, bool] = {}
        self._fields: dict[tuple[type, str | int], str | None] = {}

    def build(self, overrides: Sequence[tuple[Path, Any]]) -> Any:
        """The hardware model of the base with ``overrides`` (dump paths, dumped values) applied."""
        from archsim.presets import validate_hardware

        try:
            fast = self._build(overrides)
        except (ArchsimError, ValueError, TypeError, KeyError, IndexError, AttributeError):
            fast = None  # the whole-dump validation below names the problem as it always has
        if fast is not None:
            return fast
        return validate_hardware(apply_overrides(self.base_dump, overrides), self.where)

    def _build(self, overrides: Sequence[tuple[Path, Any]]) -> Any | None:
        if not overrides:
            return self.base
        # The overrides as a tree: table path -> {key: leaf value}.
        tree: dict[Path, dict[str | int, Any]] = {}
        for path, value in overrides:
            if not path:
                return None
            if path[0] == "kind":
                return None  # a different model: nothing of the base applies
            tree.setdefault(tuple(path[:-1]), {})[path[-1]] = value
        return self._rebuild((), self.base, self.base_dump, tree)

    def _rebuild(self, at: Path, model: Any, dump: Any, tree: dict[Path, dict[str | int, Any]]) -> Any:
        """The table at path ``at`` (its validated ``model`` and its ``dump``) with every override
        at or below it applied; ``None`` where the fast path does not apply."""
        if isinstance(model, list):
            if at in tree:
                return None  # a whole entry replaced: validate the point whole
            items = list(model)
            for i in sorted({p[len(at)] for p in tree if len(p) > len(at) and p[:len(at)] == at}, key=str):
                if not isinstance(i, int) or not 0 <= i < len(items):
                    return None
                new = self._rebuild((*at, i), items[i], dump[i], tree)
                if new is None:
                    return None
                items[i] = new
            return items
        if not isinstance(model, BaseModel):
            return None
        cls = type(model)
        raw = self._raw.get(cls)
        if raw is None:
            raw = self._raw[cls] = _reads_raw_input(cls)
        if raw:
            return None
        memo = None
        if at:
            memo = (at, tuple((p, tuple(leaves.items())) for p, leaves in tree.items() if p[:len(at)] == at))
            try:
                hit = self._tables.get(memo)
            except TypeError:  # an unhashable override value: no reuse
                memo, hit = None, None
            if hit is not None:
                return hit
        replaced: dict[str | int, Any] = dict(tree.get(at, {}))
        deeper = {p[len(at)] for p in tree if len(p) > len(at) and p[:len(at)] == at}
        if deeper & set(replaced):
            return None  # a table replaced and also overridden inside: keep apply_overrides' order
        for key in deeper:
            child_dump = dump.get(key) if isinstance(dump, Mapping) else None
            if child_dump is None:
                return None
            child = self._child(model, key, self._fields)
            if child is None:
                # A plain table (a dict of per-precision numbers): the overrides go into its dump
                # and the parent's validation checks it, as the whole-dump path does.
                below = [(p[len(at) + 1:] + (k,), v) for p, leaves in tree.items()
                         if len(p) > len(at) and p[:len(at) + 1] == (*at, key) for k, v in leaves.items()]
                replaced[key] = apply_overrides({key: child_dump}, [((key, *q), v) for q, v in below])[key]
                continue
            new = self._rebuild((*at, key), child, child_dump, tree)
            if new is None:
                return None
            replaced[key] = new
        # The input that validates to ``model`` with the changed children swapped in: every leaf
        # from the dump (strings with units, as the field validators expect), every untouched
        # sub-model (or list of them) as the base's validated instance.
        instances = self._instances.get(at)
        if instances is None:
            instances = self._instances[at] = _instance_fields(model, dump)
        table = dict(dump)
        table.update(instances)
        table.update(replaced)  # type: ignore[arg-type]
        out = cls.model_validate(table)
        if memo is not None:
            self._tables[memo] = out
        return out

    @staticmethod
    def _child(model: BaseModel, key: str | int, fields: dict[tuple[type, str | int], str | None]) -> Any:
        """The validated sub-model (or list of sub-models) stored under dump key ``key``, else None.
        ``fields`` memoises (model class, dump key) -> field name."""
        cls = type(model)
        try:
            name = fields[cls, key]
        except KeyError:
            name = fields[cls, key] = next((n for n, info in cls.model_fields.items() if key in (n, info.alias)),
                                           None)
        if name is None:
            return None
        value = getattr(model, name)
        return value if _is_model_valued(value) else None
