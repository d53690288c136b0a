"""The hierarchical roofline engine: per op, the shared cost function; per graph, a sum.

Each op's time is the max over its compute units and memory levels of work / achievable rate
(from :mod:`archsim.cost`), plus named overheads; a graph's latency is the sum over its ops
(serial stream), or with ``overlap=True`` the longest path through the dependency graph (ops with
no path between them run concurrently, as on independent streams, with no contention modelled).

Ops with identical shapes are costed once per run (ResNet-50 repeats most of its layers), and
:func:`estimate_many` evaluates each op at every hardware point in one vectorised call, so a sweep
costs about as much as a handful of single estimates. It returns the same floats as calling
:func:`estimate` per point: both use the same arrays and the same summation order.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import operator
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from archsim.cost import (
    LINK_KINDS,
    CostArrays,
    CostOptions,
    OpCost,
    op_cost_arrays,
    resolve_device,
    role_params,
    software_efficiency,
)
from archsim.cost.common import added_in_order
from archsim.cost.dispatch import plain_gpus
from archsim.cost.types import CostTotals
from archsim.errors import EngineError
from archsim.results import ENERGY_ARITHMETIC, ENERGY_STATIC, OpResult, RunResult

if TYPE_CHECKING:  # only estimate_many's frame needs pandas (~0.2-0.5 s to import)
    import pandas as pd

__all__ = ["estimate_roofline", "estimate_many", "many_columns", "columns_frame", "work_ops"]


def work_ops(work: Any, predecessors: bool = True) -> tuple[tuple[Any, ...], list[tuple[int, ...]], str]:
    """(ops, predecessors of each op, workload name) of an op or an OpGraph (``predecessors=False``:
    an empty list in their place, for a caller that adds the ops up in order)."""
    if hasattr(work, "ops") and hasattr(work, "predecessors"):
        ops = tuple(work.ops)
        if not ops:
            raise EngineError(f"workload {work.name!r} has no ops")
        preds = [tuple(work.predecessors(i)) for i in range(len(ops))] if predecessors else []
        return ops, preds, str(work.name)
    if isinstance(getattr(work, "kind", None), str) and hasattr(work, "flop_breakdown"):
        return (work,), [()], str(getattr(work, "label", work.kind))
    raise EngineError(f"work must be an archsim op or an OpGraph, got {type(work).__name__}")


_F64 = np.dtype(np.float64)

_KIND = operator.attrgetter("kind")
"""A hardware point's kind (estimate_many names a point without one by its class)."""


_KEY_SLOT = "_cost_key"
"""The non-field ``__dict__`` key under which an op keeps its :func:`_op_key` (as ``io_totals`` keeps
its byte totals: the frozen dataclass's ``==``, ``hash``, ``repr``, ``fields`` and ``replace`` see
only fields)."""


def _op_key(op: Any) -> tuple[Any, ...]:
    """Identity of an op's cost: its type and every field except its name and phase (computed once
    per op object: a graph's ops are keyed on every estimate, and an op's fields never change)."""
    held = getattr(op, "__dict__", None)
    key = None if held is None else held.get(_KEY_SLOT)
    if key is None:
        cls = type(op)
        key = (cls, _cost_fields(cls)(op))
        if held is not None:
            held[_KEY_SLOT] = key
    return key


@functools.lru_cache(maxsize=256)
def _cost_fields(cls: type) -> Any:
    """A getter of the values of the dataclass fields of an op class that its cost depends on (all
    but name, phase and a fused op's member names), as a tuple (the field names are fixed by the class,
    which leads the key)."""
    names = [f.name for f in dataclasses.fields(cls) if f.name not in ("name", "phase", "fused")]
    getter = operator.attrgetter(*names)
    return getter if len(names) > 1 else (lambda op: (getter(op),))


