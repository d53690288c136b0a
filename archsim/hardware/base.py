"""Shared vocabulary of the hardware models: the strict base class, precisions and sources.

Every hardware model is a frozen pydantic model that forbids unknown fields, so a typo in a preset
is an error rather than a silently ignored key. Dimensioned fields have a plain TOML name
(``bandwidth``) and an SI Python name that ends in the unit (``bandwidth_bytes_per_s``); the TOML
name is the alias used for input, dumps and sweep paths.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from archsim.errors import SchemaError
from archsim.hardware._errors import format_validation_error

Precision = Literal["fp64", "fp32", "tf32", "fp16", "bf16", "fp8", "int8", "int4"]
"""Arithmetic precisions a compute unit can be rated for (fp8 covers e4m3 and e5m2)."""

PRECISIONS: tuple[str, ...] = ("fp64", "fp32", "tf32", "fp16", "bf16", "fp8", "int8", "int4")

PRECISION_BITS: dict[str, int] = {
    "fp64": 64, "fp32": 32, "tf32": 32, "fp16": 16, "bf16": 16, "fp8": 8, "int8": 8, "int4": 4,
}


_HASH_KEY = "_archsim_content_hash"
"""Where :meth:`HardwareModel.content_hash` keeps its value in the instance ``__dict__``."""


class HardwareModel(BaseModel):
    """Base of every hardware model: frozen, strict about unknown keys, dumps by TOML name."""

    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
        str_strip_whitespace=True,
        # Counts are ints, never bools, numeric strings or truncated floats; floats are finite.
        strict=True,
        allow_inf_nan=False,
        # The validator and serializer of a model are built when it is first used, not when its class
        # is defined: loading a GPU preset then builds the preset loader's validator and the GPU's
        # serializer, not those of every CPU, PIM and sub-table model (the schemas are the same).
        defer_build=True,
    )

    def content_hash(self) -> str:
        """SHA-256 of the canonical JSON dump: identifies a hardware point in results and stores.

        Computed once per model object (every estimate records it) and kept in the instance's
        ``__dict__`` under a key that is not a field: pydantic's ``==``, dumps, ``repr`` and
        iteration look at fields (and skip ``_`` keys), so they do not see it; a ``model_copy``
        without changes keeps it (same content), one with changes is validated afresh without it.
        The model is frozen; its list fields are not, and mutating one in place would leave a stale
        hash (as it would leave any derived value stale).
        """
        cached = self.__dict__.get(_HASH_KEY)
        if cached is None:
            text = json.dumps(self.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
            cached = self.__dict__[_HASH_KEY] = hashlib.sha256(text.encode()).hexdigest()
        return cached

    # Every way into a model raises a SchemaError naming the fields, never pydantic's ValidationError.
    def __init__(self, /, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise SchemaError(format_validation_error(exc, type(self).__name__, type(self))) from None

    # pydantic calls a custom __init__ for every nested model it validates; this one only translates
    # errors, so nested validation keeps pydantic's fast path (and its error locations).
    __init__.__pydantic_base_init__ = True  # type: ignore[attr-defined]

    @classmethod
    def model_validate(cls, obj: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        try:
            return super().model_validate(obj, **kwargs)
        except ValidationError as exc:
            raise SchemaError(format_validation_error(exc, cls.__name__, cls)) from None

    @classmethod
    def model_validate_json(cls, json_data: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        try:
            return super().model_validate_json(json_data, **kwargs)
        except ValidationError as exc:
            raise SchemaError(format_validation_error(exc, cls.__name__, cls)) from None

    @classmethod
    def model_validate_strings(cls, obj: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        try:
            return super().model_validate_strings(obj, **kwargs)
        except ValidationError as exc:
            raise SchemaError(format_validation_error(exc, cls.__name__, cls)) from None

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Any:  # type: ignore[override]
        """A copy with ``update`` applied, validated as a whole (pydantic's own skips validation).

        ``update`` keys are field names or TOML names; a value is what the constructor takes (a string
        with units, a model, a table) or, as in pydantic, the stored value (an SI float). The copy
        shares the sub-models ``update`` leaves untouched with this model (frozen, like it); with
        ``deep=True`` it shares nothing.
        """
        if not update:
            return super().model_copy(deep=deep)
        if not isinstance(update, Mapping):
            raise SchemaError(f"{type(self).__name__}.model_copy: update must be a mapping, got {update!r}")
        names = {info.alias or name: name for name, info in type(self).model_fields.items()}
        unknown = [k for k in update if k not in names and k not in type(self).model_fields]
        if unknown:
            raise SchemaError(f"{type(self).__name__}.model_copy: unknown field(s) {unknown}; "
                              f"allowed: {', '.join(sorted(names))}")
        # The untouched sub-models go in as the validated instances they are (pydantic keeps an
        # instance of the field's model as it is): only this table's fields and the updated values
        # are validated again, and every rule of this table runs on the copy's values. The copy
        # shares those sub-models with ``self``, as pydantic's own model_copy does. ``deep=True``, or
        # a table whose validators read their raw input, validates a whole dump (nothing shared).
        cls = type(self)
        updated = {names.get(key, key) for key in update}
        shared = {} if deep or reads_raw_input(cls) else {
            name: value for name in cls.model_fields
            if name not in updated and is_model_valued(value := getattr(self, name))}
        data = self.model_dump(by_alias=False, exclude=set(shared) or None)
        data.update(shared)
        for key, value in update.items():
            name = names.get(key, key)
            old = data.get(name)
            if isinstance(value, BaseModel):
                value = value.model_dump(by_alias=False)
            elif isinstance(value, list):
                value = [v.model_dump(by_alias=False) if isinstance(v, BaseModel) else v for v in value]
            elif (isinstance(old, str) and " " in old and isinstance(value, int | float)
                  and not isinstance(value, bool)):
                # A stored SI float for a dimensioned field (dumped as "<float> <unit>").
                value = f"{float(value)!r} {old.partition(' ')[2]}"
            data[name] = value
        return type(self).model_validate(data)


def is_model_valued(value: Any) -> bool:
    """A sub-model, or a non-empty list of them."""
    return isinstance(value, BaseModel) or (isinstance(value, list) and bool(value)
                                            and all(isinstance(v, BaseModel) for v in value))


def reads_raw_input(cls: type[BaseModel]) -> bool:
    """True when ``cls`` has a validator that sees its input before the model is built (and might
    not accept a sub-model instance where a dump stood)."""
    decorators = cls.__pydantic_decorators__
    return (any(d.info.mode != "after" for d in decorators.model_validators.values())
            or any(d.info.mode != "after" for d in decorators.field_validators.values()))


_READS = "archsim_reads"
"""Attribute of a cross-field rule's function holding the field names it reads (:func:`reads`)."""


def reads(*fields: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Declares the fields (by Python name) a cross-field rule, a ``mode="after"`` model validator,
    reads of its model: placed under ``@model_validator(mode="after")``, it marks the function.

    A marked rule must be a function of its model's values alone that reads the model only as
    ``self.<field>`` for the fields named here (sub-models and their own attributes included) and
    returns ``self`` unless it raises (a unit test checks every marked rule's code). A model made
    from a validated one by changing only fields the rule does not read then passes the rule as the
    validated one did; the sweep's chunk builder skips it there (:mod:`archsim.sweep.points`)."""
    names = frozenset(fields)

    def mark(rule: Callable[..., Any]) -> Callable[..., Any]:
        setattr(rule, _READS, names)
        return rule

    return mark


def rule_reads(rule: Any) -> frozenset[str] | None:
    """The fields a cross-field rule declared with :func:`reads`; None for an undeclared one."""
    names = getattr(rule, _READS, None)
    return names if isinstance(names, frozenset) else None


NonNegativeInt = Annotated[int, Field(ge=0)]
"""A count that may be zero (per-precision lane and unit counts: 0 means not supported)."""

NonNegativeFloat = Annotated[float, Field(ge=0)]
"""A finite rate that may be zero (per-precision ops per cycle)."""


def si(alias: str, *, gt: float | None = None, description: str = "", default: Any = ...) -> Any:
    """A dimensioned field: TOML name ``alias``, optional strict lower bound ``gt``."""
    return Field(default, alias=alias, gt=gt, description=description or None)


class Source(HardwareModel):
    """Where the numbers of a preset come from: a URL or a document, and the fields it supports."""

    url: str | None = None
    document: str | None = None
    fields: list[str] = Field(min_length=1, description="dotted field names this source supports")
    note: str | None = None

    def model_post_init(self, _context: Any) -> None:
        if not self.url and not self.document:
            raise ValueError("a source needs a 'url' or a 'document'")
