"""The sweep result store: finished points, written incrementally, keyed by content hash.

A point's key is the SHA-256 of (the base hardware's content hash, the point's overrides in SI,
the workload, the evaluator and its options, the archsim version), so the same hardware point of the
same workload under the same engine and version is computed once, whatever sweep asks for it.

:class:`ParquetStore` writes one Parquet file per finished chunk under ``<dir>/chunks/``: the file
is written under a temporary name, flushed to disk and renamed into place (``os.replace`` is atomic
on POSIX and Windows), so a sweep killed at any moment (even by SIGKILL) leaves only whole chunks
behind, and a re-run skips exactly the points they hold. :class:`MemoryStore` keeps rows in memory
for sweeps without a directory.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

import pandas as pd

from archsim.errors import SweepError

__all__ = ["Store", "MemoryStore", "ParquetStore", "point_key"]


def point_key(base_hash: str, overrides: Sequence[tuple[Sequence[Any], Any]], work: str, evaluator: str,
              version: str) -> str:
    """The content hash that identifies one point's result."""
    text = json.dumps([base_hash, [[list(p), v] for p, v in overrides], work, evaluator, version],
                      sort_keys=True, separators=(",", ":"), default=repr)
    return hashlib.sha256(text.encode()).hexdigest()


class Store(Protocol):
    """Where finished rows go: ``finished()`` lists them, ``write(rows)`` adds a chunk of them."""

    def finished(self, keys: Iterable[str] | None = None) -> pd.DataFrame: ...

    def write(self, rows: Sequence[Mapping[str, Any]]) -> None: ...


def _frame(rows: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    frame = pd.DataFrame(list(rows))
    if "error" in frame:
        frame["error"] = frame["error"].astype(object).where(frame["error"].notna(), None)
    return frame


def _select(frame: pd.DataFrame, keys: Iterable[str] | None) -> pd.DataFrame:
    if frame.empty:
        return pd.DataFrame(columns=["key", "status", "error"])
    frame = frame.drop_duplicates("key", keep="first")
    if keys is not None:
        frame = frame[frame["key"].isin(set(keys))]
    return frame.reset_index(drop=True)


class MemoryStore:
    """Rows kept in memory (a sweep without a store directory)."""

    def __init__(self) -> None:
        self._frames: list[pd.DataFrame] = []

    def finished(self, keys: Iterable[str] | None = None) -> pd.DataFrame:
        frame = pd.concat(self._frames, ignore_index=True) if self._frames else pd.DataFrame()
        return _select(frame, keys)

    def write(self, rows: Sequence[Mapping[str, Any]]) -> None:
        if rows:
            self._frames.append(_frame(rows))


class ParquetStore:
    """One Parquet file per finished chunk under ``<path>/chunks/``, each written atomically."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.chunks = self.path / "chunks"
        try:
            self.chunks.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise SweepError(f"cannot create the sweep store {self.path}: {exc}") from None

    def files(self) -> list[Path]:
        """The finished chunk files, sorted by name (temporary files of an interrupted write are skipped)."""
        return sorted(self.chunks.glob("*.parquet"))

    def finished(self, keys: Iterable[str] | None = None) -> pd.DataFrame:
        frames = [pd.read_parquet(f) for f in self.files()]
        frame = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
        return _select(frame, keys)

    def write(self, rows: Sequence[Mapping[str, Any]]) -> None:
        if not rows:
            return
        frame = _frame(rows)
        # The file name is a hash of its keys: rewriting the same chunk replaces it, never duplicates it.
        name = hashlib.sha256("".join(sorted(frame["key"])).encode()).hexdigest()[:32] + ".parquet"
        fd, tmp = tempfile.mkstemp(dir=self.chunks, prefix=".tmp-", suffix=".part")
        try:
            with os.fdopen(fd, "wb") as fh:
                frame.to_parquet(fh, index=False)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self.chunks / name)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
