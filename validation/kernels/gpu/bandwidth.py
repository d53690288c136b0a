"""Bandwidth kernels: copy, scale, triad (STREAM's kernels), grid-stride and one-element-per-thread.

Traffic (fp32, n elements, 4 bytes each), all compulsory DRAM traffic when n * 4 * arrays exceeds L2:

* copy  ``a[i] = b[i]``         reads 4n, writes 4n, 0 FLOP
* scale ``a[i] = s * b[i]``     reads 4n, writes 4n, n FLOP
* triad ``a[i] = b[i] + s*c[i]`` reads 8n, writes 4n, 2n FLOP (one FMA)

Writes are full 128-byte lines from coalesced warps, so no read-for-ownership traffic is counted
(NVIDIA GPUs' L2 does not fetch a line that a warp overwrites entirely). The one-element-per-thread
variant launches ceil(n / 256) blocks; the grid-stride variant a fixed 1024 blocks that loop.
"""

from __future__ import annotations

import functools

import numpy as np
from numba import cuda

from validation import workloads
from validation.cases import KernelCase
from validation.check import rtol_for
from validation.kernels.gpu._common import GRID_STRIDE_BLOCKS, THREADS, ceil_div, check_sizes, launch_1d, rng

FAMILY = "bandwidth"


@cuda.jit
def copy_1pt(a, b):
    i = cuda.grid(1)
    if i < a.size:
        a[i] = b[i]


@cuda.jit
def copy_gs(a, b):
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    while i < a.size:
        a[i] = b[i]
        i += stride


@cuda.jit
def scale_1pt(a, b, s):
    i = cuda.grid(1)
    if i < a.size:
        a[i] = s * b[i]


@cuda.jit
def scale_gs(a, b, s):
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    while i < a.size:
        a[i] = s * b[i]
        i += stride


@cuda.jit
def triad_1pt(a, b, c, s):
    i = cuda.grid(1)
    if i < a.size:
        a[i] = b[i] + s * c[i]


@cuda.jit
def triad_gs(a, b, c, s):
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    while i < a.size:
        a[i] = b[i] + s * c[i]
        i += stride


_KERNELS = {
    ("copy", "1pt"): copy_1pt,
    ("copy", "gs"): copy_gs,
    ("scale", "1pt"): scale_1pt,
    ("scale", "gs"): scale_gs,
    ("triad", "1pt"): triad_1pt,
    ("triad", "gs"): triad_gs,
}
# (arrays read, FLOP per element)
_SHAPE = {"copy": (1, 0), "scale": (1, 1), "triad": (2, 2)}
SCALAR = np.float32(3.0)

_SIZES = {
    "tiny": (300,),
    "quick": (1 << 12, 1 << 18, 1 << 24),
    # 4 KiB .. 1 GiB per array: launch-bound, L2-resident, DRAM-bound.
    "full": tuple(1 << p for p in range(10, 29, 2)),
}


def _inputs(kind: str, n: int, seed: int) -> dict[str, np.ndarray]:
    g = rng(seed)
    d = {"out": np.zeros(n, np.float32), "b": g.random(n, dtype=np.float32)}
    if kind == "triad":
        d["c"] = g.random(n, dtype=np.float32)
    return d


def _run(kind: str, variant: str, blocks: int, inp):
    k = _KERNELS[(kind, variant)]
    if kind == "copy":
        k[blocks, THREADS](inp["out"], inp["b"])
    elif kind == "scale":
        k[blocks, THREADS](inp["out"], inp["b"], SCALAR)
    else:
        k[blocks, THREADS](inp["out"], inp["b"], inp["c"], SCALAR)
    return inp["out"]


def _reference(kind: str, inp):
    if kind == "copy":
        return inp["b"].copy()
    if kind == "scale":
        return SCALAR * inp["b"]
    return inp["b"] + SCALAR * inp["c"]


def _case(kind: str, variant: str, n: int) -> KernelCase:
    reads, flop_per = _SHAPE[kind]
    blocks = ceil_div(n, THREADS) if variant == "1pt" else min(GRID_STRIDE_BLOCKS, ceil_div(n, THREADS))
    launch = launch_1d(blocks, registers=16)
    read_b, write_b = 4 * n * reads, 4 * n
    name = f"{kind}/{variant}/n={n}"
    return KernelCase(
        name=name,
        family=FAMILY,
        target="gpu",
        params={"kernel": kind, "variant": variant, "n": n, "dtype": "float32"},
        make_inputs=functools.partial(_inputs, kind, n),
        run=functools.partial(_run, kind, variant, blocks),
        reference=functools.partial(_reference, kind),
        describe=functools.partial(
            workloads.kernel,
            name,
            "float32",
            launch,
            flop_vector=flop_per * n,
            dram_read_bytes=read_b,
            dram_write_bytes=write_b,
            working_set_bytes=read_b + write_b,
        ),
        rtol=rtol_for("float32") if kind == "triad" else 1e-6,
        tags=("grid-stride" if variant == "gs" else "one-per-thread",),
        launch=launch,
        bytes_moved=read_b + write_b,
        flop=flop_per * n,
    )


def cases(sizes: str) -> list[KernelCase]:
    check_sizes(sizes)
    return [_case(kind, variant, n) for (kind, variant) in _KERNELS for n in _SIZES[sizes]]
