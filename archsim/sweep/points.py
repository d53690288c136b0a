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

from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from itertools import repeat
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict

from archsim.errors import ArchsimError
from archsim.hardware.base import is_model_valued, reads_raw_input, rule_reads

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


def _instance_fields(model: BaseModel, dump: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    """(dump key, validated value) of every field of ``model`` that holds a sub-model or a list of
    them: what the table's input takes as instances instead of dumps."""
    out = []
    for name, info in type(model).model_fields.items():
        key = info.alias or name
        if key in dump:
            value = getattr(model, name)
            if is_model_valued(value):
                out.append((key, value))
    return tuple(out)


def _override_plan(cls: type[BaseModel]) -> Any:
    """(dump key -> field name, the field names, field name -> its validator, the after-validators in pydantic's
    order, the fields each of them declares it reads or None: :func:`~archsim.hardware.base.rule_reads`)
    for a table whose fields can be validated one by one, else False: a field or ``before``/
    ``wrap`` model validator, a ``model_post_init``, private attributes or a non-forbidding
    ``extra`` make the table's validation more than its fields' and its after-rules."""
    decorators = cls.__pydantic_decorators__
    if (decorators.field_validators or decorators.validators or decorators.root_validators
            or any(d.info.mode != "after" for d in decorators.model_validators.values())
            or cls.model_post_init is not BaseModel.model_post_init or cls.__private_attributes__
            or cls.model_config.get("extra") != "forbid" or decorators.computed_fields):
        return False
    from pydantic import TypeAdapter

    config = {k: v for k, v in cls.model_config.items()
              if k in ("strict", "allow_inf_nan", "str_strip_whitespace", "str_to_lower", "str_to_upper",
                       "str_max_length", "str_min_length", "coerce_numbers_to_str", "ser_json_inf_nan")}
    names: dict[str | int, str] = {}
    for name, info in cls.model_fields.items():
        names[name] = name
        if info.alias:
            names[info.alias] = name
    adapters: dict[str, Any] = {}

    def validator(name: str) -> Any:
        adapter = adapters.get(name)
        if adapter is None:
            info = cls.model_fields[name]
            # The field's type with its constraints and validators (Annotated metadata, Field's
            # gt/ge/pattern/...): the schema pydantic builds for this field inside the model. A
            # field holding models (a whole sub-table replaced by a dump) is not taken here.
            field = Annotated[(info.annotation, *info.metadata)] if info.metadata else info.annotation
            try:
                adapter = TypeAdapter(field, config=ConfigDict(**config))  # type: ignore[typeddict-item]
            except Exception:  # noqa: BLE001 - pydantic refuses config for model types (PydanticUserError)
                adapter = False
            adapters[name] = adapter
        if adapter is False:
            raise KeyError(name)
        return adapter

    # pydantic applies after-validators in definition order (base classes first), each on what the
    # previous one returned.
    rules = list(decorators.model_validators.values())
    after = [d.func.__get__(None, cls) if isinstance(d.func, classmethod) else d.func for d in rules]
    return names, frozenset(cls.model_fields), validator, after, tuple(rule_reads(d.func) for d in rules)


_SLOTS = (BaseModel.__dict__["__dict__"].__set__, BaseModel.__dict__["__pydantic_fields_set__"].__set__,
          BaseModel.__dict__["__pydantic_extra__"].__set__, BaseModel.__dict__["__pydantic_private__"].__set__)
"""The setters of a pydantic model's instance slots (``__dict__``, its fields set, extra and private
values): what ``object.__setattr__`` calls for those names, without its lookup per call."""


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
        self._plans: dict[type, Any] = {}
        # id(model) -> (model, its field values, their names): what assemble copies per table.
        self._templates: dict[int, tuple[Any, dict[str, Any], set[str]]] = {}

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
            raw = self._raw[cls] = reads_raw_input(cls)
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
        out = self._override(cls, model, replaced)
        if out is None:
            table = dict(dump)
            table.update(instances)
            table.update(replaced)  # type: ignore[arg-type]
            out = cls.model_validate(table)
        if memo is not None:
            self._tables[memo] = out
        return out

    def _override(self, cls: type[BaseModel], model: BaseModel, replaced: Mapping[str | int, Any]) -> Any:
        """``model`` with the ``replaced`` fields (dump key -> a raw value, or a validated sub-model)
        validated field by field and the table's cross-field rules run on the result; None where
        this does not apply (the caller validates the whole table).

        What validating the table from its dump gives, without re-validating the fields it does not
        change: pydantic validates each field from its own input, independently (the classes this
        applies to have no field validators, which could read other fields), so the untouched
        fields come out as the base's; a changed leaf is validated by its own field's schema under
        the table's configuration (strictness, finite floats, stripping); a changed sub-table is
        the instance pydantic would keep. Then every ``mode="after"`` model validator runs, in
        pydantic's order, on the new model. Any error sends the point to the full validation, which
        reports it with the message it always gave."""
        plan = self.plan(cls)
        if plan is False:
            return None
        changes: dict[str, Any] = {}
        try:
            for key, value in replaced.items():
                name, checked = self.field(cls, key, value)
                changes[name] = checked
        except (KeyError, ValueError, TypeError):
            return None
        return self.assemble(cls, model, changes)

    def plan(self, cls: type[BaseModel]) -> Any:
        """:func:`_override_plan` of ``cls``, made once per class."""
        plan = self._plans.get(cls)
        if plan is None:
            plan = self._plans[cls] = _override_plan(cls)
        return plan

    def field(self, cls: type[BaseModel], key: str | int, value: Any) -> tuple[str, Any]:
        """(field name, validated value) of dump key ``key`` of table class ``cls`` set to ``value``:
        a validated sub-model (or list of them) as it is, a leaf through its own field's schema
        (types, units, ranges). Raises KeyError where the class has no per-field plan or no such
        field, ValueError/TypeError (pydantic's ValidationError) for a value the field rejects."""
        plan = self.plan(cls)
        if plan is False:
            raise KeyError(key)
        names, validators = plan[0], plan[2]
        name = names[key]
        if is_model_valued(value):
            return name, value
        return name, validators(name).validate_python(value)

    def assemble(self, cls: type[BaseModel], model: BaseModel, changes: Mapping[str, Any]) -> Any:
        """``model`` with the already validated ``changes`` (field name -> value) and the table's
        cross-field (``mode="after"``) rules run on the result, in pydantic's order; None where a
        rule rejects it or ``cls`` has no per-field plan (see :meth:`_override`)."""
        return self.assemble_all(cls, model, [changes])[0]

    def assemble_all(self, cls: type[BaseModel], model: BaseModel,
                     changes: Sequence[Mapping[str, Any] | None]) -> list[Any]:
        """:meth:`assemble` of ``model`` with each entry of ``changes`` (None for a None entry), the
        plan and the base's field values looked up once for all."""
        return self.assemble_each(cls, model, changes, len(changes))

    def assemble_each(self, cls: type[BaseModel], model: BaseModel, updates: Iterable[Any], n: int) -> list[Any]:
        """:meth:`assemble_all` of the ``n`` entries of ``updates``, each a mapping or an iterable of
        (field name, value) pairs (what ``dict.update`` takes; a later pair of a name wins), or None."""
        plan = self.plan(cls)
        if plan is False:
            return [None] * n
        after = plan[3]
        _, base, base_set = self._template(model, plan[1])
        size, make = len(base), cls.__new__
        set_dict, set_fields, set_extra, set_private = _SLOTS
        out: list[Any] = []
        for change in updates:
            if change is None:
                out.append(None)
                continue
            data = base.copy()
            data.update(change)
            fields_set = base_set if len(data) == size else set(data)
            new = make(cls)
            # The instance's slots, as object.__setattr__ sets them (through their descriptors).
            set_dict(new, data)
            set_fields(new, fields_set.copy())
            set_extra(new, None)
            set_private(new, None)
            out.append(self._ruled(cls, new, after))
        return out

    def assemble_columns(self, cls: type[BaseModel], model: BaseModel, names: Sequence[str],
                         columns: Sequence[Sequence[Any]], skip: Sequence[bool]) -> list[Any]:
        """:meth:`assemble_each` of the entries ``i`` (``len(skip)`` of them) that set field
        ``names[j]`` to ``columns[j][i]`` for every ``j`` in order (a later name wins), None where
        ``skip[i]``: the same models, built column by column (each entry's field values and
        instance slots set in bulk; the entries' equal fields sets one set object, made for this
        call), with per entry only the rules that may reject it.

        ``model`` is a validated model (it passed every rule of ``cls``, each returning it): a rule
        that declares the fields it reads (:func:`~archsim.hardware.base.reads`), none of them in
        ``names``, reads of each entry what it read of ``model`` and passes it as it passed
        ``model``, returning it; it is not run again. The others run on each entry in pydantic's
        order, as :meth:`assemble_each` runs them."""
        n = len(skip)
        plan = self.plan(cls)
        if plan is False:
            return [None] * n
        keep = [i for i, s in enumerate(skip) if not s] if True in skip else None
        if keep is not None:
            columns = [[column[i] for i in keep] for column in columns]
        m = n if keep is None else len(keep)
        _, base, base_set = self._template(model, plan[1])
        data = list(map(dict.copy, repeat(base, m)))
        for name, column in zip(names, columns, strict=True):
            deque(map(dict.__setitem__, data, repeat(name, m), column), 0)
        # Every entry holds the base's keys and ``names``: one key set for all, and one new set
        # object of them shared by this call's entries (pydantic never changes the fields set of a
        # frozen model; a copy or a model_copy of one gets its own), not the template's.
        fields_set = base_set if not data or len(data[0]) == len(base) else set(data[0])
        new = list(map(cls.__new__, repeat(cls, m)))
        set_dict, set_fields, set_extra, set_private = _SLOTS
        deque(map(set_dict, new, data), 0)
        deque(map(set_fields, new, repeat(fields_set.copy(), m)), 0)
        deque(map(set_extra, new, repeat(None, m)), 0)
        deque(map(set_private, new, repeat(None, m)), 0)
        changed = frozenset(names)
        rules = [rule for rule, read in zip(plan[3], plan[4], strict=True) if read is None or read & changed]
        if rules:
            new = [self._ruled(cls, entry, rules) for entry in new]
        if keep is None:
            return new
        out: list[Any] = [None] * n
        for i, entry in zip(keep, new, strict=True):
            out[i] = entry
        return out

    @staticmethod
    def _ruled(cls: type[BaseModel], model: Any, rules: Sequence[Any]) -> Any:
        """``model`` after ``rules`` in order, each on what the previous one returned; None where one
        rejects it or the result is not of class ``cls``."""
        try:
            for rule in rules:
                model = rule(model)
        except (ArchsimError, ValueError, TypeError, AssertionError):
            return None
        return model if type(model) is cls else None

    def _template(self, model: BaseModel, fields: frozenset[str]) -> tuple[Any, dict[str, Any], set[str]]:
        """(``model``, its field values, their names): what an assembled table starts from, made
        once per model object. The values cached beside the fields (the content hash) are not
        carried over; the model is kept with them so that its id is not reused meanwhile."""
        template = self._templates.get(id(model))
        if template is None or template[0] is not model:
            data = {k: v for k, v in model.__dict__.items() if k in fields}
            template = self._templates[id(model)] = (model, data, set(data))
        return template  # type: ignore[no-any-return]

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
        return value if is_model_valued(value) else None
