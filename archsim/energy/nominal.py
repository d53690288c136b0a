"""The numba kernels behind :mod:`archsim.energy.dvfs`'s arithmetic on large (ops, points) blocks.

At the nominal clock an op's power and time (:func:`~archsim.energy.dvfs.total_power`,
:func:`~archsim.energy.dvfs.op_time` at the ratio 1) take a dozen numpy passes over the block, and so
do the clock's factors at a block of governed clock ratios (:func:`~archsim.energy.dvfs.clocked_power`),
each pass reading and writing arrays of the block's size; each kernel here makes one pass, each
(op, point) running the same IEEE double operations in the same order on the same operands (numba's
default: no ``fastmath``, no reassociation or contraction into fused multiply-adds;
``error_model="numpy"``: a division by zero gives inf or NaN). What stays numpy's: the factors that
are per point at the nominal clock, and V^n (numpy's power, whose vector loop is not the C
library's ``pow``).

Imported by :mod:`archsim.energy.dvfs` only for large blocks (a lone estimate, whose arrays are a few
numbers, does not import numba through it).
"""

from __future__ import annotations

from numba import njit

__all__ = ["nominal_power", "clock_factors"]


@njit(cache=True, error_model="numpy")
def nominal_power(fixed, clock_s, memory_s, excess, onchip_j, offchip_j, leakage_w, board_w, clock_w, v2, leak,
                  power, time):  # pragma: no cover - numba
    """Fill ``power`` (W) and ``time`` (s) of every (op, point) at the nominal clock.

    The per-(op, point) arrays (``fixed`` .. ``leakage_w`` and the outputs) are flat, op-major: entry
    ``e`` is at point ``e % H``; the per-point arrays (``board_w``, ``clock_w``, ``v2``, ``leak``) have
    the H points. Entry by entry, as the array path's passes make it:

    ``time = fixed + max(clock_s, memory_s) + excess`` (``numpy.maximum``: a NaN propagates, the
    first; of equal values the second), ``inv = 1 / time`` where ``time > 0`` else 0, and
    ``power = board_w + leakage_w x leak + clock_w + onchip_j x v2 x inv + offchip_j x inv``, added
    left to right.
    """
    h = board_w.shape[0]
    for r in range(fixed.shape[0] // h):
        for j in range(h):
            e = r * h + j
            a = clock_s[e]
            b = memory_s[e]
            t = fixed[e] + (a if (a > b or a != a) else b)
            t = t + excess[e]
            time[e] = t
            inv = 1.0 / t if t > 0 else 0.0
            total = board_w[j] + leakage_w[e] * leak[j]
            total = total + clock_w[j]
            onchip = onchip_j[e] * v2[j]
            onchip = onchip * inv
            total = total + onchip
            offchip = offchip_j[e] * inv
            power[e] = total + offchip


@njit(cache=True, error_model="numpy")
def clock_factors(ratio, nominal_hz, knee_hz, slope, v_min, v_max, vmax_hz, clock_w, board_w, f, rel, v2, board,
                  clock):  # pragma: no cover - numba
    """Fill the clock's factors of every (op, point) at clock ratio ``ratio``.

    ``ratio`` and the outputs are flat, op-major (entry ``e`` at point ``e % H``); the others are per
    point (H,), ``slope`` = (v_max - v_min) / (vmax_hz - knee_hz). Entry by entry, as the array path's
    passes make it: ``f = nominal_hz x ratio``, ``rel = (v_min + slope x max(f - knee_hz, 0)) / v_max``
    (``numpy.maximum``: of equal values the second, a NaN propagates), ``v2 = rel x rel``,
    ``board = board_w + 0 x ratio`` and ``clock = clock_w x (f / vmax_hz) x v2``.
    """
    h = nominal_hz.shape[0]
    for r in range(ratio.shape[0] // h):
        for j in range(h):
            e = r * h + j
            x = ratio[e]
            fe = nominal_hz[j] * x
            above = fe - knee_hz[j]
            above = above if (above > 0.0 or above != above) else 0.0
            above = slope[j] * above
            re = v_min[j] + above
            re = re / v_max[j]
            sq = re * re
            f[e] = fe
            rel[e] = re
            v2[e] = sq
            board[e] = board_w[j] + 0.0 * x
            ce = fe / vmax_hz[j]
            ce = clock_w[j] * ce
            clock[e] = ce * sq
