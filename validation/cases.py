"""The unit of the validation suite: one kernel at one size, paired with what archsim predicts from.

A :class:`KernelCase` knows how to build fresh inputs, run the real kernel, compute a numpy reference
for a correctness check, and describe the work to archsim. ``describe`` never sees a measurement:
predictions are made from the kernel's description and the hardware preset alone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

Target = Literal["gpu", "cpu"]
Backend = Literal["numba-cuda", "cupy", "numba-cpu"]
CachePolicy = Literal["cold", "warm"]


@dataclass(frozen=True)
class Launch:
    """A kernel's declared launch configuration (what archsim is told; the compiler may differ).

    Attributes:
        grid: blocks per grid (x, y, z).
        block: threads per block (x, y, z).
        shared_mem_per_block_bytes: static shared memory per block.
        registers_per_thread: declared register budget (the measured build records the compiler's count).
    """

    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    shared_mem_per_block_bytes: int = 0
    registers_per_thread: int = 32

    @property
    def blocks(self) -> int:
        return self.grid[0] * self.grid[1] * self.grid[2]

    @property
    def threads_per_block(self) -> int:
        return self.block[0] * self.block[1] * self.block[2]


@dataclass(frozen=True)
class KernelCase:
    """One kernel at one problem size.

    Attributes:
        name: unique id, e.g. ``"triad/grid-stride/n=16777216"``.
        family: error-budget family, e.g. ``"bandwidth"``, ``"matmul-tiled"``, ``"reduction"``.
        target: ``"gpu"`` (numba-CUDA) or ``"cpu"`` (numba CPU).
        params: the size and variant parameters (plain ints/strings), recorded with measurements.
        make_inputs: ``seed -> inputs`` (host numpy arrays; the driver moves them to the device).
        run: ``inputs -> output``; executes the real kernel once (the driver times it).
        reference: ``inputs -> expected output`` in numpy, for the correctness check.
        describe: ``() -> work`` that archsim predicts from (an op or kernel description).
        rtol: relative error bound of the output against the reference (inf-norm, see ``check``).
        tags: free labels (e.g. ``"launch-bound"``).
        outputs: keys of ``make_inputs``'s dict that the kernel writes; poisoned before the checked run.
        backend: who runs ``run``: ``"numba-cuda"``, ``"cupy"`` (cuBLAS) or ``"numba-cpu"``.
        launch: declared launch configuration (GPU kernels), or None.
        bytes_moved: bytes the kernel must read plus write at minimum, for effective-bandwidth columns.
        flop: floating-point operations of one run (an FMA counts 2).
        cache_policy: ``"cold"``: every timed run sees inputs not in the last-level cache (rotating
            buffers, flushing when they cannot exceed it); ``"warm"``: the same buffers every run
            (pointer chase at a cache level, peak compute).

    Inputs are a ``dict[str, numpy.ndarray]``. On a GPU the driver copies them to the device once;
    ``run`` then receives device arrays of the same keys, launches the kernel(s) without synchronising
    and returns the output array, so the CUDA events around ``run`` time the kernel only.
    """

    name: str
    family: str
    target: Target
    params: dict[str, Any]
    make_inputs: Callable[[int], Any]
    run: Callable[[Any], Any]
    reference: Callable[[Any], Any]
    describe: Callable[[], Any]
    rtol: float = 1e-5
    tags: tuple[str, ...] = field(default_factory=tuple)
    outputs: tuple[str, ...] = ("out",)
    backend: Backend = "numba-cuda"
    launch: Launch | None = None
    bytes_moved: int = 0
    flop: int = 0
    cache_policy: CachePolicy = "cold"
