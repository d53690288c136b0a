"""Evaluating sweep points: build each point's hardware and workload, run the engine on a chunk.

This is the code that runs in a worker (a local process or a Dask worker). A chunk is a list of
:class:`PointTask`; :func:`evaluate_chunk` returns one row per task: the point's key, its status
(``ok``, ``invalid``: the hardware or the workload did not validate; ``failed``: the engine refused
it) with the reason, and the metrics. An invalid point never stops the sweep; a bug (any error that
is not an :class:`~archsim.errors.ArchsimError`) does.

An evaluator is any picklable callable ``(work, [hardware, ...]) -> [ {metric: float}, ... ]`` with a
``key`` string that identifies it (and its options) in the result store. :class:`EngineEvaluator`
is the one :meth:`archsim.Sweep.run` uses: the vectorised roofline ``archsim.engines.estimate_many`` for the
roofline engine, one ``estimate`` per point otherwise.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from archsim.errors import ArchsimError, SweepError

__all__ = ["Evaluator", "EngineEvaluator", "ZooWorkload", "PointTask", "ChunkPayload", "evaluate_chunk",
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

    def __call__(self, work: Any, hardware: Sequence[Any]) -> list[dict[str, float]]:
        from archsim.engines import estimate, estimate_many

        if self.engine == "roofline":
            frame = estimate_many(work, list(hardware), **dict(self.options))
            numeric = frame.select_dtypes("number")
            return [{k: float(v) for k, v in row.items()} for row in numeric.to_dict("records")]
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
    # Ops and graphs are frozen dataclasses: their repr lists every field, deterministically.
    return "repr:" + hashlib.sha256(repr(work).encode()).hexdigest()


def one_line(exc: BaseException) -> str:
    """An error message on one line (schema errors list one problem per line under a header)."""
    lines = [part.strip() for part in str(exc).splitlines() if part.strip()]
    if len(lines) > 1 and "problem(s)" in lines[0]:
        lines = lines[1:]
    return "; ".join(lines)


def apply_overrides(dump: Mapping[str, Any], overrides: Sequence[tuple[tuple[str | int, ...], Any]]) -> dict[str, Any]:
    """A new dump with each ``(path, value)`` set; the input and its sub-tables are never modified.

    Only the tables along each path are copied (copy-on-write); untouched sub-tables are shared,
    which is safe because validation reads its input and never writes it.
    """
    root: Any = dict(dump)
    for path, value in overrides:
        node = root
        for key in path[:-1]:
            child = node[key]
            child = list(child) if isinstance(child, list) else dict(child)
            node[key] = child
            node = child
        node[path[-1]] = value
    return root


@dataclass(frozen=True)
class PointTask:
    """One point to evaluate: its store key, hardware overrides (dump paths, encoded values), workload params."""

    key: str
    overrides: tuple[tuple[tuple[str | int, ...], Any], ...]
    work_params: tuple[tuple[str, Any], ...]


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


def evaluate_chunk(payload: ChunkPayload, tasks: Sequence[PointTask]) -> list[dict[str, Any]]:
    """Validate and evaluate every task of a chunk; one row per task, in task order."""
    from archsim.presets import validate_hardware

    rows: list[dict[str, Any] | None] = [None] * len(tasks)
    groups: dict[tuple[tuple[str, Any], ...], list[tuple[int, Any]]] = {}
    works: dict[tuple[tuple[str, Any], ...], Any] = {}
    for i, task in enumerate(tasks):
        try:
            hw = validate_hardware(apply_overrides(payload.base_dump, task.overrides), "point")
            if task.work_params not in works:
                works[task.work_params] = _build_work(payload.work, dict(task.work_params))
        except ArchsimError as exc:
            rows[i] = {"key": task.key, "status": "invalid", "error": one_line(exc)}
            continue
        groups.setdefault(task.work_params, []).append((i, hw))
    for params, members in groups.items():
        work = works[params]
        try:
            evaluator = _point_evaluator(payload.evaluator, dict(params))
        except ArchsimError as exc:
            for i, _hw in members:
                rows[i] = {"key": tasks[i].key, "status": "invalid", "error": one_line(exc)}
            continue
        try:
            metrics = evaluator(work, [hw for _, hw in members])
        except ArchsimError:
            # One bad point must not fail its neighbours: retry one by one to find it.
            metrics = []
            for _i, hw in members:
                try:
                    metrics.extend(evaluator(work, [hw]))
                except ArchsimError as exc:
                    metrics.append({"__error__": one_line(exc)})  # type: ignore[dict-item]
        if len(metrics) != len(members):
            raise SweepError(f"evaluator returned {len(metrics)} rows for {len(members)} points")
        for (i, _hw), m in zip(members, metrics, strict=True):
            if "__error__" in m:
                rows[i] = {"key": tasks[i].key, "status": "failed", "error": m["__error__"]}
            else:
                rows[i] = {"key": tasks[i].key, "status": "ok", "error": None, **m}
    return [r for r in rows if r is not None]
