"""A finished chunk's result rows, held as columns.

:func:`archsim.sweep.evaluate.evaluate_chunk` returns one row per point: ``key``, ``status``,
``error`` and, for a point that ran, its metrics (a metric in SI units, named with its unit:
``latency_s``, ``energy_j``...). :class:`ChunkRows` keeps those rows as columns (a list per text
field, a float64 array per metric) and reads as the sequence of row dicts it stands for, so an
executor, a progress bar or a user's :class:`~archsim.sweep.store.Store` sees rows as always,
while the built-in stores take the table straight from the columns (:meth:`ChunkRows.frame`):
building a DataFrame from 1,000 dicts costs more than the dicts themselves.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, TypeVar

import numpy as np
import pandas as pd

__all__ = ["ChunkRows", "ColumnSequence", "RowsBuilder", "rows_frame"]

T = TypeVar("T")


class ColumnSequence(Sequence[T]):
    """A read-only sequence whose items are made from columns on access (a chunk's rows, its point
    tasks): iteration item by item, equal to any sequence (a list included) of equal items, and,
    like a list, unhashable. Subclasses give ``__len__`` and ``__getitem__``."""

    __slots__ = ()

    def __iter__(self) -> Iterator[T]:
        return (self[i] for i in range(len(self)))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]


class ChunkRows(ColumnSequence[dict[str, Any]]):
    """The rows of a chunk as columns (see the module documentation).

    Args:
        keys, status, errors: per row, its store key, status and reason (None for ``ok``).
        metrics: metric name -> float64 array over the rows, in the order the names first appear
            in the rows (NaN where a row has none).
        has: metric name -> bool array: the rows that have the metric (the others' dicts lack it).
    """

    __slots__ = ("keys", "status", "errors", "metrics", "has")

    def __init__(self, keys: list[str], status: list[str], errors: list[str | None],
                 metrics: Mapping[str, np.ndarray], has: Mapping[str, np.ndarray]) -> None:
        n = len(keys)
        if len(status) != n or len(errors) != n or metrics.keys() != has.keys() or any(
                a.shape != (n,) for a in (*metrics.values(), *has.values())):
            raise ValueError("ChunkRows needs one key, status, error and metric value per row")
        self.keys, self.status, self.errors = keys, status, errors
        self.metrics, self.has = dict(metrics), dict(has)

    def __len__(self) -> int:
        return len(self.keys)

    def __getitem__(self, i: int) -> dict[str, Any]:  # type: ignore[override]
        if not isinstance(i, int):
            raise TypeError(f"ChunkRows indices are integers, not {type(i).__name__}")
        if not -len(self) <= i < len(self):
            raise IndexError(i)
        i %= len(self)
        row: dict[str, Any] = {"key": self.keys[i], "status": self.status[i], "error": self.errors[i]}
        row.update((name, float(values[i])) for name, values in self.metrics.items() if self.has[name][i])
        return row

    @classmethod
    def joined(cls, parts: Sequence[ChunkRows]) -> ChunkRows:
        """The rows of ``parts`` one after the other (metrics in the order their names first appear,
        NaN and absent where a part has none): one frame of them is what concatenating the parts'
        frames gives (``pd.concat(..., ignore_index=True)``)."""
        if len(parts) == 1:
            return parts[0]
        names = list(dict.fromkeys(name for part in parts for name in part.metrics))
        metrics, has = {}, {}
        for name in names:
            metrics[name] = np.concatenate([p.metrics[name] if name in p.metrics else np.full(len(p), np.nan)
                                            for p in parts])
            has[name] = np.concatenate([p.has[name] if name in p.has else np.zeros(len(p), dtype=bool)
                                        for p in parts])
        return cls([k for p in parts for k in p.keys], [s for p in parts for s in p.status],
                   [e for p in parts for e in p.errors], metrics, has)

    def frame(self) -> pd.DataFrame:
        """The rows as a DataFrame: what :func:`rows_frame` gives for their dicts, from the columns."""
        data: dict[str, Any] = {"key": self.keys, "status": self.status, "error": self.errors}
        data.update(self.metrics)
        return _with_errors(pd.DataFrame(data))


def _with_errors(frame: pd.DataFrame) -> pd.DataFrame:
    if "error" in frame:
        frame["error"] = frame["error"].astype(object).where(frame["error"].notna(), None)
    return frame


def rows_frame(rows: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """A chunk's rows as a DataFrame: one column per field in order of first appearance, missing
    metrics NaN, reasons ``None`` where there is none."""
    if isinstance(rows, ChunkRows):
        return rows.frame()
    return _with_errors(pd.DataFrame(list(rows)))


class RowsBuilder:
    """Collects a chunk's rows, in any order, into a :class:`ChunkRows` (rows in index order).

    Args:
        keys: the store key of each row.
    """

    def __init__(self, keys: list[str]) -> None:
        self.keys = keys
        n = len(keys)
        self._status: list[str | None] = [None] * n
        self._errors: list[str | None] = [None] * n
        self._metrics: dict[str, np.ndarray] = {}
        self._has: dict[str, np.ndarray] = {}
        self._first: dict[str, tuple[int, int]] = {}  # name -> (first row, place in that row)

    def failed(self, i: int, status: str, error: str) -> None:
        """Row ``i`` has no metrics: ``status`` (``invalid`` or ``failed``) for ``error``."""
        self._status[i], self._errors[i] = status, error

    def ok(self, rows: Sequence[int], metrics: Mapping[str, Any]) -> None:
        """Rows ``rows`` ran: ``metrics`` maps each name to one value per row (in ``rows``' order)."""
        at = np.asarray(rows, dtype=np.intp)
        n = len(self.keys)
        # Every row, in order (a chunk whose points all ran together): whole columns, no scatter.
        every = len(at) == n and bool((at == np.arange(n)).all())
        if every:
            self._status[:], self._errors[:] = ["ok"] * n, [None] * n
        else:
            for i in rows:
                self._status[i], self._errors[i] = "ok", None
        first = int(at.min()) if len(at) else 0
        for place, (name, values) in enumerate(metrics.items()):
            column = self._metrics.get(name)
            whole = np.array(values, dtype=np.float64) if column is None and every else None
            if whole is not None and whole.shape == (n,):
                self._metrics[name], self._has[name] = whole, np.ones(n, dtype=bool)
            else:
                if column is None:
                    column = self._metrics[name] = np.full(n, np.nan)
                    self._has[name] = np.zeros(n, dtype=bool)
                column[at] = np.asarray(values, dtype=np.float64)
                self._has[name][at] = True
            if name not in self._first or (first, place) < self._first[name]:
                self._first[name] = (first, place)

    def result(self) -> ChunkRows:
        """The rows, each set once: metrics in the order their names first appear in the rows."""
        if any(s is None for s in self._status):
            raise ValueError("a row of the chunk was never set")
        names = sorted(self._metrics, key=self._first.__getitem__)
        return ChunkRows(self.keys, self._status, self._errors,  # type: ignore[arg-type]
                         {k: self._metrics[k] for k in names}, {k: self._has[k] for k in names})
