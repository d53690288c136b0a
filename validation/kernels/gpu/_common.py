"""Helpers shared by the GPU kernel modules: size sets, launch shapes, random inputs."""

from __future__ import annotations

import numpy as np

from validation.cases import Launch

__all__ = ["SIZE_SETS", "check_sizes", "ceil_div", "launch_1d", "rng"]

# "tiny": numba's CUDA simulator (one Python thread per CUDA thread: keep to a few hundred threads);
# "quick": a short run on a GPU; "full": the launch-, memory- and compute-bound regimes.
SIZE_SETS = ("tiny", "quick", "full")

# Grid-stride kernels use a fixed grid, declared here so the description does not depend on the device:
# 1024 blocks of 256 threads fill 132 SMs at >= 7 resident blocks each (H100/H200 allow 8 at 256 threads).
GRID_STRIDE_BLOCKS = 1024
THREADS = 256


def check_sizes(sizes: str) -> str:
    if sizes not in SIZE_SETS:
        raise ValueError(f"sizes: {sizes!r} not one of {SIZE_SETS}")
    return sizes


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def launch_1d(blocks: int, threads: int = THREADS, shared_bytes: int = 0, registers: int = 32) -> Launch:
    return Launch(
        grid=(blocks, 1, 1),
        block=(threads, 1, 1),
        shared_mem_per_block_bytes=shared_bytes,
        registers_per_thread=registers,
    )


def rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)
