"""Evaluating sweep points: build each point's hardware and workload, run the engine on a chunk.

This is the code that runs in a worker (a local process or a Dask worker). A chunk is a sequence of
:class:`PointTask` (a sweep sends it as the columns of a :class:`PointTasks`); :func:`evaluate_chunk`
returns one row per task: the point's key, its status (``ok``, ``invalid``: the hardware or the
workload did not validate; ``failed``: the engine refused it) with the reason, and the metrics
(under archsim's vectorised roofline, and for an evaluator whose metrics are floats, as a
:class:`~archsim.sweep.rows.ChunkRows`: the rows held as columns, read as the same dicts). The
chunk's hardware points are built together (:class:`~archsim.sweep.columns.ChunkBuilder`). An
invalid point never stops the sweep; a bug (any error that is not an
:class:`~archsim.errors.ArchsimError`) does.

An evaluator is any picklable callable ``(work, [hardware, ...]) -> [ {metric: float}, ... ]`` with a
``key`` string that identifies it (and its options) in the result store. :class:`EngineEvaluator`
is the one :meth:`archsim.Sweep.run` uses: the vectorised roofline ``archsim.engines.estimate_many`` for the
roofline engine, one ``estimate`` per point otherwise.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import hashlib
import importlib
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from typing import Any, Protocol

import numpy as np

from archsim.errors import ArchsimError, SweepError
from archsim.sweep.columns import ChunkBuilder
from archsim.sweep.points import PointBuilder, apply_overrides
from archsim.sweep.rows import ChunkRows, ColumnSequence, RowsBuilder

__all__ = ["Evaluator", "EngineEvaluator", "ZooWorkload", "PointTask", "PointTasks", "ChunkPayload", "evaluate_chunk",
           "apply_overrides", "flatten_run", "work_key", "one_line"]


class Evaluator(Protocol):
    """Computes the metrics of a list of hardware points for one workload."""

    key: str

    def __call__(self, work: Any, hardware: Sequence[Any]) -> list[dict[str, float]]: ...


def flatten_run(result: Any) -> dict[str, float]:
    """The metrics of a :class:`~archsim.results.RunResult`: its summary and energy per component (J)."""
    row = dict(result.summary())
    row.update({f"energy_{k}_j": float(v) for k, v in result.energy_breakdown_j.items()})
    return row


@dataclass(frozen=True)
class EngineEvaluator:
    """archsim's engines as a sweep evaluator; ``options`` are the engine's explicit options."""

    engine: str
    options: Mapping[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> str:
        return f"{self.engine}:{json.dumps(dict(self.options), sort_keys=True, default=repr)}"

    def check(self) -> None:
        """Raise an ArchsimError for an unknown engine or option now, before any point runs."""
        from archsim.engines import check_options

        check_options(self.options, self.engine)

    def metrics(self) -> set[str]:
        """Every metric this engine may report (which energy components appear depends on the hardware)."""
        from archsim.energy.ledger import COMPONENTS

        names = {"latency_s", "energy_j", "flop", "data_movement_fraction", *(f"energy_{c}_j" for c in COMPONENTS)}
        return names if self.engine == "roofline" else names | {"achieved_flop_per_s"}

    @property
    def columnar(self) -> bool:
        """Whether :meth:`columns` gives the metrics (the vectorised roofline); otherwise only the
        per-point dicts of :meth:`__call__` do."""
        return self.engine == "roofline"

    def columns(self, work: Any, hardware: Sequence[Any]) -> dict[str, np.ndarray]:
        """The roofline's metrics of every point as columns: name -> float64 array over ``hardware``."""
        from archsim.engines import many_columns

        if not self.columnar:
            raise SweepError(f"engine {self.engine!r} gives per-point metrics, not columns")
        return many_columns(work, list(hardware), **dict(self.options))

    def __call__(self, work: Any, hardware: Sequence[Any]) -> list[dict[str, float]]:
        from archsim.engines import estimate

        if self.columnar:
            # Column by column: tolist() gives the Python floats float(v) would, without pandas'
            # per-row records (half of this function's time at 1,000 points).
            found = self.columns(work, hardware)
            names, columns = list(found), [c.tolist() for c in found.values()]
            return [dict(zip(names, values, strict=True)) for values in zip(*columns, strict=True)]
        return [flatten_run(estimate(work, hw, engine=self.engine, **dict(self.options)))
                for hw in hardware]


