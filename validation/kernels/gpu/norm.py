"""Row softmax and layernorm, fp32: one block of 256 threads per row, shared-memory tree reductions.

softmax: pass 1 row max, pass 2 sum of exp(x - max), pass 3 write exp(x - max) / sum.
layernorm (eps = 1e-5, affine gamma/beta): pass 1 mean, pass 2 variance about the mean, pass 3 write
``(x - mean) * rsqrt(var + eps) * gamma + beta``.

Traffic: DRAM reads ``4 rows cols`` once and writes ``4 rows cols`` (passes 2 and 3 re-read the row from
L1/L2: a row of at most 8192 fp32 is 32 KiB); layernorm also reads gamma and beta (``8 cols``).
FLOP per element (archsim's counts, rounded to whole FLOP per element): softmax 5 vector + 1 special
(exp); layernorm 7 vector (mean, centre, variance 2, normalise, affine 2).
"""

from __future__ import annotations

import functools
import math

import numpy as np
from numba import cuda, float32

from validation import workloads
from validation.cases import KernelCase
from validation.check import rtol_for
from validation.kernels.gpu._common import check_sizes, launch_1d, rng

BLOCK = 256
EPS = 1e-5


@cuda.jit(device=True)
def _block_sum(sm, v):
    tid = cuda.threadIdx.x
    sm[tid] = v
    cuda.syncthreads()
    s = BLOCK // 2
    while s > 0:
        if tid < s:
            sm[tid] += sm[tid + s]
        cuda.syncthreads()
        s //= 2
    r = sm[0]
    cuda.syncthreads()
    return r


@cuda.jit(device=True)
def _block_max(sm, v):
    tid = cuda.threadIdx.x
    sm[tid] = v
    cuda.syncthreads()
    s = BLOCK // 2
    while s > 0:
        if tid < s:
            sm[tid] = max(sm[tid], sm[tid + s])
        cuda.syncthreads()
        s //= 2
    r = sm[0]
    cuda.syncthreads()
    return r


@cuda.jit
def softmax_rows(y, x):
    sm = cuda.shared.array(BLOCK, float32)
    row = cuda.blockIdx.x
    tid = cuda.threadIdx.x
    cols = x.shape[1]
    m = float32(-math.inf)
    for j in range(tid, cols, BLOCK):
        m = max(m, x[row, j])
    m = _block_max(sm, m)
    acc = float32(0.0)
    for j in range(tid, cols, BLOCK):
        acc += math.exp(x[row, j] - m)
    total = _block_sum(sm, acc)
    for j in range(tid, cols, BLOCK):
        y[row, j] = math.exp(x[row, j] - m) / total


@cuda.jit
def layernorm_rows(y, x, gamma, beta):
    sm = cuda.shared.array(BLOCK, float32)
    row = cuda.blockIdx.x
    tid = cuda.threadIdx.x
    cols = x.shape[1]
    acc = float32(0.0)
    for j in range(tid, cols, BLOCK):
        acc += x[row, j]
    mean = _block_sum(sm, acc) / float32(cols)
    acc = float32(0.0)
    for j in range(tid, cols, BLOCK):
        d = x[row, j] - mean
        acc += d * d
    rstd = float32(1.0) / math.sqrt(_block_sum(sm, acc) / float32(cols) + float32(EPS))
    for j in range(tid, cols, BLOCK):
        y[row, j] = (x[row, j] - mean) * rstd * gamma[j] + beta[j]


_SIZES = {
    "tiny": ((2, 300),),
    "quick": ((1024, 1024), (8192, 1024)),
    "full": ((64, 1024), (1024, 1024), (8192, 1024), (32768, 1024), (4096, 8192), (65536, 4096)),
}


def _inputs(kind: str, rows: int, cols: int, seed: int) -> dict[str, np.ndarray]:
    g = rng(seed)
    d = {
        "out": np.zeros((rows, cols), np.float32),
        "x": (g.standard_normal((rows, cols), dtype=np.float32) * 2).astype(np.float32),
    }
    if kind == "layernorm":
        d["gamma"] = g.uniform(0.5, 1.5, cols).astype(np.float32)
        d["beta"] = g.uniform(-0.5, 0.5, cols).astype(np.float32)
    return d


def _reference(kind: str, inp):
    x = inp["x"].astype(np.float64)
    if kind == "softmax":
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)
    mean = x.mean(axis=1, keepdims=True)
    var = x.var(axis=1, keepdims=True)
    return (x - mean) / np.sqrt(var + EPS) * inp["gamma"] + inp["beta"]


def _run(kind: str, rows: int, inp):
    if kind == "softmax":
        softmax_rows[rows, BLOCK](inp["out"], inp["x"])
    else:
        layernorm_rows[rows, BLOCK](inp["out"], inp["x"], inp["gamma"], inp["beta"])
    return inp["out"]


def _case(kind: str, rows: int, cols: int) -> KernelCase:
    n = rows * cols
    extra = 8 * cols if kind == "layernorm" else 0
    builder = workloads.softmax if kind == "softmax" else workloads.layernorm
    return KernelCase(
        name=f"{kind}/rows={rows},cols={cols}",
        family=kind,
        target="gpu",
        params={"rows": rows, "cols": cols, "dtype": "float32"},
        make_inputs=functools.partial(_inputs, kind, rows, cols),
        run=functools.partial(_run, kind, rows),
        reference=functools.partial(_reference, kind),
        describe=functools.partial(builder, rows, cols, "float32"),
        rtol=rtol_for("float32"),
        launch=launch_1d(rows, BLOCK, shared_bytes=4 * BLOCK, registers=32),
        bytes_moved=8 * n + extra,
        flop=(6 if kind == "softmax" else 7) * n,
    )


def cases(sizes: str) -> list[KernelCase]:
    check_sizes(sizes)
    return [_case(kind, r, c) for kind in ("softmax", "layernorm") for r, c in _SIZES[sizes]]
