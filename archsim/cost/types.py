"""The values the cost model passes between its steps: options, action counts, per-op costs.

``OpCost`` is the cost of one op on one device; ``CostArrays`` the cost of one op at H hardware
points (every value an array of shape (H,)), of which ``OpCost`` is the one-point view. Both hold
the time each compute unit and memory level alone would take, the bytes moved at each level (from
:mod:`archsim.cost.traffic`), the kernel-efficiency effects (from :mod:`archsim.cost.kernels`), the
named overheads, the bound, the latency, and the *action counts* the energy ledger
(:mod:`archsim.energy`) prices.

Level keys of ``bytes_by_level`` are the level *serving* the bytes: ``"dram"`` (device memory),
``"l2"`` (L2 to the SMs), ``"l1"`` (L1/shared memory to the registers), ``"register"`` (register
file operand traffic), the CPU's cache names (``"l1d"``, ``"l2"``, ``"l3"``), ``"pim"`` (bank to
PIM unit) and ``"link"`` (host-device transfer).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from dataclasses import fields as dataclass_fields
from typing import Any, ClassVar, Literal

import numpy as np

__all__ = ["OpCost", "Actions", "CostOptions", "CostArrays", "CostTotals", "PowerInputs", "DEVICE_ROLES",
           "LINK_KINDS", "stacked_at", "stacked_rows"]

DEVICE_ROLES: tuple[str, ...] = ("gpu", "host", "pim")
LINK_KINDS: tuple[str, ...] = ("h2d", "d2h")


@dataclass(frozen=True)
class CostOptions:
    """Explicit options of the cost function (validated by :func:`archsim.estimate`).

    Attributes:
        device: for a :class:`~archsim.hardware.System`, the role that runs compute ops
            (``"gpu"``, ``"host"``, ``"pim"``); ``None`` picks the GPU when present, else the host.
        threads: CPU threads (``None``: every core).
        host_dispatch: on a System, GPU kernels wait for the host framework's dispatch (per
            operator ``host.efficiency.op_overhead_s``, per further launch of the operator
            ``launch_api_s``) when it outlasts them (:mod:`archsim.cost.dispatch`);
            ``False`` prices the device-side launch latency alone. No effect on a bare device.
        software: a :class:`~archsim.software.SoftwareProfile` with host work, or ``None``. When
            given, its per-op and per-launch host work priced on the host CPU model replaces the
            host preset's ``op_overhead_s`` and ``launch_api_s``, for GPU kernels (a System's host)
            and for ops on the host CPU alike.
    """

    device: Literal["gpu", "host", "pim"] | None = None
    threads: int | None = None
    host_dispatch: bool = True
    software: Any = None


@dataclass(frozen=True)
class Actions:
    """What an op does, counted for the energy ledger (all floats).

    Attributes:
        flop: FLOP per ``"<unit>:<precision>"`` (``"tensor:fp16"``, ``"vector:fp32"``,
            ``"special"``, ``"pim:fp16"``).
        read_bytes: bytes read at each level (keys as ``bytes_by_level``).
        write_bytes: bytes written at each level.
        dram_activations: DRAM row activations (row opens).
        link_bytes: bytes over the host-device link.
    """

    flop: dict[str, float]
    read_bytes: dict[str, float]
    write_bytes: dict[str, float]
    dram_activations: float = 0.0
    link_bytes: float = 0.0


@dataclass(frozen=True)
class OpCost:
    """The cost of one op on one device: times in s, bytes in B, energies in J.

    ``latency_s = max(time_by_unit_s without "overhead") + time_by_unit_s["overhead"]`` except for
    kernels whose waves alternate bounds, where the wave-by-wave sum (``extra["kernel_s"]``) is
    larger than the max of the per-resource sums; the bound is then the resource with the largest
    sum. ``energy_breakdown_j`` sums to ``energy_j`` and includes static power x latency.
    """

    name: str
    kind: str
    phase: str
    device: str
    flop: float               # executed: the sum of actions.flop (see CostArrays.flop_executed)
    latency_s: float
    bound: str
    time_by_unit_s: dict[str, float]
    bytes_by_level: dict[str, float]
    actions: Actions
    overhead_s: float
    launches: float
    energy_j: float
    energy_breakdown_j: dict[str, float]
    static_power_w: float
    extra: dict[str, float] = field(default_factory=dict)
    flop_nominal: float = 0.0  # the op's FLOP as defined (CostArrays.flop)


@dataclass(frozen=True)
class CostArrays:
    """The cost of one op at H hardware points: every value an array of shape (H,)."""

    kind: str
    device: str
    flop: float
    latency_s: np.ndarray
    time_by_unit_s: dict[str, np.ndarray]
    bytes_by_level: dict[str, np.ndarray]
    flop_by_unit: dict[str, np.ndarray]
    read_bytes: dict[str, np.ndarray]
    write_bytes: dict[str, np.ndarray]
    dram_activations: np.ndarray
    link_bytes: np.ndarray
    overhead_s: np.ndarray
    launches: np.ndarray
    energy_breakdown_j: dict[str, np.ndarray]
    static_power_w: np.ndarray
    extra: dict[str, np.ndarray]
    dispatch_s: np.ndarray | None = None
    """Host dispatch time of the op's launches (s; GPU ops only, ``None`` elsewhere): where it
    equals ``latency_s`` the host's dispatch binds and the bound is ``overhead``."""

    @classmethod
    def from_fields(cls, fields: dict[str, Any]) -> CostArrays:
        """A CostArrays from its complete field dict (every field named, nothing checked), without the
        frozen dataclass's per-field ``object.__setattr__`` calls: a graph builds hundreds per estimate."""
        return _built(cls, fields)

    def flop_executed(self) -> np.ndarray:
        """FLOP the units execute at each point: the sum of ``flop_by_unit`` (``flop`` is the op's
        nominal FLOP; they differ for Winograd convolutions, which multiply less, and Tensor-Core
        convolutions, whose channels are padded to the MMA multiple)."""
        total = np.zeros(np.shape(self.latency_s))
        for v in self.flop_by_unit.values():
            total = total + v
        return total

    def dispatch_bound(self) -> np.ndarray:
        """Per point, True where the host's dispatch sets the latency."""
        if self.dispatch_s is None:
            return np.zeros(np.shape(self.latency_s), dtype=bool)
        return (self.dispatch_s > 0) & (self.dispatch_s >= self.latency_s)

    def bound_index(self) -> tuple[list[str], np.ndarray]:
        """Keys of the non-overhead times and, per point, the index of the largest."""
        keys = [k for k in self.time_by_unit_s if k != "overhead"]
        stack = np.stack([self.time_by_unit_s[k] for k in keys])
        return keys, np.argmax(stack, axis=0)

    def bounds(self) -> list[str]:
        """The bound name at each point: the largest resource time, or ``overhead`` if that dominates."""
        keys, idx = self.bound_index()
        best = np.stack([self.time_by_unit_s[k] for k in keys]).max(axis=0)
        over = self.time_by_unit_s["overhead"]
        host = self.dispatch_bound()
        return ["overhead" if (over[i] > best[i] or host[i]) else keys[idx[i]] for i in range(len(idx))]

    def at(self, i: int, name: str, phase: str) -> OpCost:
        """The one-point :class:`OpCost` of point ``i``."""
        # float(v.item(i)): a Python float from a 1-d array without the numpy scalar of v[i] (half the time)
        times = {k: float(v.item(i)) for k, v in self.time_by_unit_s.items()}
        breakdown = {k: float(v.item(i)) for k, v in self.energy_breakdown_j.items()}
        extra = {k: float(v.item(i)) for k, v in self.extra.items()}
        return _point_cost(
            name, phase, self.kind, self.device, self.flop, bool(self.flop_by_unit), times, breakdown, extra,
            float(self.latency_s.item(i)), None if self.dispatch_s is None else float(self.dispatch_s.item(i)),
            {k: float(v.item(i)) for k, v in self.flop_by_unit.items()},
            {k: float(v.item(i)) for k, v in self.bytes_by_level.items()},
            {k: float(v.item(i)) for k, v in self.read_bytes.items()},
            {k: float(v.item(i)) for k, v in self.write_bytes.items()},
            float(self.dram_activations.item(i)), float(self.link_bytes.item(i)), float(self.overhead_s.item(i)),
            float(self.launches.item(i)), float(self.static_power_w.item(i)), lambda: self.bounds()[i])


