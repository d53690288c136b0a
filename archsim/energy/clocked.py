"""The numba kernels that run a large (ops, points) block of ops at their clocks (:func:`archsim.cost.power.apply`).

Once the governor has set each (op, point)'s clock ratio, the op's time, the clock's factors (the
clock, ``V(f) / v_max``, its square, the board and clock-network powers), the energies scaled by the
voltage factor, the static, leakage and clock energies over the new time, their total, the average
power, the power-limited time and the clock-scaled times take some forty numpy passes over the
block, each reading and writing arrays of the block's size. :func:`rescale` makes one pass, each
(op, point) running the same IEEE double operations in the same order on the same operands
(numba's default: no ``fastmath``, no reassociation or contraction into fused multiply-adds;
``error_model="numpy"``: a division by zero gives inf or NaN).

What stays numpy's: the leakage's factor ``(V(f) / v_max)^n`` (numpy's power, whose vector loop is
not the C library's ``pow``). :func:`voltage_ratios` gathers the ``V(f) / v_max`` that need it (one
per (op, point) whose ratio is not 1, one per point at the ratio 1) for one numpy power over them.

Imported by :mod:`archsim.cost.power` only for large blocks (a lone estimate does not import numba
through it).
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["voltage_ratios", "rescale", "ISSUE", "NOC", "INTERFACE", "STATIC", "LEAKAGE", "CLOCK", "ROWS"]

ISSUE, NOC, INTERFACE, STATIC, LEAKAGE, CLOCK = range(6)
"""Codes of :func:`rescale`'s ``order`` for the energies it computes: instruction issue, on-chip
network, memory interface, static (board), leakage and clock network."""

ROWS = 6
"""Codes from ``ROWS`` on name a row of ``onchip`` (``ROWS + i``) then of ``offchip``
(``ROWS + len(onchip) + i``)."""

POINTS = ("nominal_hz", "knee_hz", "slope", "v_min", "v_max", "vmax_hz", "clock_w", "board_w", "phy_w", "exponent")
"""Rows of the per-point table of :func:`voltage_ratios` and :func:`rescale` (H points each): the
nominal clock (Hz), the voltage curve's knee (Hz), slope ((v_max - v_min) / (vmax_hz - knee_hz), V/Hz),
v_min, v_max (V) and v_max's clock (Hz), the clock-network and board powers at v_max and the PHYs'
power (W), the leakage's exponent."""

LENGTHENED = 1.0 + 1e-12
"""How much longer than the nominal latency an op must be to count as lengthened by the clock."""


@njit(cache=True, inline="always", error_model="numpy")
def _relative_voltage(x, nominal_hz, knee_hz, slope, v_min, v_max):  # pragma: no cover - numba
    """``V(f) / v_max`` at clock ratio ``x`` (:func:`archsim.energy.dvfs.voltage`'s operations, and
    ``numpy.maximum``'s: of equal values the second, a NaN propagates); returns ``(f, V(f) / v_max)``."""
    fe = nominal_hz * x
    above = fe - knee_hz
    above = above if (above > 0.0 or above != above) else 0.0
    above = slope * above
    re = v_min + above
    return fe, re / v_max


