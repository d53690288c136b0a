"""Parameter sweeps over hardware and workload: ``archsim.Sweep(base, axes).run(work)``.

Example::

    hw = archsim.load_preset("gpu/h100-sxm5-80gb")
    sweep = archsim.Sweep(hw, axes={
        "gpu.dram.bandwidth": {"from": "1 TB/s", "to": "8 TB/s", "num": 16, "scale": "log"},
        "gpu.sm_count": [66, 132],
        "workload.batch": [1, 64],
    })
    table = sweep.run("resnet50", engine="roofline", store="results/bw-sweep")

Axes (see :mod:`archsim.sweep.axes`): dotted TOML paths into the base hardware (``gpu.dram.bandwidth``,
``gpu.l2.size``, ``host.cores``; on a bare device the kind is an optional first segment) or
``workload.<parameter>``; values are lists with units or range tables
``{from, to, num, scale}``. Samplers (:mod:`archsim.sweep.samplers`): ``grid``, ``random``, ``lhs``,
``sobol`` (with ``n`` and ``seed``).

Every point is built from the base's ``model_dump()`` with its overrides applied (the base is never
modified) and validated again: every table on an override's path is validated from its values with
all its field and cross-field rules, the untouched tables are the base's validated ones
(:mod:`archsim.sweep.points`; the same model as validating the whole dump), and a chunk's points are
built together, each table once per distinct combination of what it holds
(:mod:`archsim.sweep.columns`). A point that does not
validate (say an L2 whose size is not divisible by ways x line size) is reported with status
``invalid`` and the reason, and the sweep goes on.

The result is a tidy frame: one row per point and metric, with columns ``point`` (index), one column
per axis in SI units (``gpu.dram.bandwidth_bytes_per_s``, ``gpu.sm_count``), ``status`` (``ok``,
``invalid``, ``failed``), ``error``, ``metric`` (``latency_s``, ``energy_j``, ``energy_dram_j``,
``data_movement_fraction``, ``flop``...) and ``value``. :func:`archsim.sweep.analysis.to_wide` pivots
it to one row per point.

``store=DIR`` makes the sweep resumable: each finished chunk is written atomically as a Parquet file,
keyed per point by a content hash of (base hardware, overrides, workload, engine and options, archsim
version); a re-run (even after the first was killed) skips every stored point.

The ``archsim sweep SPEC.toml`` file (:func:`archsim.sweep.spec.load_spec`, ``docs/sweeps.md``)::

    [base]
    preset = "gpu/v100-sxm2-16gb"        # or: path = "my-gpu.toml"

    [work]                               # a zoo model and its arguments
    model = "resnet50"
    batch = 64
    dtype = "fp16"

    [engine]
    name = "roofline"                    # or "des"
    options = {}                         # the engine's explicit options

    [sweep]
    sampler = "grid"                     # grid | random | lhs | sobol
    # n = 256                            # points, for random samplers
    seed = 0
    metrics = ["latency_s", "energy_j"]  # default: every metric the engine reports
    executor = "processes"               # serial | processes | dask
    # workers = 2
    # address = "tcp://scheduler:8786"   # for dask
    # chunk_size = 512

    [axes]
    "gpu.dram.bandwidth" = { from = "300 GB/s", to = "900 GB/s", num = 7 }
    "gpu.sm_count" = [40, 60, 80]

    [[plots]]                            # optional; written as PDF and PNG into --out
    kind = "sweep_lines"                 # sweep_lines | heatmap | pareto
    x = "gpu.dram.bandwidth_bytes_per_s"
    y = "latency_s"
    hue = "gpu.sm_count"
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from operator import itemgetter
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from archsim.errors import SweepError
from archsim.sweep.axes import Axis, parse_axes
from archsim.sweep.evaluate import (
    ChunkPayload,
    EngineEvaluator,
    Evaluator,
    PointTask,
    PointTasks,
    ZooWorkload,
    work_key,
)
from archsim.sweep.executors import default_workers, execute
from archsim.sweep.rows import ChunkRows
from archsim.sweep.samplers import sample
from archsim.sweep.store import (
    MemoryStore,
    ParquetStore,
    Store,
    key_prefix,
    key_suffix,
    override_text,
    store_lock,
)

__all__ = ["Sweep", "FIRST_METRICS"]

FIRST_METRICS = ("latency_s", "energy_j")
"""Metrics listed first in a sweep table; the others follow in name order."""

_MAX_CHUNK = {"roofline": 1024}  # the vectorised roofline wants big chunks; per-point engines small ones
_MAX_CHUNK_OTHER = 16


def _load_base(base: Any) -> Any:
    from archsim.hardware.base import HardwareModel

    if isinstance(base, str):
        from archsim.presets import load_preset

        return load_preset(base)
    if isinstance(base, os.PathLike):
        from archsim.presets import load_hardware

        return load_hardware(base)
    if not isinstance(base, HardwareModel):
        raise SweepError(f"base must be a hardware model or a preset id, got {type(base).__name__}")
    return base


class Sweep:
    """A set of points around a base hardware model (see the module documentation).

    Args:
        base: a hardware model (device or system), a preset id (``"gpu/v100-sxm2-16gb"``) or a path.
        axes: ``{path: values}``; values are a list or ``{"from", "to", "num", "scale"}``.
        sampler: ``"grid"`` (every combination), ``"random"``, ``"lhs"`` or ``"sobol"``.
        n: number of points for the random samplers (a power of two for ``sobol``).
        seed: seed of the random samplers; the same seed gives the same points.
    """

    def __init__(self, base: Any, axes: Mapping[str, Any], sampler: str = "grid", n: int | None = None,
                 seed: int = 0) -> None:
        self.base = _load_base(base)
        self.axes: tuple[Axis, ...] = parse_axes(self.base, axes)
        self.sampler = sampler
        self.n = n
        self.seed = seed
        self._values: list[tuple[Any, ...]] = sample(self.axes, sampler, n, seed)
        # A grid's points are the product of its axes' levels (the last axis varying fastest).
        self._grid: tuple[tuple[Any, ...], ...] | None = (
            tuple(a.levels for a in self.axes) if sampler == "grid" else None)  # type: ignore[misc]

    def __len__(self) -> int:
        return len(self._values)

    @property
    def columns(self) -> list[str]:
        """The output column of each axis, in axis order."""
        return [a.column for a in self.axes]

    def points(self) -> pd.DataFrame:
        """The points of the sweep: ``point`` and one column per axis (SI units), without running anything."""
        frame = pd.DataFrame(self._values, columns=self.columns)
        frame.insert(0, "point", range(len(frame)))
        return frame

    def _tasks(self, work: Any, evaluator_key: str) -> list[PointTask]:
        """Every point's task, in point order (a sweep's run builds them chunk by chunk instead)."""
        keys = self._keys(work, evaluator_key)
        return list(_Chunks(self, keys, list(range(len(keys))), max(1, len(keys)))[0]) if keys else []

    def _axes_by_target(self) -> tuple[list[tuple[int, Axis]], list[tuple[int, Axis]]]:
        hw_axes = [(j, a) for j, a in enumerate(self.axes) if a.target == "hardware"]
        # software axes travel with the workload parameters: a point's work is built and its profile
        # updated together (archsim.sweep.evaluate.evaluate_chunk)
        wl_axes = [(j, a) for j, a in enumerate(self.axes) if a.target in ("workload", "software")]
        return hw_axes, wl_axes

    def _keys(self, work: Any, evaluator_key: str) -> list[str]:
        """The store key of every point, in point order. Only the keys are kept: the tasks (their
        overrides) are rebuilt per chunk when it is sent (:class:`_Chunks`), so a sweep of 1M points
        does not hold 1M tasks.

        Each key is :func:`~archsim.sweep.store.point_key` of the point, built from text parts: the
        JSON of each hardware axis's ``[path, encoded value]`` is made once per level of a grid or
        per distinct value object (:meth:`_hardware_texts`), then joined between the sweep's
        constant prefix and the point's workload suffix (the same text, so the same keys)."""
        from archsim._version import __version__

        prefix = key_prefix(self.base.content_hash())
        hw_axes, wl_axes = self._axes_by_target()
        hw = self._hardware_texts(hw_axes, wl_axes)
        suffixes: dict[tuple[tuple[str, Any], ...], str] = {}
        # The prefix's hash state, copied per point: sha256 of the whole text, hashing the shared
        # start once (point_key_of_text's value; a unit test checks it).
        start = hashlib.sha256(prefix.encode())

        def digest(text: str) -> str:
            h = start.copy()
            h.update(text.encode())
            return h.hexdigest()

        def suffix_of(params: tuple[tuple[str, Any], ...]) -> str:
            suffix = suffixes.get(params)
            if suffix is None:
                sw = [(k, v) for k, v in params if k.startswith("software.")]
                wl = dict((k, v) for k, v in params if not k.startswith("software."))
                work_text = work_key(work, wl) + (f"|software:{sw!r}" if sw else "")
                suffix = suffixes[params] = key_suffix(work_text, evaluator_key, __version__)
            return suffix

        if not wl_axes:  # one suffix for every point
            suffix = suffix_of(())
            return list(map(digest, [text + suffix for text in hw]))
        return [digest(text + suffix_of(_work_params(values, wl_axes)))
                for values, text in zip(self._values, hw, strict=True)]

    def _hardware_texts(self, hw_axes: list[tuple[int, Axis]], wl_axes: list[tuple[int, Axis]]) -> list[str]:
        """Each point's hardware overrides as the text of its key (:func:`~archsim.sweep.store.override_text`
        of each hardware axis, joined by commas): of a grid over hardware axes only, each level's
        text made once and joined in the grid's product order; else each axis's texts made once
        per distinct value object and joined point by point."""
        if self._grid is not None and hw_axes and not wl_axes:
            levels = [[override_text(a.path, a.encode(v)) for v in self._grid[j]] for j, a in hw_axes]
            return list(map(",".join, itertools.product(*levels)))
        texts = [_ByValue(lambda v, a=a: override_text(a.path, a.encode(v))).many(map(itemgetter(j), self._values))
                 for j, a in hw_axes]
        return list(map(",".join, zip(*texts, strict=True))) if texts else [""] * len(self._values)

    def _work(self, work: Any) -> Any:
        has_workload_axes = any(a.target == "workload" for a in self.axes)
        if isinstance(work, str) or (work is None and has_workload_axes):
            return ZooWorkload(work, {})
        if isinstance(work, Mapping):
            kwargs = dict(work)
            return ZooWorkload(kwargs.pop("model", None), kwargs)
        if work is None:
            raise SweepError("run() needs a workload: an op, an OpGraph, a zoo model name or a factory")
        if has_workload_axes and not callable(work):
            axes = [a.name for a in self.axes if a.target == "workload"]
            raise SweepError(f"workload axes {axes} need a workload that takes parameters: a zoo model name, "
                             "a {model=..., ...} table or a factory callable, not a fixed op or graph")
        return work

    def run(self, work: Any = None, engine: str = "roofline", *, options: Mapping[str, Any] | None = None,
            metrics: Sequence[str] | None = None, executor: str = "processes", workers: int | None = None,
            address: str | None = None, client: Any = None, chunk_size: int | None = None,
            store: str | os.PathLike[str] | Store | None = None, resume: bool = True,
            progress: bool | None = None, evaluator: Evaluator | None = None) -> pd.DataFrame:
        """Evaluate every point and return the tidy table (see the module documentation).

        Args:
            work: an op or ``OpGraph``; a zoo model name (``"resnet50"``) or ``{"model": ..., **kwargs}``
                (needed with ``workload.*`` axes); or a picklable factory ``f(**params) -> work``.
            engine: ``"roofline"`` (vectorised ``estimate_many`` per chunk) or ``"des"``.
            options: the engine's explicit options.
            metrics: metrics to keep (default: all the engine reports).
            executor: ``"serial"``, ``"processes"`` (default: one worker per core) or ``"dask"``.
            workers: local processes to use.
            address, client: the Dask scheduler address or a ``dask.distributed.Client``.
            chunk_size: points per task (default: enough for four tasks per worker, at most 1024 for
                the roofline and 16 for the discrete-event engine; serially, that maximum).
            store: a directory (or a :class:`~archsim.sweep.store.Store`) that keeps finished points.
            resume: skip points already in ``store``; with ``False`` a non-empty store is an error.
            progress: show a progress bar (default: only when stderr is a terminal).
            evaluator: replaces the engine (any picklable :class:`~archsim.sweep.evaluate.Evaluator`).
        """
        if options is not None and not isinstance(options, Mapping):
            raise SweepError(f"options must be a table of engine options, got {options!r}")
        ev: Evaluator = evaluator if evaluator is not None else EngineEvaluator(engine, dict(options or {}))
        # Everything that can be checked without running is checked first: a typo in an option, a
        # metric or a workload parameter fails in milliseconds, not after the whole sweep.
        if isinstance(ev, EngineEvaluator):
            ev.check()
            self._check_metrics(metrics, ev.metrics())
        elif metrics is not None:
            self._check_metrics(metrics, None)
        if chunk_size is not None and (isinstance(chunk_size, bool) or not isinstance(chunk_size, int)
                                       or chunk_size < 1):
            raise SweepError(f"chunk_size must be a positive integer, got {chunk_size!r}")
        work = self._work(work)
        if isinstance(work, ZooWorkload):
            work.check([str(a.path[0]) for a in self.axes if a.target == "workload"])
        keys = self._keys(work, ev.key)
        the_store = self._open_store(store)
        locked = store_lock(the_store.path) if isinstance(the_store, ParquetStore) else contextlib.nullcontext()
        with locked:
            if isinstance(the_store, ParquetStore):
                the_store.recover()
            return self._run_locked(the_store, store, keys, resume, executor, workers, address, client,
                                    chunk_size, engine if evaluator is None else "roofline", work, ev, progress,
                                    metrics)

    def _run_locked(self, the_store: Store, store: Any, keys: list[str], resume: bool,
                    executor: str, workers: int | None, address: str | None, client: Any, chunk_size: int | None,
                    engine: str, work: Any, ev: Evaluator, progress: bool | None,
                    metrics: Sequence[str] | None) -> pd.DataFrame:
        # A run's own in-memory store starts empty.
        existing = the_store.finished() if store is not None else None
        if not resume and existing is not None and not existing.empty:
            raise SweepError(f"the store {store} already holds results: pass resume=True to reuse them, "
                             "or choose another directory")
        # The first point of each key not finished yet, by index (the tasks are built per chunk).
        seen = set(existing["key"]) if existing is not None else set()
        pending: list[int] = []
        if not seen and len(set(keys)) == len(keys):
            pending = list(range(len(keys)))  # nothing finished and no key repeated: every point
        else:
            for i, key in enumerate(keys):
                if key not in seen:
                    seen.add(key)
                    pending.append(i)
        del seen, existing
        n_workers = 1 if executor == "serial" else (workers or default_workers())
        size = chunk_size if chunk_size is not None else self._chunk_size(len(pending), n_workers, engine)
        chunks = _Chunks(self, keys, pending, size)
        payload = ChunkPayload(self.base.model_dump(), work, ev)
        self._execute(payload, chunks, len(pending), the_store, progress, executor=executor, workers=workers,
                      address=address, client=client)
        del chunks, pending
        # Only the columns the table shows are read back (a user's Store returns them all).
        columns = ["key", "status", "error", *metrics] if metrics is not None and isinstance(
            the_store, MemoryStore | ParquetStore) else None

        def finished() -> pd.DataFrame:
            return the_store.finished(keys) if columns is None else the_store.finished(keys, columns=columns)

        joined = the_store.chunk_rows() if store is None and isinstance(the_store, MemoryStore) else None
        # This run's own in-memory rows are read as the columns they were written in, no frame between.
        rows = _StoredRows.of_frame(finished()) if joined is None else _StoredRows.of_chunk(joined, columns, finished)
        return self._table(rows, keys, metrics)

    @staticmethod
    def _check_metrics(metrics: Sequence[str] | None, known: set[str] | None) -> None:
        if metrics is None:
            return
        if isinstance(metrics, str) or not isinstance(metrics, Sequence) or not all(
                isinstance(m, str) for m in metrics):
            raise SweepError(f"metrics must be a list of metric names, got {metrics!r}")
        if known is not None:
            unknown = [m for m in metrics if m not in known]
            if unknown:
                raise SweepError(f"metrics {unknown} are not reported by the engine; "
                                 f"allowed: {', '.join(sorted(known))}")

    @staticmethod
    def _chunk_size(n_points: int, n_workers: int, engine: str) -> int:
        cap = _MAX_CHUNK.get(engine, _MAX_CHUNK_OTHER)
        if n_workers == 1:
            # Nothing to balance: the biggest chunks amortise the engine's per-call cost (~8 ms
            # for ResNet-50 on the roofline: 30 us a point in chunks of 256, 8 in chunks of 1024).
            return max(1, min(cap, n_points))
        return max(1, min(cap, math.ceil(n_points / (4 * n_workers)) if n_points else 1))

    @staticmethod
    def _open_store(store: Any) -> Store:
        if store is None:
            return MemoryStore()
        if isinstance(store, str | os.PathLike):
            return ParquetStore(Path(store))
        if hasattr(store, "finished") and hasattr(store, "write"):
            return store  # type: ignore[no-any-return]
        raise SweepError(f"store must be a directory or a Store, got {type(store).__name__}")

    @staticmethod
    def _execute(payload: ChunkPayload, chunks: Sequence[Sequence[PointTask]], total: int, store: Store,
                 progress: bool | None, **how: Any) -> None:
        from tqdm.auto import tqdm

        # disable=None is tqdm's "only on a terminal"; sweeps of one chunk finish before a bar helps.
        disable = (None if len(chunks) > 1 else True) if progress is None else not progress
        with tqdm(total=total, unit="pt", desc="sweep", disable=disable) as bar:
            def on_done(rows: list[dict[str, Any]]) -> None:
                store.write(rows)
                bar.update(len(rows))

            execute(payload, chunks, on_done, **how)

    def _table(self, rows: _StoredRows, keys: list[str], metrics: Sequence[str] | None) -> pd.DataFrame:
        chosen = self._chosen(rows, metrics)
        at = _positions(rows.keys, keys)
        if at is None or not chosen:
            return self._wide_table(rows.frame(), keys, chosen, at)
        # Point-major, metrics in the chosen order: each point's id columns repeated once per
        # metric and the metric values read row by row (what melting and sorting by point gave,
        # without pandas sorting ten rows per point). One frame from whole columns: the axis columns
        # from the points' values, the store's columns taken at each point's row (their dtypes kept).
        n, m = len(keys), len(chosen)
        each = np.repeat(np.arange(n), m)
        status = rows.status(at)
        if status.isna().any():
            raise SweepError("the store lost points of this sweep (was it modified while running?)")
        data: dict[str, Any] = {"point": np.repeat(np.arange(n), m)}
        data.update(zip(self.columns, [c[each] if isinstance(c, np.ndarray) else c.take(each)
                                       for c in self._axis_arrays()], strict=True))
        data["status"] = status.take(each)
        # Missing reasons read back from Parquet as NaN; the table says None, whatever the store
        # (a new object array holds None throughout).
        errors = None if rows.no_errors() else rows.errors()
        data["error"] = pd.Series(np.empty(n * m, dtype=object) if errors is None else np.repeat(errors[at], m),
                                  dtype=object)
        data["metric"] = pd.Series(np.asarray(chosen, dtype=object)).array.take(np.tile(np.arange(m), n))
        data["value"] = np.stack([rows.values(c)[at] for c in chosen], axis=1).reshape(-1)
        columns = ["point", *self.columns, "status", "error", "metric", "value"]
        # The columns in their order already (no axis column named like another): no reindexing.
        return pd.DataFrame(data) if list(data) == columns else pd.DataFrame(data, columns=columns)

    @staticmethod
    def _chosen(rows: _StoredRows, metrics: Sequence[str] | None) -> list[str]:
        """The metrics the table shows, in its order; a SweepError for a requested metric that no
        point that ran reports."""
        reserved = {"key", "status", "error"}
        available = [c for c in rows.names if c not in reserved]
        if metrics is None:
            return [m for m in FIRST_METRICS if m in available] + sorted(set(available) - set(FIRST_METRICS))
        missing = [m for m in metrics if m not in available or rows.missing_where_ok(m)]
        if missing:
            raise SweepError(f"metrics {missing} are not reported by the engine; available: {sorted(available)}")
        return list(metrics)

    def _axis_arrays(self) -> list[Any]:
        """Each axis's column of point values, as :meth:`points` gives it: a numpy array where
        every value is a float (float64), an int (int64) or a bool, what pandas infers for such a
        column; else the points frame's column (pandas' own inference)."""
        out: list[Any] = []
        frame = None
        for j, name in enumerate(self.columns):
            column = _simple_column(list(map(itemgetter(j), self._values)))
            if column is None:
                frame = self.points() if frame is None else frame
                column = frame[name].array
            out.append(column)
        return out

    def _wide_table(self, rows: pd.DataFrame, keys: list[str], chosen: list[str], at: np.ndarray | None
                    ) -> pd.DataFrame:
        """:meth:`_table` through a wide frame of the points and their rows: where a point has no row
        (an error), the store repeats a key (``at`` None: the points merged with the rows on their
        key), or no metric is shown."""
        points = self.points()
        points["key"] = keys
        if at is not None:
            wide = pd.concat([points, rows.drop(columns="key").iloc[at].reset_index(drop=True)], axis=1)
        else:
            wide = points.merge(rows, on="key", how="left", validate="many_to_one")
        if wide["status"].isna().any():
            raise SweepError("the store lost points of this sweep (was it modified while running?)")
        wide["error"] = pd.Series([e if isinstance(e, str) else None for e in wide["error"]], dtype=object,
                                  index=wide.index)
        ids = ["point", *self.columns, "status", "error"]
        if not chosen:
            wide["metric"], wide["value"] = None, math.nan
            return wide[[*ids, "metric", "value"]]
        n, m = len(wide), len(chosen)
        each = np.repeat(np.arange(n), m)
        data: dict[str, Any] = {c: wide[c].array.take(each) for c in ids if c != "error"}
        data["error"] = pd.Series(np.repeat(wide["error"].to_numpy(dtype=object), m), dtype=object)
        data["metric"] = pd.Series(np.asarray(chosen, dtype=object)).array.take(np.tile(np.arange(m), n))
        data["value"] = np.stack([wide[c].to_numpy(dtype=float) for c in chosen], axis=1).reshape(-1)
        return pd.DataFrame(data, columns=[*ids, "metric", "value"])


