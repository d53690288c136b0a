"""Operators: frozen descriptions of work with FLOP by class, compulsory bytes and backward passes."""

from archsim.workload.ops.attention import Attention
from archsim.workload.ops.base import FLOP_CLASSES, PHASES, Op
from archsim.workload.ops.conv import CONV_PASSES, Conv2d, Pool
from archsim.workload.ops.costs import ELEMENTWISE_COSTS, ElementwiseCost
from archsim.workload.ops.dense import Gemm, Gemv
from archsim.workload.ops.elementwise import REDUCE_OPS, Elementwise, Reduce
from archsim.workload.ops.kernel import Kernel
from archsim.workload.ops.movement import Concat, Copy, DeviceToHost, Embedding, HostToDevice
from archsim.workload.ops.norm import BatchNorm, LayerNorm
from archsim.workload.ops.optimizer import OPTIMIZERS, OptimizerStep
from archsim.workload.ops.softmax import Softmax

__all__ = [
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
    "ElementwiseCost",
    "FLOP_CLASSES",
    "PHASES",
    "CONV_PASSES",
    "OPTIMIZERS",
    "REDUCE_OPS",
]
