"""The numba CPU kernels (single-threaded, no fastmath: the loop nests run as written).

They are the loop nests of :mod:`archsim.microarch.traces`, element for element: row-major float64
arrays, the same loop orders and the same tile sizes.
"""

from __future__ import annotations

from numba import njit


@njit(cache=True)
def matmul_ijk(a, b, c):  # pragma: no cover - numba
    n = a.shape[0]
    for i in range(n):
        for j in range(n):
            s = 0.0
            for k in range(n):
                s += a[i, k] * b[k, j]
            c[i, j] = s


@njit(cache=True)
def matmul_ikj(a, b, c):  # pragma: no cover - numba
    n = a.shape[0]
    c[:, :] = 0.0
    for i in range(n):
        for k in range(n):
            aik = a[i, k]
            for j in range(n):
                c[i, j] += aik * b[k, j]


@njit(cache=True)
def matmul_blocked(a, b, c, tile):  # pragma: no cover - numba
    n = a.shape[0]
    c[:, :] = 0.0
    for ii in range(0, n, tile):
        for kk in range(0, n, tile):
            for jj in range(0, n, tile):
                for i in range(ii, min(ii + tile, n)):
                    for k in range(kk, min(kk + tile, n)):
                        aik = a[i, k]
                        for j in range(jj, min(jj + tile, n)):
                            c[i, j] += aik * b[k, j]


@njit(cache=True)
def triad(a, b, c, s):  # pragma: no cover - numba
    for i in range(a.shape[0]):
        a[i] = b[i] + s * c[i]


@njit(cache=True)
def reduction(x):  # pragma: no cover - numba
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i]
    return s


@njit(cache=True)
def branchy_select(x):  # pragma: no cover - numba
    # LLVM if-converts this into a compare and a masked move: no data-dependent branch.
    s = 0.0
    for i in range(x.shape[0]):
        if x[i] > 0.0:
            s += x[i]
    return s


@njit(cache=True)
def branchy_store(x, out):  # pragma: no cover - numba
    # The conditional store cannot be speculated, so the branch on x[i] > 0 stays a branch.
    s = 0.0
    k = 0
    for i in range(x.shape[0]):
        if x[i] > 0.0:
            s += x[i]
            out[k] = x[i]
            k += 1
    return s, k


@njit(cache=True)
def conv2d(inp, w, out):  # pragma: no cover - numba
    # Direct convolution, stride 1, no padding: out[co, y, x] = sum_ci,r,s in[ci, y+r, x+s] w[co, ci, r, s]
    co_n, ci_n, kr, ks = w.shape
    _, oh, ow = out.shape
    for co in range(co_n):
        for y in range(oh):
            for x in range(ow):
                acc = 0.0
                for ci in range(ci_n):
                    for r in range(kr):
                        for s in range(ks):
                            acc += inp[ci, y + r, x + s] * w[co, ci, r, s]
                out[co, y, x] = acc


