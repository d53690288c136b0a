"""The precision policy as a graph pass: workload -> workload with each op's dtype as the software runs it.

AMP (PyTorch ``torch.autocast``, NVIDIA's "Training with Mixed Precision" guide): convolutions, GEMMs
and attention run in fp16/bf16 on Tensor Cores, a list of numerically sensitive ops stays fp32
(softmax, reductions, losses; the optimizer updates fp32 master weights), and the activations that
flow between the remaining ops are fp16. A TensorRT int8 engine runs its convolutions and GEMMs in
int8 after calibration. The pass only retypes ops; which units and rates a dtype gets is the cost
model's business.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from archsim.software.profile import PrecisionPolicy
from archsim.workload import OpGraph

__all__ = ["apply_precision", "MATMUL_KINDS"]

MATMUL_KINDS: tuple[str, ...] = ("conv2d", "gemm", "gemv", "attention")
"""Op kinds whose work is matrix work: they take ``PrecisionPolicy.matmul_dtype``."""


def _target(op: Any, policy: PrecisionPolicy) -> str | None:
    if op.kind in policy.keep_fp32:
        return "fp32"
    want = policy.matmul_dtype if op.kind in MATMUL_KINDS else policy.other_dtype
    if want == "int8" and op.kind not in MATMUL_KINDS:
        return None
    return None if want == "as_model" else want


def retype(op: Any, policy: PrecisionPolicy, tf32: bool = False) -> Any:
    """``op`` with the dtype ``policy`` runs it in (the same object when nothing changes); with
    ``tf32`` (the policy allows TF32 and the GPU has it) an fp32 matrix op without its own compute
    type takes ``compute_dtype="tf32"``."""
    if not dataclasses.is_dataclass(op) or "dtype" not in {f.name for f in dataclasses.fields(op)}:
        return op  # transfers carry their tensors' dtype
    want = _target(op, policy)
    if want is not None and str(op.dtype) != want:
        op = dataclasses.replace(op, dtype=want)
    if (tf32 and op.kind in MATMUL_KINDS and str(op.dtype) == "fp32"
            and getattr(op, "compute_dtype", "unset") is None):
        op = dataclasses.replace(op, compute_dtype="tf32")
    return op


def apply_precision(work: Any, policy: PrecisionPolicy, tf32_available: bool = False) -> Any:
    """``work`` (an op or an OpGraph) with every op retyped by ``policy``; unchanged when the policy
    keeps the model's dtypes. ``tf32_available``: the GPU's Tensor Cores have a tf32 rate (read with
    ``policy.allow_tf32``)."""
    tf32 = policy.allow_tf32 and tf32_available
    if policy.matmul_dtype == policy.other_dtype == "as_model" and not policy.keep_fp32 and not tf32:
        return work
    if not isinstance(work, OpGraph):
        return retype(work, policy, tf32)
    ops = tuple(retype(op, policy, tf32) for op in work.ops)
    if all(a is b for a, b in zip(ops, work.ops, strict=True)):
        return work
    return dataclasses.replace(work, ops=ops)
