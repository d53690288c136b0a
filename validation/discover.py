"""Find kernel modules and collect their cases.

Every non-private module of ``validation.kernels.gpu`` or ``validation.kernels.cpu`` with a
``cases(sizes)`` function contributes its cases. Importing a GPU module imports ``numba.cuda``; callers
that want the simulator set ``NUMBA_ENABLE_CUDASIM=1`` before calling.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterable
from types import ModuleType

from validation.cases import KernelCase

__all__ = ["PACKAGES", "kernel_modules", "discover"]

PACKAGES: dict[str, str] = {"gpu": "validation.kernels.gpu", "cpu": "validation.kernels.cpu"}


def kernel_modules(package: str) -> list[ModuleType]:
    """The modules of ``package`` that define ``cases``, sorted by name."""
    try:
        pkg = importlib.import_module(package)
    except ModuleNotFoundError as exc:
        if exc.name != package:
            raise  # a kernel package that exists but fails to import is an error, not "no kernels"
        return []
    mods = []
    for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        mod = importlib.import_module(f"{package}.{info.name}")
        if callable(getattr(mod, "cases", None)):
            mods.append(mod)
    return mods


def discover(target: str, sizes: str, packages: Iterable[str] | None = None) -> list[KernelCase]:
    """All cases of ``target`` at ``sizes``; names must be unique and targets must match."""
    if target not in PACKAGES:
        raise ValueError(f"target: {target!r} not one of {sorted(PACKAGES)}")
    found: list[KernelCase] = []
    seen: dict[str, str] = {}
    for package in packages if packages is not None else [PACKAGES[target]]:
        for mod in kernel_modules(package):
            for case in mod.cases(sizes):
                if case.target != target:
                    raise ValueError(
                        f"{mod.__name__}: case {case.name!r} has target {case.target!r}, expected {target!r}"
                    )
                if case.name in seen:
                    raise ValueError(
                        f"case name {case.name!r} defined by both {seen[case.name]} and {mod.__name__}"
                    )
                seen[case.name] = mod.__name__
                found.append(case)
    return found
