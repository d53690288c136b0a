"""The model zoo: ``archsim.zoo.resnet50(batch=32, training=True)``. A thin re-export of
:mod:`archsim.workload.zoo`, name by name on first use (the transformer models stay unimported until
one is asked for)."""

from __future__ import annotations

from typing import Any

from archsim.workload import zoo as _zoo
from archsim.workload.zoo import __all__


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(_zoo, name)
    globals()[name] = value  # later lookups bypass __getattr__
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
