"""Direct 2-D convolution, NCHW input, KCRS filters, fp32: one thread per output element.

Thread (n, k, p, q) computes ``sum_{c,r,s} x[n, c, p*u - pad_h + r, q*v - pad_w + s] * w[k, c, r, s]``
with one FMA per tap on the CUDA cores. It is a naive kernel, not cuDNN: no Tensor Cores, no Winograd
or FFT, no implicit-GEMM tiling, so it is described as a ``Kernel`` with the traffic of this code, never
as the library ``Conv2d`` op (which archsim prices as cuDNN would run it).

Counts (4-byte elements, ``B = 256`` threads per block, ``PQ = P Q`` outputs per (n, k) plane):

* FLOP: ``2 N K P Q C R S`` vector FLOP (padded taps are skipped by the bounds test; counted anyway, an
  upper bound of at most a few percent at these sizes).
* L1: every tap issues two 4-byte global loads (``x`` and ``w``), so the SMs' load path carries
  ``l1_bytes = 8 N K P Q C R S`` = 4 bytes per FLOP. At 128 B/clk/SM against 256 FP32 FLOP/clk/SM this
  bounds the kernel near 1/8 of the FP32 peak, whatever the arithmetic rate.
* L2 -> SM: a block reads, per input channel, the input window its outputs need once (the R x S reuse
  hits in L1) and the filter taps of the k planes it spans: ``l2_bytes = blocks * 4 C (window + k_span R
  S) + 4 N K P Q``. ``window``: the whole H x W plane when ``B >= PQ`` (``k_span = ceil(B / PQ)``);
  otherwise ``min(H, (B/Q) u + R - u) W`` elements when a block spans whole output rows, else ``R
  min(W, B v + S - v)``; ``k_span = 1``.
* DRAM: compulsory ``4 (N C H W + K C R S)`` read and ``4 N K P Q`` written: consecutive blocks walk
  all k of one image, so the image (at most 3.2 MB here) and the filters stay in the 50 MB L2.
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


def _l2_bytes(nn, c, h, w, k, r, s, stride, p, q, blocks) -> int:
    """L2 -> SM bytes of the direct kernel (module docstring)."""
    plane = p * q
    if THREADS >= plane:
        window, k_span = h * w, ceil_div(THREADS, plane)
    elif THREADS >= q:
        window, k_span = min(h, (THREADS * stride) // q + r - stride) * w, 1
    else:
        window, k_span = r * min(w, THREADS * stride + s - stride), 1
    return blocks * 4 * c * (window + k_span * r * s) + 4 * nn * k * plane


def _case(nn, c, h, w, k, r, s, stride, pad) -> KernelCase:
    p, q = _out_hw(h, w, r, s, stride, pad)
    outputs = nn * k * p * q
    blocks = ceil_div(outputs, THREADS)
    flop = 2 * outputs * c * r * s
    read_b, write_b = 4 * (nn * c * h * w + k * c * r * s), 4 * outputs
    name = f"conv2d-direct/n={nn},c={c},h={h},w={w},k={k},r={r},s={s},stride={stride},pad={pad}"
    launch = launch_1d(blocks, registers=40)
    return KernelCase(
        name=name,
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
            workloads.kernel,
            name,
            "float32",
            launch,
            flop_vector=flop,
            dram_read_bytes=read_b,
            dram_write_bytes=write_b,
            working_set_bytes=read_b + write_b,
            l2_bytes=_l2_bytes(nn, c, h, w, k, r, s, stride, p, q, blocks),
            # Two 4-byte loads (x, w) per FMA: 8 bytes per tap.
            l1_bytes=4 * flop,
        ),
        rtol=rtol_for("float32"),
        launch=launch,
        bytes_moved=read_b + write_b,
        flop=flop,
    )


def cases(sizes: str) -> list[KernelCase]:
    check_sizes(sizes)
    return [_case(*cfg) for cfg in _SIZES[sizes]]
