"""Sum reduction: grid-stride accumulation, a shared-memory tree per block, one launch.

Each of G blocks (G <= 1024) of 256 threads accumulates a grid-stride slice in a register, reduces its
256 values in shared memory in log2(256) = 8 halving steps, and writes one partial sum. The last block
to finish (an atomic ticket after a memory fence, CUDA's threadFenceReduction sample) reduces the G
partials and resets the ticket, so one launch gives the total.

Traffic: reads 4n bytes (fp32), writes 4 bytes plus 4G partials. FLOP: n - 1 additions.
"""

from __future__ import annotations

import functools

import numpy as np
from numba import cuda, float32, int32

from validation import workloads
from validation.cases import KernelCase
from validation.check import rtol_for
from validation.kernels.gpu._common import ceil_div, check_sizes, launch_1d, rng

FAMILY = "reduction"
BLOCK = 256
MAX_BLOCKS = 1024


@cuda.jit
def sum_tree(x, partial, ticket, out):
    sm = cuda.shared.array(BLOCK, float32)
    last = cuda.shared.array(1, int32)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    acc = float32(0.0)
    while i < x.size:
        acc += x[i]
        i += stride
    sm[tid] = acc
    cuda.syncthreads()
    s = BLOCK // 2
    while s > 0:
        if tid < s:
            sm[tid] += sm[tid + s]
        cuda.syncthreads()
        s //= 2
    if tid == 0:
        partial[cuda.blockIdx.x] = sm[0]
        cuda.threadfence()
        t = cuda.atomic.add(ticket, 0, 1)
        last[0] = 1 if t == cuda.gridDim.x - 1 else 0
    cuda.syncthreads()
    if last[0] == 1:
        acc = float32(0.0)
        j = tid
        while j < cuda.gridDim.x:
            acc += partial[j]
            j += BLOCK
        sm[tid] = acc
        cuda.syncthreads()
        s = BLOCK // 2
        while s > 0:
            if tid < s:
                sm[tid] += sm[tid + s]
            cuda.syncthreads()
            s //= 2
        if tid == 0:
            out[0] = sm[0]
            ticket[0] = 0


_SIZES = {
    "tiny": (1000,),
    "quick": (1 << 12, 1 << 20, 1 << 24),
    "full": tuple(1 << p for p in range(10, 29, 3)),
}


def _blocks(n: int) -> int:
    # Each thread sums at least 8 elements before the tree, so the tree's cost stays small.
    return max(1, min(MAX_BLOCKS, ceil_div(n, BLOCK * 8)))


def _inputs(n: int, seed: int) -> dict[str, np.ndarray]:
    return {
        "x": rng(seed).random(n, dtype=np.float32),
        "partial": np.zeros(_blocks(n), np.float32),
        "ticket": np.zeros(1, np.int32),
        "out": np.zeros(1, np.float32),
    }


def _run(blocks: int, inp):
    sum_tree[blocks, BLOCK](inp["x"], inp["partial"], inp["ticket"], inp["out"])
    return inp["out"]


def _reference(inp):
    return np.array([inp["x"].sum(dtype=np.float64)])


def _case(n: int) -> KernelCase:
    blocks = _blocks(n)
    return KernelCase(
        name=f"sum/n={n}",
        family=FAMILY,
        target="gpu",
        params={"n": n, "dtype": "float32", "blocks": blocks},
        make_inputs=functools.partial(_inputs, n),
        run=functools.partial(_run, blocks),
        reference=_reference,
        describe=functools.partial(workloads.reduce_sum, n, "float32"),
        rtol=rtol_for("float32"),
        launch=launch_1d(blocks, BLOCK, shared_bytes=4 * BLOCK + 4, registers=24),
        bytes_moved=4 * n + 4,
        flop=n - 1,
    )


def cases(sizes: str) -> list[KernelCase]:
    check_sizes(sizes)
    return [_case(n) for n in _SIZES[sizes]]
