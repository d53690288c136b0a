"""Elementwise activations: relu and gelu (erf form), fp32, grid-stride.

Traffic: reads 4n, writes 4n bytes. FLOP: relu 1 per element (a compare-select); gelu
``0.5 x (1 + erf(x / sqrt 2))`` is 4 vector FLOP plus one special-function evaluation (erf, which
CUDA's libdevice evaluates as a short polynomial on the FMA pipes): archsim's ``gelu_erf``.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from numba import cuda

from validation import workloads
from validation.cases import KernelCase
from validation.check import rtol_for
from validation.kernels.gpu._common import GRID_STRIDE_BLOCKS, THREADS, ceil_div, check_sizes, launch_1d, rng

FAMILY = "elementwise"
_INV_SQRT2 = 1.0 / math.sqrt(2.0)
# The kernel's constants are float32: a Python float in a numba kernel is a float64, and float32 x
# float64 promotes, so ``0.5 * v`` or ``v * _INV_SQRT2`` would run gelu (and its erf) in double precision.
_HALF_F32 = np.float32(0.5)
_ONE_F32 = np.float32(1.0)
_INV_SQRT2_F32 = np.float32(_INV_SQRT2)


@cuda.jit
def relu_gs(y, x):
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    while i < y.size:
        v = x[i]
        y[i] = v if v > 0 else 0.0
        i += stride


@cuda.jit
def gelu_gs(y, x):
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    while i < y.size:
        v = x[i]
        y[i] = _HALF_F32 * v * (_ONE_F32 + math.erf(v * _INV_SQRT2_F32))
        i += stride


_KERNELS = {"relu": relu_gs, "gelu": gelu_gs}
_ARCHSIM_FN = {"relu": "relu", "gelu": "gelu_erf"}
_SIZES = {
    "tiny": (257,),
    "quick": (1 << 12, 1 << 20, 1 << 24),
    "full": tuple(1 << p for p in range(10, 29, 3)),
}


def _inputs(n: int, seed: int) -> dict[str, np.ndarray]:
    g = rng(seed)
    return {
        "out": np.zeros(n, np.float32),
        "x": (g.standard_normal(n, dtype=np.float32) * 3).astype(np.float32),
    }


def _run(fn: str, blocks: int, inp):
    _KERNELS[fn][blocks, THREADS](inp["out"], inp["x"])
    return inp["out"]


def _reference(fn: str, inp):
    x = inp["x"].astype(np.float64)
    if fn == "relu":
        return np.maximum(x, 0.0)
    from scipy.special import erf  # imported here: a missing scipy skips these cases, not the suite

    return 0.5 * x * (1.0 + erf(x * _INV_SQRT2))


def _case(fn: str, n: int) -> KernelCase:
    blocks = min(GRID_STRIDE_BLOCKS, ceil_div(n, THREADS))
    launch = launch_1d(blocks, registers=24)
    return KernelCase(
        name=f"{fn}/n={n}",
        family=FAMILY,
        target="gpu",
        params={"fn": fn, "n": n, "dtype": "float32"},
        make_inputs=functools.partial(_inputs, n),
        run=functools.partial(_run, fn, blocks),
        reference=functools.partial(_reference, fn),
        describe=functools.partial(workloads.elementwise, (n,), _ARCHSIM_FN[fn], "float32"),
        rtol=rtol_for("float32"),
        launch=launch,
        bytes_moved=8 * n,
        flop=(1 if fn == "relu" else 5) * n,
    )


def cases(sizes: str) -> list[KernelCase]:
    check_sizes(sizes)
    return [_case(fn, n) for fn in _KERNELS for n in _SIZES[sizes]]