@dataclass(frozen=True)
class ZooWorkload:
    """A workload built by ``archsim.zoo.<model>(**kwargs)``; sweep points override the kwargs."""

    model: str | None
    kwargs: Mapping[str, Any] = field(default_factory=dict)

    def __call__(self, **overrides: Any) -> Any:
        params = {**dict(self.kwargs), **overrides}
        model = params.pop("model", self.model)
        if not model:
            raise SweepError("no workload model: give work='<zoo model>' or a 'workload.model' axis")
        zoo = importlib.import_module("archsim.zoo")
        factory = getattr(zoo, str(model), None)
        if factory is None or not callable(factory):
            known = sorted(n for n in dir(zoo) if not n.startswith("_") and callable(getattr(zoo, n)))
            raise SweepError(f"workload model {model!r} is not in archsim.zoo; known: {', '.join(known)}")
        return factory(**params)

    def check(self, params: Sequence[str]) -> None:
        """Raise a SweepError now for an unknown model or a parameter (a ``[work]`` key or a
        ``workload.*`` axis in ``params``) the model does not take, before any point runs."""
        import inspect

        model = self.kwargs.get("model", self.model)
        if "model" in params or model is None:
            return
        zoo = importlib.import_module("archsim.zoo")
        factory = getattr(zoo, model, None) if isinstance(model, str) and not model.startswith("_") else None
        if factory is None or not callable(factory) or isinstance(factory, type):
            known = sorted(n for n in dir(zoo) if not n.startswith("_") and callable(getattr(zoo, n))
                           and n not in ("get", "list_models"))
            raise SweepError(f"workload model {model!r} is not in archsim.zoo; known: {', '.join(known)}")
        parameters = inspect.signature(factory).parameters
        if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
            return
        accepted = set(parameters)
        unknown = sorted((set(self.kwargs) | set(params)) - accepted - {"model"})
        if unknown:
            raise SweepError(f"workload model {model!r} takes no parameter(s) {unknown}; "
                             f"allowed: {', '.join(sorted(accepted))}")

    def describe(self, overrides: Mapping[str, Any]) -> dict[str, Any]:
        params = {**dict(self.kwargs), **dict(overrides)}
        params.setdefault("model", self.model)
        return params


def work_key(work: Any, params: Mapping[str, Any]) -> str:
    """A stable text identifying the workload of a point (part of the store key)."""
    if isinstance(work, ZooWorkload):
        return "zoo:" + json.dumps(work.describe(params), sort_keys=True, default=repr)
    if callable(work) and not hasattr(work, "flop"):
        name = f"{getattr(work, '__module__', '')}.{getattr(work, '__qualname__', type(work).__qualname__)}"
        return f"factory:{name}:" + json.dumps(dict(params), sort_keys=True, default=repr)
    content = getattr(work, "content_hash", None)
    if callable(content):
        return f"hash:{content()}"
    # Ops and graphs are frozen dataclasses: their repr lists every field, deterministically. The
    # text is kept on such an object (its fields cannot change), so a workload swept again is not
    # printed and hashed again (~0.7 ms for ResNet-50).
    held = vars(work) if _frozen_dataclass(work) and hasattr(work, "__dict__") else None
    text = None if held is None else held.get(_WORK_KEY)
    if text is None:
        text = "repr:" + hashlib.sha256(repr(work).encode()).hexdigest()
        if held is not None:
            held[_WORK_KEY] = text
    return text  # type: ignore[no-any-return]


_WORK_KEY = "_archsim_work_key"
"""Key of a frozen dataclass workload's :func:`work_key` text in its instance ``__dict__`` (not a
field: its ``==``, ``hash`` and ``repr`` do not see it)."""


def _frozen_dataclass(obj: Any) -> bool:
    """Whether ``obj`` is an instance of a frozen dataclass."""
    params = getattr(type(obj), "__dataclass_params__", None)
    return params is not None and not isinstance(obj, type) and bool(params.frozen)


def one_line(exc: BaseException) -> str:
    """An error message on one line (schema errors list one problem per line under a header)."""
    lines = [part.strip() for part in str(exc).splitlines() if part.strip()]
    if len(lines) > 1 and "problem(s)" in lines[0]:
        lines = lines[1:]
    return "; ".join(lines)


@dataclass(frozen=True)
class PointTask:
    """One point to evaluate: its store key, hardware overrides (dump paths, encoded values), workload params."""

    key: str
    overrides: tuple[tuple[tuple[str | int, ...], Any], ...]
    work_params: tuple[tuple[str, Any], ...]

    @classmethod
    def of(cls, key: str, overrides: tuple[tuple[tuple[str | int, ...], Any], ...],
           work_params: tuple[tuple[str, Any], ...]) -> PointTask:
        """``PointTask(key, overrides, work_params)`` built as the frozen ``__init__`` would set
        it, without its per-field ``object.__setattr__`` (a sweep builds one per point)."""
        task = object.__new__(cls)
        task.__dict__.update(key=key, overrides=overrides, work_params=work_params)
        return task


