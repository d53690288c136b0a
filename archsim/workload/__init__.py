"""Workloads: element types, tensors, operators, graphs, the model zoo and ONNX import.

Everything here is a pure description of work (FLOP by class, compulsory bytes, parameters,
dependencies); hardware never appears. The ONNX importer and the operators a CNN does not use
(:data:`archsim.workload.ops.LAZY`) are imported when first used.
"""

from __future__ import annotations

from archsim._lazy import lazy_names
from archsim.workload.dtypes import DType, TensorSpec
from archsim.workload.graph import Edge, GraphBuilder, OpGraph, Value, training_step
from archsim.workload.ops import (
    ELEMENTWISE_COSTS,
    FLOP_CLASSES,
    BatchNorm,
    Conv2d,
    Elementwise,
    Gemm,
    Gemv,
    LayerNorm,
    Op,
    OptimizerStep,
    Pool,
    Reduce,
    Softmax,
)
from archsim.workload.ops import LAZY as _OPS_LAZY

_LAZY: dict[str, str] = {
    **dict.fromkeys(("from_onnx", "ImportReport", "OnnxImportWarning"), "archsim.workload.onnx_import"),
    **dict.fromkeys(_OPS_LAZY, "archsim.workload.ops"),
}
"""Names loaded on first use -> the module that gives them."""

__all__ = [  # noqa: F822 - the lazy names resolve through __getattr__
    "DType",
    "TensorSpec",
    "Op",
    "Gemm",
    "Gemv",
    "Conv2d",
    "Pool",
    "Elementwise",
    "Reduce",
    "Softmax",
    "LayerNorm",
    "BatchNorm",
    "Attention",
    "Embedding",
    "Copy",
    "Concat",
    "HostToDevice",
    "DeviceToHost",
    "OptimizerStep",
    "Kernel",
    "ELEMENTWISE_COSTS",
    "FLOP_CLASSES",
    "OpGraph",
    "Edge",
    "GraphBuilder",
    "Value",
    "training_step",
    "from_onnx",
    "ImportReport",
    "OnnxImportWarning",
]


__getattr__, __dir__ = lazy_names(__name__, globals(), _LAZY)
