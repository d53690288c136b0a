"""Operators, element types and tensor specs: ``from archsim import ops; ops.Gemm(m, n, k, dtype="fp16")``.

A thin re-export of :mod:`archsim.workload.ops` and :mod:`archsim.workload.dtypes`, name by name on
first use (the operators :mod:`archsim.workload.ops` loads lazily stay unimported until asked for).
"""

from __future__ import annotations

from archsim._lazy import lazy_names
from archsim.workload.dtypes import DType, TensorSpec
from archsim.workload.ops import __all__ as _ops_all

__all__ = ["DType", "TensorSpec", *_ops_all]


__getattr__, __dir__ = lazy_names(__name__, globals(), dict.fromkeys(_ops_all, "archsim.workload.ops"))