class PointTasks(ColumnSequence[PointTask]):
    """A chunk's tasks as columns: what a sweep sends instead of a list of :class:`PointTask`.

    Point ``i`` has key ``keys[i]``, the hardware overrides ``(paths[j], values[j][i])`` for each
    path ``j`` (every point of a sweep overrides the same paths) and the workload parameters
    ``work_params[i]`` (``()`` for every point where ``work_params`` is None). It reads as the
    sequence of those tasks, so any executor or evaluator sees the tasks as always, while
    :func:`evaluate_chunk` takes the columns as they are (no task object per point).
    """

    __slots__ = ("keys", "paths", "values", "work_params")

    def __init__(self, keys: list[str], paths: tuple[tuple[str | int, ...], ...], values: list[list[Any]],
                 work_params: list[tuple[tuple[str, Any], ...]] | None) -> None:
        n = len(keys)
        if len(values) != len(paths) or any(len(v) != n for v in values) or (
                work_params is not None and len(work_params) != n):
            raise ValueError("PointTasks needs one value per path and one work parameter tuple per point")
        self.keys, self.paths, self.values, self.work_params = keys, paths, values, work_params

    def __len__(self) -> int:
        return len(self.keys)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if not isinstance(i, int):
            raise TypeError(f"PointTasks indices are integers or slices, not {type(i).__name__}")
        if not -len(self) <= i < len(self):
            raise IndexError(i)
        i %= len(self)
        overrides = tuple(zip(self.paths, [v[i] for v in self.values], strict=True))
        return PointTask.of(self.keys[i], overrides, () if self.work_params is None else self.work_params[i])

    def __getstate__(self) -> tuple[Any, ...]:
        return self.keys, self.paths, self.values, self.work_params

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        self.keys, self.paths, self.values, self.work_params = state


@dataclass(frozen=True)
class ChunkPayload:
    """What every chunk of a sweep shares: the base dump, the workload and the evaluator."""

    base_dump: Mapping[str, Any]
    work: Any
    evaluator: Callable[[Any, Sequence[Any]], list[dict[str, float]]]


def _build_work(work: Any, params: Mapping[str, Any]) -> Any:
    params = {k: v for k, v in params.items() if not k.startswith("software.")}
    if params or (callable(work) and not hasattr(work, "flop")):
        return work(**params)
    return work


@contextlib.contextmanager
def _collect_young_only(pause: bool = False) -> Iterator[None]:
    """Keep the objects that exist now out of the garbage collector's full passes while a chunk runs
    (with ``pause``, run no collection at all while it runs).

    Validating a point allocates a few hundred objects that live until the chunk ends, so full
    collections run every few dozen points, and each scans the whole heap (numba, pydantic and
    pandas hold millions of objects): 60% of a 1,000-point sweep's time. ``gc.freeze`` moves the
    existing objects to the permanent generation; the chunk's own objects are still collected,
    and ``gc.unfreeze`` returns the rest to the oldest generation afterwards. A caller that froze
    objects itself is left alone, and so is an interpreter that starts with objects in its permanent
    generation (CPython 3.12.1: a few hundred; a per-point engine's chunk is then collected as
    usual). Only when objects are collected changes, never what is computed.

    ``pause`` is for chunks of the vectorised roofline, whose objects (the points' models, numpy
    arrays) die by reference counting: the young collections that still ran on them (~20 per
    1,024-point chunk, ~5 % of its time) free nothing, and the few cycles a chunk leaves (an
    invalid point's error and its traceback) are collected after it. A per-point engine (the
    discrete-event simulator's environments are cyclic) keeps them. A collector the caller
    disabled stays disabled.
    """
    paused = pause and gc.isenabled()
    if paused:
        gc.disable()
    try:
        if gc.get_freeze_count():
            yield
            return
        gc.freeze()
        try:
            yield
        finally:
            gc.unfreeze()
    finally:
        if paused:
            gc.enable()


def _point_evaluator(evaluator: Any, params: Mapping[str, Any]) -> Any:
    """``evaluator`` with the point's ``software.*`` values applied to its software profile."""
    updates = {k: v for k, v in params.items() if k.startswith("software.")}
    if not updates:
        return evaluator
    if not isinstance(evaluator, EngineEvaluator):
        raise SweepError("software.* axes need archsim's engines as the evaluator")
    from archsim.software import resolve_software, with_updates

    base = evaluator.options.get("software")
    if base is None:
        raise SweepError("software.* axes need options={'software': '<profile>'} to update")
    profile = with_updates(resolve_software(base), updates)
    return dataclasses.replace(evaluator, options={**dict(evaluator.options), "software": profile})


