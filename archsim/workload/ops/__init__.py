"""Operators: frozen descriptions of work with FLOP by class, compulsory bytes and backward passes.

The operators of CNNs and of a training step are imported with the package; attention, data
movement and measured kernels (:data:`LAZY`) when first used (``ops.Attention`` or ``from
archsim.workload.ops import Attention``), so building and pricing a CNN does not load them.
"""

from __future__ import annotations

from archsim._lazy import lazy_names
from archsim.workload.ops.base import FLOP_CLASSES, PHASES, Op
from archsim.workload.ops.conv import CONV_PASSES, Conv2d, Pool
from archsim.workload.ops.costs import ELEMENTWISE_COSTS, ElementwiseCost
from archsim.workload.ops.dense import Gemm, Gemv
from archsim.workload.ops.elementwise import REDUCE_OPS, Elementwise, Reduce
from archsim.workload.ops.norm import BatchNorm, LayerNorm
from archsim.workload.ops.optimizer import OPTIMIZERS, OptimizerStep
from archsim.workload.ops.softmax import Softmax

LAZY: dict[str, str] = {
    "Attention": "archsim.workload.ops.attention",
    "Kernel": "archsim.workload.ops.kernel",
    **dict.fromkeys(("Concat", "Copy", "DeviceToHost", "Embedding", "HostToDevice"), "archsim.workload.ops.movement"),
}
"""Names loaded on first use -> the module defining them."""

__all__ = [  # noqa: F822 - the lazy names resolve through __getattr__
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


__getattr__, __dir__ = lazy_names(__name__, globals(), LAZY)
