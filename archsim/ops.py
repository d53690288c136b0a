"""Operators, element types and tensor specs: ``from archsim import ops; ops.Gemm(m, n, k, dtype="fp16")``.

A thin re-export of :mod:`archsim.workload.ops` and :mod:`archsim.workload.dtypes`, name by name on
first use (the operators :mod:`archsim.workload.ops` loads lazily stay unimported until asked for).
"""

from __future__ import annotations

from typing import Any

from archsim.workload import ops as _ops
from archsim.workload.dtypes import DType, TensorSpec
from archsim.workload.ops import __all__ as _ops_all

__all__ = ["DType", "TensorSpec", *_ops_all]


def __getattr__(name: str) -> Any:
    if name not in _ops_all:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(_ops, name)
    globals()[name] = value  # later lookups bypass __getattr__
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