def evaluate_chunk(payload: ChunkPayload, tasks: Sequence[PointTask]) -> Sequence[dict[str, Any]]:
    """Validate and evaluate every task of a chunk; one row per task, in task order."""
    # archsim's vectorised roofline gives metric columns: the rows stay columns (ChunkRows).
    columnar = getattr(payload.evaluator, "columnar", False) is True
    with _collect_young_only(pause=columnar):
        return _evaluate_chunk(payload, tasks, columnar)


def _built(base_dump: Mapping[str, Any], tasks: Sequence[PointTask]) -> list[Any]:
    """Each task's validated hardware, or the ArchsimError of its validation, in task order:
    through a :class:`~archsim.sweep.columns.ChunkBuilder` of the base (the chunk's points built
    together as column overrides, only the tables they touch validated again; a :class:`PointTasks`
    chunk's columns as they are, the same models), or whole dumps if the base itself does not
    validate (each point then reports the base's problem)."""
    from archsim.presets import validate_hardware

    try:
        builder = ChunkBuilder(PointBuilder(base_dump, "point"))
    except ArchsimError:
        out: list[Any] = []
        for task in tasks:
            try:
                out.append(validate_hardware(apply_overrides(base_dump, task.overrides), "point"))
            except ArchsimError as exc:
                out.append(exc)
        return out
    if isinstance(tasks, PointTasks):
        return builder.build_columns(tasks.paths, tasks.values, len(tasks))
    return builder.build([task.overrides for task in tasks])


def _evaluate_chunk(payload: ChunkPayload, tasks: Sequence[PointTask], columnar: bool) -> Sequence[dict[str, Any]]:
    built = _built(payload.base_dump, tasks)
    if isinstance(tasks, PointTasks):
        keys = tasks.keys
        params_of: Sequence[tuple[tuple[str, Any], ...]] = (
            tasks.work_params if tasks.work_params is not None else [()] * len(keys))
    else:
        keys = [task.key for task in tasks]
        params_of = [task.work_params for task in tasks]
    out = RowsBuilder(keys) if columnar else None
    # A per-point evaluator's rows: the failed points, and each group's points that ran with their metrics.
    fails: list[tuple[int, str, str]] = []
    done: list[tuple[list[int], list[dict[str, Any]]]] = []

    def failed(i: int, status: str, error: str) -> None:
        if out is not None:
            out.failed(i, status, error)
        else:
            fails.append((i, status, error))

    # Each group of points sharing workload parameters: their indices and hardware, in task order.
    if isinstance(tasks, PointTasks) and tasks.work_params is None:
        groups, works = _one_group(payload.work, built, failed)
    else:
        groups, works = _groups(payload.work, built, params_of, failed)
    for params, (at, hardware) in groups.items():
        work = works[params]
        try:
            evaluator = _point_evaluator(payload.evaluator, dict(params))
        except ArchsimError as exc:
            for i in at:
                failed(i, "invalid", one_line(exc))
            continue
        if out is not None:
            _run_columns(evaluator, work, at, hardware, out)
            continue
        try:
            metrics = evaluator(work, hardware)
        except ArchsimError:
            # One bad point must not fail its neighbours: retry one by one to find it.
            metrics = []
            for hw in hardware:
                try:
                    metrics.extend(evaluator(work, [hw]))
                except ArchsimError as exc:
                    metrics.append({"__error__": one_line(exc)})  # type: ignore[dict-item]
        if len(metrics) != len(at):
            raise SweepError(f"evaluator returned {len(metrics)} rows for {len(at)} points")
        ran: tuple[list[int], list[dict[str, Any]]] = ([], [])
        for i, m in zip(at, metrics, strict=True):
            if "__error__" in m:
                failed(i, "failed", m["__error__"])
            else:
                ran[0].append(i)
                ran[1].append(m)
        done.append(ran)
    if out is not None:
        return out.result()
    plain = _float_rows(keys, fails, done)
    return plain if plain is not None else _dict_rows(keys, fails, done)


Params = tuple[tuple[str, Any], ...]
Groups = dict[Params, tuple[list[int], list[Any]]]


