"""Sums of (H,) rows added in a given order, compiled: a graph's running sums over H hardware points.

A graph's latency and each energy component at H points are its ops' (H,) rows added op after op
(``rows[i0] + rows[i1] + ...``, left to right); equal ops share one cost, so a ResNet-50 of 174 ops
reads 54 distinct rows per figure. One numpy add per op and figure costs ~0.3 us of call overhead
over the ~0.2 us of additions (~2,000 adds per run); :func:`gathered_sums` hands the distinct rows
(up to :data:`SLOTS` per call) and the order of the summands to one compiled pass instead.

Every point's values are added in the order given, one IEEE double addition at a time (no fast-math,
no reassociation): the same floats as numpy's adds, to the bit. Rows that are not writable,
C-contiguous float64 (H,) arrays are refused (``None``), for the caller's numpy path. Every sum is
a new array of its own, as numpy's adds make them (no views of one block that the caller keeps:
which blocks live on changes how the C allocator reuses freed memory, see
:func:`archsim.keep_freed_memory`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numba import njit, types

__all__ = ["SLOTS", "gathered_sums", "chained_sums"]

SLOTS = 64
"""The (H,) arrays one compiled call is given, sums and summands together (exactly this many:
unused slots repeat one)."""

_ROW = types.Array(types.float64, 1, "C")
_INDEX = types.Array(types.intp, 1, "C")
_SIGNATURE = types.boolean(_INDEX, _INDEX, types.Array(types.uint8, 1, "C"), types.UniTuple(_ROW, SLOTS))


@njit(_SIGNATURE, cache=True, nogil=True)
def _add_rows(dest, idx, assign, *rows):  # pragma: no cover - compiled
    """For each summand ``j`` in turn: ``rows[dest[j]][:] = rows[idx[j]]`` where ``assign[j]``, else
    ``rows[dest[j]] += rows[idx[j]]`` (each point's values added one after another; four summands
    into one sum in one sweep, ``(((o + a) + b) + c) + d``: the same additions in the same order,
    with ``o`` read and written once). False, with nothing written, where the rows' lengths differ."""
    n = rows[0].shape[0]
    for r in rows:
        if r.shape[0] != n:
            return False
    m = idx.shape[0]
    j = 0
    while j < m:
        o = rows[dest[j]]
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


def _call(slots: list[np.ndarray], dest: np.ndarray, idx: np.ndarray, assign: np.ndarray) -> bool:
    """:func:`_add_rows` over ``slots`` (padded to :data:`SLOTS`); False where it refuses them."""
    slots += [slots[0]] * (SLOTS - len(slots))
    try:
        return bool(_add_rows(dest, idx, assign, *slots))
    except TypeError:  # a row that is not a writable C-contiguous float64 1-d array
        return False


_Run = tuple[Sequence[int], np.ndarray, np.ndarray, np.ndarray]
"""One compiled call of a gathered sum: the candidate rows its slots 1... hold (slot 0 is the sum),
and per summand its sum's slot (0), its row's slot, and whether it starts the sum."""


def _runs(n_rows: int, order: Sequence[int], zero_start: bool) -> list[_Run]:
    """``order`` cut into consecutive runs that each name at most ``SLOTS - 1`` distinct rows of
    ``n_rows`` (one run when there are no more rows than that)."""
    room = SLOTS - 1
    if n_rows <= room:
        parts = [(range(n_rows), np.asarray(order, dtype=np.intp) + 1)]
    else:
        parts = []
        slots: dict[int, int] = {}
        local: list[int] = []
        for i in order:
            s = slots.get(i)
            if s is None:
                if len(slots) == room:
                    parts.append((list(slots), np.array(local, dtype=np.intp)))
                    slots, local = {}, []
                s = slots[i] = len(slots) + 1
            local.append(s)
        parts.append((list(slots), np.array(local, dtype=np.intp)))
    runs = []
    for k, (rows_k, idx) in enumerate(parts):
        assign = np.zeros(len(idx), dtype=np.uint8)
        if k == 0 and not zero_start:
            assign[0] = 1
        runs.append((rows_k, np.zeros(len(idx), dtype=np.intp), idx, assign))
    return runs


def gathered_sums(rows: Sequence[Sequence[np.ndarray]], order: Sequence[int],
                  zero_start: bool = False) -> list[np.ndarray] | None:
    """One new (H,) array per ``rows[k]``: ``rows[k][order[0]] + rows[k][order[1]] + ...`` added
    left to right at each point (``zero_start``: ``0.0 + rows[k][order[0]] + ...``), what
    ``functools.reduce(np.add, ...)`` gives, to the bit.

    Every ``rows[k]`` holds the same number of (H,) rows (one per distinct cost), ``order`` at least
    one index into them. ``None`` where a row is not a writable C-contiguous float64 (H,) array."""
    if not len(order):
        raise ValueError("gathered_sums needs at least one summand")
    first = rows[0][order[0]]
    if type(first) is not np.ndarray or first.ndim != 1:
        return None
    runs = _runs(len(rows[0]), order, zero_start)
    out = []
    for candidates in rows:
        total = (np.zeros if zero_start else np.empty)(first.shape[0])
        for held, dest, idx, assign in runs:
            if not _call([total, *[candidates[i] for i in held]], dest, idx, assign):
                return None
        out.append(total)
    return out


def chained_sums(rows: Sequence[Sequence[np.ndarray]], n: int) -> list[np.ndarray] | None:
    """One new (n,) array per ``rows[k]``: ``0.0 + rows[k][0] + rows[k][1] + ...`` added left to right
    at each point (``0.0`` where ``rows[k]`` is empty; several sums and their rows per compiled call).
    ``None`` where a row is not a writable C-contiguous float64 (n,) array."""
    out = [np.zeros(n) for _ in rows]
    slots: list[np.ndarray] = []
    dest: list[int] = []
    idx: list[int] = []
    for total, group in zip(out, rows, strict=True):
        if not group:
            continue
        if len(group) + 1 > SLOTS:  # too many summands for one call: a gathered sum of its own
            summed = gathered_sums([group], range(len(group)), zero_start=True)
            if summed is None:
                return None
            total[:] = summed[0]
            continue
        if len(slots) + len(group) + 1 > SLOTS:
            if not _flush(slots, dest, idx):
                return None
            slots, dest, idx = [], [], []
        at = len(slots)
        slots += [total, *group]
        dest += [at] * len(group)
        idx += range(at + 1, at + 1 + len(group))
    return out if not slots or _flush(slots, dest, idx) else None


def _flush(slots: list[np.ndarray], dest: list[int], idx: list[int]) -> bool:
    """One compiled call of :func:`chained_sums`: summand slot ``idx[j]`` added into sum slot ``dest[j]``."""
    return _call(slots, np.array(dest, dtype=np.intp), np.array(idx, dtype=np.intp),
                 np.zeros(len(idx), dtype=np.uint8))
