"""Pydantic validation errors as one readable :class:`~archsim.errors.SchemaError` message.

Every way into a hardware model (the TOML loader, the constructors, ``model_validate``,
``model_copy(update=...)``) reports a problem the same way: one line per field, by its TOML path,
with the allowed field names for an unknown key.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ValidationError

__all__ = ["format_validation_error"]


def _loc(loc: tuple[Any, ...]) -> str:
    parts: list[str] = []
    for item in loc:
        if isinstance(item, int):
            parts.append(f"[{item}]")
        elif item in ("cpu", "gpu", "pim", "system") and not parts:
            continue  # the discriminator tag pydantic puts first
        else:
            parts.append(("." if parts else "") + str(item))
    return "".join(parts) or "(top level)"


def _fields_at(model: type[BaseModel] | None, loc: tuple[Any, ...]) -> list[str]:
    """TOML names of the fields of the model found at ``loc`` (best effort, for hints)."""
    from typing import get_args, get_origin

    def unwrap(tp: Any) -> list[Any]:
        origin = get_origin(tp)
        if origin is None:
            return [tp]
        return [t for a in get_args(tp) for t in unwrap(a)]

    current: list[Any] = [model] if model else []
    for item in loc:
        nxt: list[Any] = []
        for cls in current:
            if isinstance(cls, type) and issubclass(cls, BaseModel):
                for name, info in cls.model_fields.items():
                    if item in (name, info.alias):
                        nxt.extend(unwrap(info.annotation))
            if isinstance(item, int):
                nxt.append(cls)
        if not nxt and isinstance(item, str) and item in ("cpu", "gpu", "pim", "system"):
            continue
        current = [c for c in nxt if c is not type(None)]
    names: list[str] = []
    for cls in current:
        if isinstance(cls, type) and issubclass(cls, BaseModel):
            names.extend(info.alias or name for name, info in cls.model_fields.items())
    return sorted(set(names))


def format_validation_error(exc: ValidationError, where: str, model: type[BaseModel] | None = None,
                            kinds: Mapping[str, type[BaseModel]] | None = None, tag: str | None = None) -> str:
    """One line per problem: the field path, what is wrong, and for unknown keys the allowed ones.

    ``model`` is the model validated; ``kinds`` maps the tags of a discriminated union to models;
    ``tag``: the union member of that tag was validated on its own, and its errors are those of the
    union (whose locations start with the tag).
    """
    lines = []
    for err in exc.errors():
        loc = tuple(err["loc"]) if tag is None else (tag, *err["loc"])
        path = _loc(loc)
        msg = err["msg"]
        if msg.startswith("Value error, "):
            msg = msg[len("Value error, "):]
        if err["type"] == "extra_forbidden":
            cls = model
            if cls is None and kinds and loc and loc[0] in kinds:
                cls = kinds[loc[0]]
                loc = loc[1:]
            allowed = _fields_at(cls, loc[:-1])
            close = difflib.get_close_matches(str(loc[-1]), allowed, n=3)
            hint = f" (did you mean {', '.join(repr(c) for c in close)}?)" if close else ""
            msg = f"unknown field{hint}; allowed: {', '.join(allowed)}"
        elif err["type"] == "missing":
            msg = "required field is missing"
        elif "input" in err and not isinstance(err["input"], Mapping | list):
            msg = f"{msg} (got {err['input']!r})"
        lines.append(f"  {path}: {msg}")
    return f"{where}: {len(lines)} problem(s) in the hardware description:\n" + "\n".join(lines)
