"""numba generators of the memory and branch traces of :mod:`archsim.microarch.traces`.

Each ``*_mem`` function writes the accesses of outer-loop units ``[u0, u1)`` into caller-owned
buffers (address, size, is_write) and returns how many it wrote; the caller sizes the buffers
from the per-unit access count, so no more than one chunk is ever materialised.
"""

from __future__ import annotations

from numba import njit


@njit(cache=True, inline="always")
def _put(addr, size, wr, p, a, s, w):
    addr[p] = a
    size[p] = s
    wr[p] = w
    return p + 1


@njit(cache=True)
def matmul_ijk_mem(n, e, a0, b0, c0, u0, u1, addr, size, wr):  # pragma: no cover - numba
    """Rows i in [u0, u1): for j: for k: load A[i,k], load B[k,j]; store C[i,j] (s in a register)."""
    p = 0
    for i in range(u0, u1):
        for j in range(n):
            for k in range(n):
                p = _put(addr, size, wr, p, a0 + (i * n + k) * e, e, False)
                p = _put(addr, size, wr, p, b0 + (k * n + j) * e, e, False)
            p = _put(addr, size, wr, p, c0 + (i * n + j) * e, e, True)
    return p


@njit(cache=True)
def matmul_ikj_mem(n, e, v, a0, b0, c0, u0, u1, addr, size, wr):  # pragma: no cover - numba
    """Rows i: for k: load A[i,k]; for j in steps of v elements: load B[k,j:], load C[i,j:], store C."""
    p = 0
    for i in range(u0, u1):
        for k in range(n):
            p = _put(addr, size, wr, p, a0 + (i * n + k) * e, e, False)
            for j in range(0, n, v):
                w = min(v, n - j) * e
                p = _put(addr, size, wr, p, b0 + (k * n + j) * e, w, False)
                p = _put(addr, size, wr, p, c0 + (i * n + j) * e, w, False)
                p = _put(addr, size, wr, p, c0 + (i * n + j) * e, w, True)
    return p


@njit(cache=True)
def matmul_blocked_mem(n, e, t, a0, b0, c0, u0, u1, addr, size, wr):  # pragma: no cover - numba
    """Units are (ii, kk) tile pairs in row-major order of the tile grid; inside, jj, then i-k-j."""
    nt = (n + t - 1) // t
    p = 0
    for u in range(u0, u1):
        ii = (u // nt) * t
        kk = (u % nt) * t
        for jj in range(0, n, t):
            for i in range(ii, min(ii + t, n)):
                for k in range(kk, min(kk + t, n)):
                    p = _put(addr, size, wr, p, a0 + (i * n + k) * e, e, False)
                    for j in range(jj, min(jj + t, n)):
                        p = _put(addr, size, wr, p, b0 + (k * n + j) * e, e, False)
                        p = _put(addr, size, wr, p, c0 + (i * n + j) * e, e, False)
                        p = _put(addr, size, wr, p, c0 + (i * n + j) * e, e, True)
    return p


@njit(cache=True)
def conv2d_mem(ci_n, h, w_, kr, ks, e, i0, w0, o0, u0, u1, addr, size, wr):  # pragma: no cover - numba
    """Output channels co in [u0, u1): for y, x: for ci, r, s: load in[ci,y+r,x+s], load w; store out."""
    oh = h - kr + 1
    ow = w_ - ks + 1
    p = 0
    for co in range(u0, u1):
        for y in range(oh):
            for x in range(ow):
                for ci in range(ci_n):
                    for r in range(kr):
                        for s in range(ks):
                            p = _put(addr, size, wr, p, i0 + ((ci * h + y + r) * w_ + x + s) * e, e, False)
                            p = _put(addr, size, wr, p, w0 + (((co * ci_n + ci) * kr + r) * ks + s) * e, e,
                                     False)
                p = _put(addr, size, wr, p, o0 + ((co * oh + y) * ow + x) * e, e, True)
    return p


@njit(cache=True)
def stream_mem(n, e, v, block, n_in, bases, out_base, u0, u1, addr, size, wr):  # pragma: no cover - numba
    """Blocks of ``block`` elements: per v-element vector, load each input array, then store the output
    (``out_base < 0``: no store, a reduction)."""
    p = 0
    for u in range(u0, u1):
        lo = u * block
        hi = min(n, lo + block)
        for i in range(lo, hi, v):
            w = min(v, hi - i) * e
            for q in range(n_in):
                p = _put(addr, size, wr, p, bases[q] + i * e, w, False)
            if out_base >= 0:
                p = _put(addr, size, wr, p, out_base + i * e, w, True)
    return p


@njit(cache=True)
def filter_mem(x, e, x0, out0, block, u0, u1, addr, size, wr):  # pragma: no cover - numba
    """The branchy loop over blocks: load x[i]; if x[i] > 0 (and a store variant): store out[k]."""
    p = 0
    k = 0
    for i in range(0, u0 * block):
        if x[i] > 0.0:
            k += 1
    for u in range(u0, u1):
        for i in range(u * block, min(x.shape[0], (u + 1) * block)):
            p = _put(addr, size, wr, p, x0 + i * e, e, False)
            if out0 >= 0 and x[i] > 0.0:
                p = _put(addr, size, wr, p, out0 + k * e, e, True)
                k += 1
    return p
