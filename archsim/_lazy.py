"""Public names loaded on first use (PEP 562): a package's module-level ``__getattr__`` and
``__dir__``, so that importing it does not import every module its names come from."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_names(package: str, namespace: dict[str, Any],
               names: Mapping[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for the module ``package`` whose globals are ``namespace``.

    A name of ``names`` (name -> the module that defines it) is imported from its module when first
    used and kept in ``namespace``, so later lookups bypass ``__getattr__`` and every path to it
    gives the same object; any other name raises AttributeError as a module does. ``dir()`` lists
    the lazy names beside the loaded globals."""

    def __getattr__(name: str) -> Any:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *names})

    return __getattr__, __dir__