class _Coster:
    """Costs the ops of a run at H hardware points, packing parameters once per device role.

    Distinct ops are costed once; GPU ops are costed together by :func:`archsim.cost.gpu_batch.
    governed_many` (each kernel class one stacked numpy pass, then one power-model pass), other roles
    one op at a time.
    """

    def __init__(self, hardware: Sequence[Any], options: CostOptions) -> None:
        self.hardware = hardware
        self.options = options
        self.params: dict[str, Any] = {}
        self.resolved: dict[bool, tuple[str, list[Any]]] = {}

    def _resolve(self, op: Any) -> tuple[str, list[Any]]:
        # The device an op runs on depends on its kind only through "is it a transfer".
        is_link = op.kind in LINK_KINDS
        hit = self.resolved.get(is_link)
        if hit is None and not is_link and plain_gpus(self.hardware, self.options):
            hit = self.resolved[is_link] = ("gpu", list(self.hardware))  # what resolve_device gives each point
        if hit is None:
            resolved = [resolve_device(h, op.kind, self.options) for h in self.hardware]
            roles = set(map(operator.itemgetter(0), resolved))
            if len(roles) != 1:
                raise EngineError(f"op {op.label!r} runs on different device roles across the points: "
                                  f"{sorted(roles)}")
            hit = (roles.pop(), list(map(operator.itemgetter(1), resolved)))
            self.resolved[is_link] = hit
        return hit

    def _params(self, role: str, targets: list[Any]) -> Any:
        pkey = f"{role}:{targets[0].kind}" if role == "link" else role
        if pkey not in self.params:
            self.params[pkey] = role_params(role, self.hardware, targets, self.options)
        return self.params[pkey]

    def cost_all(self, ops: Sequence[Any], known: dict[tuple[Any, ...], CostArrays] | None = None,
                 point: int | None = None, totals: bool = False) -> list[CostArrays] | list[OpCost] | list[CostTotals]:
        """The CostArrays of every op of ``ops`` (equal ops share one object).

        ``known`` (op key -> CostArrays, for these hardware points and options) holds costs computed
        before: those ops are not costed again, and the new ones are added to it. With ``point`` (a
        point index; no ``known``, no software profile), each op's one-point :class:`OpCost` there
        instead, ``c.at(point, "", "")`` of its CostArrays ``c`` to the bit, GPU ops read from their
        classes' stacked rows (:func:`~archsim.cost.gpu_batch.governed_many`). With ``totals`` (no
        ``known``, no ``point``, no software profile), the GPU ops' costs are their
        :class:`~archsim.cost.types.CostTotals` (what a graph's totals read)."""
        from archsim.cost import gpu_batch

        if point is not None and (known is not None or self.options.software is not None):
            raise ValueError("cost_all: point needs known=None and no software profile")
        if totals and (known is not None or point is not None or self.options.software is not None):
            raise ValueError("cost_all: totals needs known=None, no point and no software profile")

        keys = [_op_key(op) for op in ops]
        first: dict[tuple[Any, ...], Any] = {}
        for key, op in zip(keys, ops, strict=True):
            if known is None or key not in known:
                first.setdefault(key, op)
        done: dict[tuple[Any, ...], CostArrays] = {}
        gpu_keys: list[tuple[Any, ...]] = []
        for key, op in first.items():
            role, targets = self._resolve(op)
            if role == "gpu":
                gpu_keys.append(key)
            else:
                done[key] = op_cost_arrays(op, role, targets, self.options, self._params(role, targets))
                if point is not None:
                    done[key] = done[key].at(point, "", "")
        if gpu_keys:
            role, targets = self.resolved[False]
            params = self._params(role, targets)
            costs = gpu_batch.governed_many([first[k] for k in gpu_keys], params, point, totals)
            done.update(zip(gpu_keys, costs, strict=True))
        if self.options.software is not None:
            for key, op in first.items():
                done[key] = software_efficiency(op, self._resolve(op)[0], done[key], self.options)
        if known is not None:
            known.update(done)
            done = known
        return [done[k] for k in keys]


def _critical_path(latencies: list[np.ndarray], preds: list[tuple[int, ...]]) -> np.ndarray:
    finish: list[np.ndarray] = []
    for lat, pr in zip(latencies, preds, strict=True):
        start = np.maximum.reduce([finish[j] for j in pr]) if pr else np.zeros_like(lat)
        finish.append(start + lat)
    return np.maximum.reduce(finish)


def _running_sum(arrays: list[np.ndarray]) -> np.ndarray:
    """``arrays[0] + arrays[1] + ...`` added strictly left to right (a new array; the same floats at
    every point count, which ``estimate_many == estimate`` relies on). One numpy add per op, into
    the first sum (:func:`~archsim.cost.common.added_in_order`), beats ``add.accumulate`` over a
    stacked table here: that walks the table across its rows."""
    return arrays[0].copy() if len(arrays) == 1 else added_in_order(arrays)


