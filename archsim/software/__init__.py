"""Software profiles: framework and runtime stacks (host dispatch, launch mode, fusion, precision).

    prof = archsim.software.load_software("pytorch-eager")     # models/software/pytorch-eager.toml
    graph = archsim.software.apply_passes(graph, prof)         # precision policy, then fusion
    prof.dispatch_s(system.host)                               # host seconds per launched kernel

``archsim.estimate(work, hw, software="pytorch-eager")`` does both and prices the host work. Profiles
are TOML files under ``models/software/<name>.toml``; :func:`list_software` names them.
"""

from __future__ import annotations

import functools
import tomllib
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from archsim.errors import PresetError, SchemaError
from archsim.presets import format_validation_error, models_dir
from archsim.software.fusion import FusedConv2d, FusedElementwise, FusedGemm, fuse, fused_names
from archsim.software.precision import apply_precision
from archsim.software.profile import (
    ALGORITHM_SELECTIONS,
    FUSION_RULES,
    LAUNCH_MODES,
    Collectives,
    DataLoading,
    FusionRules,
    KernelEfficiency,
    PrecisionPolicy,
    SoftwareProfile,
)

__all__ = ["SoftwareProfile", "ALGORITHM_SELECTIONS", "Collectives", "DataLoading", "FusionRules", "PrecisionPolicy",
           "KernelEfficiency", "LAUNCH_MODES", "FUSION_RULES",
           "load_software", "list_software", "validate_software", "resolve_software",
           "with_updates", "apply_passes", "fuse", "apply_precision", "fused_names", "FusedConv2d", "FusedGemm",
           "FusedElementwise", "NONE"]

NONE = "none"


def list_software() -> list[str]:
    """Every software profile id (the stems of ``models/software/*.toml``), sorted."""
    return sorted(p.stem for p in (models_dir() / "software").glob("*.toml"))


def validate_software(data: Mapping[str, Any], where: str = "software") -> SoftwareProfile:
    """Validate a plain dict (as from TOML or ``model_dump()``) into a :class:`SoftwareProfile`."""
    if not isinstance(data, Mapping):
        raise SchemaError(f"{where}: expected a table of fields, got {type(data).__name__}")
    try:
        return SoftwareProfile.model_validate(dict(data))
    except ValidationError as exc:
        _head, *problems = format_validation_error(exc, where, SoftwareProfile).split("\n")
        if len(problems) == 1:  # one bad field: one line naming it (and, for a choice, the allowed values)
            raise SchemaError(f"{where}: {problems[0].strip()}") from None
        raise SchemaError(f"{where}: {len(problems)} problem(s) in the software profile:\n"
                          + "\n".join(problems)) from None


def load_software(name: str) -> SoftwareProfile:
    """Load the profile ``name`` (``"pytorch-eager"``) from ``models/software/<name>.toml``.

    Profiles are frozen values: a name is read and validated once per folder and process
    (``estimate`` resolves its ``software`` argument on every call)."""
    if not isinstance(name, str):
        raise PresetError(f"software: expected a profile name, got {type(name).__name__}")
    return _load(str(models_dir()), name)


@functools.lru_cache(maxsize=64)
def _load(folder: str, name: str) -> SoftwareProfile:
    from pathlib import Path

    path = Path(folder) / "software" / f"{name}.toml"
    if not path.is_file():
        raise PresetError(f"software={name!r} is not a profile; allowed: {', '.join(list_software())}")
    try:
        with path.open("rb") as fh:
            raw = tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise SchemaError(f"{path}: invalid TOML: {exc}") from None
    return validate_software(raw, f"software/{name}")


def resolve_software(software: Any) -> SoftwareProfile:
    """A profile from ``None`` (``"none"``), a profile name or a :class:`SoftwareProfile`."""
    if software is None:
        return load_software(NONE)
    if isinstance(software, SoftwareProfile):
        return software
    if isinstance(software, str):
        return load_software(software)
    raise PresetError(f"software must be a profile name ({', '.join(list_software())}) or a SoftwareProfile, "
                      f"got {type(software).__name__}")


def with_updates(profile: SoftwareProfile, updates: Mapping[str, Any]) -> SoftwareProfile:
    """``profile`` with dotted-path overrides (``{"precision.matmul_dtype": "fp16"}``), re-validated:
    the ``software.*`` axes of a sweep. A path that names no field is an error listing the fields."""
    data = profile.model_dump()
    for path, value in updates.items():
        parts = path.removeprefix("software.").split(".")
        node = data
        for key in parts[:-1]:
            if not isinstance(node.get(key), dict):
                raise SchemaError(f"software.{path}: {key!r} is not a table; allowed: {', '.join(sorted(node))}")
            node = node[key]
        # kernel_efficiency tables take new op kinds; every other leaf must exist
        if parts[-1] not in node and parts[0] != "kernel_efficiency":
            raise SchemaError(f"software.{path}: no such field; allowed: {', '.join(sorted(node))}")
        node[parts[-1]] = value
    return validate_software(data, f"software/{profile.name}")


def apply_passes(work: Any, profile: SoftwareProfile, tf32_available: bool = False) -> Any:
    """``work`` as ``profile`` runs it: the precision policy first (fusion sees the final dtypes),
    then the fusion rules. ``tf32_available``: the GPU's Tensor Cores have a tf32 rate (the policy's
    ``allow_tf32`` then runs fp32 matrix ops in TF32)."""
    return fuse(apply_precision(work, profile.precision, tf32_available), profile.fusion)
