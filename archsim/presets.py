"""Hardware presets: TOML files under ``models/<kind>/<name>.toml``, loaded into typed models.

A preset id is ``"<kind>/<name>"`` (``"gpu/h100-sxm5-80gb"``). Any table of a preset may start from
another preset with ``preset = "<id>"`` and override some of its keys, e.g. a GPU's
``[dram] preset = "memory/hbm3"`` with its own ``bandwidth`` and ``capacity``; a whole file may do
the same at the top level. References resolve before validation, so the result is checked as a
whole. TOML duplicate keys, unknown fields, unitless numbers and inconsistencies are errors that
name the file and the field.

Reading files (:func:`list_presets`, :func:`preset_summary`, :func:`read_toml`) needs only the
standard library; the typed models (pydantic, pint) are imported when a preset is first validated,
so listing the presets costs a TOML scan, not a validation of every file (``archsim presets check``
validates them all).
"""

from __future__ import annotations

import difflib
import functools
import os
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

from archsim.errors import PresetError, SchemaError

__all__ = ["load_preset", "load_hardware", "list_presets", "preset_summary", "PresetSummary", "models_dir",  # noqa: F822
           "validate_hardware", "format_validation_error"]

_KIND_DIRS = ("cpu", "gpu", "memory", "pim", "system")


def __getattr__(name: str) -> Any:
    # ``format_validation_error`` lives with the models (pydantic): loaded when first asked for.
    if name == "format_validation_error":
        from archsim.hardware._errors import format_validation_error
        return format_validation_error
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@functools.cache
def _hardware_kinds() -> tuple[dict[str, Any], frozenset[str]]:
    """The model of each device ``kind`` (the members of :data:`archsim.hardware.Hardware`, a union
    discriminated by ``kind``) and the DRAM kinds: constants of the models, not of any input."""
    from archsim.hardware import CPUDevice, GPUDevice, PIMDevice, System
    from archsim.hardware.memory import DRAMKind

    return ({"cpu": CPUDevice, "gpu": GPUDevice, "pim": PIMDevice, "system": System},
            frozenset(DRAMKind.__args__))  # type: ignore[attr-defined]


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


_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]*$")


def _preset_path(preset_id: str) -> Path:
    if not isinstance(preset_id, str) or preset_id.count("/") != 1:
        raise PresetError(f"preset id {preset_id!r} is not of the form '<kind>/<name>' (kinds: {_KIND_DIRS})")
    kind, name = preset_id.split("/")
    if kind not in _KIND_DIRS or not _NAME.match(name) or ".." in name:
        # An id names a file inside models/<kind>/; "../evil" must not reach outside it.
        raise PresetError(f"preset id {preset_id!r}: the kind must be one of {', '.join(_KIND_DIRS)} and the "
                          "name lower-case letters, digits, '.', '_' or '-' (e.g. 'gpu/h100-sxm5-80gb')")
    path = models_dir() / f"{preset_id}.toml"
    if not path.is_file():
        known = list_presets()
        # ids the given one starts (gpu/h100 -> both H100s) first, then the closest spellings
        starts = [k for k in known if k.startswith(preset_id)]
        close = list(dict.fromkeys([*starts, *difflib.get_close_matches(preset_id, known, n=5, cutoff=0.5)]))[:5]
        hint = f"; did you mean {', '.join(close)}?" if close else f"; known presets: {', '.join(known)}"
        raise PresetError(f"unknown preset {preset_id!r}{hint}")
    return path


MAX_FILE_BYTES = 1 << 20
"""Largest TOML file read, bytes (1 MiB; the biggest preset is a few KiB)."""

MAX_REFERENCES = 256
"""Most ``preset = ...`` references one load may resolve (a preset uses a handful; a file whose every
table references the next one ten times would otherwise grow ten-fold per level)."""


def read_toml(path: Path, error: type[Exception] = PresetError) -> dict[str, Any]:
    """Read a TOML file; any problem (missing, too big, not UTF-8, bad syntax, too deep) is ``error``."""
    try:
        with path.open("rb") as fh:
            raw = fh.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise error(f"{path}: cannot read: {exc.strerror or exc}") from None
    if len(raw) > MAX_FILE_BYTES:
        raise error(f"{path}: larger than {MAX_FILE_BYTES} bytes; a preset or spec is a few KiB of TOML")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"{path}: not UTF-8 text (TOML files are UTF-8): "
                    f"byte {exc.start} is {raw[exc.start]:#04x}") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        # tomllib reports duplicate keys ("Cannot overwrite a value") and syntax errors with a line.
        raise error(f"{path}: invalid TOML: {exc}") from None
    except RecursionError:
        raise error(f"{path}: tables or arrays nested too deeply to read") from None


