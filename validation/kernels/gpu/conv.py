"""Direct 2-D convolution, NCHW input, KCRS filters, fp32: one thread per output element.

Thread (n, k, p, q) computes ``sum_{c,r,s} x[n, c, p*u - pad_h + r, q*v - pad_w + s] * w[k, c, r, s]``.
FLOP: ``2 N K P Q C R S``. DRAM: compulsory ``4 (N C H W + K C R S)`` read and ``4 N K P Q`` written
(neighbouring threads share input rows and all threads of a warp read the same filter element, so L1/L2
absorb the R S-fold and K-fold reuse).
"""

from __future__ import annotations

import functools

import numpy as np
from numba import cuda, float32

from validation import workloads
from validation.cases import KernelCase
from validation.check import rtol_for
from validation.kernels.gpu._common import THREADS, ceil_div, check_sizes, launch_1d, rng

FAMILY = "conv"


@cuda.jit
def conv2d_direct(y, x, w, stride_h, stride_w, pad_h, pad_w):
    i = cuda.grid(1)
    nb, kb, pb, qb = y.shape
    if i >= nb * kb * pb * qb:
        return
    q = i % qb
    p = (i // qb) % pb
    k = (i // (qb * pb)) % kb
    n = i // (qb * pb * kb)
    cb, hb, wb = x.shape[1], x.shape[2], x.shape[3]
    rb, sb = w.shape[2], w.shape[3]
    acc = float32(0.0)
    for c in range(cb):
        for r in range(rb):
            h = p * stride_h - pad_h + r
            if 0 <= h < hb:
                for s in range(sb):
                    ww = q * stride_w - pad_w + s
                    if 0 <= ww < wb:
                        acc += x[n, c, h, ww] * w[k, c, r, s]
    y[n, k, p, q] = acc


# (N, C, H, W, K, R, S, stride, pad)
_SIZES = {
    "tiny": ((1, 2, 5, 6, 3, 3, 3, 1, 1), (1, 1, 7, 7, 2, 3, 3, 2, 0)),
    "quick": ((8, 64, 28, 28, 64, 3, 3, 1, 1),),
    "full": (
        (1, 64, 56, 56, 64, 3, 3, 1, 1),
        (32, 64, 56, 56, 64, 3, 3, 1, 1),
        (32, 128, 28, 28, 128, 3, 3, 1, 1),
        (32, 256, 14, 14, 256, 3, 3, 1, 1),
        (32, 256, 56, 56, 64, 1, 1, 1, 0),
        (16, 3, 224, 224, 64, 7, 7, 2, 3),
    ),
}


def _out_hw(h: int, w: int, r: int, s: int, stride: int, pad: int) -> tuple[int, int]:
    return (h + 2 * pad - r) // stride + 1, (w + 2 * pad - s) // stride + 1


def _inputs(nn, c, h, w, k, r, s, stride, pad, seed):
    g = rng(seed)
    p, q = _out_hw(h, w, r, s, stride, pad)
    return {
        "out": np.zeros((nn, k, p, q), np.float32),
        "x": g.uniform(-1, 1, (nn, c, h, w)).astype(np.float32),
        "w": g.uniform(-1, 1, (k, c, r, s)).astype(np.float32),
    }


def _reference(stride: int, pad: int, inp):
    x = inp["x"].astype(np.float64)
    w = inp["w"].astype(np.float64)
    r, s = w.shape[2], w.shape[3]
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    win = np.lib.stride_tricks.sliding_window_view(xp, (r, s), axis=(2, 3))[:, :, ::stride, ::stride]
    # win: (N, C, P, Q, R, S); contract C, R, S with w (K, C, R, S).
    return np.einsum("ncpqrs,kcrs->nkpq", win, w, optimize=True)


def _run(blocks: int, stride: int, pad: int, inp):
    conv2d_direct[blocks, THREADS](inp["out"], inp["x"], inp["w"], stride, stride, pad, pad)
    return inp["out"]


def _case(nn, c, h, w, k, r, s, stride, pad) -> KernelCase:
    p, q = _out_hw(h, w, r, s, stride, pad)
    outputs = nn * k * p * q
    blocks = ceil_div(outputs, THREADS)
    flop = 2 * outputs * c * r * s
    read_b, write_b = 4 * (nn * c * h * w + k * c * r * s), 4 * outputs
    return KernelCase(
        name=f"conv2d-direct/n={nn},c={c},h={h},w={w},k={k},r={r},s={s},stride={stride},pad={pad}",
        family=FAMILY,
        target="gpu",
        params={
            "n": nn,
            "c": c,
            "h": h,
            "w": w,
            "k": k,
            "r": r,
            "s": s,
            "stride": stride,
            "pad": pad,
            "dtype": "float32",
        },
        make_inputs=functools.partial(_inputs, nn, c, h, w, k, r, s, stride, pad),
        run=functools.partial(_run, blocks, stride, pad),
        reference=functools.partial(_reference, stride, pad),
        describe=functools.partial(
            workloads.conv2d, nn, c, k, h, w, (r, s), (stride, stride), (pad, pad), "float32"
        ),
        rtol=rtol_for("float32"),
        launch=launch_1d(blocks, registers=40),
        bytes_moved=read_b + write_b,
        flop=flop,
    )


def cases(sizes: str) -> list[KernelCase]:
    check_sizes(sizes)
    return [_case(*cfg) for cfg in _SIZES[sizes]]
