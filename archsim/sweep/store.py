"""The sweep result store: finished points, written incrementally, keyed by content hash.

A point's key is the SHA-256 of (the base hardware's content hash, the point's overrides in SI,
the workload, the evaluator and its options, the archsim version), so the same hardware point of the
same workload under the same engine and version is computed once, whatever sweep asks for it.

:class:`ParquetStore` writes one Parquet file per finished chunk under ``<dir>/chunks/``: the file
is written under a temporary name, flushed to disk and renamed into place (``os.replace`` is atomic
on POSIX and Windows), so a sweep killed at any moment (even by SIGKILL) leaves only whole chunks
behind, and a re-run skips exactly the points they hold. :class:`MemoryStore` keeps rows in memory
for sweeps without a directory.

Integrity: ``<dir>/manifest.jsonl`` lists every chunk with the SHA-256 of its bytes, appended (and
fsync'ed) before the chunk is renamed into place. A chunk that is not in the manifest, whose bytes
no longer match (a flipped byte, a truncation, an empty file) or that does not read back is
reported (:class:`StoreWarning`, :attr:`ParquetStore.problems`) and skipped, so its points are
computed again; the recomputed chunk has the same name and replaces it. Parquet has no checksum of
its own: without the manifest one flipped byte in a value would be reused as a result.

Concurrency: :func:`store_lock` holds an exclusive lock (``fcntl.flock`` on ``<dir>/.lock``) for as
long as a sweep writes the store; a second sweep into the same directory is a SweepError naming the
process that holds it. Under the lock, :meth:`ParquetStore.recover` deletes the ``.part`` files of a
writer that was killed.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
import warnings
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

import pandas as pd

from archsim.errors import SweepError
from archsim.sweep.rows import ChunkRows, rows_frame

__all__ = ["Store", "MemoryStore", "ParquetStore", "StoreWarning", "point_key", "point_key_of_text", "key_prefix",
           "key_suffix", "override_text", "store_lock"]


class StoreWarning(UserWarning):
    """A stored chunk that cannot be trusted (corrupt, truncated, unlisted): its points are recomputed."""


@contextlib.contextmanager
def store_lock(path: str | os.PathLike[str], what: str = "sweep store") -> Iterator[None]:
    """Hold an exclusive lock on the directory ``path`` (created if missing) for the ``with`` block.

    A second holder, in this process or another, gets a SweepError at once (never a wait). The lock
    dies with its process, so a killed sweep never leaves a stale lock. Without ``fcntl`` (Windows)
    the block runs unlocked.
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        yield
        return
    directory = Path(path)
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd = os.open(directory / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise SweepError(f"cannot create the {what} {directory}: {exc.strerror or exc}") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "another process"
            raise SweepError(f"the {what} {directory} is in use by another sweep ({holder}); wait for it to "
                             "finish or choose another directory") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()}".encode(), 0)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def point_key(base_hash: str, overrides: Sequence[tuple[Sequence[Any], Any]], work: str, evaluator: str,
              version: str) -> str:
    """The content hash that identifies one point's result."""
    text = _KEY_JSON([base_hash, [[list(p), v] for p, v in overrides], work, evaluator, version])
    return hashlib.sha256(text.encode()).hexdigest()


def key_prefix(base_hash: str) -> str:
    """The start of :func:`point_key`'s text for every point of one base (up to the overrides)."""
    return "[" + _KEY_JSON(base_hash) + ",["


def override_text(path: Sequence[Any], value: Any) -> str:
    """One override's part of :func:`point_key`'s text."""
    return _KEY_JSON([list(path), value])


def key_suffix(work: str, evaluator: str, version: str) -> str:
    """The end of :func:`point_key`'s text (after the overrides)."""
    return "]," + _KEY_JSON(work) + "," + _KEY_JSON(evaluator) + "," + _KEY_JSON(version) + "]"


def point_key_of_text(prefix: str, overrides: Sequence[str], suffix: str) -> str:
    """:func:`point_key` from its text parts: ``point_key(h, ov, w, e, v) == point_key_of_text(
    key_prefix(h), [override_text(p, x) for p, x in ov], key_suffix(w, e, v))`` (a JSON list is
    its items' JSON joined by the separator, so the text is the same; a unit test checks it)."""
    return hashlib.sha256((prefix + ",".join(overrides) + suffix).encode()).hexdigest()