def _positions(stored: list[str], keys: list[str]) -> np.ndarray | None:
    """The row (of rows with keys ``stored``) holding each key of ``keys``; None where one is
    missing or the rows repeat a key. The rows of a fresh sweep run serially are the keys in order
    (checked first)."""
    if len(stored) == len(keys) and stored == keys and len(set(keys)) == len(keys):
        return np.arange(len(keys))
    index = pd.Index(np.asarray(stored, dtype=object), dtype=object)
    if not index.is_unique:
        return None
    at = index.get_indexer(keys)
    return at if (at >= 0).all() else None


class _StoredRows:
    """The finished rows a sweep's table reads, from the store's frame or, for a run's own
    in-memory store, from the :class:`~archsim.sweep.rows.ChunkRows` its chunks were written as
    (the same values and dtypes as that store's frame of them, without making it).

    Attributes:
        names: the column names (``key``, ``status``, ``error``, the metrics), in the frame's order.
        keys: each row's key.
    """

    __slots__ = ("names", "keys", "_frame", "_chunk", "_make")

    def __init__(self, names: list[str], keys: list[str], frame: pd.DataFrame | None, chunk: ChunkRows | None,
                 make: Any) -> None:
        self.names, self.keys, self._frame, self._chunk, self._make = names, keys, frame, chunk, make

    @classmethod
    def of_frame(cls, frame: pd.DataFrame) -> _StoredRows:
        """The rows of a store's ``finished()`` frame."""
        keys = frame["key"].to_numpy(dtype=object).tolist() if "key" in frame else []
        return cls(list(frame.columns), keys, frame, None, None)

    @classmethod
    def of_chunk(cls, rows: ChunkRows, columns: Sequence[str] | None, make: Any) -> _StoredRows:
        """The rows of a run's own :class:`MemoryStore`, written as ``rows`` (every key once, all the
        run's): its frame would hold ``columns`` of them (all for None); ``make()`` makes that frame."""
        names = ["key", "status", "error", *rows.metrics]
        if columns is not None:
            wanted = set(columns)
            names = [c for c in names if c in wanted]
        return cls(names, rows.keys, None, rows, make)

    def frame(self) -> pd.DataFrame:
        """The store's frame of the rows."""
        if self._frame is None:
            self._frame = self._make()
        return self._frame

    def status(self, at: np.ndarray) -> Any:
        """The ``status`` column's array (its dtype as the frame has it) taken at rows ``at``: for
        the chunk rows, their few distinct texts' array taken at each row's text (the same values)."""
        if self._chunk is None:
            return self.frame()["status"].array.take(at)
        status = self._chunk.status
        number = {s: i for i, s in enumerate(dict.fromkeys(status))}
        codes = np.fromiter(map(number.__getitem__, status), dtype=np.intp, count=len(status))
        return pd.Series(np.asarray(list(number), dtype=object)).array.take(codes[at])

    def errors(self) -> np.ndarray:
        """The ``error`` column as an object array: the reason, or None where there is none (a
        store's NaN too)."""
        out = np.empty(len(self.keys), dtype=object)
        if self._chunk is None:
            out[:] = [e if isinstance(e, str) else None for e in self.frame()["error"].to_numpy(dtype=object).tolist()]
        else:
            out[:] = self._chunk.errors  # the chunk's reasons are texts or None
        return out

    def no_errors(self) -> bool:
        """Whether the rows are known to have no reason at all (:meth:`errors` None throughout):
        the chunk rows' reasons, counted in one pass; a store's frame is not read for it (False)."""
        return self._chunk is not None and self._chunk.errors.count(None) == len(self._chunk.errors)

    def values(self, name: str) -> np.ndarray:
        """The float64 values of metric ``name`` (NaN where a row has none)."""
        if self._chunk is None:
            return self.frame()[name].to_numpy(dtype=float)
        return self._chunk.metrics[name]

    def missing_where_ok(self, name: str) -> bool:
        """Whether rows with status ``ok`` exist and all lack metric ``name``."""
        if self._chunk is None:
            rows = self.frame()
            ok = rows[rows["status"] == "ok"] if "status" in rows else rows
            return bool(len(ok) and ok[name].isna().all())
        ok = np.fromiter((s == "ok" for s in self._chunk.status), dtype=bool, count=len(self.keys))
        return bool(ok.any() and np.isnan(self._chunk.metrics[name][ok]).all())


