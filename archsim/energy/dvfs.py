"""Power limits and DVFS: the highest clock whose average power fits the limit.

An op run at clock ``f`` (ratio ``r = f / f_nom`` to the device's nominal clock) takes

    t(r) = t_fixed + max(T_clock / r, T_mem) + T_excess / r

where ``T_clock`` is the longest clock-bound time (compute units, L1 and L2, whose bandwidths
scale with the core clock), ``T_mem`` the longest time that does not scale (DRAM, dependent-latency
chains), ``T_excess`` any extra wave-by-wave time of the kernel, and ``t_fixed`` its launch/dispatch
overheads. Its average power is (:class:`archsim.hardware.PowerModel`)

    P(r) = P_board + P_leak x (V/v_max)^n x occupancy share + P_clock x (f/f_vmax) x (V/v_max)^2
           + (E_onchip x (V(f)/v_max)^2 + E_offchip) / t(r)

Every term falls as the clock falls (V is non-decreasing in f and t(r) non-increasing), so
``P(r) <= limit`` holds on an interval ``[r_min, r*]``: :func:`solve_clock` finds ``r*`` by bisection,
over every over-limit (op, hardware point) at once in one compiled loop
(:mod:`archsim.energy.governor`). Where even ``min_clock`` exceeds the limit the governor sits at
``min_clock`` (the chip would throttle further by clock gating, which is not modelled). All arrays
broadcast together; units are SI (s, J, W, Hz, V).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["VFCurve", "PowerTerms", "ClockedPower", "voltage", "op_time", "clocked_power", "op_power", "total_power",
           "solve_clock", "governed", "nominal_or_governed", "writer", "INPLACE_MIN", "point_time",
           "point_clocked_power", "point_governed", "float_maximum", "c_float64"]

BISECTION_STEPS = 20
"""Halvings of the clock interval: 2^-20 of the nominal clock is ~1.5 kHz at 1.5 GHz."""


@dataclass(frozen=True)
class VFCurve:
    """Piecewise-linear voltage-frequency curves over points (arrays, V and Hz)."""

    v_min: np.ndarray
    v_max: np.ndarray
    knee_hz: np.ndarray
    vmax_hz: np.ndarray


INPLACE_MIN = 4096
"""Entries from which the arithmetic here writes into its own temporaries (a ufunc's ``out``) instead
of new arrays: on large arrays the new pages cost more than the arithmetic; on small ones the
``out`` argument costs more than the array it saves."""

Ufunc2 = Callable[[np.ufunc, Any, Any, Any], Any]
"""``(ufunc, a, b, out) -> ufunc(a, b)``: :func:`_into` or :func:`_call`."""


def _into(ufunc: np.ufunc, a: Any, b: Any, out: Any) -> Any:
    """``ufunc(a, b)`` written into ``out`` (``a`` or ``b``: a temporary the caller owns) when that has
    the result's shape: the same floats, one new array fewer."""
    try:
        return ufunc(a, b, out=out)
    except (TypeError, ValueError):  # out is a scalar, or smaller than the broadcast result
        return ufunc(a, b)


def _call(ufunc: np.ufunc, a: Any, b: Any, out: Any) -> Any:
    """``ufunc(a, b)`` (``out`` unused): :func:`_into` for small arrays."""
    return ufunc(a, b)


def writer(temporary: Any) -> Ufunc2:
    """How to apply the ufuncs that follow ``temporary`` (a new array, or a scalar): into their
    temporaries (:func:`_into`) where it has :data:`INPLACE_MIN` entries or more, else plainly."""
    return _into if getattr(temporary, "size", 0) >= INPLACE_MIN else _call


def voltage(curve: VFCurve, clock_hz: np.ndarray) -> np.ndarray:
    """V(f): ``v_min`` up to the knee, then linear to ``v_max`` at ``vmax_hz`` (extrapolated above)."""
    slope = (curve.v_max - curve.v_min) / (curve.vmax_hz - curve.knee_hz)
    above = np.maximum(clock_hz - curve.knee_hz, 0.0)
    into = writer(above)
    return into(np.add, curve.v_min, into(np.multiply, slope, above, above), above)


@dataclass(frozen=True)
class PowerTerms:
    """What an op's power depends on, over points (arrays broadcast together).

    Attributes:
        nominal_hz: the clock the times and energies were computed at.
        fixed_s, clock_s, memory_s, excess_s: the time split of the module doc at the nominal clock.
        onchip_j: action energies at v_max that scale with V^2 (arithmetic, issue, register, L1, L2, NoC).
        offchip_j: action energies that do not (DRAM core and I/O, memory interface, links).
        board_w, leakage_w, clock_w: the constant terms at v_max (leakage already times the
            occupancy share).
        leakage_exponent: n of the leakage's V^n.
    """

    nominal_hz: np.ndarray
    fixed_s: np.ndarray
    clock_s: np.ndarray
    memory_s: np.ndarray
    excess_s: np.ndarray
    onchip_j: np.ndarray
    offchip_j: np.ndarray
    board_w: np.ndarray
    leakage_w: np.ndarray
    clock_w: np.ndarray
    leakage_exponent: np.ndarray
    curve: VFCurve


def op_time(t: PowerTerms, ratio: np.ndarray) -> np.ndarray:
    """t(r) of the module doc, in s."""
    bound = t.clock_s / ratio
    into = writer(bound)
    bound = into(np.add, t.fixed_s, into(np.maximum, bound, t.memory_s, bound), bound)
    return into(np.add, bound, t.excess_s / ratio, bound)


@dataclass(frozen=True)
class ClockedPower:
    """What the clock ratio sets, whatever the op's energies (arrays broadcast together).

    Attributes:
        clock_hz: the clock, ``nominal_hz x ratio`` (Hz).
        v2: ``(V(f) / v_max)^2``, the factor of the energies at v_max (dimensionless).
        board_w, leakage_w, clock_w: the constant terms of :func:`op_power` (W).
    """

    clock_hz: np.ndarray
    v2: np.ndarray
    board_w: np.ndarray
    leakage_w: np.ndarray
    clock_w: np.ndarray


def clocked_power(t: PowerTerms, ratio: np.ndarray, leakage_out: np.ndarray | None = None) -> ClockedPower:
    """The clock, the energies' voltage factor and the constant powers at clock ratio ``ratio``:
    :func:`op_power`'s board, leakage and clock terms, without its time and energy terms.

    ``leakage_out``: a temporary the caller owns, of the leakage's shape, to write the leakage into
    where ``ratio`` is of the points' shape (large arrays; the same floats)."""
    f, v2, leak, board, clock = _clock_factors(t, ratio)
    # The leakage: of the ops' shape where f is of the points' (solve_clock's nominal clock).
    leakage = writer(t.leakage_w)(np.multiply, t.leakage_w, leak,
                                  leak if leakage_out is None or np.shape(leak) == np.shape(t.leakage_w)
                                  else leakage_out)
    return ClockedPower(clock_hz=f, v2=v2, board_w=board, leakage_w=leakage, clock_w=clock)


def _clock_factors(t: PowerTerms, ratio: np.ndarray) -> tuple[Any, Any, Any, Any, Any]:
    """What :func:`clocked_power` computes of the clock alone, each a new array (or number): the clock
    (Hz), ``(V(f) / v_max)^2``, ``(V(f) / v_max)^n`` (the leakage's factor), the board power and the
    clock-network power (W)."""
    fused = _fused_clock_factors(t, ratio)
    if fused is not None:
        f, rel, v2, board, clock = fused
        return f, v2, rel ** t.leakage_exponent, board, clock
    f = t.nominal_hz * ratio
    into = writer(f)
    rel = voltage(t.curve, f)
    rel = into(np.divide, rel, t.curve.v_max, rel)
    v2 = rel ** 2
    leak = rel ** t.leakage_exponent
    board = 0.0 * ratio
    clock = f / t.curve.vmax_hz
    clock = into(np.multiply, into(np.multiply, t.clock_w, clock, clock), v2, clock)
    return f, v2, leak, into(np.add, t.board_w, board, board), clock


def _fused_clock_factors(t: PowerTerms, ratio: np.ndarray) -> tuple[np.ndarray, ...] | None:
    """:func:`_clock_factors` but the leakage's factor at a large block of clock ratios in one compiled
    pass (:func:`archsim.energy.nominal.clock_factors`): the clock (Hz), ``V(f) / v_max``, its square,
    the board and the clock-network powers (W), the same floats, each a new array of the ratios'
    shape. ``None`` (numpy's passes then) unless ``ratio`` is a C-contiguous float64 array of
    :data:`INPLACE_MIN` entries or more whose last axis is the points and the terms used are float64
    arrays of the points (the leakage's factor, numpy's power, is taken of ``V(f) / v_max`` by the
    caller)."""
    if type(ratio) is not np.ndarray or ratio.dtype != np.float64 or ratio.size < INPLACE_MIN \
            or not ratio.flags.c_contiguous or not ratio.shape:
        return None
    c = t.curve
    h = ratio.shape[-1]
    points = [t.nominal_hz, c.knee_hz, (c.v_max - c.v_min) / (c.vmax_hz - c.knee_hz), c.v_min, c.v_max, c.vmax_hz,
              t.clock_w, t.board_w]
    if not c_float64(points, (h,)):
        return None
    from archsim.energy import nominal  # numba: imported for large blocks only

    out = [np.empty(ratio.shape) for _ in range(5)]
    nominal.clock_factors(ratio.reshape(-1), *points, *[a.reshape(-1) for a in out])
    return tuple(out)


def op_power(t: PowerTerms, ratio: np.ndarray) -> dict[str, np.ndarray]:
    """Average power by term at clock ratio ``ratio`` (W): board, leakage, clock, onchip, offchip."""
    c = clocked_power(t, ratio)
    time = op_time(t, ratio)
    inv = np.divide(1.0, time, out=np.zeros_like(time), where=time > 0)
    return {
        "board": c.board_w,
        "leakage": c.leakage_w,
        "clock": c.clock_w,
        "onchip": t.onchip_j * c.v2 * inv,
        "offchip": t.offchip_j * inv,
    }


def total_power(t: PowerTerms, ratio: np.ndarray) -> np.ndarray:
    """The sum of :func:`op_power` (W)."""
    parts = op_power(t, ratio)
    return parts["board"] + parts["leakage"] + parts["clock"] + parts["onchip"] + parts["offchip"]


def solve_clock(t: PowerTerms, limit_w: np.ndarray, min_ratio: np.ndarray) -> np.ndarray:
    """The highest clock ratio in ``[min_ratio, 1]`` whose power is within ``limit_w``.

    1 where the op fits at the nominal clock; ``min_ratio`` where nothing fits. Bisection on
    the monotone :func:`total_power` (module doc), on the over-limit points only, all at once.
    """
    return governed(t, limit_w, min_ratio)[0]


def governed(t: PowerTerms, limit_w: np.ndarray, min_ratio: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`solve_clock`'s clock ratio, and ``op_time(t, 1)`` (s) that it computes on the way.

    The time is of the ratio's shape where ``t``'s times have it (as power.apply's terms do);
    otherwise of their broadcast shape."""
    ratio, time = nominal_or_governed(t, limit_w, min_ratio)
    return (np.ones(np.broadcast(t.clock_s, limit_w).shape) if ratio is None else ratio), time


def nominal_or_governed(t: PowerTerms, limit_w: np.ndarray, min_ratio: np.ndarray,
                        scratch: Sequence[np.ndarray | None] = ()) -> tuple[np.ndarray | None, np.ndarray]:
    """:func:`governed`, with ``None`` for the clock ratio where every (op, point) fits at the
    nominal clock (the ratio 1 everywhere, which the caller need not make).

    ``scratch``: up to three temporaries the caller owns, of the terms' broadcast shape, written into
    instead of new arrays (:func:`_nominal_power`) and free again on return."""
    shape = np.broadcast(t.clock_s, limit_w).shape
    # At the nominal clock the clock's factors (f, V(f), its powers) are per point: the ratio 1
    # given in the points' shape computes them once per point, not once per (op, point); every
    # (op, point) gets the same floats as with a ratio of the full shape (the same operations on
    # the same values, broadcast).
    power, time = _nominal_power(t, scratch)
    over = power > limit_w
    if over.shape != shape:
        over = np.broadcast_to(over, shape)
    if not over.any():
        return None, time
    one = np.ones(shape)
    flat = np.flatnonzero(over)
    # The terms of the over-limit points, with everything that does not depend on the clock folded,
    # in the rows of governor.TERMS: each term broadcast into one row of a float64 table and the
    # over-limit entries taken at once (the same values as ``np.broadcast_to(term, shape)[over]``
    # term by term, for one indexing), the table C-contiguous for the compiled loop.
    table = _gather((min_ratio, t.curve.v_min, (t.curve.v_max - t.curve.v_min) / (t.curve.vmax_hz - t.curve.knee_hz),
                     t.nominal_hz, t.curve.knee_hz, t.curve.v_max, t.fixed_s, t.clock_s, t.memory_s, t.excess_s,
                     t.board_w, t.leakage_w, t.clock_w * t.nominal_hz / t.curve.vmax_hz, t.onchip_j, t.offchip_j,
                     limit_w, t.leakage_exponent), one.shape, flat)
    from archsim.energy import governor  # numba: imported once some point is over its limit

    one.reshape(-1)[flat] = governor.bisect(table, BISECTION_STEPS, bool(np.all(table[-1] == 3.0)))
    return one, time


def _nominal_power(t: PowerTerms, scratch: Sequence[np.ndarray | None] = ()) -> tuple[np.ndarray, np.ndarray]:
    """:func:`total_power` and :func:`op_time` at the nominal clock (the ratio 1 in the points'
    shape), with the same operations in the same order and fewer temporaries (W, s): the power, the
    reciprocal time and the on-chip term in ``scratch`` (:func:`nominal_or_governed`) where given."""
    leakage_out, inv_out, onchip_out = (*scratch, None, None, None)[:3]
    ratio = np.ones(np.shape(t.nominal_hz))
    fused = _fused_nominal_power(t, ratio, leakage_out)
    if fused is not None:
        return fused
    c = clocked_power(t, ratio, leakage_out)
    time = _unit_ratio_time(t, ratio)
    if inv_out is None or inv_out.shape != time.shape:
        inv_out = np.zeros_like(time)
    else:
        inv_out.fill(0.0)
    inv = np.divide(1.0, time, out=inv_out, where=time > 0)
    into = writer(inv)
    onchip = into(np.multiply, t.onchip_j, c.v2, onchip_out)
    onchip = into(np.multiply, onchip, inv, onchip)
    total = into(np.add, c.board_w, c.leakage_w, c.leakage_w)
    total = into(np.add, total, c.clock_w, total)
    total = into(np.add, total, onchip, total)
    return into(np.add, total, into(np.multiply, t.offchip_j, inv, inv), total), time


def c_float64(arrays: Sequence[Any], shape: tuple[int, ...]) -> bool:
    """Whether each of ``arrays`` is a C-contiguous float64 numpy array of ``shape`` (what the
    compiled passes of :mod:`archsim.energy.nominal` read and write flat)."""
    return all(type(a) is np.ndarray and a.dtype == np.float64 and a.shape == shape and a.flags.c_contiguous
               for a in arrays)


_BLOCK_TERMS = ("fixed_s", "clock_s", "memory_s", "excess_s", "onchip_j", "offchip_j", "leakage_w")
"""The terms of :func:`_fused_nominal_power`'s kernel that are per (op, point)."""


def _fused_nominal_power(t: PowerTerms, ratio: np.ndarray,
                         out: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`_nominal_power` of a large block in one compiled pass (:mod:`archsim.energy.nominal`):
    the clock's factors per point by numpy (:func:`_clock_factors` at ``ratio``, ones of the points'
    shape), then each (op, point)'s power and time with the same operations in the same order (W, s),
    the power written into ``out`` (a temporary the caller owns) where it has the block's shape.

    ``None`` (the numpy passes then) unless the block has :data:`INPLACE_MIN` entries or more, its
    per-(op, point) terms are C-contiguous float64 arrays of one shape whose last axis is the points,
    and the clock's factors are float64 arrays of the points."""
    block = t.fixed_s
    if type(block) is not np.ndarray or block.size < INPLACE_MIN or np.ndim(ratio) != 1:
        return None
    shape = block.shape
    h = ratio.shape[0]
    if not shape or shape[-1] != h or h == 0:
        return None
    terms = [getattr(t, name) for name in _BLOCK_TERMS]
    if not c_float64(terms, shape):
        return None
    _, v2, leak, board, clock = _clock_factors(t, ratio)
    factors = (board, clock, v2, leak)
    if not c_float64(factors, (h,)):
        return None
    from archsim.energy import nominal  # numba: imported for large blocks only

    if out is None or not c_float64((out,), shape):
        out = np.empty(shape)
    time = np.empty(shape)
    nominal.nominal_power(*[a.reshape(-1) for a in terms], *factors, out.reshape(-1), time.reshape(-1))
    return out, time


def _unit_ratio_time(t: PowerTerms, ratio: np.ndarray) -> np.ndarray:
    """:func:`op_time` at the ratio 1 (``ratio``: ones), in s, without its two divisions: IEEE
    division by one is exact (``x / 1.0`` is ``x``, a quiet NaN stays the NaN it is), so the time is
    ``fixed_s + max(clock_s, memory_s) + excess_s``, the same floats. Where float64 terms do not make
    the shape the ratio broadcasts them to, or the block is small (fewer than :data:`INPLACE_MIN`
    entries: its passes cost less than the checks), :func:`op_time` itself."""
    if getattr(t.clock_s, "size", 0) < INPLACE_MIN:
        return op_time(t, ratio)
    bound = np.maximum(t.clock_s, t.memory_s)
    if (getattr(bound, "dtype", None) != np.float64
            or np.broadcast_shapes(np.shape(t.fixed_s), np.shape(t.excess_s), bound.shape) != bound.shape
            or np.broadcast_shapes(bound.shape, np.shape(ratio)) != bound.shape):
        return op_time(t, ratio)
    into = writer(bound)
    bound = into(np.add, t.fixed_s, bound, bound)
    return into(np.add, bound, t.excess_s, bound)


def float_maximum(a: float, b: float) -> float:
    """``numpy.maximum`` of two Python floats: NaN propagates, and of two equal values (0 and -0) the
    second, as numpy's vector loop gives it."""
    return a if (a > b or a != a) else b


def point_time(t: PowerTerms, ratio: float) -> float:
    """:func:`op_time` of terms of Python floats (one op at one point): the same operations."""
    return t.fixed_s + float_maximum(t.clock_s / ratio, t.memory_s) + t.excess_s / ratio


def point_clocked_power(t: PowerTerms, ratio: float) -> ClockedPower:
    """:func:`clocked_power` of terms of Python floats (one op at one point; ``t.leakage_exponent`` a
    one-entry array): the same operations, V^n by numpy's power as the arrays get it (its vector
    loop's own ``pow``, not the C library's). Raises ZeroDivisionError where numpy would divide by 0."""
    c = t.curve
    f = t.nominal_hz * ratio
    rel = (c.v_min + (c.v_max - c.v_min) / (c.vmax_hz - c.knee_hz) * float_maximum(f - c.knee_hz, 0.0)) / c.v_max
    v2 = rel * rel  # rel ** 2 of an array is numpy's square
    return ClockedPower(clock_hz=f, v2=v2, board_w=t.board_w + 0.0 * ratio,
                        leakage_w=t.leakage_w * (np.array([rel]) ** t.leakage_exponent).item(),
                        clock_w=t.clock_w * (f / c.vmax_hz) * v2)


def point_governed(t: PowerTerms, limit_w: float, min_ratio: float) -> tuple[float, float]:
    """:func:`governed` of terms of Python floats (:func:`point_clocked_power`): the clock ratio and
    the time at the nominal clock, the same floats (the governor's one column of its table)."""
    c = point_clocked_power(t, 1.0)
    time = point_time(t, 1.0)
    inv = 1.0 / time if time > 0 else 0.0
    power = c.board_w + c.leakage_w + c.clock_w + t.onchip_j * c.v2 * inv + t.offchip_j * inv
    if not power > limit_w:
        return 1.0, time
    v = t.curve
    n = t.leakage_exponent.item()
    table = np.array([min_ratio, v.v_min, (v.v_max - v.v_min) / (v.vmax_hz - v.knee_hz), t.nominal_hz, v.knee_hz,
                      v.v_max, t.fixed_s, t.clock_s, t.memory_s, t.excess_s, t.board_w, t.leakage_w,
                      t.clock_w * t.nominal_hz / v.vmax_hz, t.onchip_j, t.offchip_j, limit_w, n]).reshape(-1, 1)
    from archsim.energy import governor  # numba: imported once some point is over its limit

    return governor.bisect(table, BISECTION_STEPS, n == 3.0).item(), time


def _gather(terms: tuple[np.ndarray, ...], shape: tuple[int, ...], flat: np.ndarray) -> np.ndarray:
    """Row ``i``: ``np.broadcast_to(terms[i], shape).ravel()[flat]`` as float64, C-contiguous.

    Only the entries taken are read: a term of the full shape at ``flat``, a term over the points
    (the last axis) at the points' columns, anything else broadcast first. The one entry of a shape
    of one (a lone op at one point, over its limit): the terms' values in one concatenation."""
    if flat.size == 1 and math.prod(shape) == 1:
        try:
            together = np.broadcast(*terms)
        except ValueError:  # not broadcast together: the general path says which
            together = None
        if together is not None and together.size == 1 and together.nd <= len(shape):
            return np.concatenate(terms, axis=None, dtype=np.float64).reshape(len(terms), 1)
    table = np.empty((len(terms), flat.size))
    if _gather_compiled(terms, shape, flat, table):
        return table
    cols = None
    for i, term in enumerate(terms):
        term = np.asarray(term)
        if term.shape == shape:
            table[i] = term.reshape(-1).take(flat)
        elif term.ndim == 1 and len(shape) > 1 and term.shape == shape[-1:]:
            if cols is None:
                cols = flat % shape[-1]
            table[i] = term.take(cols)
        else:
            table[i] = np.broadcast_to(term, shape).reshape(-1).take(flat)
    return table


def _gather_compiled(terms: tuple[Any, ...], shape: tuple[int, ...], flat: np.ndarray, table: np.ndarray) -> bool:
    """:func:`_gather` into ``table`` by one compiled copy (:func:`archsim.energy.governor.gather`)
    where every term is a C-contiguous float64 array of the block's 2-d shape (writable: of one array
    type) or of its points (the last axis), at :data:`INPLACE_MIN` entries or more; returns whether
    it did (else nothing written)."""
    if len(shape) != 2 or math.prod(shape) < INPLACE_MIN or flat.dtype != np.int64:
        return False
    points = [i for i, term in enumerate(terms) if c_float64((term,), shape[-1:])]
    block = [i for i, term in enumerate(terms) if c_float64((term,), shape) and term.flags.writeable]
    if not points or not block or len(points) + len(block) != len(terms):
        return False
    from archsim.energy import governor  # numba: the governor's module, imported by the caller already

    # The per-point terms as one table (a copy: of one array type, read-only terms or not).
    governor.gather(flat, np.stack([terms[i] for i in points]), np.array(points, dtype=np.int64),
                    tuple(terms[i].reshape(-1) for i in block), np.array(block, dtype=np.int64), table)
    return True