# What ``json.dumps(..., sort_keys=True, separators=(",", ":"), default=repr)`` builds on every call,
# made once (the encoder keeps no state between calls): 7 instead of 11 us per point key.
_KEY_JSON = json.JSONEncoder(sort_keys=True, separators=(",", ":"), default=repr).encode


class Store(Protocol):
    """Where finished rows go: ``finished()`` lists them, ``write(rows)`` adds a chunk of them."""

    def finished(self, keys: Iterable[str] | None = None) -> pd.DataFrame: ...

    def write(self, rows: Sequence[Mapping[str, Any]]) -> None: ...


def _columns(frame: pd.DataFrame, columns: Sequence[str] | None) -> pd.DataFrame:
    """``frame`` with only ``columns`` (those it has, in its own order); all of them for ``None``.
    A sweep's table reads back only the metrics it shows: a 1M-point store holds ~18 columns."""
    if columns is None:
        return frame
    wanted = set(columns)
    return frame[[c for c in frame.columns if c in wanted]]


def _select(frame: pd.DataFrame, keys: Iterable[str] | None) -> pd.DataFrame:
    if frame.empty:
        return pd.DataFrame(columns=["key", "status", "error"])
    # The keys as Python strings in a plain object Series: pandas' hash table on objects is ~50x
    # faster than the Arrow string column's own duplicated/isin (which builds a pyarrow scalar per
    # value), and the masks are the same (a missing key is neither a duplicate of a string nor in keys).
    key = pd.Series(frame["key"].to_numpy(dtype=object), dtype=object)
    mask = ~key.duplicated(keep="first").to_numpy()
    if keys is not None:
        mask &= key.isin(keys if isinstance(keys, list | tuple | set | frozenset) else list(keys)).to_numpy()
    if mask.all() and isinstance(frame.index, pd.RangeIndex) and frame.index.start == 0 and frame.index.step == 1:
        return frame  # every row kept, already numbered from 0: what the copy below gives
    return frame[mask].reset_index(drop=True)


class MemoryStore:
    """Rows kept in memory (a sweep without a store directory).

    Each written chunk is kept as it came when it is a :class:`~archsim.sweep.rows.ChunkRows` (its
    columns; nothing reads or changes them afterwards), else as its frame; :meth:`finished` makes
    one frame of them, what concatenating the chunks' frames gives."""

    def __init__(self) -> None:
        self._parts: list[ChunkRows | pd.DataFrame] = []

    def finished(self, keys: Iterable[str] | None = None, columns: Sequence[str] | None = None) -> pd.DataFrame:
        """The finished rows (of ``keys`` if given; only ``columns`` of them, where given, that exist)."""
        joined = self.chunk_rows()
        if joined is not None:
            # One frame from the joined columns: the concatenation of the chunks' frames.
            frame = _columns(joined.frame(), columns)
        else:
            frames = [_columns(rows_frame(p) if isinstance(p, ChunkRows) else p, columns) for p in self._parts]
            frame = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
        return _select(frame, keys)

    def write(self, rows: Sequence[Mapping[str, Any]]) -> None:
        if rows:
            self._parts.append(rows if isinstance(rows, ChunkRows) else rows_frame(rows))

    def chunk_rows(self) -> ChunkRows | None:
        """Every row written, in write order, as one ChunkRows where every chunk came as one (else
        None): the columns :meth:`finished` makes its frame of."""
        parts = self._parts
        if not parts or not all(isinstance(p, ChunkRows) for p in parts):
            return None
        return ChunkRows.joined(parts)  # type: ignore[arg-type]


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