def _run(work: Any, hardware: Sequence[Any], options: CostOptions, overlap: bool,
         known: dict[tuple[Any, ...], CostArrays] | None = None, compiled: bool = False, totals: bool = False):
    """(ops, their costs, latency, energy by component, workload name) at the points of ``hardware``.

    ``compiled``: the running sums by :mod:`archsim.engines.ordered_sums` (the same floats) where
    every row allows it; the distinct costs and each op's index among them are then returned too,
    else ``None`` for them. ``totals``: the GPU ops' costs as their
    :class:`~archsim.cost.types.CostTotals` (:meth:`_Coster.cost_all`)."""
    ops, preds, name = work_ops(work, predecessors=overlap)
    costs = _Coster(hardware, options).cost_all(ops, known, totals=totals)
    latencies = [c.latency_s for c in costs]
    distinct = sums = None
    if compiled:
        distinct = _distinct(costs)
        sums = _ordered_totals(costs, *distinct)
    if sums is None:
        serial = _running_sum(latencies)
        parts: dict[str, list[np.ndarray]] = {}
        for c in costs:
            for k, v in c.energy_breakdown_j.items():
                parts.setdefault(k, []).append(v)
        energy = {k: _running_sum(v) for k, v in parts.items()}
    else:
        serial, energy = sums
    total = _critical_path(latencies, preds) if overlap else serial
    if overlap:
        # Static, leakage and clock power are drawn once over the makespan, not once per op.
        for key in ENERGY_STATIC:
            if key in energy:
                energy[key] = energy[key] * (total / np.where(serial > 0, serial, 1.0))
    return ops, costs, total, energy, name, distinct


def _distinct(costs: list[CostArrays]) -> tuple[list[CostArrays], list[int]]:
    """The distinct costs of ``costs`` (equal ops share one object) in order of first appearance, and
    each op's index among them."""
    index: dict[int, int] = {}
    order = [index.setdefault(id(c), len(index)) for c in costs]
    firsts = {}
    for c in costs:
        firsts.setdefault(id(c), c)
    return list(firsts.values()), order


def _ordered_totals(costs: list[CostArrays], distinct: list[CostArrays],
                    order: list[int]) -> tuple[np.ndarray, dict[str, np.ndarray]] | None:
    """:func:`_run`'s serial latency and energy sums (each :func:`_running_sum` of the ops' rows in
    op order, to the bit) by compiled passes over the distinct costs' rows (``None`` where a row is
    not a float64 array of the points' shape: numpy's sums then). A component that some op lacks is
    summed by numpy over the ops holding it."""
    from archsim.engines.ordered_sums import gathered_sums

    breakdowns = [c.energy_breakdown_j for c in distinct]
    layouts = set(map(tuple, breakdowns))
    if len(layouts) == 1:  # every op with the same components (a graph on one device)
        keys = shared = list(layouts.pop())
    else:
        keys = list(dict.fromkeys(itertools.chain.from_iterable(breakdowns)))
        shared = [k for k in keys if all(k in b for b in breakdowns)]
    totals = gathered_sums([[c.latency_s for c in distinct], *[[b[k] for b in breakdowns] for k in shared]],
                           order)
    if totals is None:
        return None
    sums = dict(zip(shared, totals[1:], strict=True))
    energy = {k: sums[k] if k in sums else
              _running_sum([c.energy_breakdown_j[k] for c in costs if k in c.energy_breakdown_j]) for k in keys}
    return totals[0], energy


def _meta(hardware: Any, options: CostOptions, overlap: bool) -> dict[str, Any]:
    from archsim._version import __version__
    return {"archsim_version": __version__, "engine": "roofline",
            "hardware_hash": hardware.content_hash(), "hardware_name": hardware.name,
            "options": {"device": options.device, "threads": options.threads, "overlap": overlap,
                        "host_dispatch": options.host_dispatch,
                        "software": None if options.software is None else options.software.name}}