def _point_cost(name: str, phase: str, kind: str, device: str, nominal: Any, has_units: bool,
                times: dict[str, float], breakdown: dict[str, float], extra: dict[str, float], latency: float,
                dispatch: float | None, flop_by_unit: dict[str, float], levels: dict[str, float],
                reads: dict[str, float], writes: dict[str, float], activations: float, link: float,
                overhead: float, launches: float, static: float, array_bound: Any) -> OpCost:
    """The :class:`OpCost` of one op at one point from its values there (the floats of
    :meth:`CostArrays.at` and :func:`stacked_at`): the host-dispatch bound, the executed FLOP and the
    bound as the array methods give them; ``array_bound()`` is :meth:`CostArrays.bounds` at this
    point, read only when a time is NaN. ``extra`` gains ``host_dispatch_s`` where there is one."""
    host = False
    if dispatch is not None:
        extra["host_dispatch_s"] = dispatch
        host = dispatch > 0 and dispatch >= latency  # dispatch_bound() at this point
    executed = 0.0  # flop_executed() at this point: the same additions, in order
    for v in flop_by_unit.values():
        executed = executed + v
    bound = "overhead" if host else _bound(times)
    if bound is None:  # a NaN time: the array rule of CostArrays.bounds
        bound = array_bound()
    return _built(OpCost, dict(
        name=name, kind=kind, phase=phase, device=device,
        flop=executed if has_units else float(nominal),
        latency_s=latency, bound=bound, time_by_unit_s=times, bytes_by_level=levels,
        actions=_built(Actions, dict(flop=flop_by_unit, read_bytes=reads, write_bytes=writes,
                                     dram_activations=activations, link_bytes=link)),
        overhead_s=overhead, launches=launches,
        energy_j=float(sum(breakdown.values())), energy_breakdown_j=breakdown,
        static_power_w=static, extra=extra, flop_nominal=float(nominal),
    ))