class ParquetStore:
    """One Parquet file per finished chunk under ``<path>/chunks/``, each written atomically and
    listed with its checksum in ``<path>/manifest.jsonl`` (see the module documentation)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.chunks = self.path / "chunks"
        self.manifest = self.path / "manifest.jsonl"
        self.problems: list[str] = []
        # Chunks already verified by this object: name -> (size, mtime_ns, sha256).
        self._verified: dict[str, tuple[int, int, str]] = {}
        try:
            self.chunks.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise SweepError(f"cannot create the sweep store {self.path}: {exc.strerror or exc}") from None
        if not self.chunks.is_dir():
            raise SweepError(f"the sweep store {self.path}: {self.chunks} is not a directory")

    def files(self) -> list[Path]:
        """The finished chunk files, sorted by name (temporary files of an interrupted write are skipped)."""
        return sorted(self.chunks.glob("*.parquet"))

    def recover(self) -> list[Path]:
        """Delete the temporary files a killed writer left behind; call only while holding the lock."""
        removed = []
        try:
            with self.manifest.open("rb") as mf:
                mf.seek(0, os.SEEK_END)
                torn = mf.tell() > 0 and (mf.seek(-1, os.SEEK_END) or mf.read(1)) != b"\n"
            if torn:  # end a line torn by a kill, so the next entry starts on a line of its own
                with self.manifest.open("a", encoding="utf-8") as mf:
                    mf.write("\n")
        except FileNotFoundError:
            pass
        for part in self.chunks.glob(".tmp-*.part"):
            with contextlib.suppress(OSError):
                part.unlink()
                removed.append(part)
        return removed

    def _checksums(self) -> dict[str, str]:
        """File name -> SHA-256 from the manifest; the last entry of a name wins, torn lines are skipped."""
        try:
            text = self.manifest.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return {}
        except OSError as exc:
            raise SweepError(f"cannot read the store manifest {self.manifest}: {exc.strerror or exc}") from None
        out: dict[str, str] = {}
        for line in text.splitlines():
            try:
                entry = json.loads(line)
                out[str(entry["file"])] = str(entry["sha256"])
            except (ValueError, KeyError, TypeError):
                continue  # a line torn by a kill mid-append names no chunk that was renamed into place
        return out

    def _report(self, path: Path, reason: str) -> None:
        message = f"sweep store {self.path}: chunk {path.name} {reason}; its points will be recomputed"
        self.problems.append(message)
        warnings.warn(message, StoreWarning, stacklevel=4)

    def _read(self, path: Path, sums: Mapping[str, str], columns: Sequence[str] | None = None) -> pd.DataFrame | None:
        try:
            st = path.stat()
        except OSError:
            return None  # replaced or removed meanwhile
        known = self._verified.get(path.name)
        if known is None or known[:2] != (st.st_size, st.st_mtime_ns) or known[2] != sums.get(path.name):
            expected = sums.get(path.name)
            if expected is None:
                self._report(path, "is not in the manifest (an interrupted or foreign write)")
                return None
            try:
                actual = _sha256(path)
            except OSError as exc:
                self._report(path, f"cannot be read ({exc.strerror or exc})")
                return None
            if actual != expected:
                what = "is empty" if st.st_size == 0 else "does not match its checksum (corrupt or truncated)"
                self._report(path, what)
                return None
        try:
            frame = pd.read_parquet(path)
        except Exception as exc:  # noqa: BLE001 - pyarrow raises ArrowInvalid, OSError and more
            self._report(path, f"does not read back ({type(exc).__name__})")
            return None
        if "key" not in frame or "status" not in frame:
            self._report(path, "has no key/status columns")
            return None
        self._verified[path.name] = (st.st_size, st.st_mtime_ns, sums[path.name])
        return _columns(frame, columns)

    def finished(self, keys: Iterable[str] | None = None, columns: Sequence[str] | None = None) -> pd.DataFrame:
        """The finished rows (of ``keys`` if given; only ``columns`` of them, where given, that exist)."""
        sums = self._checksums()
        frames = [f for f in (self._read(p, sums, columns) for p in self.files()) if f is not None]
        frame = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
        return _select(frame, keys)

    def write(self, rows: Sequence[Mapping[str, Any]]) -> None:
        if not rows:
            return
        frame = rows_frame(rows)
        # The file name is a hash of its keys: rewriting the same chunk replaces it, never duplicates it.
        name = hashlib.sha256("".join(sorted(frame["key"])).encode()).hexdigest()[:32] + ".parquet"
        try:
            fd, tmp = tempfile.mkstemp(dir=self.chunks, prefix=".tmp-", suffix=".part")
        except OSError as exc:
            raise SweepError(f"cannot write to the sweep store {self.path}: {exc.strerror or exc}") from None
        try:
            with os.fdopen(fd, "wb") as fh:
                frame.to_parquet(fh, index=False)
                fh.flush()
                os.fsync(fh.fileno())
            # The checksum is in the manifest before the chunk is in place: a chunk a reader can see
            # is always listed (a kill in between leaves a listed name with no file: harmless).
            entry = json.dumps({"file": name, "sha256": _sha256(Path(tmp)), "rows": len(frame)})
            with self.manifest.open("a", encoding="utf-8") as mf:
                mf.write(entry + "\n")
                mf.flush()
                os.fsync(mf.fileno())
            os.replace(tmp, self.chunks / name)
        except OSError as exc:
            Path(tmp).unlink(missing_ok=True)
            raise SweepError(f"cannot write to the sweep store {self.path}: {exc.strerror or exc}") from None
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
