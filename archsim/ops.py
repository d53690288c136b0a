"""Operators, element types and tensor specs: ``from archsim import ops; ops.Gemm(m, n, k, dtype="fp16")``.

A thin re-export of :mod:`archsim.workload.ops` and :mod:`archsim.workload.dtypes`.
"""

from archsim.workload.dtypes import DType, TensorSpec
from archsim.workload.ops import *  # noqa: F403
from archsim.workload.ops import __all__ as _ops_all

__all__ = ["DType", "TensorSpec", *_ops_all]
