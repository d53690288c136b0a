"""Many GPU ops costed at once: the ops of one kernel class stacked on the point axis.

:func:`archsim.cost.gpu.cost` prices one op at H hardware points with arrays of shape
(H,). A graph has tens of distinct ops, and per-op Python overhead then dominates a single
estimate. Here every op of a class (tiled GEMM kernels: GEMMs and implicit-GEMM / Winograd
convolutions; streaming kernels: elementwise, normalisation, pooling, GEMV, depthwise
convolution, the Winograd transforms) becomes H rows of one stacked array of G x H rows: the
parameter pack is repeated G times (op-major), the op's shape values repeated H times, and the
same vectorised functions run once per class and precision. Each op's slice of the result is the
:class:`~archsim.cost.types.CostArrays` the one-op path returns, to the last bit (the same
formulas in the same order on the same numbers; ``tests/unit/test_gpu_batch.py`` checks it).

The tiling model's DRAM traffic depends on the L2 capacity only, so it is computed once per
distinct capacity (a sweep that does not vary L2 pays for it once per op, not once per point).
Ops outside these classes (attention, user-described kernels) take the one-op path.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

from archsim.cost import gpu as gc
from archsim.cost import traffic as tr
from archsim.cost.common import elem_bytes, flop_classes, io_bytes, precision_of, sum_costs
from archsim.cost.params import GPUParams, TiledGPUParams
from archsim.cost.types import CostArrays

__all__ = ["cost_many", "governed_many", "tile_params"]


def tile_params(p: GPUParams, g: int) -> TiledGPUParams:
    """``p`` repeated ``g`` times along the point axis (row ``i * p.n + h`` is point ``h``), each
    field tiled on first read (:class:`~archsim.cost.params.TiledGPUParams`)."""
    return p.tiled(g)


@dataclasses.dataclass
class _Traffic:
    """One GEMM for the L2 tiling model; ``conv`` = (low, high, window, groups) for an implicit A."""

    m: float
    n: float
    k: float
    batch: float
    a: float
    b: float
    c: float
    conv: tuple[float, float, float, float] | None = None
    result: np.ndarray | None = None


@dataclasses.dataclass
class _Gemm:
    prec: str
    label: str
    shape: tuple[float, ...]          # m, n, k, batch, a, b, c
    traffic: _Traffic
    extra_dram: float
    a_stream: np.ndarray | float
    extra_vector: float
    mm: float
    library: str = gc.kn.GEMM_LIBRARY
    accumulate: str | None = None     # gc.narrow_accumulate: None (fp32/int32) or "fp16"
    result: CostArrays | None = None

    @property
    def group(self) -> tuple[str, str, str | None]:
        """Requests of one (precision, kernel library, accumulator) run stacked together."""
        return (self.prec, self.library, self.accumulate)


@dataclasses.dataclass
class _Stream:
    prec: str
    values: tuple[float, ...]         # e, vector, special, in_b, out_b
    dram: np.ndarray | None = None    # explicit bytes (H,), or
    traffic: _Traffic | None = None   # the tiling model's bytes, at least `floor`
    floor: float = 0.0
    l2: np.ndarray | None = None      # bytes through L2 when they differ from DRAM's (row-wise ops)
    result: CostArrays | None = None


class _Planner:
    """Turns ops into kernel requests, runs each class stacked, and reassembles every op."""

    def __init__(self, p: GPUParams) -> None:
        self.p = p
        self.traffic: list[_Traffic] = []
        self.gemms: list[_Gemm] = []
        self.streams: list[_Stream] = []
        self._flop: dict[int, float] = {}
        self._tiled: dict[int, TiledGPUParams] = {}
        self._configs: dict[str, list[tuple[np.ndarray, int, bool]]] = {}

    def tiled(self, g: int) -> GPUParams:
        """The parameter pack repeated for ``g`` stacked ops (built once per group size)."""
        if g == 1:
            return self.p  # one op: the pack itself (a lone GEMM, or one op per chunk in big sweeps)
        if g not in self._tiled:
            self._tiled[g] = tile_params(self.p, g)
        return self._tiled[g]

    def flop(self, op: Any) -> float:
        """``float(op.flop())``, computed once per op object."""
        value = self._flop.get(id(op))
        if value is None:
            value = self._flop[id(op)] = float(op.flop())
        return value

    # -- requests -------------------------------------------------------------------------------
    def _traffic(self, *shape: float, conv: tuple[float, float, float, float] | None = None) -> _Traffic:
        t = _Traffic(*shape, conv=conv)
        self.traffic.append(t)
        return t

    def _gemm_req(self, op: Any, m: int, n: int, k: int, batch: int, e: float, c: float, traffic: _Traffic,
                  extra_dram: float, a_stream: np.ndarray | float, extra_vector: float,
                  library: str = gc.kn.GEMM_LIBRARY) -> _Gemm:
        mm = float(op.flop_breakdown().get("matmul", 0))
        g = _Gemm(precision_of(op), op.label, (m, n, k, batch, e, e, c), traffic, extra_dram, a_stream,
                  extra_vector, mm, library, gc.narrow_accumulate(op))
        self.gemms.append(g)
        return g

    def _stream_req(self, prec: str, e: float, vector: float, special: float, in_b: float, out_b: float,
                    dram: np.ndarray | None = None, traffic: _Traffic | None = None, floor: float = 0.0) -> _Stream:
        s = _Stream(prec, (e, vector, special, in_b, out_b), dram, traffic, floor)
        self.streams.append(s)
        return s

    def plan(self, op: Any) -> Any:
        """A callable giving the op's CostArrays once the classes have run, or a finished CostArrays."""
        kind = op.kind
        if kind in ("h2d", "d2h"):
            return gc.cost(op, self.p)  # raises: a transfer runs on a link
        if kind == "gemm":
            g = self._plan_gemm(op)
            return lambda: g.result
        if kind == "conv2d":
            return self._plan_conv(op)
        if kind == "gemv":
            e = elem_bytes(op)
            if getattr(op, "weight", False) and op.batch > 1:
                t = self._traffic(op.m, op.batch, op.k, 1, e, e, e)
            else:
                t = self._traffic(op.m, 1, op.k, op.batch, e, e, e)
            s = self._plan_stream(op, traffic=t)
            return lambda: s.result
        if kind in gc._DISPATCH:
            return gc.cost(op, self.p)
        s = self._plan_stream(op)
        return lambda: s.result

    def _plan_gemm(self, op: Any) -> _Gemm:
        e = elem_bytes(op)
        m, n, k, batch = op.m, op.n, op.k, op.batch
        if getattr(op, "weight", False) and batch > 1:
            m, batch = m * batch, 1
        bias = e * n if getattr(op, "bias", False) else 0.0
        t = self._traffic(m, n, k, batch, e, e, e)
        return self._gemm_req(op, m, n, k, batch, e, e, t, bias, 1.0, flop_classes(op)[1])

    def _plan_stream(self, op: Any, traffic: _Traffic | None = None) -> _Stream:
        mm, vector, special = flop_classes(op)
        in_b, out_b = io_bytes(op)
        compulsory = float(op.min_bytes())
        dram = None if traffic is not None else np.full(self.p.n, compulsory)
        rows = gc.rowwise_traffic(op, self.p)
        req = self._stream_req(precision_of(op), elem_bytes(op), vector + mm, special, in_b, out_b,
                               dram=dram if rows is None else rows[1], traffic=traffic, floor=compulsory)
        if rows is not None:
            req.l2 = rows[0]
        return req

    def _plan_conv(self, op: Any) -> Any:
        if op.is_depthwise_like:
            s = self._plan_stream(op)
            return lambda: s.result
        p = self.p
        prec, e = precision_of(op), elem_bytes(op)
        planned = []
        if prec not in self._configs:
            self._configs[prec] = gc.precision_configs(p, prec)
        for mask, multiple, transposes in self._configs[prec]:
            padded = gc.pad_channels(op, multiple)
            transfers = ([self._stream_req(prec, e, 0.0, 0.0, rd, wr, dram=np.full(p.n, rd + wr))
                          for rd, wr in gc.layout_transfers(op, padded)] if transposes else [])
            planned.append((mask, self._plan_algorithms(padded), transfers))

        def build() -> CostArrays | _Autotuned:
            configs = []
            for mask, (direct, winograd), transfers in planned:
                moved = [t.result for t in transfers]
                c = gc.with_transfers(op, direct.result, moved, self.flop(op))
                w = None
                if winograd is not None:
                    wino = sum_costs([x() for x in winograd], op.kind, self.flop(op))
                    w = gc.with_transfers(op, wino, moved, self.flop(op))
                configs.append((mask, c, w))
            done = _Autotuned(configs, p.conv_autotune > 0)
            return done if done.candidates() else done.finish([])
        return build

    def _plan_algorithms(self, op: Any) -> tuple[_Gemm, list[Any] | None]:
        """gpu._conv_algorithms: implicit GEMM, and Winograd's parts where it is a candidate
        (gpu.autotunes); ``build`` picks between them with the transposes added."""
        direct = self._plan_implicit(op)
        return direct, (self._plan_winograd(op) if gc.autotunes(op, self.p) else None)

    def _plan_implicit(self, op: Any) -> _Gemm:
        p = self.p
        v = gc.conv_gemm_view(op)
        e, r, s, g, c, kout, npq, crs, in_bytes = v[:9]
        vector = flop_classes(op)[1]
        if op.pass_ == "backward_data":
            cb = in_bytes / (npq * crs)
            t = self._traffic(npq, crs, kout, g, e, e, cb)
            return self._gemm_req(op, npq, crs, kout, g, e, cb, t, 0.0, 1.0, vector)
        m, n, k = v.m, v.n, v.k
        # The A-pass bounds of tr.conv_a_pass_bytes, evaluated per capacity by the stacked traffic run.
        window_b = tr.conv_window_bytes(c, op.width, r, e)
        low, high = tr.conv_a_pass_bounds(op.batch, c, op.height, op.width, r, s, op.out_height, op.out_width, e,
                                          gc.touched_bytes(op, p) / g)
        t = self._traffic(m, n, k, g, e, e, e, conv=(low, high, window_b, g))
        im2col = npq * crs * e
        a_stream = np.where(p.l1_size_bytes >= window_b, low, high) / im2col
        bias = e * op.out_channels if getattr(op, "bias", False) else 0.0
        return self._gemm_req(op, m, n, k, g, e, e, t, bias, a_stream, vector, gc.conv_library(op))

    def _plan_winograd(self, op: Any) -> list[Any]:
        from archsim.workload.ops import Gemm

        p = self.p
        t, _m, tiles = gc.winograd_plan(op)
        c, k = op.in_channels, op.out_channels
        e = elem_bytes(op)
        prec = precision_of(op)
        x_b = op.batch * c * op.height * op.width * e
        y_b = op.batch * k * op.out_height * op.out_width * e
        w_b = k * c * op.kernel[0] * op.kernel[1] * e
        xt_b, yt_b, wt_b = tiles * c * t * t * e, tiles * k * t * t * e, k * c * t * t * e
        gemm = Gemm(tiles, k, c, dtype=op.dtype, batch=t * t, name=f"{op.label}.winograd_gemm",
                    compute_dtype=op.compute_dtype, accumulate_dtype=op.accumulate_dtype)
        s1 = self._stream_req(prec, e, t * t * xt_b / e, 0.0, x_b, xt_b, dram=np.full(p.n, x_b + xt_b))
        s2 = self._stream_req(prec, e, t * t * wt_b / e, 0.0, w_b, wt_b, dram=np.full(p.n, w_b + wt_b))
        g = self._plan_gemm(gemm)
        s3 = self._stream_req(prec, e, t * t * yt_b / e, 0.0, yt_b, y_b, dram=np.full(p.n, yt_b + y_b))
        return [lambda: s1.result, lambda: s2.result, lambda: g.result, lambda: s3.result]

    # -- execution ------------------------------------------------------------------------------
    def run(self) -> None:
        self._run_traffic()
        self._run_gemms()
        self._run_streams()

    def _run_traffic(self) -> None:
        if not self.traffic:
            return
        if self.p.n == 1:  # one point: one capacity (np.unique's sort costs more than the rest here)
            caps, inverse = self.p.l2_size_bytes, np.zeros(1, dtype=np.intp)
        else:
            caps, inverse = np.unique(self.p.l2_size_bytes, return_inverse=True)
        u = len(caps)
        rows = np.asarray([[t.m, t.n, t.k, t.batch, t.a, t.b, t.c] for t in self.traffic], dtype=np.float64)
        rows = np.repeat(rows, u, axis=0)
        cap = np.tile(caps, len(self.traffic))
        m, n, k, batch, a, b, c = rows.T
        a_pass = a * m * k
        conv = [t.conv for t in self.traffic]
        if any(cv is not None for cv in conv):
            # tr.conv_bytes: the A pass of each capacity x groups, divided back per instance.
            cv = np.asarray([x if x is not None else (np.nan, np.nan, np.nan, 1.0) for x in conv],
                            dtype=np.float64)
            low, high, window, groups = np.repeat(cv, u, axis=0).T
            is_conv = ~np.isnan(low)
            conv_pass = np.where(cap >= window, low, high) * groups / groups
            a_pass = np.where(is_conv, conv_pass, a_pass)
        out = tr.gemm_bytes_rows(m, n, k, batch, a, b, c, a_pass, cap).reshape(len(self.traffic), u)
        for t, q in zip(self.traffic, out, strict=True):
            t.result = q[inverse]

    def _run_gemms(self) -> None:
        p = self.p
        for (prec, library, acc), group in _by_precision(self.gemms, p.n):
            g = len(group)
            sp = self.tiled(g)
            per_op = np.asarray([q.shape for q in group], dtype=np.float64)
            m, n, k, batch, a, b, c = np.repeat(per_op, p.n, axis=0).T
            dram = np.concatenate([q.traffic.result + q.extra_dram for q in group])
            a_stream = np.concatenate([_per_point(q.a_stream, p.n) for q in group])
            extra_vector = np.repeat([q.extra_vector for q in group], p.n)
            mm = np.repeat([q.mm for q in group], p.n)
            _, rate, eff = gc.gemm_unit(p, prec, group[0].label, acc, library)
            kernel = gc.kn.gpu_gemm_grid(p, *per_op.T, rate, eff, dram, a_stream, library=library)
            parts = gc.gemm_parts(sp, prec, group[0].label, m, n, k, batch, a, b, c, dram, a_stream,
                                  extra_vector, mm, kernel=kernel, library=library, accumulate=acc)
            whole = gc.assemble("gemm", 0.0, sp, *parts)
            for q, result in zip(group, _split(whole, g, p.n), strict=True):
                q.result = result

    def _run_streams(self) -> None:
        p = self.p
        for prec, group in _by_precision(self.streams, p.n):
            g = len(group)
            sp = self.tiled(g)
            drams = []
            for q in group:
                if q.traffic is not None:
                    drams.append(np.maximum(q.traffic.result, q.floor))
                else:
                    drams.append(q.dram)
            dram = np.concatenate(drams)
            # kn.gpu_stream's default thread count: one 16-byte access per byte of the op's largest traffic.
            threads = np.repeat([max(1.0, float(np.max(d)) / gc.kn.STREAM_BYTES_PER_THREAD) for d in drams], p.n)
            e, vector, special, in_b, out_b = np.repeat(np.asarray([q.values for q in group], dtype=np.float64),
                                                        p.n, axis=0).T
            l2 = None
            if any(q.l2 is not None for q in group):
                l2 = np.concatenate([q.l2 if q.l2 is not None else d for q, d in zip(group, drams, strict=True)])
            parts = gc.stream_parts(sp, prec, e, vector, special, in_b, out_b, dram, threads, l2_bytes=l2)
            whole = gc.assemble("stream", 0.0, sp, *parts)
            for q, result in zip(group, _split(whole, g, p.n), strict=True):
                q.result = result


