"""Hardware presets: TOML files under ``models/<kind>/<name>.toml``, loaded into typed models.

A preset id is ``"<kind>/<name>"`` (``"gpu/h100-sxm5-80gb"``). Any table of a preset may start from
another preset with ``preset = "<id>"`` and override some of its keys, e.g. a GPU's
``[dram] preset = "memory/hbm3"`` with its own ``bandwidth`` and ``capacity``; a whole file may do
the same at the top level. References resolve before validation, so the result is checked as a
whole. TOML duplicate keys, unknown fields, unitless numbers and inconsistencies are errors that
name the file and the field.
"""

from __future__ import annotations

import difflib
import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError

from archsim.errors import PresetError, SchemaError
from archsim.hardware import DRAM, Hardware
from archsim.hardware.memory import DRAMKind

__all__ = ["load_preset", "load_hardware", "list_presets", "models_dir", "validate_hardware",
           "format_validation_error"]

_HARDWARE: TypeAdapter[Any] = TypeAdapter(Hardware)
_DRAM_KINDS = set(DRAMKind.__args__)  # type: ignore[attr-defined]
_KIND_DIRS = ("cpu", "gpu", "memory", "pim", "system")


def models_dir() -> Path:
    """The folder holding the preset TOML files.

    ``ARCHSIM_MODELS`` overrides it; otherwise the checkout's top-level ``models/`` (also what an
    editable install sees), else the copy a wheel ships as ``archsim/_models``.
    """
    override = os.environ.get("ARCHSIM_MODELS")
    here = Path(__file__).resolve().parent
    if override:
        path = Path(override)
    else:
        path = here.parent / "models"
        if not path.is_dir():
            path = here / "_models"
    if not path.is_dir():
        raise PresetError(f"preset folder {path} does not exist (set ARCHSIM_MODELS to the models/ folder)")
    return path


def list_presets() -> list[str]:
    """All preset ids, sorted: ``["cpu/...", "gpu/...", "memory/...", "pim/...", "system/..."]``."""
    root = models_dir()
    return sorted(f"{p.parent.name}/{p.stem}" for d in _KIND_DIRS for p in (root / d).glob("*.toml"))


def _preset_path(preset_id: str) -> Path:
    if not isinstance(preset_id, str) or preset_id.count("/") != 1:
        raise PresetError(f"preset id {preset_id!r} is not of the form '<kind>/<name>' (kinds: {_KIND_DIRS})")
    path = models_dir() / f"{preset_id}.toml"
    if not path.is_file():
        known = list_presets()
        close = difflib.get_close_matches(preset_id, known, n=5, cutoff=0.5)
        hint = f"; did you mean {', '.join(close)}?" if close else f"; known presets: {', '.join(known)}"
        raise PresetError(f"unknown preset {preset_id!r}{hint}")
    return path


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        # tomllib reports duplicate keys ("Cannot overwrite a value") and syntax errors with a line.
        raise PresetError(f"{path}: invalid TOML: {exc}") from None
    except OSError as exc:
        raise PresetError(f"{path}: cannot read: {exc}") from None


def _inherited_sources(base: list[Any], own: list[Any]) -> list[Any]:
    """The base's sources less the fields ``own`` sources; a base source left with no field is dropped."""
    covered = {f for s in own if isinstance(s, Mapping) for f in s.get("fields", ())}
    out = []
    for src in base:
        if not isinstance(src, Mapping) or not src.get("fields"):
            out.append(src)
            continue
        fields = [f for f in src["fields"] if f not in covered]
        if fields:
            out.append({**src, "fields": fields})
    return out


def _merge(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in override.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping) and "preset" not in value:
            out[key] = _merge(out[key], value)
        elif key == "sources" and isinstance(value, list) and isinstance(out.get(key), list):
            # Sources document where numbers come from: a derived preset keeps its base's sources for
            # the fields it does not source itself, and adds its own (the H200 must not list the H100's
            # "5 HBM3 stacks" note for its own dram.channels).
            out[key] = [*_inherited_sources(out[key], value), *value]
        else:
            out[key] = value
    return out


def _resolve(data: Any, where: str, chain: tuple[str, ...]) -> Any:
    """Replace every ``{preset = id, ...}`` table by the referenced preset merged with the rest."""
    if isinstance(data, list):
        return [_resolve(v, f"{where}[{i}]", chain) for i, v in enumerate(data)]
    if not isinstance(data, Mapping):
        return data
    data = dict(data)
    ref = data.pop("preset", None)
    if ref is not None:
        if not isinstance(ref, str):
            raise PresetError(f"{where}.preset must be a preset id string, got {ref!r}")
        if ref in chain:
            raise PresetError(f"{where}: preset references form a cycle: {' -> '.join((*chain, ref))}")
        base = _resolve(_read_toml(_preset_path(ref)), ref, (*chain, ref))
        data = _merge(base, data)
    return {k: _resolve(v, f"{where}.{k}" if where else k, chain) for k, v in data.items()}


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


def format_validation_error(exc: ValidationError, where: str, model: type[BaseModel] | None = None) -> str:
    """One line per problem: the field path, what is wrong, and for unknown keys the allowed ones."""
    from archsim.hardware import CPUDevice, GPUDevice, PIMDevice, System

    lines = []
    for err in exc.errors():
        loc = tuple(err["loc"])
        path = _loc(loc)
        msg = err["msg"]
        if msg.startswith("Value error, "):
            msg = msg[len("Value error, "):]
        if err["type"] == "extra_forbidden":
            cls = model
            if cls is None and loc and loc[0] in ("cpu", "gpu", "pim", "system"):
                cls = {"cpu": CPUDevice, "gpu": GPUDevice, "pim": PIMDevice, "system": System}[loc[0]]
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


def validate_hardware(data: Mapping[str, Any], where: str = "hardware") -> Any:
    """Validate a plain dict (as from TOML or ``model_dump()``) into a hardware model.

    ``kind`` selects the model: ``cpu``, ``gpu``, ``pim``, ``system``, or a DRAM kind (``hbm3``...).
    """
    if not isinstance(data, Mapping):
        raise SchemaError(f"{where}: expected a table of fields, got {type(data).__name__}")
    kind = data.get("kind")
    try:
        if kind in _DRAM_KINDS:
            return DRAM.model_validate(data)
        if kind not in ("cpu", "gpu", "pim", "system"):
            allowed = ["cpu", "gpu", "pim", "system", *sorted(_DRAM_KINDS)]
            raise SchemaError(f"{where}: field 'kind' is {kind!r}; allowed: {', '.join(allowed)}")
        return _HARDWARE.validate_python(data)
    except ValidationError as exc:
        raise SchemaError(format_validation_error(exc, where, DRAM if kind in _DRAM_KINDS else None)) from None


def load_hardware(path: str | os.PathLike[str]) -> Any:
    """Load a hardware TOML file (a device, a system or a memory) from ``path``."""
    p = Path(path)
    raw = _read_toml(p)
    return validate_hardware(_resolve(raw, "", (str(p),)), str(p))


def load_preset(preset_id: str) -> Any:
    """Load the preset ``"<kind>/<name>"``, e.g. ``load_preset("gpu/h100-sxm5-80gb")``."""
    path = _preset_path(preset_id)
    data = _resolve(_read_toml(path), "", (preset_id,))
    return validate_hardware(data, preset_id)
