"""Build the archsim descriptions the validation kernels are predicted from.

Every kernel module describes its work through these functions, so the contract with
``archsim.workload.ops`` lives in one file. They are called lazily (from ``KernelCase.describe``), never
at import, and they receive only the kernel's declared sizes and launch: no measurement reaches them.

A kernel is described as what it is. The cuBLAS cases are the library, so they are ``Gemm``; the
streaming kernels (elementwise, softmax, layernorm, reduction) are described as their ops, which archsim
prices at their compulsory traffic and CUDA-core arithmetic. Hand-written kernels whose algorithm differs
from what a library would run (naive and tiled matmul, direct convolution, pointer chase, FMA chains, the
bandwidth kernels' launch variants) are a ``Kernel`` with the FLOP and byte counts derived in the kernel
module's docstring: were they described as ``Gemm`` or ``Conv2d`` archsim would predict cuBLAS/cuDNN
speed (Tensor Cores, Winograd), which their code cannot reach.
"""

from __future__ import annotations

from typing import Any

from validation.cases import Launch

__all__ = ["DTYPE_NAMES", "kernel", "gemm", "elementwise", "softmax", "layernorm", "reduce_sum"]

# numpy dtype name -> archsim dtype name (``archsim.workload.DType`` values).
DTYPE_NAMES: dict[str, str] = {"float64": "fp64", "float32": "fp32", "float16": "fp16"}


def _ops() -> Any:
    from archsim.workload import ops

    return ops


def _dt(dtype: str) -> str:
    if dtype not in DTYPE_NAMES:
        raise ValueError(f"dtype: {dtype!r} not one of {sorted(DTYPE_NAMES)}")
    return DTYPE_NAMES[dtype]


def kernel(
    name: str,
    dtype: str,
    launch: Launch,
    *,
    flop_matmul: int = 0,
    flop_vector: int = 0,
    flop_special: int = 0,
    dram_read_bytes: int = 0,
    dram_write_bytes: int = 0,
    dependent_accesses: int = 0,
    working_set_bytes: int | None = None,
    l2_bytes: int | None = None,
    l1_bytes: int | None = None,
) -> Any:
    """A custom kernel: FLOP by class, compulsory DRAM bytes, launch shape, dependent-access chain, and
    the L2/L1 traffic where the kernel module derives it (``None``: archsim's own model)."""
    return _ops().Kernel(
        name=name,
        dtype=_dt(dtype),
        flop_matmul=flop_matmul,
        flop_vector=flop_vector,
        flop_special=flop_special,
        dram_read_bytes=dram_read_bytes,
        dram_write_bytes=dram_write_bytes,
        grid=launch.grid,
        block=launch.block,
        registers_per_thread=launch.registers_per_thread,
        shared_mem_per_block_bytes=launch.shared_mem_per_block_bytes,
        dependent_accesses=dependent_accesses,
        working_set_bytes=working_set_bytes,
        l2_bytes=l2_bytes,
        l1_bytes=l1_bytes,
    )


def gemm(m: int, n: int, k: int, dtype: str, batch: int = 1) -> Any:
    return _ops().Gemm(m, n, k, dtype=_dt(dtype), batch=batch)


def elementwise(shape: tuple[int, ...], fn: str, dtype: str) -> Any:
    """``fn`` is a name of ``archsim.workload.ELEMENTWISE_COSTS`` (the erf GELU is ``"gelu_erf"``)."""
    return _ops().Elementwise(shape, fn=fn, dtype=_dt(dtype))


def softmax(rows: int, cols: int, dtype: str) -> Any:
    return _ops().Softmax((rows, cols), dtype=_dt(dtype))


def layernorm(rows: int, cols: int, dtype: str) -> Any:
    """Affine layernorm over each row of ``cols`` elements."""
    return _ops().LayerNorm((rows, cols), dtype=_dt(dtype), affine=True)


def reduce_sum(numel: int, dtype: str) -> Any:
    return _ops().Reduce((numel,), axes=(0,), op="sum", dtype=_dt(dtype))