CHUNK_ROWS = 16384
"""Stacked rows (ops x points) per numpy pass: enough to amortise Python's per-call overhead, few
enough that each of the few dozen temporaries of a pass (128 KiB at this size) stays small; a
1,000-point sweep of ResNet-50 then takes 2-3 passes per kernel class instead of one per op."""


def _by_precision(reqs: Sequence[Any], points: int) -> list[tuple[Any, list[Any]]]:
    """Requests grouped by precision (a GEMM request: by its ``group``, precision and kernel library),
    each group cut into chunks of at most ``CHUNK_ROWS`` rows."""
    groups: dict[Any, list[Any]] = {}
    for r in reqs:
        groups.setdefault(getattr(r, "group", r.prec), []).append(r)
    per = max(1, CHUNK_ROWS // points)
    return [(prec, g[i:i + per]) for prec, g in groups.items() for i in range(0, len(g), per)]


def _per_point(x: np.ndarray | float, h: int) -> np.ndarray:
    """``x`` as a float64 array of the ``h`` points (an (h,) float64 array as it is)."""
    if isinstance(x, np.ndarray) and x.dtype == np.float64 and x.shape == (h,):
        return x
    return np.broadcast_to(np.asarray(x, dtype=np.float64), (h,))


def _split(c: CostArrays, g: int, h: int) -> list[CostArrays]:
    """The ``g`` CostArrays of a stacked one, rows ``i*h .. (i+1)*h`` each (views, not copies).

    Column by column: each field (each key of a dict field) cut into its ``g`` row views at once
    (iterating the (g, h) reshape), then each op's field dict zipped together, the per-op loops run
    by ``map`` and ``zip`` in C (a stacked class has a few dozen ops x ~45 arrays). One op is ``c``."""
    if g == 1:
        return [c]
    names: list[str] = []
    columns: list[Any] = []
    for name, v in c.__dict__.items():
        names.append(name)
        if isinstance(v, np.ndarray):
            columns.append(v.reshape(g, h))
        elif isinstance(v, dict):
            keys = tuple(v)
            rows = zip(*[x.reshape(g, h) for x in v.values()], strict=True)
            columns.append(list(map(dict, map(zip, itertools.repeat(keys), rows))) if keys
                           else [{} for _ in range(g)])
        else:
            columns.append(itertools.repeat(v, g))
    return [CostArrays.from_fields(dict(zip(names, r, strict=True))) for r in zip(*columns, strict=True)]


def _retag(c: CostArrays, kind: str, flop: float) -> CostArrays:
    """``dataclasses.replace(c, kind=kind, flop=flop)``: a shallow copy with two fields changed."""
    return CostArrays.from_fields({**c.__dict__, "kind": kind, "flop": flop})


class _Autotuned:
    """A convolution whose algorithm the library picks by timing (:func:`archsim.cost.gpu._pick`):
    per channel-padding configuration ``(mask, implicit GEMM, Winograd or None)``, each cost with
    its layout transposes. :func:`cost_many` times every such op's candidates in one pass of the
    power governor and then :meth:`finish` picks."""

    def __init__(self, configs: list[tuple[np.ndarray, CostArrays, CostArrays | None]], allowed: np.ndarray) -> None:
        self.configs = configs
        self.allowed = allowed

    def candidates(self) -> list[CostArrays]:
        """The costs to time: implicit GEMM and Winograd of every configuration that has both."""
        return [x for _, c, w in self.configs if w is not None for x in (c, w)]

    def finish(self, timed_s: list[np.ndarray]) -> CostArrays:
        """The op's cost, given the candidates' governed times in :meth:`candidates` order."""
        times = iter(timed_s)
        out = None
        for mask, c, w in self.configs:
            if w is not None:
                c = gc.pick_timed(c, w, next(times), next(times), self.allowed)
            out = c if out is None else gc.select(mask, out, c)
        return out

    def costs(self) -> list[CostArrays]:
        """Every configuration's costs (implicit GEMM, then Winograd where it is a candidate)."""
        return [x for _, c, w in self.configs for x in ((c,) if w is None else (c, w))]

    def finish_governed(self, governed: list[CostArrays]) -> CostArrays:
        """The op's governed cost from its :meth:`costs` governed (:func:`archsim.cost.power.apply`):
        the pick compares the governed times and keeps the picked candidate's clock and power."""
        from archsim.cost.power import EXTRA_KEYS

        done = iter(governed)
        out = None
        for mask, _, w in self.configs:
            c = next(done)
            if w is not None:
                b = next(done)
                c = gc.pick_timed(c, b, c.latency_s, b.latency_s, self.allowed, keep=EXTRA_KEYS)
            out = c if out is None else gc.select(mask, out, c)
        # The governor's entries last, as power.apply places them on an op it governs.
        extra = {**{k: v for k, v in out.extra.items() if k not in EXTRA_KEYS},
                 **{k: out.extra[k] for k in EXTRA_KEYS if k in out.extra}}
        return CostArrays.from_fields({**out.__dict__, "extra": extra})


def _build(ops: Sequence[Any], p: GPUParams) -> tuple[_Planner, list[CostArrays | _Autotuned]]:
    planner = _Planner(p)
    plans = [planner.plan(op) for op in ops]
    planner.run()
    return planner, [plan() if callable(plan) else plan for plan in plans]


def governed_many(ops: Sequence[Any], p: GPUParams) -> list[CostArrays]:
    """Every op of ``ops`` at its governed clock: ``power.apply(cost_many(ops, p), p, gpu=True)``,
    with each autotuned convolution's candidates governed in the same pass of the power model (the
    governor prices each (op, point) row on its own, so the picked candidate's row is the row its
    pick would give)."""
    from archsim.cost import power

    planner, built = _build(ops, p)
    flat = [x for c in built for x in (c.costs() if isinstance(c, _Autotuned) else (c,))]
    governed = iter(power.apply(flat, p, gpu=True))
    out = []
    for op, c in zip(ops, built, strict=True):
        c = c.finish_governed([next(governed) for _ in c.costs()]) if isinstance(c, _Autotuned) else next(governed)
        flop = planner.flop(op)
        out.append(c if (c.kind == op.kind and c.flop == flop) else _retag(c, op.kind, flop))
    return out


def cost_many(ops: Sequence[Any], p: GPUParams) -> list[CostArrays]:
    """The cost of every op of ``ops`` at every GPU of ``p``: ``[archsim.cost.gpu.cost(op, p) for op in ops]``."""
    planner, built = _build(ops, p)
    autotuned = [c for c in built if isinstance(c, _Autotuned)]
    if autotuned:
        # Every autotuned convolution's candidates timed at their governed clocks in one pass.
        from archsim.cost import power

        timed = iter(power.apply([x for c in autotuned for x in c.candidates()], p, gpu=True))
        picked = {id(c): c.finish([next(timed).latency_s for _ in c.candidates()]) for c in autotuned}
        built = [picked[id(c)] if isinstance(c, _Autotuned) else c for c in built]
    out = []
    for op, c in zip(ops, built, strict=True):
        flop = planner.flop(op)
        out.append(c if (c.kind == op.kind and c.flop == flop) else _retag(c, op.kind, flop))
    return out
