"""Sums of (H,) rows added in a given order, compiled: a graph's running sums over H hardware points.

A graph's latency and each energy component at H points are its ops' (H,) rows added op after op
(``rows[i0] + rows[i1] + ...``, left to right); equal ops share one cost, so a ResNet-50 of 174 ops
reads 54 distinct rows per figure. One numpy add per op and figure costs ~0.3 us of call overhead
over the ~0.2 us of additions (~2,000 adds per run); :func:`gathered_sums` hands up to
:data:`SLOTS` distinct rows and the order of the summands to one compiled pass instead.

Every point's values are added in the order given, one IEEE double addition at a time (no fast-math,
no reassociation): the same floats as numpy's adds, to the bit. Rows that are not writable,
C-contiguous float64 (H,) arrays are refused (``None``), for the caller's numpy path.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numba import njit, types

__all__ = ["SLOTS", "gathered_sums", "chained_sums"]

SLOTS = 64
"""The rows one compiled call reads (a call is given exactly this many; unused slots repeat a row)."""

_ROW = types.Array(types.float64, 1, "C")
_SIGNATURE = types.boolean(types.Array(types.float64, 2, "C"), types.Array(types.intp, 1, "C"),
                           types.Array(types.intp, 1, "C"), types.Array(types.uint8, 1, "C"),
                           types.UniTuple(_ROW, SLOTS))


@njit(_SIGNATURE, cache=True, nogil=True)
def _add_rows(out, dest, idx, assign, *rows):  # pragma: no cover - compiled
    """For each summand ``j`` in turn: ``out[dest[j]] = rows[idx[j]]`` where ``assign[j]``, else
    ``out[dest[j]] += rows[idx[j]]`` (each point's values added one after another; four summands
    into one destination in one sweep, ``(((o + a) + b) + c) + d``: the same additions in the same
    order, with ``o`` read and written once). False, with ``out`` untouched, where a row's length is
    not ``out``'s row length."""
    n = out.shape[1]
    for r in rows:
        if r.shape[0] != n:
            return False
    m = idx.shape[0]
    j = 0
    while j < m:
        o = out[dest[j]]
        a = rows[idx[j]]
        if assign[j]:
            for h in range(n):
                o[h] = a[h]
            j += 1
        elif (j + 4 <= m and dest[j + 1] == dest[j] and dest[j + 2] == dest[j] and dest[j + 3] == dest[j]
              and not (assign[j + 1] or assign[j + 2] or assign[j + 3])):
            b = rows[idx[j + 1]]
            c = rows[idx[j + 2]]
            d = rows[idx[j + 3]]
            for h in range(n):
                o[h] = o[h] + a[h] + b[h] + c[h] + d[h]
            j += 4
        else:
            for h in range(n):
                o[h] += a[h]
            j += 1
    return True


_Run = tuple[Sequence[int], np.ndarray, np.ndarray, np.ndarray]
"""One compiled call: the row indices its slots hold, and per summand its destination, slot and
whether it starts its sum."""


def _runs(n_rows: int, order: Sequence[int], zero_start: bool) -> list[_Run]:
    """``order`` cut into consecutive runs that each name at most :data:`SLOTS` distinct rows of
    ``n_rows`` (one run when there are no more rows than slots)."""
    if n_rows <= SLOTS:
        parts = [(range(n_rows), np.asarray(order, dtype=np.intp))]
    else:
        parts = []
        slots: dict[int, int] = {}
        local: list[int] = []
        for i in order:
            s = slots.get(i)
            if s is None:
                if len(slots) == SLOTS:
                    parts.append((list(slots), np.array(local, dtype=np.intp)))
                    slots, local = {}, []
                s = slots[i] = len(slots)
            local.append(s)
        parts.append((list(slots), np.array(local, dtype=np.intp)))
    runs = []
    for k, (slots_k, idx) in enumerate(parts):
        assign = np.zeros(len(idx), dtype=np.uint8)
        if k == 0 and not zero_start:
            assign[0] = 1
        runs.append((slots_k, np.zeros(len(idx), dtype=np.intp), idx, assign))
    return runs


def _call(out: np.ndarray, run: _Run, rows: Sequence[np.ndarray]) -> bool:
    slots, dest, idx, assign = run
    args = [rows[s] for s in slots]
    args += [args[0]] * (SLOTS - len(args))
    try:
        return bool(_add_rows(out, dest, idx, assign, *args))
    except TypeError:  # a row that is not a writable C-contiguous float64 1-d array
        return False


def gathered_sums(rows: Sequence[Sequence[np.ndarray]], order: Sequence[int],
                  zero_start: bool = False) -> np.ndarray | None:
    """A (len(rows), H) array: row ``k`` is ``rows[k][order[0]] + rows[k][order[1]] + ...`` added
    left to right at each point (``zero_start``: ``0.0 + rows[k][order[0]] + ...``), what
    ``functools.reduce(np.add, ...)`` gives, to the bit.

    Every ``rows[k]`` holds the same number of (H,) rows (one per distinct cost), ``order`` at least
    one index into them. ``None`` where a row is not a writable C-contiguous float64 (H,) array."""
    if not len(order):
        raise ValueError("gathered_sums needs at least one summand")
    first = rows[0][order[0]]
    if type(first) is not np.ndarray or first.ndim != 1:
        return None
    out = (np.zeros if zero_start else np.empty)((len(rows), first.shape[0]))
    runs = _runs(len(rows[0]), order, zero_start)
    for k, candidates in enumerate(rows):
        target = out[k:k + 1]
        for run in runs:
            if not _call(target, run, candidates):
                return None
    return out


def chained_sums(rows: Sequence[Sequence[np.ndarray]], n: int) -> np.ndarray | None:
    """A (len(rows), n) array: row ``k`` is ``0.0 + rows[k][0] + rows[k][1] + ...`` added left to
    right at each point (``0.0`` where ``rows[k]`` is empty). ``None`` where a row is not a writable
    C-contiguous float64 (n,) array."""
    out = np.zeros((len(rows), n))
    flat = [r for group in rows for r in group]
    if not flat:
        return out
    dest = np.repeat(np.arange(len(rows), dtype=np.intp), [len(group) for group in rows])
    for s in range(0, len(flat), SLOTS):
        m = min(SLOTS, len(flat) - s)
        run = (range(m), dest[s:s + m], np.arange(m, dtype=np.intp), np.zeros(m, dtype=np.uint8))
        if not _call(out, run, flat[s:s + m]):
            return None
    return out