def stacked_at(c: CostArrays, g: int, h: int, i: int, kinds: Sequence[str] | None = None,
               flops: Sequence[float] | None = None) -> list[OpCost]:
    """The one-point :class:`OpCost` (unnamed) of point ``i`` of each of the ``g`` ops of the
    stacked cost ``c`` (op ``j`` is rows ``j*h .. (j+1)*h`` of every array, as
    :func:`archsim.cost.gpu_batch` stacks them): the floats, dicts and bounds of cutting ``c`` into
    its ops and calling :meth:`CostArrays.at` on each, with each field read from the stack in one
    ``tolist`` (one numpy call per field instead of one per field and op). ``kinds`` and ``flops``
    (one per op; ``None``: ``c``'s own) are the ops' kinds and nominal FLOP, as a CostArrays retagged
    with them would carry."""
    if g == 1:  # the stack is the op: at() reads its few dozen values faster than a pass per field
        one = c if kinds is None and flops is None else _built(CostArrays, {
            **c.__dict__, "kind": c.kind if kinds is None else kinds[0], "flop": c.flop if flops is None else flops[0]})
        return [one.at(i, "", "")]

    rows = stacked_rows(c, g, h, i)
    kinds = itertools.repeat(c.kind, g) if kinds is None else kinds
    flops = itertools.repeat(c.flop, g) if flops is None else flops
    bounds: list[list[str]] = []  # CostArrays.bounds of the stack, computed when first needed

    def array_bound(j: int) -> str:
        if not bounds:
            bounds.append(c.bounds())
        return bounds[0][j * h + i]

    has_units = bool(c.flop_by_unit)
    return [_point_cost("", "", kind, c.device, nominal, has_units, *row, lambda j=j: array_bound(j))
            for j, kind, nominal, row in zip(range(g), kinds, flops, rows, strict=False)]


