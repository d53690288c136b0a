"""A generic, explicit kernel description for work that is not a standard operator.

Validation kernels (a pointer chase, an FMA-peak loop, a hand-tiled matmul) are described by what
they do: FLOP by class, DRAM bytes, launch geometry and per-thread resources. Engines cost a
:class:`Kernel` like any op; ``dependent_accesses`` is the length of a chain of loads whose
addresses depend on the previous load (engines add one memory latency per link).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from archsim.errors import WorkloadError
from archsim.workload.dtypes import DType, TensorSpec
from archsim.workload.ops.base import Op, as_int, breakdown, check_positive

__all__ = ["Kernel"]


def _dim3(value: tuple[int, ...] | int, field: str) -> tuple[int, int, int]:
    if isinstance(value, int) and not isinstance(value, bool):
        value = (value,)
    if isinstance(value, str | bytes) or not isinstance(value, Iterable):
        raise WorkloadError(f"Kernel.{field}: expected an int or up to 3 ints, got {value!r}")
    dims = tuple(as_int(v, f"Kernel.{field}[{i}]") for i, v in enumerate(value))
    if not 1 <= len(dims) <= 3 or any(d < 1 for d in dims):
        raise WorkloadError(f"Kernel.{field}: expected 1 to 3 positive ints, got {value!r}")
    return dims + (1,) * (3 - len(dims))  # type: ignore[return-value]


@dataclass(frozen=True)
class Kernel(Op):
    """An explicit kernel.

    Attributes:
        name: kernel label.
        dtype: element type of its arithmetic.
        flop_matmul, flop_vector, flop_special: FLOP by class (see :mod:`.base`).
        dram_read_bytes, dram_write_bytes: compulsory DRAM traffic, in bytes.
        grid, block: launch geometry (an int or up to 3 ints; missing dimensions are 1).
        registers_per_thread, shared_mem_per_block_bytes: per-thread / per-block resources (occupancy).
        dependent_accesses: length of a dependent load chain (0: none).
        working_set_bytes: bytes touched repeatedly (for cache-residency decisions); ``None``: reads + writes.
        l2_bytes, l1_bytes: known traffic at those levels when the description fixes it; ``None``: engine's model.
        bytes_in_flight_per_thread: bytes each resident thread has outstanding per memory latency (access
            width x independent accesses: a thread of a triad loads two 8-byte values and posts an 8-byte
            store per round, 24 B; a 4x-unrolled float4 copy 128 B); the engine feeds it to Little's law.
            ``None``: the engine's streaming default (one 16-byte vector access).
        max_blocks_per_sm: resident blocks per SM the launch allows (a shared-memory carveout or
            ``__launch_bounds__`` limit); ``None``: the occupancy calculator's limit from the resources.
    """

    kind = "kernel"
    name: str
    dtype: DType = DType.fp32
    flop_matmul: int = 0
    flop_vector: int = 0
    flop_special: int = 0
    dram_read_bytes: int = 0
    dram_write_bytes: int = 0
    grid: tuple[int, int, int] | int = 1
    block: tuple[int, int, int] | int = 1
    registers_per_thread: int = 32
    shared_mem_per_block_bytes: int = 0
    dependent_accesses: int = 0
    working_set_bytes: int | None = None
    l2_bytes: int | None = None
    l1_bytes: int | None = None
    phase: str = "forward"
    bytes_in_flight_per_thread: float | None = None
    max_blocks_per_sm: int | None = None

    def __post_init__(self) -> None:
        self._common_post_init()
        if not self.name:
            raise WorkloadError("Kernel.name: a kernel needs a name")
        check_positive(self, "flop_matmul", "flop_vector", "flop_special", "dram_read_bytes", "dram_write_bytes",
                       "shared_mem_per_block_bytes", "dependent_accesses", minimum=0)
        check_positive(self, "registers_per_thread")
        object.__setattr__(self, "grid", _dim3(self.grid, "grid"))
        object.__setattr__(self, "block", _dim3(self.block, "block"))
        for f in ("working_set_bytes", "l2_bytes", "l1_bytes"):
            if getattr(self, f) is not None:
                check_positive(self, f, minimum=0)
        if self.max_blocks_per_sm is not None:
            check_positive(self, "max_blocks_per_sm")
        b = self.bytes_in_flight_per_thread
        if b is not None and (isinstance(b, bool) or not isinstance(b, int | float) or not b > 0):
            raise WorkloadError(f"Kernel.bytes_in_flight_per_thread: expected a positive number of bytes, got {b!r}")

    @property
    def threads_per_block(self) -> int:
        return math.prod(self.block)

    @property
    def num_blocks(self) -> int:
        return math.prod(self.grid)

    @property
    def total_threads(self) -> int:
        return self.threads_per_block * self.num_blocks

    def flop_breakdown(self) -> dict[str, int]:
        return breakdown(self.flop_matmul, self.flop_vector, self.flop_special)

    def macs(self) -> int:
        return self.flop_matmul // 2

    def inputs(self) -> tuple[TensorSpec, ...]:
        return (TensorSpec((self.dram_read_bytes,), DType.int8),) if self.dram_read_bytes else ()

    def outputs(self) -> tuple[TensorSpec, ...]:
        return (TensorSpec((self.dram_write_bytes,), DType.int8),) if self.dram_write_bytes else ()

    def min_bytes(self) -> int:
        return self.dram_read_bytes + self.dram_write_bytes