def estimate_roofline(work: Any, hardware: Any, options: CostOptions, overlap: bool = False,
                      costs: dict[tuple[Any, ...], dict[Any, Any]] | None = None) -> RunResult:
    """Estimate ``work`` (an op or an OpGraph) on ``hardware`` (a device or a System).

    ``costs`` is an :class:`archsim.engines.Estimator`'s cache: per (hardware content, options), the
    CostArrays of the ops costed before (used and extended; ``None``: nothing is kept)."""
    known = None
    if costs is not None and options.software is None:
        known = costs.setdefault((type(hardware).__name__, hardware.content_hash(), options.device,
                                  options.threads, options.host_dispatch), {})
    points: list[OpCost] | None = None
    if overlap:
        ops, cost_list, total, energy, name, _ = _run(work, [hardware], options, overlap, known)
    else:
        ops, _, name = work_ops(work, predecessors=False)
        coster = _Coster([hardware], options)
        if known is None and options.software is None:  # the one-point costs straight from the stacks
            points = coster.cost_all(ops, point=0)
        else:
            cost_list = coster.cost_all(ops, known)
    if points is None:
        # Equal ops share one CostArrays: convert each to floats once; every op gets its own dicts.
        seen: dict[int, OpCost] = {}
        for c in cost_list:
            if id(c) not in seen:
                seen[id(c)] = c.at(0, "", "")
        points = [seen[id(c)] for c in cost_list]
    if overlap:
        latency = float(total[0])
        breakdown = {k: float(v[0]) for k, v in energy.items()}
    else:
        # One point: the sums of _run in Python floats, added in the same order (an IEEE double add
        # is the same operation on a float as on a one-element array, so the bits are the same).
        latency = functools.reduce(operator.add, [oc.latency_s for oc in points])
        breakdown = _summed([oc.energy_breakdown_j for oc in points])
    results = tuple([_op_result(op, oc) for op, oc in zip(ops, points, strict=True)])
    return RunResult(engine="roofline", hardware=hardware.name, workload=name, latency_s=latency,
                     energy_j=float(sum(breakdown.values())), energy_breakdown_j=breakdown, ops=results,
                     _meta=_meta(hardware, options, overlap))


def _summed(dicts: list[dict[str, float]]) -> dict[str, float]:
    """Key by key, the values of the dicts holding that key added in order (the first as it is),
    keys in order of first appearance. Where every dict has the first one's keys in its order (a
    graph's ops on one device; equal ops share a dict, checked once), the values are read column by
    column (``zip`` of the dicts' values) and added by ``functools.reduce``: the same additions,
    without a Python step per op and key."""
    keys = tuple(dicts[0])
    if len(keys) > 1 and all(tuple(d) == keys for d in {id(d): d for d in dicts}.values()):
        columns = zip(*map(dict.values, dicts), strict=True)
        return dict(zip(keys, [functools.reduce(operator.add, col) for col in columns], strict=True))
    out: dict[str, float] = {}
    for d in dicts:
        for k, v in d.items():
            out[k] = out[k] + v if k in out else v
    return out


def _op_result(op: Any, oc: OpCost) -> OpResult:
    """The OpResult of ``op`` from its one-point cost (own dicts: results of equal ops share none).

    Built as the frozen dataclass's ``__init__`` would, without its per-field ``object.__setattr__``
    (a graph builds hundreds per estimate); every field is given."""
    out = object.__new__(OpResult)
    out.__dict__.update(
        name=op.label, kind=oc.kind, phase=op.phase, device=oc.device, flop=oc.flop,
        bytes_by_level=dict(oc.bytes_by_level), time_by_unit_s=dict(oc.time_by_unit_s), bound=oc.bound,
        latency_s=oc.latency_s, energy_j=oc.energy_j, energy_breakdown_j=dict(oc.energy_breakdown_j), start_s=0.0,
        extra={**oc.extra, "launches": oc.launches, "overhead_s": oc.overhead_s}, flop_nominal=oc.flop_nominal,
        fused=())
    return out


def many_columns(work: Any, hardware: Sequence[Any], options: CostOptions,
                 overlap: bool = False) -> dict[str, np.ndarray]:
    """The columns of :func:`estimate_many`'s frame, in its order: name -> float64 array over the
    points (latency_s, energy_j, energy_<component>_j, data_movement_fraction, flop)."""
    if not hardware:
        raise EngineError("estimate_many needs at least one hardware point")
    try:
        kinds = set(map(_KIND, hardware))
    except AttributeError:  # a point without a kind: its class name (the names built only where needed)
        kinds = {getattr(h, "kind", type(h).__name__) for h in hardware}
    if len(kinds) != 1:
        raise EngineError(f"estimate_many needs hardware of one kind, got {sorted(kinds)}")
    points = list(hardware)
    if len(points) > MANY_CHUNK_POINTS:
        parts = [_point_columns(work, points[i:i + MANY_CHUNK_POINTS], options, overlap)
                 for i in range(0, len(points), MANY_CHUNK_POINTS)]
        names = list(parts[0])
        if all(list(part) == names for part in parts):
            return {k: np.concatenate([part[k] for part in parts]) for k in names}
        # Chunks with different energy components (points with and without a power model, say):
        # the columns of one pass, where each component is a column at every point.
    return _point_columns(work, points, options, overlap)


