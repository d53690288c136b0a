"""The numba kernel behind :func:`archsim.energy.dvfs._nominal_power` on large (ops, points) blocks.

At the nominal clock an op's power and time (:func:`~archsim.energy.dvfs.total_power`,
:func:`~archsim.energy.dvfs.op_time` at the ratio 1) take a dozen numpy passes over the block, each
reading and writing arrays of the block's size; the kernel makes one pass, each (op, point) running
the same IEEE double operations in the same order on the same operands (numba's default: no
``fastmath``, no reassociation or contraction into fused multiply-adds; ``error_model="numpy"``: a
division by zero gives inf or NaN). The clock's factors (V(f)^2, V(f)^n, the board and clock-network
powers) are per point and computed by numpy before, as the array path computes them.

Imported by :func:`~archsim.energy.dvfs._nominal_power` only for large blocks (a lone estimate,
whose arrays are a few numbers, does not import numba through it).
"""

from __future__ import annotations

from numba import njit

__all__ = ["nominal_power"]


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
