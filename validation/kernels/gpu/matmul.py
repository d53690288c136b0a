"""fp32 matmul on CUDA cores: naive (one thread per C element) and shared-memory tiled (T = 8, 16, 32).

C (m x n) = A (m x k) @ B (k x n), row-major, 2 m n k FLOP (one FMA per k step), FP32 pipes (numba
cannot issue Tensor Core instructions; the Tensor Core path is ``cublas.py``).

Traffic, from the kernels' access patterns (4-byte elements):

* DRAM (both): compulsory ``4 (m k + k n)`` read and ``4 m n`` written, assuming L2 keeps the A
  row-panels and B column-panels that concurrently resident blocks share (true up to 4096^2 fp32 on a
  50 MB L2, where the panels of one wave fit).
* naive, block 16 x 16: each block reads a 16-row panel of A and a 16-column panel of B once through L1
  (the block's 8 warps share them), so L2 -> SM traffic is ``4 m n k (1/16 + 1/16)`` = ``m n k / 2``
  bytes; every FMA issues two global loads (L1 hits), which bounds the kernel by load issue, not FLOP.
  Described with ``l2_bytes = 8 m n k / 16 + 4 m n`` and ``l1_bytes = 8 m n k``.
* tiled T: each block stages T x T tiles of A and B in shared memory per k-step: L2 -> shared traffic
  ``8 m n k / T`` bytes; shared reads are 2 per FMA per thread (``8 m n k`` bytes, one operand broadcast
  across the warp). Shared memory per block ``2 T^2 4`` bytes; T = 32 runs 1024 threads per block.
  Described with ``l2_bytes = 8 m n k / T + 4 m n`` and ``l1_bytes = 8 m n k``.
"""

from __future__ import annotations

import functools

import numpy as np
from numba import cuda, float32

from validation import workloads
from validation.cases import KernelCase, Launch
from validation.check import rtol_for
from validation.kernels.gpu._common import ceil_div, check_sizes, rng

NAIVE_BLOCK = 16
TILES = (8, 16, 32)


@cuda.jit
def matmul_naive(c, a, b):
    col, row = cuda.grid(2)
    m, n = c.shape
    if row < m and col < n:
        acc = float32(0.0)
        for p in range(a.shape[1]):
            acc += a[row, p] * b[p, col]
        c[row, col] = acc


def _make_tiled(t: int):
    """A tiled kernel with a compile-time tile of ``t`` (shared array shapes must be constants)."""

    @cuda.jit
    def matmul_tiled(c, a, b):
        sa = cuda.shared.array((t, t), float32)
        sb = cuda.shared.array((t, t), float32)
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        col = cuda.blockIdx.x * t + tx
        row = cuda.blockIdx.y * t + ty
        m, n = c.shape
        kk = a.shape[1]
        acc = float32(0.0)
        for k0 in range(0, kk, t):
            sa[ty, tx] = a[row, k0 + tx] if row < m and k0 + tx < kk else float32(0.0)
            sb[ty, tx] = b[k0 + ty, col] if col < n and k0 + ty < kk else float32(0.0)
            cuda.syncthreads()
            for p in range(t):
                acc += sa[ty, p] * sb[p, tx]
            cuda.syncthreads()
        if row < m and col < n:
            c[row, col] = acc

    return matmul_tiled


_TILED = {t: _make_tiled(t) for t in TILES}

_SIZES = {
    "tiny": ((12, 17, 10),),
    "quick": ((256, 256, 256), (1024, 1024, 1024)),
    "full": (
        (128, 128, 128),
        (512, 512, 512),
        (1024, 1024, 1024),
        (2048, 2048, 2048),
        (4096, 4096, 4096),
        (8192, 8192, 256),
    ),
}


def _inputs(m: int, n: int, k: int, seed: int) -> dict[str, np.ndarray]:
    g = rng(seed)
    return {
        "out": np.zeros((m, n), np.float32),
        "a": g.uniform(-1, 1, (m, k)).astype(np.float32),
        "b": g.uniform(-1, 1, (k, n)).astype(np.float32),
    }


def _reference(inp):
    return inp["a"].astype(np.float64) @ inp["b"].astype(np.float64)


def _run(kern, launch: Launch, inp):
    kern[launch.grid, launch.block](inp["out"], inp["a"], inp["b"])
    return inp["out"]


def _case(variant: str, m: int, n: int, k: int) -> KernelCase:
    t = NAIVE_BLOCK if variant == "naive" else int(variant.removeprefix("tiled"))
    shared = 0 if variant == "naive" else 2 * t * t * 4
    launch = Launch(
        grid=(ceil_div(n, t), ceil_div(m, t), 1),
        block=(t, t, 1),
        shared_mem_per_block_bytes=shared,
        registers_per_thread=32,
    )
    kern = matmul_naive if variant == "naive" else _TILED[t]
    name = f"matmul-{variant}/m={m},n={n},k={k}"
    dram_read, dram_write = 4 * (m * k + k * n), 4 * m * n
    # L2 -> SM operand traffic 8 m n k / t (naive: the 16 x 16 block shares panels through L1) plus the
    # C stores; L1/shared operand reads: two 4-byte loads per FMA (see the module docstring).
    l2_bytes = 8 * m * n * k // t + dram_write
    return KernelCase(
        name=name,
        family="matmul-naive" if variant == "naive" else "matmul-tiled",
        target="gpu",
        params={"variant": variant, "tile": t, "m": m, "n": n, "k": k, "dtype": "float32"},
        make_inputs=functools.partial(_inputs, m, n, k),
        run=functools.partial(_run, kern, launch),
        reference=_reference,
        describe=functools.partial(
            workloads.kernel,
            name,
            "float32",
            launch,
            flop_vector=2 * m * n * k,
            dram_read_bytes=dram_read,
            dram_write_bytes=dram_write,
            working_set_bytes=dram_read + dram_write,
            l2_bytes=l2_bytes,
            l1_bytes=8 * m * n * k,
        ),
        rtol=rtol_for("float32"),
        launch=launch,
        bytes_moved=dram_read + dram_write,
        flop=2 * m * n * k,
    )


def cases(sizes: str) -> list[KernelCase]:
    check_sizes(sizes)
    variants = ("naive",) + tuple(f"tiled{t}" for t in TILES)
    return [_case(v, *mnk) for v in variants for mnk in _SIZES[sizes]]