MANY_CHUNK_POINTS = 1024
"""Most hardware points :func:`many_columns` costs in one pass; more are costed in chunks of this
many and their columns joined (a point's values do not depend on the other points: each is its
single estimate's, to the bit). A pass's (ops, points) arrays grow with the points, and past a few
thousand points its blocks outgrow the allocator's largest reuse threshold (glibc's mmap threshold
stops at 32 MiB): they go back to the system when freed and fault in afresh on the next pass
(ResNet-50 at 2,000 V100 points took 51-55 ms in one pass, ~8,800 minor faults a call, against
twice the 18-20 ms of 1,000 points)."""


def _point_columns(work: Any, hardware: list[Any], options: CostOptions, overlap: bool) -> dict[str, np.ndarray]:
    """:func:`many_columns` of one pass over ``hardware`` (checked: not empty, of one kind)."""
    # The compiled sums once their module is loaded (archsim.engines._many_with_software loads it
    # after a first call; the sums are the same floats either way).
    compiled = "archsim.engines.ordered_sums" in sys.modules
    # The GPU ops' costs as the fields the columns read (CostTotals) where no software profile
    # rewrites the costs (the same arrays: the same floats).
    ops, costs, total, energy, _, distinct = _run(work, hardware, options, overlap, compiled=compiled,
                                                  totals=options.software is None)
    zero = np.zeros(len(hardware))
    energy_j = added_in_order([zero, *energy.values()])
    movement = added_in_order([zero, *[v for k, v in energy.items()
                                       if k not in ENERGY_ARITHMETIC and k not in ENERGY_STATIC]])
    frame = {"latency_s": total, "energy_j": energy_j}
    frame.update({f"energy_{k}_j": v for k, v in energy.items()})
    frame["data_movement_fraction"] = np.where(energy_j > 0, movement / np.where(energy_j > 0, energy_j, 1.0), 0.0)
    # Executed FLOP per point (a Winograd or channel-padded convolution differs from its nominal FLOP).
    # Equal ops share one CostArrays: its FLOP are summed once per distinct cost, added in op order.
    flop = None if distinct is None else _ordered_flop(*distinct, len(hardware))
    if flop is None:
        flops: dict[int, np.ndarray] = {}
        for c in costs:
            if id(c) not in flops:
                flops[id(c)] = c.flop_executed() if c.flop_by_unit else np.full(len(hardware), c.flop)
        flop = added_in_order([np.zeros(len(hardware)), *[flops[id(c)] for c in costs]])
    frame["flop"] = flop
    return frame


def _ordered_flop(distinct: list[CostArrays], order: list[int], n: int) -> np.ndarray | None:
    """:func:`many_columns`' FLOP column (``0.0 +`` each op's executed FLOP in op order: a distinct
    cost's :meth:`~archsim.cost.CostArrays.flop_executed`, or its nominal FLOP at every point where it
    has no units) by compiled passes, to the bit; ``None`` where a row does not allow them."""
    from archsim.engines.ordered_sums import chained_sums, gathered_sums

    units = [c for c in distinct if c.flop_by_unit]
    executed = chained_sums([list(c.flop_by_unit.values()) for c in units], n)
    if executed is None:
        return None
    rows = dict(zip(map(id, units), executed, strict=True))
    per_cost = [rows[id(c)] if id(c) in rows else np.full(n, c.flop, dtype=np.float64) for c in distinct]
    flop = gathered_sums([per_cost], order, zero_start=True)
    return None if flop is None else flop[0]


def estimate_many(work: Any, hardware: Sequence[Any], options: CostOptions, overlap: bool = False) -> pd.DataFrame:
    """One row per hardware point: the columns of :func:`many_columns`; index ``point``."""
    return columns_frame(many_columns(work, hardware, options, overlap))


def columns_frame(columns: dict[str, np.ndarray]) -> pd.DataFrame:
    """The DataFrame of :func:`many_columns`' columns, index ``point`` (the position of each point)."""
    import pandas as pd

    values = list(columns.values())
    if values and all(type(v) is np.ndarray and v.dtype == _F64 and v.shape == values[0].shape == (len(values[0]),)
                      for v in values):
        # The frame pandas builds from the dict (one float64 block, a column a row), from that block
        # made by one concatenation instead of pandas' column-by-column consolidation.
        block = np.concatenate(values).reshape(len(values), -1)
        out = pd.DataFrame(block.T, columns=list(columns), copy=False)
    else:
        out = pd.DataFrame(columns)
    out.index.name = "point"
    return out