def stacked_rows(c: CostArrays, g: int, h: int, i: int) -> list[tuple[Any, ...]]:
    """Point ``i`` of each of the ``g`` ops of the stacked cost ``c`` (as :func:`stacked_at` cuts
    them), as the values :func:`_point_cost` takes after its ``has_units``: per op (times, energy
    breakdown, extra, latency, host dispatch or ``None``, FLOP by unit, bytes by level, read bytes,
    written bytes, DRAM activations, link bytes, overhead, launches, static power), the dicts' values
    and the others Python floats (``float(v.item(i))`` of each op's arrays), each field read from the
    stack in one ``tolist``."""
    def column(x: np.ndarray) -> list[Any]:
        v = x.reshape(g, h)[:, i] if h > 1 else x
        out = v.tolist()
        # at()'s float(v.item(i)); a dtype's char is read faster than it compares to np.float64
        return out if v.dtype.char == "d" else [float(y) for y in out]

    def cells(d: dict[str, np.ndarray]) -> list[dict[str, float]]:
        if not d:
            return [{} for _ in range(g)]
        keys = tuple(d)
        return [dict(zip(keys, row, strict=True)) for row in zip(*map(column, d.values()), strict=True)]

    dispatch = itertools.repeat(None, g) if c.dispatch_s is None else column(c.dispatch_s)
    return list(zip(cells(c.time_by_unit_s), cells(c.energy_breakdown_j), cells(c.extra), column(c.latency_s),
                    dispatch, cells(c.flop_by_unit), cells(c.bytes_by_level), cells(c.read_bytes),
                    cells(c.write_bytes), column(c.dram_activations), column(c.link_bytes), column(c.overhead_s),
                    column(c.launches), column(c.static_power_w), strict=False))


class _FieldsOf:
    """A frozen dataclass holding some of :class:`CostArrays`' fields, in their order there (its
    dataclass fields; ``FIELDS`` names them): built from a complete field dict, or from any cost
    that has those fields (its arrays themselves)."""

    FIELDS: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def from_fields(cls, fields: dict[str, Any]) -> Any:
        """An instance from its complete field dict (nothing checked), as :meth:`CostArrays.from_fields`."""
        return _built(cls, fields)

    @classmethod
    def of(cls, c: Any) -> Any:
        """Those fields of ``c`` (a :class:`CostArrays` or another such cost: its arrays themselves)."""
        d = c.__dict__
        return _built(cls, {k: d[k] for k in cls.FIELDS})


@dataclass(frozen=True)
class CostTotals(_FieldsOf):
    """The figures of one op's cost at H hardware points that a graph's totals read (what
    :func:`archsim.engines.estimate_many`'s frame sums): the op's kind and nominal FLOP, its latency
    (s), energy by component (J) and executed FLOP by unit, each an (H,) array: the same arrays as
    those fields of its :class:`CostArrays`, without the others."""

    kind: str
    flop: float
    latency_s: np.ndarray
    energy_breakdown_j: dict[str, np.ndarray]
    flop_by_unit: dict[str, np.ndarray]

    flop_executed = CostArrays.flop_executed


@dataclass(frozen=True)
class PowerInputs(_FieldsOf):
    """The fields of one op's cost at H hardware points that the power model reads when it hands back
    :class:`CostTotals` (:func:`archsim.cost.power.apply` with ``totals``): the tags and FLOP, the
    latency and exposed overhead (s), the time of each unit (s), the bytes at each level, the FLOP by
    unit, the energy by component (J) and the kernel facts (``extra``, the blocks launched among
    them), each an (H,) array: the same arrays as those fields of the op's :class:`CostArrays`,
    without the bytes read and written per level, the row activations, link bytes, launches, static
    power and host dispatch."""

    kind: str
    device: str
    flop: float
    latency_s: np.ndarray
    time_by_unit_s: dict[str, np.ndarray]
    bytes_by_level: dict[str, np.ndarray]
    flop_by_unit: dict[str, np.ndarray]
    overhead_s: np.ndarray
    energy_breakdown_j: dict[str, np.ndarray]
    extra: dict[str, np.ndarray]


for _cls in (CostTotals, PowerInputs):
    _cls.FIELDS = tuple(f.name for f in dataclass_fields(_cls))
del _cls


def _built(cls: type, fields: dict[str, Any]) -> Any:
    """An instance of the frozen dataclass ``cls`` from every one of its fields, as its ``__init__``
    would set them (give them in field order), without the per-field ``object.__setattr__`` calls (no
    ``__post_init__`` runs: only for classes without one)."""
    out = object.__new__(cls)
    out.__dict__.update(fields)
    return out


def _bound(times: dict[str, float]) -> str | None:
    """:meth:`CostArrays.bounds` of one point from its times (the first largest non-overhead key,
    ``overhead`` if that is larger); ``None`` when a time is NaN (the array rule then decides)."""
    best_key, best = None, -np.inf
    for k, v in times.items():
        if v != v:
            return None
        if k != "overhead" and v > best:
            best_key, best = k, v
    if best_key is None:
        return None
    return "overhead" if times["overhead"] > best else best_key
