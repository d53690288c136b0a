"""The numba kernel behind :func:`archsim.energy.dvfs.solve_clock`: the governor's bisection over all points.

Each column of the term table is one over-limit (op, hardware point); the kernel halves the clock
interval :data:`~archsim.energy.dvfs.BISECTION_STEPS` times, keeping the upper end wherever the
power at the midpoint is within the limit (:func:`archsim.energy.dvfs.total_power` minus the limit,
with the clock-independent terms folded by the caller). The arithmetic is written out operation by
operation in IEEE double precision without reassociation or contraction (numba's default, no
``fastmath``) and with numpy's division semantics (``error_model="numpy"``), so the clock of a point
does not depend on how many points are solved together (for the same ``cube`` flag, which a batch
mixing leakage exponents turns off for all its points, as the numpy bisection did): a lone estimate
(a few points) and a sweep (hundreds of thousands) run the same loop, without numpy's per-call
overhead on tiny arrays or its temporaries on large ones.

Imported by :func:`~archsim.energy.dvfs.solve_clock` only when some point is over its limit (numba's
import is not paid by estimates the governor leaves at the nominal clock).
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["TERMS", "bisect", "gather"]

TERMS = ("lo", "vmin", "slope", "f0", "knee", "vmax", "fixed", "clock_s", "memory_s", "excess", "board", "leak",
         "clk", "onchip", "offchip", "limit", "n")
"""Rows of the term table, in order (see :func:`bisect`)."""


@njit(cache=True, inline="always", error_model="numpy")
def _max(a, b):  # pragma: no cover - numba
    """``numpy.maximum`` of two floats (NaN propagates)."""
    return a if (a >= b or a != a) else b


@njit(cache=True, error_model="numpy")
def bisect(terms, steps, cube):  # pragma: no cover - numba
    """The highest clock ratio found by ``steps`` halvings of ``[lo, 1]`` for each column of ``terms``.

    ``terms``: (len(TERMS), points) float64, C-contiguous, rows as :data:`TERMS`: ``lo`` the lower
    end (the minimum clock ratio), the voltage curve (``vmin``, ``slope`` = (v_max - v_min) /
    (vmax_hz - knee), nominal clock ``f0``, ``knee``, ``vmax``), the op's time split at the nominal
    clock (``fixed``, ``clock_s``, ``memory_s``, ``excess``), the constant powers (``board``,
    ``leak`` x occupancy share, ``clk`` = clock-network power x f0 / vmax_hz), the action energies
    (``onchip``, ``offchip``), ``limit`` (W) and the leakage exponent ``n``. ``cube``: every ``n``
    is 3 (V^3 as V^2 x V, two multiplications instead of a power).

    Step by step over all points (each step a branch-free pass over contiguous rows, which the
    compiler vectorises across points; a point's operations are the same in either loop order).
    """
    points = terms.shape[1]
    lo = terms[0].copy()
    hi = np.ones(points)
    vmin, slope, f0, knee, vmax = terms[1], terms[2], terms[3], terms[4], terms[5]
    fixed, clock_s, memory_s, excess = terms[6], terms[7], terms[8], terms[9]
    board, leak, clk, onchip, offchip = terms[10], terms[11], terms[12], terms[13], terms[14]
    limit, n = terms[15], terms[16]
    for _ in range(steps):
        for i in range(points):
            mid = 0.5 * (lo[i] + hi[i])
            rel = (vmin[i] + slope[i] * _max(f0[i] * mid - knee[i], 0.0)) / vmax[i]
            rel2 = rel * rel
            time = fixed[i] + _max(clock_s[i] / mid, memory_s[i]) + excess[i] / mid
            leak_v = rel2 * rel if cube else rel ** n[i]
            power = board[i] + leak[i] * leak_v + clk[i] * mid * rel2 + (onchip[i] * rel2 + offchip[i]) / time
            fits = power - limit[i] <= 0
            lo[i] = mid if fits else lo[i]
            hi[i] = hi[i] if fits else mid
    return lo


@njit(cache=True, error_model="numpy")
def gather(flat, points, at_points, block, at_block, table):  # pragma: no cover - numba
    """Fill the term table's columns (:func:`bisect`) of the (op, point) entries ``flat`` (flat indices
    of an (ops, H) block, op-major): row ``at_points[i]`` from ``points[i]`` (a (terms, H) table) at
    each entry's point (``flat % H``), row ``at_block[i]`` from ``block[i]`` (a tuple of flat arrays
    of the block's entries) at the entry itself. The values are copied, not computed."""
    h = points.shape[1]
    cols = np.empty(flat.shape[0], dtype=np.int64)
    for c in range(flat.shape[0]):
        cols[c] = flat[c] % h
    for i in range(points.shape[0]):
        src = points[i]
        row = table[at_points[i]]
        for c in range(flat.shape[0]):
            row[c] = src[cols[c]]
    for i in range(len(block)):
        src = block[i]
        row = table[at_block[i]]
        for c in range(flat.shape[0]):
            row[c] = src[flat[c]]
