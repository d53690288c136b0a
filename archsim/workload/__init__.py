"""Workloads: element types, tensors, operators, graphs, the model zoo and ONNX import.

Everything here is a pure description of work (FLOP by class, compulsory bytes, parameters,
dependencies); hardware never appears.
"""

from archsim.workload.dtypes import DType, TensorSpec
from archsim.workload.graph import Edge, GraphBuilder, OpGraph, Value, training_step
from archsim.workload.onnx_import import ImportReport, OnnxImportWarning, from_onnx
from archsim.workload.ops import (
    ELEMENTWISE_COSTS,
    FLOP_CLASSES,
    Attention,
    BatchNorm,
    Concat,
    Conv2d,
    Copy,
    DeviceToHost,
    Elementwise,
    Embedding,
    Gemm,
    Gemv,
    HostToDevice,
    Kernel,
    LayerNorm,
    Op,
    OptimizerStep,
    Pool,
    Reduce,
    Softmax,
)

__all__ = [
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