def _groups(work: Any, built: list[Any], params_of: Sequence[Params],
            failed: Callable[[int, str, str], None]) -> tuple[Groups, dict[Params, Any]]:
    """The points of a chunk by workload parameters: (parameters -> (the indices, the hardware) of
    the points that share them, in task order; parameters -> their work). A point whose hardware
    (``built``: a model or the ArchsimError of its validation) or work did not build is
    ``failed`` instead; a work that failed to build is tried again at the next point of its
    parameters."""
    groups: Groups = {}
    works: dict[Params, Any] = {}
    for i, (hw, params) in enumerate(zip(built, params_of, strict=True)):
        if isinstance(hw, ArchsimError):
            failed(i, "invalid", one_line(hw))
            continue
        if params not in works:
            try:
                works[params] = _build_work(work, dict(params))
            except ArchsimError as exc:
                failed(i, "invalid", one_line(exc))
                continue
        group = groups.get(params)
        if group is None:
            group = groups[params] = ([], [])
        group[0].append(i)
        group[1].append(hw)
    return groups, works


def _one_group(work: Any, built: list[Any], failed: Callable[[int, str, str], None]
               ) -> tuple[Groups, dict[Params, Any]]:
    """:func:`_groups` of points that all have the parameters ``()``: the invalid points found in
    one pass, the work built at the first valid point (and again at each next one while it fails),
    the rest of the points one group."""
    invalid = np.fromiter(map(isinstance, built, repeat(ArchsimError)), dtype=bool, count=len(built))
    for i in np.flatnonzero(invalid).tolist():
        failed(i, "invalid", one_line(built[i]))
    at = np.flatnonzero(~invalid).tolist()
    for k, i in enumerate(at):
        try:
            made = _build_work(work, {})
        except ArchsimError as exc:
            failed(i, "invalid", one_line(exc))
            continue
        rest = at[k:]
        return {(): (rest, list(map(built.__getitem__, rest)))}, {(): made}
    return {}, {}


_RESERVED = frozenset({"key", "status", "error"})


def _float_rows(keys: list[str], fails: list[tuple[int, str, str]],
                done: list[tuple[list[int], list[dict[str, Any]]]]) -> ChunkRows | None:
    """The rows of :func:`_dict_rows` as a :class:`~archsim.sweep.rows.ChunkRows` (the same row
    dicts, frames and table) where every group's metrics are dicts with the same names in the same
    order and Python float values; None otherwise."""
    out = RowsBuilder(keys)
    for i, status, error in fails:
        out.failed(i, status, error)
    for at, metrics in done:
        if not at:
            continue
        columns = _float_columns(metrics)
        if columns is None:
            return None
        out.ok(at, columns)
    return out.result()


def _float_columns(metrics: list[dict[str, Any]]) -> dict[str, tuple[float, ...]] | None:
    """``metrics`` (one dict per point) as columns, name -> the points' values, where every dict
    has the first one's names in its order (none a row's own field) and every value is a float."""
    if set(map(type, metrics)) != {dict}:
        return None
    names = tuple(metrics[0])
    if _RESERVED.intersection(names) or any(tuple(m) != names for m in metrics):
        return None
    columns = list(zip(*map(dict.values, metrics), strict=True)) if names else []
    if any(set(map(type, column)) != {float} for column in columns):
        return None
    return dict(zip(names, columns, strict=True))


def _dict_rows(keys: list[str], fails: list[tuple[int, str, str]],
               done: list[tuple[list[int], list[dict[str, Any]]]]) -> list[dict[str, Any]]:
    """The chunk's rows as dicts, in task order: ``key``, ``status`` and ``error``, then a point's metrics."""
    rows: list[dict[str, Any] | None] = [None] * len(keys)
    for i, status, error in fails:
        rows[i] = {"key": keys[i], "status": status, "error": error}
    for at, metrics in done:
        for i, m in zip(at, metrics, strict=True):
            rows[i] = {"key": keys[i], "status": "ok", "error": None, **m}
    return [r for r in rows if r is not None]


def _run_columns(evaluator: Any, work: Any, at: list[int], hardware: list[Any], out: RowsBuilder) -> None:
    """The metric columns of one group's points (rows ``at``, their ``hardware``) into ``out``; where
    the engine refuses the group, point by point, so one bad point does not fail its neighbours
    (its row says ``failed``)."""
    try:
        columns = evaluator.columns(work, hardware)
    except ArchsimError:
        for i, hw in zip(at, hardware, strict=True):
            try:
                out.ok([i], evaluator.columns(work, [hw]))
            except ArchsimError as exc:
                out.failed(i, "failed", one_line(exc))
        return
    if any(len(c) != len(at) for c in columns.values()):
        raise SweepError(f"evaluator returned columns of {sorted({len(c) for c in columns.values()})} rows for "
                         f"{len(at)} points")
    out.ok(at, columns)