def _read_toml(path: Path) -> dict[str, Any]:
    return read_toml(path, PresetError)


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


def _resolve(data: Any, where: str, chain: tuple[str, ...], budget: list[int] | None = None) -> Any:
    """Replace every ``{preset = id, ...}`` table by the referenced preset merged with the rest.

    ``budget`` counts the references left to resolve in this load (:data:`MAX_REFERENCES`).
    """
    if budget is None:
        budget = [MAX_REFERENCES]
    if len(chain) > 32:
        raise PresetError(f"{where}: preset references nested more than 32 deep: {' -> '.join(chain[:4])} ...")
    if isinstance(data, list):
        return [_resolve(v, f"{where}[{i}]", chain, budget) for i, v in enumerate(data)]
    if not isinstance(data, Mapping):
        return data
    data = dict(data)
    ref = data.pop("preset", None)
    if ref is not None:
        if not isinstance(ref, str):
            raise PresetError(f"{where}.preset must be a preset id string, got {ref!r}")
        if ref in chain:
            raise PresetError(f"{where}: preset references form a cycle: {' -> '.join((*chain, ref))}")
        budget[0] -= 1
        if budget[0] < 0:
            raise PresetError(f"{where}: more than {MAX_REFERENCES} preset references in one load "
                              f"(a preset refers to a few; check {chain[0]!r} for references that fan out)")
        base = _resolve(_read_toml(_preset_path(ref)), ref, (*chain, ref), budget)
        data = _merge(base, data)
    return {k: _resolve(v, f"{where}.{k}" if where else k, chain, budget) for k, v in data.items()}


def validate_hardware(data: Mapping[str, Any], where: str = "hardware") -> Any:
    """Validate a plain dict (as from TOML or ``model_dump()``) into a hardware model.

    ``kind`` selects the model: ``cpu``, ``gpu``, ``pim``, ``system``, or a DRAM kind (``hbm3``...).
    """
    from pydantic import ValidationError

    from archsim.hardware import DRAM
    from archsim.hardware._errors import format_validation_error

    if not isinstance(data, Mapping):
        raise SchemaError(f"{where}: expected a table of fields, got {type(data).__name__}")
    kinds, dram_kinds = _hardware_kinds()
    kind = data.get("kind")
    if not isinstance(kind, str | None):
        kind = repr(kind)  # never hashed or matched as a kind; reported as not allowed below
    try:
        if kind in dram_kinds:
            return DRAM.model_validate(data)
        if kind not in kinds:
            allowed = [*kinds, *sorted(dram_kinds)]
            raise SchemaError(f"{where}: field 'kind' is {kind!r}; allowed: {', '.join(allowed)}")
        # The member of the union that ``kind`` selects, validated on its own: what the union's
        # validator runs, without building the validators of the other kinds (a GPU preset needs
        # none of the CPU, PIM and System models'). Its errors are reported under the tag, as the
        # union reports them.
        return kinds[kind].__pydantic_validator__.validate_python(data)
    except ValidationError as exc:
        raise SchemaError(format_validation_error(exc, where, DRAM if kind in dram_kinds else None, kinds,
                                                  tag=None if kind in dram_kinds else kind)) from None


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


class PresetSummary(NamedTuple):
    """What ``archsim presets list`` shows of a preset, read from its TOML without validating it."""

    id: str
    kind: str
    name: str


def preset_summary(preset_id: str) -> PresetSummary:
    """Id, kind (its folder: ``"memory"`` for every DRAM kind) and name of preset ``preset_id``.

    The file is read and parsed (a file that does not raises :class:`PresetError` naming it); a file
    without a ``name`` of its own takes its top-level ``preset = ...`` reference's. Nothing else is
    resolved or validated (:func:`load_preset` does that). A missing or non-string name shows as ``"?"``.
    """
    chain = (preset_id,)
    data = _read_toml(_preset_path(preset_id))
    while "name" not in data and isinstance(data.get("preset"), str) and data["preset"] not in chain \
            and len(chain) <= 32:
        chain = (*chain, data["preset"])
        data = _read_toml(_preset_path(data["preset"]))
    name = data.get("name")
    return PresetSummary(preset_id, preset_id.partition("/")[0], name if isinstance(name, str) else "?")