def _simple_column(values: list[Any]) -> np.ndarray | None:
    """``values`` as the numpy array pandas infers for a column of them where they are all floats,
    all ints (within int64) or all bools; None otherwise."""
    kinds = set(map(type, values))
    if kinds == {float}:
        return np.array(values, dtype=np.float64)
    if kinds == {bool}:
        return np.array(values, dtype=bool)
    if kinds == {int}:
        try:
            return np.array(values, dtype=np.int64)
        except OverflowError:
            return None
    return None


def _work_params(values: tuple[Any, ...], wl_axes: list[tuple[int, Axis]]) -> tuple[tuple[str, Any], ...]:
    """A point's workload (and software) parameters, sorted by name: the grouping key of a chunk."""
    if not wl_axes:
        return ()
    return tuple(sorted((str(a.path[0]), values[j]) for j, a in wl_axes))


class _ByValue:
    """``f(value)`` memoised by the value object's identity (a grid repeats each axis's level
    objects; a random sampler's values are all distinct and simply miss). Identity, not equality:
    ``0.0`` and ``-0.0``, ``1`` and ``1.0`` are equal but encode differently. The sweep keeps every
    value alive (``Sweep._values``), so no id is reused while the memo lives."""

    __slots__ = ("_f", "_memo")

    def __init__(self, f: Any) -> None:
        self._f, self._memo = f, {}

    def __call__(self, value: Any) -> Any:
        try:
            return self._memo[id(value)]
        except KeyError:
            out = self._memo[id(value)] = self._f(value)
            return out

    def many(self, values: Iterable[Any]) -> list[Any]:
        """``[self(v) for v in values]``, each new value object's ``f`` in order of first appearance,
        the lookups in bulk (the caller keeps ``values`` alive, like the sweep's own)."""
        column = list(values)
        ids = list(map(id, column))
        memo = self._memo
        for key, value in dict(zip(ids, column, strict=True)).items():
            if key not in memo:
                memo[key] = self._f(value)
        return list(map(memo.__getitem__, ids))