@njit(cache=True, error_model="numpy")
def voltage_ratios(ratio, points, rel, n, at):  # pragma: no cover - numba
    """Write ``V(f) / v_max``, the leakage exponent and the entry of each (op, point) whose clock ratio
    is not 1 into ``rel``, ``n`` and ``at``, in entry order, then ``V(f) / v_max`` and the exponent of
    each point at the ratio 1; returns how many (op, point) entries were written (the points follow).

    ``ratio``: flat, op-major (entry ``e`` at point ``e % H``), or empty for the ratio 1 everywhere;
    ``points``: the per-point table (:data:`POINTS`, rows of H);
    ``rel`` and ``n``: room for the entries whose ratio is not 1 and the H points, ``at`` for the
    entries."""
    nominal_hz, knee_hz, slope, v_min, v_max = points[0], points[1], points[2], points[3], points[4]
    exponent = points[9]
    h = nominal_hz.shape[0]
    k = 0
    for r in range(ratio.shape[0] // h):
        row = ratio[r * h:(r + 1) * h]  # a slice: indices the compiler knows are in range
        for j in range(h):
            x = row[j]
            if x != 1.0:
                rel[k] = _relative_voltage(x, nominal_hz[j], knee_hz[j], slope[j], v_min[j], v_max[j])[1]
                n[k] = exponent[j]
                at[k] = r * h + j
                k += 1
    for j in range(h):
        rel[k + j] = _relative_voltage(1.0, nominal_hz[j], knee_hz[j], slope[j], v_min[j], v_max[j])[1]
        n[k + j] = exponent[j]
    return k


TILE = 512
"""Entries of one op's row :func:`rescale` takes at once."""


@njit(cache=True, error_model="numpy")
def rescale(ratio, latency, nominal_s, fixed, clock_s, memory_s, excess, leakage_w, issue, noc, iface, points,
            leak, at, onchip, clocked, offchip, order, full,
            lat, clock_hz, power_w, limited, power_s, static_j, leakage_j, clock_j):  # pragma: no cover - numba
    """Every (op, point) of a block at its clock ratio, as :func:`archsim.cost.power.apply`'s numpy
    passes make it.

    Per (op, point), flat and op-major (entry ``e`` at point ``j = e % H``): ``ratio`` (empty: 1
    everywhere), the nominal ``latency`` and the time at the ratio 1 ``nominal_s`` (s), the time
    split ``fixed``, ``clock_s``, ``memory_s``, ``excess`` (s), the leakage power times the occupancy
    share ``leakage_w`` (W), the issue, on-chip network and memory interface energies ``issue``,
    ``noc``, ``iface`` (J, scaled in place). ``points``: the per-point table (:data:`POINTS`: the
    nominal clock, the voltage curve, the clock-network and board powers at v_max and the PHYs'
    power, W). ``leak``: numpy's power of :func:`voltage_ratios`' output in its order (the
    entries whose ratio is not 1, at the entries ``at``, then the H points). ``onchip`` (rows, E):
    energies scaled by ``(V / v_max)^2`` in place; ``clocked`` (rows, E): times divided by the ratio
    in place; ``offchip`` (rows, E): energies read. ``order``: the energies summed into the total,
    left to right (codes :data:`ISSUE` .. :data:`CLOCK` and :data:`ROWS` on).

    Entry by entry: ``t = latency + ((fixed + max(clock_s / r, memory_s) + excess / r) - nominal_s)``
    (at the ratio 1 everywhere ``latency + (nominal_s - nominal_s)``); the clock's factors
    (:func:`archsim.energy.nominal.clock_factors`); the leakage ``leakage_w x leak``; the energies
    ``issue x v2``, ``noc x v2``, ``iface + phy_w x t``, ``(board - phy_w) x t``, ``leakage x t``,
    ``clock x t``; ``power_w = total / t`` where ``t > 0`` else 0; ``power_s = t - fixed`` where ``t >
    latency x (1 + 1e-12)`` else 0; ``limited`` 1 where ``r < 1`` else 0. Without ``full`` (a caller
    that reads the latency and the energies alone), ``clocked``, ``clock_hz``, ``power_w``,
    ``limited`` and ``power_s`` are neither read nor written (they may be empty).

    :data:`TILE` entries of an op's row at a time, each step a loop over them that writes one array
    (the compiler vectorises such loops; it does not vectorise one loop over all the arrays, and the
    tile's temporaries stay in the cache). The outputs ``lat`` .. ``clock_j`` are written once every
    input of the tile is read: each may be an input array.
    """
    nominal_hz, knee_hz, slope, v_min, v_max = points[0], points[1], points[2], points[3], points[4]
    vmax_hz, clock_w, board_w, phy_w = points[5], points[6], points[7], points[8]
    h = nominal_hz.shape[0]
    n_on = onchip.shape[0]
    governed = at.shape[0]
    unit = ratio.shape[0] == 0
    # The tile's temporaries: the ratio, the leakage's factor, the time, the power-limited time, the
    # clock, (V / v_max)^2, board and clock-network powers, static, leakage and clock energies, total.
    x, lk, t, ps = np.empty(TILE), np.empty(TILE), np.empty(TILE), np.empty(TILE)
    fe, sq, board, ce = np.empty(TILE), np.empty(TILE), np.empty(TILE), np.empty(TILE)
    st, lg, ck, total = np.empty(TILE), np.empty(TILE), np.empty(TILE), np.empty(TILE)
    k = 0
    for r in range(latency.shape[0] // h):
        for s in range(0, h, TILE):
            w = min(TILE, h - s)
            base = r * h + s
            end = base + w
            if unit:
                x[:w] = 1.0
            else:
                rt = ratio[base:end]
                for q in range(w):
                    x[q] = rt[q]
            lp = leak[governed + s:governed + s + w]
            for q in range(w):
                lk[q] = lp[q]
            while k < governed and at[k] < end:
                lk[at[k] - base] = leak[k]
                k += 1
            late, fix, cs, ms = latency[base:end], fixed[base:end], clock_s[base:end], memory_s[base:end]
            ex, ns = excess[base:end], nominal_s[base:end]
            if unit:
                for q in range(w):
                    t[q] = late[q] + (ns[q] - ns[q])
            else:
                for q in range(w):
                    a = cs[q] / x[q]
                    b = ms[q]
                    u = fix[q] + (a if (a > b or a != a) else b)
                    u = u + ex[q] / x[q]
                    t[q] = late[q] + (u - ns[q])
            if full:
                for q in range(w):
                    u = t[q]
                    ps[q] = u - fix[q] if u > late[q] * LENGTHENED else 0.0
            f0, kn, sl, vn, vx, vh, cw, bw, pw = (nominal_hz[s:s + w], knee_hz[s:s + w], slope[s:s + w], v_min[s:s + w],
                                                  v_max[s:s + w], vmax_hz[s:s + w], clock_w[s:s + w], board_w[s:s + w],
                                                  phy_w[s:s + w])
            for q in range(w):
                fe[q] = f0[q] * x[q]
            for q in range(w):
                above = fe[q] - kn[q]
                above = above if (above > 0.0 or above != above) else 0.0
                above = sl[q] * above
                re = vn[q] + above
                re = re / vx[q]
                sq[q] = re * re
            for q in range(w):
                board[q] = bw[q] + 0.0 * x[q]
            for q in range(w):
                c = fe[q] / vh[q]
                c = cw[q] * c
                ce[q] = c * sq[q]
            for q in range(w):
                st[q] = (board[q] - pw[q]) * t[q]
            lw = leakage_w[base:end]
            for q in range(w):
                lg[q] = (lw[q] * lk[q]) * t[q]
            for q in range(w):
                ck[q] = ce[q] * t[q]
            _scale(issue[base:end], sq, w)
            _scale(noc[base:end], sq, w)
            fc = iface[base:end]
            for q in range(w):
                fc[q] = fc[q] + pw[q] * t[q]
            for i in range(n_on):
                _scale(onchip[i, base:end], sq, w)
            for i in range(clocked.shape[0] if full else 0):
                row = clocked[i, base:end]
                for q in range(w):
                    row[q] = row[q] / x[q]
            for m in range(order.shape[0] if full else 0):  # the total, for the average power
                c = order[m]
                if c == STATIC:
                    src = st[:w]
                elif c == LEAKAGE:
                    src = lg[:w]
                elif c == CLOCK:
                    src = ck[:w]
                elif c == ISSUE:
                    src = issue[base:end]
                elif c == NOC:
                    src = noc[base:end]
                elif c == INTERFACE:
                    src = iface[base:end]
                elif c < ROWS + n_on:
                    src = onchip[c - ROWS, base:end]
                else:
                    src = offchip[c - ROWS - n_on, base:end]
                if m == 0:
                    for q in range(w):
                        total[q] = src[q]
                else:
                    for q in range(w):
                        total[q] = total[q] + src[q]
            _put(lat[base:end], t, w)
            if full:
                _put(clock_hz[base:end], fe, w)
                pwr = power_w[base:end]
                for q in range(w):
                    u = t[q]
                    pwr[q] = total[q] / u if u > 0 else 0.0
                lim = limited[base:end]
                for q in range(w):
                    lim[q] = 1.0 if x[q] < 1.0 else 0.0
                _put(power_s[base:end], ps, w)
            _put(static_j[base:end], st, w)
            _put(leakage_j[base:end], lg, w)
            _put(clock_j[base:end], ck, w)


@njit(cache=True, inline="always", error_model="numpy")
def _scale(a, by, w):  # pragma: no cover - numba
    """``a[:w] *= by[:w]`` (each entry ``a x by``)."""
    for q in range(w):
        a[q] = a[q] * by[q]


@njit(cache=True, inline="always", error_model="numpy")
def _put(a, values, w):  # pragma: no cover - numba
    """``a[:w] = values[:w]``."""
    for q in range(w):
        a[q] = values[q]