class _Chunks(Sequence[PointTasks]):
    """The chunks of a run as a sequence whose items are built when read: chunk ``i`` is the tasks of
    the points ``pending[i * size:(i + 1) * size]`` (their keys from ``keys``), as the columns of a
    :class:`~archsim.sweep.evaluate.PointTasks`, so only the chunks in flight exist at once (the
    process executor keeps a few per worker queued)."""

    def __init__(self, sweep: Sweep, keys: list[str], pending: list[int], size: int) -> None:
        self._sweep, self._keys, self._pending, self._size = sweep, keys, pending, size
        self._hw_axes, self._wl_axes = sweep._axes_by_target()
        self._paths = tuple(a.path for _, a in self._hw_axes)
        # Each hardware axis's encoded value, once per distinct value object; of a grid over
        # hardware axes only, once per level, with the stride and count of the axis's levels in the
        # product (point p holds level p // stride % count).
        self._encode = [(j, _ByValue(a.encode)) for j, a in self._hw_axes]
        self._levels: list[tuple[list[Any], int, int]] | None = None
        grid = sweep._grid
        if grid is not None and self._hw_axes and not self._wl_axes:
            counts = [len(levels) for levels in grid]
            self._levels = [([a.encode(v) for v in grid[j]], math.prod(counts[j + 1:]), counts[j])
                            for j, a in self._hw_axes]

    def __len__(self) -> int:
        return math.ceil(len(self._pending) / self._size)

    def __getitem__(self, i: int) -> PointTasks:  # type: ignore[override]
        if not isinstance(i, int) or not -len(self) <= i < len(self):
            raise IndexError(i)
        i %= len(self)
        values, keys, wl_axes = self._sweep._values, self._keys, self._wl_axes
        pending = self._pending[i * self._size:(i + 1) * self._size]
        if self._levels is not None:
            at = np.asarray(pending, dtype=np.int64)
            columns = [list(map(levels.__getitem__, (at // stride % count).tolist()))
                       for levels, stride, count in self._levels]
            return PointTasks(list(map(keys.__getitem__, pending)), self._paths, columns, None)
        chunk = [values[p] for p in pending]
        columns = [f.many(map(itemgetter(j), chunk)) for j, f in self._encode]
        params = [_work_params(v, wl_axes) for v in chunk] if wl_axes else None
        return PointTasks([keys[p] for p in pending], self._paths, columns, params)
