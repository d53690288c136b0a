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

:func:`governed_many` keeps the rows of an op that is one kernel of a class stacked up to the
power model: it enters :func:`archsim.cost.power.apply` as its class's rows, cut into ops once
governed. At a few points (``STACKED_SUM_POINTS``) a convolution of one channel configuration
is summed from its kernels' rows too
(:class:`_SumJob`, every convolution of one structure in one numpy call per field and part);
the governed stacks are cut into ops once. The floats are those of cutting first, summing op by
op (:func:`archsim.cost.common.sum_costs`) and governing each op: the same operations on each
(op, point) in the same order.

At more points (and in :func:`cost_many`) every other op enters the power model on its own, and a
convolution of one channel configuration with layout transposes or a Winograd candidate is summed
from its kernels' rows too (:meth:`_Planner.run_sums`): its kernels run ahead of the other
requests of their class, so that one kernel of the convolutions of one structure is one run of
rows, and each field's sum is one numpy call per part for all of them, read from row views and
written over the rows of the last kernel it adds (rows only that sum reads), without cutting the
kernels into ops or allocating the sums anew; the sums are then cut into ops.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
from numpy.lib.array_utils import byte_bounds

from archsim.cost import gpu as gc
from archsim.cost import traffic as tr
from archsim.cost.common import added_in_order, elem_bytes, flop_classes, io_bytes, precision_of, sum_costs
from archsim.cost.params import GPUParams, TiledGPUParams, _tile
from archsim.cost.types import CostArrays, CostTotals, OpCost, PowerInputs, _point_cost, stacked_at, stacked_rows

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
    final: bool = False               # the request is an op's whole cost (not a part of a convolution's)
    part: bool = False                # a part of a stacked sum (_SumJob): read through ``ref``
    ref: tuple[CostArrays, int] | None = None  # (its class's stacked cost, its op row there)
    opens: bool = True                # the op's first kernel: it carries the op's host dispatch

    @property
    def group(self) -> tuple[str, str, str | None]:
        """Requests of one (precision, kernel library, accumulator) run stacked together."""
        return (self.prec, self.library, self.accumulate)


@dataclasses.dataclass
class _Stream:
    prec: str
    values: tuple[float, ...]         # e, vector, special, in_b, out_b
    dram: np.ndarray | float | None = None  # explicit bytes (H,) or the same at every point, or
    traffic: _Traffic | None = None   # the tiling model's bytes, at least `floor`
    floor: float = 0.0
    l2: np.ndarray | None = None      # bytes through L2 when they differ from DRAM's (row-wise ops)
    result: CostArrays | None = None
    final: bool = False               # the request is an op's whole cost (not a part of a convolution's)
    part: bool = False                # a part of a stacked sum (_SumJob): read through ``ref``
    ref: tuple[CostArrays, int] | None = None  # (its class's stacked cost, its op row there)
    opens: bool = True                # the op's first kernel: it carries the op's host dispatch


def _stream_values(op: Any) -> tuple[str, float, float, float, float, float, float]:
    """The point-free values of a streaming-kernel request of ``op``: (precision, element bytes,
    vector + matmul FLOP, special FLOP, input bytes, output bytes, compulsory bytes), kept on the op
    (``gpu.derived``)."""
    mm, vector, special = flop_classes(op)
    in_b, out_b = io_bytes(op)
    return precision_of(op), elem_bytes(op), vector + mm, special, in_b, out_b, float(op.min_bytes())


def _gemm_values(op: Any) -> tuple[float, str, str, str | None]:
    """The point-free values of a GEMM-kernel request of ``op``: (matmul FLOP, precision, label,
    narrow accumulator), kept on the op (``gpu.derived``)."""
    return float(op.flop_breakdown().get("matmul", 0)), precision_of(op), op.label, gc.narrow_accumulate(op)


def _implicit_values(op: Any, p: GPUParams, sector: float) -> tuple[Any, ...]:
    """The point-free values of a convolution's implicit-GEMM request, given the smallest DRAM sector of
    the points (``sector``, B; the only value of ``p`` they read): (m, n, k, groups, element bytes, C
    bytes, conv A-pass bounds ``(low, high, window, groups)`` or None for backward data, bias bytes,
    epilogue vector FLOP, kernel library, im2col bytes), kept on the op (``gpu.derived``)."""
    v = gc.conv_gemm_view(op)
    e, r, s, g, c, kout, npq, crs, in_bytes = v[:9]
    vector = flop_classes(op)[1]
    if op.pass_ == "backward_data":
        return npq, crs, kout, g, e, in_bytes / (npq * crs), None, 0.0, vector, gc.kn.GEMM_LIBRARY, 0.0
    # The A-pass bounds of tr.conv_a_pass_bytes, evaluated per capacity by the stacked traffic run.
    window_b = tr.conv_window_bytes(c, op.width, r, e)
    low, high = tr.conv_a_pass_bounds(op.batch, c, op.height, op.width, r, s, op.out_height, op.out_width, e,
                                      gc.touched_bytes(op, p, sector) / g)
    bias = e * op.out_channels if getattr(op, "bias", False) else 0.0
    return v.m, v.n, v.k, g, e, e, (low, high, window_b, g), bias, vector, gc.conv_library(op), npq * crs * e


class _Planner:
    """Turns ops into kernel requests, runs each class stacked, and reassembles every op."""

    def __init__(self, p: GPUParams, stack_finals: bool = False, keep_finals: bool = False) -> None:
        self.p = p
        # With stack_finals, convolutions are summed from stacked rows for the power model
        # (run_jobs); with either flag the requests that are whole ops keep their class's stacked
        # cost (``stacked``: cost, requests) for the power model instead of being cut into ops.
        self.stack_finals = stack_finals
        self.keep_finals = keep_finals or stack_finals
        self.stacked: list[tuple[CostArrays, list[Any]]] = []
        self.jobs: list[_SumJob] = []  # convolutions' sums of stacked rows
        # Without stack_finals, the kernels of row-summed convolutions (their parts) run ahead of the
        # other requests of their class, grouped by their place in their convolution (every first
        # transpose, every second, ..., every first Winograd transform, ...): the rows of one part of
        # the convolutions of one structure are then one run of rows of a chunk, read as one view.
        self._moved_streams: dict[tuple[bool, int], list[_Stream]] = {}
        self._moved_gemms: list[_Gemm] = []
        self._autotune_any: bool | None = None
        self._sector: float | None = None
        self.traffic: list[_Traffic] = []
        self.gemms: list[_Gemm] = []
        self.streams: list[_Stream] = []
        self._flop: dict[int, float] = {}
        self._tiled: dict[int, TiledGPUParams] = {}
        self._configs: dict[str, list[tuple[np.ndarray, int, bool]]] = {}
        self._stream_bps: dict[int, np.ndarray] = {}

    def _min_sector(self) -> float:
        """The smallest DRAM sector of the points (gc.touched_bytes), found once per planner."""
        if self._sector is None:
            self._sector = float(np.min(self.p.sector_bytes))
        return self._sector

    def tiled(self, g: int) -> GPUParams:
        """The parameter pack repeated for ``g`` stacked ops (built once per group size)."""
        if g == 1:
            return self.p  # one op: the pack itself (a lone GEMM, or one op per chunk in big sweeps)
        if g not in self._tiled:
            self._tiled[g] = tile_params(self.p, g)
        return self._tiled[g]

    def stream_bps(self, g: int) -> np.ndarray:
        """A streaming kernel's blocks per SM (:func:`~archsim.cost.kernels.stream_blocks_per_sm`) for
        ``g`` stacked ops: computed once per point and repeated, once per group size."""
        got = self._stream_bps.get(g)
        if got is None:
            base = self._stream_bps.get(1)
            if base is None:
                base = self._stream_bps[1] = gc.kn.stream_blocks_per_sm(self.p)
            got = self._stream_bps[g] = base if g == 1 else np.tile(base, g)
            got.flags.writeable = False  # shared by the groups of this size: never written
        return got

    def flop(self, op: Any) -> float:
        """``float(op.flop())``, computed once per op object (kept on it, ``gpu.derived``)."""
        value = self._flop.get(id(op))
        if value is None:
            value = self._flop[id(op)] = gc.derived(op, ("flop",), lambda: float(op.flop()))
        return value

    # -- requests -------------------------------------------------------------------------------
    def _traffic(self, *shape: float, conv: tuple[float, float, float, float] | None = None) -> _Traffic:
        t = _Traffic(*shape, conv=conv)
        self.traffic.append(t)
        return t

    def _gemm_req(self, op: Any, m: int, n: int, k: int, batch: int, e: float, c: float, traffic: _Traffic,
                  extra_dram: float, a_stream: np.ndarray | float, extra_vector: float,
                  library: str = gc.kn.GEMM_LIBRARY) -> _Gemm:
        mm, prec, label, accumulate = gc.derived(op, ("gemm_request",), lambda: _gemm_values(op))
        g = _Gemm(prec, label, (m, n, k, batch, e, e, c), traffic, extra_dram, a_stream, extra_vector, mm, library,
                  accumulate)
        self.gemms.append(g)
        return g

    def _stream_req(self, prec: str, e: float, vector: float, special: float, in_b: float, out_b: float,
                    dram: np.ndarray | float | None = None, traffic: _Traffic | None = None,
                    floor: float = 0.0) -> _Stream:
        s = _Stream(prec, (e, vector, special, in_b, out_b), dram, traffic, floor)
        self.streams.append(s)
        return s

    def plan(self, op: Any) -> Any:
        """The op's request (an op that is one kernel of a class: its ``result`` once the classes have
        run), a callable giving its cost then, or a finished CostArrays."""
        kind = op.kind
        if kind in ("h2d", "d2h"):
            return gc.cost(op, self.p)  # raises: a transfer runs on a link
        if kind == "gemm":
            g = self._plan_gemm(op)
            g.final = True
            return g
        if kind == "conv2d":
            return self._plan_conv(op)
        if kind == "gemv":
            e = elem_bytes(op)
            if getattr(op, "weight", False) and op.batch > 1:
                t = self._traffic(op.m, op.batch, op.k, 1, e, e, e)
            else:
                t = self._traffic(op.m, 1, op.k, op.batch, e, e, e)
            s = self._plan_stream(op, traffic=t)
            s.final = True
            return s
        if kind in gc._DISPATCH:
            return gc.cost(op, self.p)
        s = self._plan_stream(op)
        s.final = True
        return s

    def _plan_gemm(self, op: Any) -> _Gemm:
        e = elem_bytes(op)
        m, n, k, batch = op.m, op.n, op.k, op.batch
        if getattr(op, "weight", False) and batch > 1:
            m, batch = m * batch, 1
        bias = e * n if getattr(op, "bias", False) else 0.0
        t = self._traffic(m, n, k, batch, e, e, e)
        return self._gemm_req(op, m, n, k, batch, e, e, t, bias, 1.0, flop_classes(op)[1])

    def _plan_stream(self, op: Any, traffic: _Traffic | None = None) -> _Stream:
        prec, e, vector, special, in_b, out_b, compulsory = gc.derived(op, ("stream_request",),
                                                                       lambda: _stream_values(op))
        dram = None if traffic is not None else compulsory
        rows = gc.rowwise_traffic(op, self.p)
        req = self._stream_req(prec, e, vector, special, in_b, out_b,
                               dram=dram if rows is None else rows[1], traffic=traffic, floor=compulsory)
        if rows is not None:
            req.l2 = rows[0]
        return req

    def _plan_conv(self, op: Any) -> Any:
        if op.is_depthwise_like:
            s = self._plan_stream(op)
            s.final = True
            return s
        p = self.p
        prec, e = gc.derived(op, ("precision",), lambda: (precision_of(op), elem_bytes(op)))
        planned = []
        first_stream, first_gemm = len(self.streams), len(self.gemms)
        if prec not in self._configs:
            self._configs[prec] = gc.precision_configs(p, prec)
        for mask, multiple, transposes in self._configs[prec]:
            padded = gc.pad_channels(op, multiple)
            transfers = ([self._stream_req(prec, e, 0.0, 0.0, rd, wr, dram=rd + wr)
                          for rd, wr in gc.derived(op, ("layout_transfers", multiple),
                                                   lambda q=padded: gc.layout_transfers(op, q))] if transposes else [])
            direct, winograd = algorithms = self._plan_algorithms(padded)
            # gpu._conv: the op's first kernel carries its dispatch, the others the launch API call
            for q in (*transfers, direct)[1:] if transfers else (winograd or ())[1:]:
                q.opens = False
            if transfers:
                for q in winograd or ():
                    q.opens = False
            planned.append((mask, algorithms, transfers))
        if len(planned) == 1 and (self.stack_finals or planned[0][1][1] is not None or planned[0][2]):
            if not self.stack_finals:
                self._move_parts(planned[0][2], first_stream, first_gemm)
            return self._stacked_conv(op, *planned[0])

        def build() -> CostArrays | _Autotuned:
            configs = []
            for mask, (direct, winograd), transfers in planned:
                moved = [t.result for t in transfers]
                c = gc.with_transfers(op, direct.result, moved, self.flop(op))
                w = None
                if winograd is not None:
                    wino = sum_costs([x.result for x in winograd], op.kind, self.flop(op))
                    w = gc.with_transfers(op, wino, moved, self.flop(op))
                configs.append((mask, c, w))
            done = _Autotuned(configs, p.conv_autotune > 0)
            return done if done.candidates() else done.finish([])
        return build

    def _stacked_conv(self, op: Any, mask: np.ndarray, algorithms: tuple[_Gemm, list[Any] | None],
                      transfers: list[_Stream]) -> _Conv:
        """A convolution of one channel configuration as sums of its kernels' stacked rows
        (:class:`_SumJob`): the transposes and implicit GEMM (``gpu.with_transfers``), and, where
        Winograd is a candidate, the transposes and the sum of Winograd's four kernels."""
        direct, winograd = algorithms
        for q in (*transfers, direct, *(winograd or ())):
            q.part = True
        kind, flop = op.kind, self.flop(op)
        main = _SumJob([*transfers, direct], kind, flop, main=len(transfers))
        self.jobs.append(main)
        w = None
        if winograd is not None:
            inner = _SumJob(winograd, kind, flop)
            w = _SumJob([*transfers, inner], kind, flop)
            self.jobs += [inner, w]
        return _Conv(mask, main, w, self.p.conv_autotune > 0)

    def _move_parts(self, transfers: list[_Stream], first_stream: int, first_gemm: int) -> None:
        """Moves the requests planned for one convolution since ``first_stream`` / ``first_gemm`` (its
        kernels, summed from their rows) to the lists :meth:`run` puts ahead of the other requests."""
        transfer = {id(q): i for i, q in enumerate(transfers)}
        others = itertools.count()
        for q in self.streams[first_stream:]:
            place = (False, transfer[id(q)]) if id(q) in transfer else (True, next(others))
            self._moved_streams.setdefault(place, []).append(q)
        self._moved_gemms += self.gemms[first_gemm:]
        del self.streams[first_stream:], self.gemms[first_gemm:]

    def run_sums(self, inputs: bool = False) -> None:
        """Every :class:`_SumJob`'s cost (``result``, the jobs no other job reads) as
        :func:`archsim.cost.common.sum_costs` of its parts' costs gives it, to the bit, without
        cutting the parts into ops: the jobs of one structure (the same stacked costs at every part)
        summed together, one numpy call per field and part, from row views of the parts' costs
        where their rows are evenly spaced (:func:`_sum_views`); each result a row of the sums. With
        ``inputs``, each result is its :class:`~archsim.cost.types.PowerInputs` (those fields summed
        alone)."""
        h = self.p.n
        read = {id(q) for job in self.jobs for q in job.parts}
        uses: dict[int, int] = {}
        for job in self.jobs:
            for q in job.parts:
                uses[id(q)] = uses.get(id(q), 0) + 1
        free = _Writable(uses)
        for jobs in self._job_batches():
            stacked, g, rows = _sum_views(jobs, h, free, inputs)
            for job, row in zip(jobs, rows, strict=True):
                job.ref = (stacked, row)
            wanted = [i for i, job in enumerate(jobs) if id(job) not in read]
            if wanted:
                per_op = {"kind": [jobs[i].kind for i in wanted], "flop": [jobs[i].flop for i in wanted]}
                cut = _split(stacked, g, h, [rows[i] for i in wanted], per_op, PowerInputs if inputs else None)
                for i, result in zip(wanted, cut, strict=True):
                    jobs[i].result = result

    def run_jobs(self) -> list[tuple[CostArrays, list[_SumJob]]]:
        """Every :class:`_SumJob` summed, those of one structure (the same stacked costs at every
        part) in one numpy pass per field; the stacked sums of the jobs no other job reads."""
        h = self.p.n
        read = {id(q) for job in self.jobs for q in job.parts}
        blocks = []
        for jobs in self._job_batches():
            stacked = _sum_rows(jobs, h)
            for i, job in enumerate(jobs):
                job.ref = (stacked, i)
            if not any(id(j) in read for j in jobs):
                blocks.append((stacked, jobs))
        return blocks

    def _job_batches(self) -> Iterator[list[_SumJob]]:
        """The :class:`_SumJob`s in batches of one structure (the same stacked costs at every part),
        each batch once every part of its jobs is costed (``ref`` set); the caller sets each job's
        ``ref`` before asking for the next batch (a sum may be a later job's part)."""
        pending = list(self.jobs)
        while pending:
            ready = [j for j in pending if all(q.ref is not None for q in j.parts)]
            if not ready:
                raise RuntimeError("a convolution's stacked sum reads a part that was never costed")
            pending = [j for j in pending if j.ref is None and j not in ready]
            batches: dict[tuple[Any, ...], list[_SumJob]] = {}
            for job in ready:
                batches.setdefault((job.main, *(id(q.ref[0]) for q in job.parts)), []).append(job)
            yield from batches.values()

    def _plan_algorithms(self, op: Any) -> tuple[_Gemm, list[Any] | None]:
        """gpu._conv_algorithms: implicit GEMM, and Winograd's parts where it is a candidate
        (gpu.autotunes); ``build`` picks between them with the transposes added."""
        direct = self._plan_implicit(op)
        # gc.autotunes(op, p), with its test over the points made once per planner
        if self._autotune_any is None:
            self._autotune_any = bool(np.any(self.p.conv_autotune))
        return direct, (self._plan_winograd(op) if self._autotune_any and gc.winograd_applies(op) else None)

    def _plan_implicit(self, op: Any) -> _Gemm:
        p = self.p
        sector = self._min_sector()
        m, n, k, g, e, c_b, conv, bias, vector, library, im2col = gc.derived(
            op, ("implicit_gemm", sector), lambda: _implicit_values(op, p, sector))
        t = self._traffic(m, n, k, g, e, e, c_b, conv=conv)
        if conv is None:  # backward data: a plain GEMM of the GEMM library
            return self._gemm_req(op, m, n, k, g, e, c_b, t, 0.0, 1.0, vector)
        low, high, window_b, _ = conv
        a_stream = np.where(p.l1_size_bytes >= window_b, low, high) / im2col
        return self._gemm_req(op, m, n, k, g, e, c_b, t, bias, a_stream, vector, library)

    def _plan_winograd(self, op: Any) -> list[Any]:
        t, _m, tiles = gc.winograd_plan(op)
        c, k = op.in_channels, op.out_channels
        e = elem_bytes(op)
        prec = precision_of(op)
        x_b = op.batch * c * op.height * op.width * e
        y_b = op.batch * k * op.out_height * op.out_width * e
        w_b = k * c * op.kernel[0] * op.kernel[1] * e
        xt_b, yt_b, wt_b = tiles * c * t * t * e, tiles * k * t * t * e, k * c * t * t * e
        gemm = gc.winograd_gemm(op)
        s1 = self._stream_req(prec, e, t * t * xt_b / e, 0.0, x_b, xt_b, dram=x_b + xt_b)
        s2 = self._stream_req(prec, e, t * t * wt_b / e, 0.0, w_b, wt_b, dram=w_b + wt_b)
        g = self._plan_gemm(gemm)
        s3 = self._stream_req(prec, e, t * t * yt_b / e, 0.0, yt_b, y_b, dram=yt_b + y_b)
        return [s1, s2, g, s3]

    # -- execution ------------------------------------------------------------------------------
    def run(self) -> None:
        if self._moved_gemms:
            self.streams[:0] = [q for place in sorted(self._moved_streams) for q in self._moved_streams[place]]
            self.gemms[:0] = self._moved_gemms
            self._moved_streams, self._moved_gemms = {}, []
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
        rows = _repeated(np.asarray([[t.m, t.n, t.k, t.batch, t.a, t.b, t.c] for t in self.traffic],
                                    dtype=np.float64), u)
        # np.tile(caps, len(self.traffic)); one capacity: its value repeated (np.tile's wrapper costs more)
        cap = caps.repeat(len(self.traffic)) if u == 1 else np.tile(caps, len(self.traffic))
        m, n, k, batch, a, b, c = rows.T
        a_pass = a * m * k
        conv = [t.conv for t in self.traffic]
        if any(cv is not None for cv in conv):
            # tr.conv_bytes: the A pass of each capacity x groups, divided back per instance.
            cv = np.asarray([x if x is not None else (np.nan, np.nan, np.nan, 1.0) for x in conv],
                            dtype=np.float64)
            low, high, window, groups = _repeated(cv, u).T
            is_conv = ~np.isnan(low)
            conv_pass = np.where(cap >= window, low, high) * groups / groups
            a_pass = np.where(is_conv, conv_pass, a_pass)
        out = tr.gemm_bytes_rows(m, n, k, batch, a, b, c, a_pass, cap).reshape(len(self.traffic), u)
        if self.p.n == 1:  # one point: each request's row of ``out`` is its result (q[inverse] copies it)
            for t, q in zip(self.traffic, out, strict=True):
                t.result = q
            return
        if u == 1:  # one capacity: each request's one value at every point (q[inverse], without the gather)
            for t, q in zip(self.traffic, out, strict=True):
                t.result = q.repeat(self.p.n)
            return
        for t, q in zip(self.traffic, out, strict=True):
            t.result = q[inverse]

    def _run_gemms(self) -> None:
        p = self.p
        for (prec, library, acc), group in _by_precision(self.gemms, p.n):
            g = len(group)
            sp = self.tiled(g)
            per_op = np.asarray([q.shape for q in group], dtype=np.float64)
            if g == 1:  # one request: its arrays as they are (concatenating one array copies it)
                q = group[0]
                dram, a_stream = q.traffic.result + q.extra_dram, _per_point(q.a_stream, p.n)
            else:
                dram = np.concatenate([q.traffic.result + q.extra_dram for q in group])
                a_stream = np.concatenate([_per_point(q.a_stream, p.n) for q in group])
            unit = gc.gemm_unit(p, prec, group[0].label, acc, library)
            kernel = gc.kn.gpu_gemm_grid(p, *per_op.T, unit[1], unit[2], dram, a_stream, library=library)
            sp = self._dispatched(sp, group)
            if p.n > 1 and sp.n >= gc.ASSEMBLE_ROWS_MIN:  # many rows of several points: compiled
                values = np.asarray([(*q.shape[:2], q.shape[3], q.shape[6], q.extra_vector, q.mm) for q in group],
                                    dtype=np.float64)
                parts = gc.stacked_gemm_parts(sp, p, prec, values, kernel, unit[0], acc)
            else:
                m, n, k, batch, a, b, c = _repeated(per_op, p.n).T
                extra_vector = _repeated(np.asarray([q.extra_vector for q in group]), p.n)
                mm = _repeated(np.asarray([q.mm for q in group]), p.n)
                # gemm_unit of the stacked rows: the points' unit repeated per request
                parts = gc.gemm_parts(sp, prec, group[0].label, m, n, k, batch, a, b, c, dram, a_stream,
                                      extra_vector, mm, kernel=kernel, library=library, accumulate=acc,
                                      unit=unit if g == 1 else tuple(_tile(x, g) for x in unit))
            self._finish_group(group, gc.assemble("gemm", 0.0, sp, *parts))

    def _run_streams(self) -> None:
        p = self.p
        for prec, group in _by_precision(self.streams, p.n):
            g = len(group)
            sp = self.tiled(g)
            drams = [np.maximum(q.traffic.result, q.floor) if q.traffic is not None else q.dram for q in group]
            with_l2 = any(q.l2 is not None for q in group)
            if not with_l2 and not any(type(d) is np.ndarray for d in drams):
                # each request's bytes one number at every point: the np.full of each, concatenated
                dram = np.array(drams).repeat(p.n)
            else:
                drams = [d if type(d) is np.ndarray else np.full(p.n, d) for d in drams]
                dram = np.concatenate(drams)
            # kn.gpu_stream's default thread count: one 16-byte access per byte of the op's largest traffic
            # (max(1.0, float(np.max(d)) / STREAM_BYTES_PER_THREAD) of each request's d, in one pass: fmax,
            # as Python's max with 1.0 first, keeps 1.0 against NaN).
            largest = dram.reshape(g, p.n).max(axis=1)
            per_threads = np.fmax(1.0, largest / gc.kn.STREAM_BYTES_PER_THREAD)
            per_op = np.asarray([q.values for q in group], dtype=np.float64)
            l2 = None
            if with_l2:
                l2 = np.concatenate([q.l2 if q.l2 is not None else d for q, d in zip(group, drams, strict=True)])
            sp = self._dispatched(sp, group)
            # each request's values (e, vector, special, in_b, out_b) once: gc.stream_parts repeats what
            # it derives from them over the points (the floats of repeating them first)
            parts = gc.stream_parts(sp, prec, None, None, None, None, None, dram, l2_bytes=l2,
                                    blocks_per_sm=self.stream_bps(g), stacked=(p, per_op, per_threads))
            self._finish_group(group, gc.assemble("stream", 0.0, sp, *parts))

    def _dispatched(self, sp: Any, group: list[Any]) -> Any:
        """``sp`` (the pack of ``group``'s stacked rows) with each row's host dispatch: the op's
        dispatch for a request that opens its op, the launch API call for the others
        (:meth:`GPUParams.continuation`). Where the two are equal (no host, or a host whose launch
        costs its dispatch) ``sp`` itself; a mixed group views ``sp``'s fields tiled so far and
        differs in this one field."""
        opens = [q.opens for q in group]
        p = self.p
        if all(opens) or p.continuation() is p:
            return sp
        if not any(opens):
            return sp.continuation()
        # np.where(np.repeat(opens, p.n), _tile(dispatch, g), _tile(launch, g)): each request's points copied
        dispatch, launch = p.host_dispatch_s, p.host_launch_s
        return sp.replaced(host_dispatch_s=np.concatenate([dispatch if o else launch for o in opens]))

    def _finish_group(self, group: list[Any], whole: CostArrays) -> None:
        """Each request's cost from its class's stacked cost ``whole``; with ``keep_finals``, the
        requests that are whole ops stay stacked (``self.stacked``) for one power-model pass and
        are cut into ops after it (:func:`governed_many`)."""
        h = self.p.n
        for i, q in enumerate(group):
            if q.part:
                q.ref = (whole, i)
        finals = [i for i, q in enumerate(group) if q.final] if self.keep_finals else []
        rest = [i for i, q in enumerate(group) if not q.part and not (q.final and self.keep_finals)]
        if finals:
            mine = whole if len(finals) == len(group) else _take(whole, finals, h)
            self.stacked.append((mine, [group[i] for i in finals]))
        if rest:
            for i, result in zip(rest, _split(whole, len(group), h, rest), strict=True):
                group[i].result = result


CHUNK_ROWS = 16384
"""Stacked rows (ops x points) per numpy pass: enough to amortise Python's per-call overhead, few
enough that each of the few dozen temporaries of a pass (128 KiB at this size) stays small; a
1,000-point sweep of ResNet-50 then takes 2-3 passes per kernel class instead of one per op."""


STACKED_SUM_POINTS = 128
"""Most hardware points at which :func:`governed_many` sums convolutions' kernels row-stacked
(:class:`_SumJob`, gathered rows) and keeps those sums stacked through the power model: at a few
points each op's arrays are a few numbers, and per-op numpy calls and dicts cost more than the
numbers; at many points the sums of row views (:meth:`_Planner.run_sums`) read the kernels' rows
without copying, which costs less than gathering them. The two cost the same near 160-190 points
(ResNet-50, MobileNet-V2, BERT-base): the stacked sums are 5-13 % faster at 48-128 points, 10-15 %
slower from 192 and ~30 % slower at 1,000. The ops that are one kernel of a class stay stacked
through the power model at any number of points (at 1,000 points ~0.2-0.5 ms less of a
ResNet-50 estimate_many of ~18-20 ms than cutting them into ops first)."""


def _by_precision(reqs: Sequence[Any], points: int) -> list[tuple[Any, list[Any]]]:
    """Requests grouped by precision (a GEMM request: by its ``group``, precision and kernel library),
    each group cut into chunks of at most ``CHUNK_ROWS`` rows."""
    groups: dict[Any, list[Any]] = {}
    for r in reqs:
        groups.setdefault(getattr(r, "group", r.prec), []).append(r)
    per = max(1, CHUNK_ROWS // points)
    return [(prec, g[i:i + per]) for prec, g in groups.items() for i in range(0, len(g), per)]


def _repeated(rows: np.ndarray, h: int) -> np.ndarray:
    """``np.repeat(rows, h, axis=0)``: each row of ``rows`` repeated ``h`` times; ``rows`` itself when
    ``h`` is 1 (the same values, without the copy)."""
    return rows if h == 1 else rows.repeat(h, axis=0)


def _per_point(x: np.ndarray | float, h: int) -> np.ndarray:
    """``x`` as a float64 array of the ``h`` points (an (h,) float64 array as it is; a float filled in)."""
    if type(x) is float:
        return np.full(h, x)
    if isinstance(x, np.ndarray) and x.dtype == np.float64 and x.shape == (h,):
        return x
    return np.broadcast_to(np.asarray(x, dtype=np.float64), (h,))


def _split(c: CostArrays, g: int, h: int, rows: Sequence[int] | None = None,
           per_op: dict[str, list[Any]] | None = None,
           into: type[CostTotals] | type[PowerInputs] | None = None) -> list[Any]:
    """The ``g`` CostArrays of a stacked one, rows ``i*h .. (i+1)*h`` each (views, not copies); with
    ``rows``, those of the ops ``rows`` only, in that order; ``per_op``: fields that are not arrays,
    one value per op cut (the kind and FLOP of the ops of a stacked sum).

    Column by column: each field (each key of a dict field) cut into its ``g`` row views at once
    (iterating the (g, h) reshape), then each op's field dict zipped together, the per-op loops run
    by ``map`` and ``zip`` in C (a stacked class has a few dozen ops x ~45 arrays). One op is ``c``.

    With ``into`` (:class:`~archsim.cost.types.CostTotals` or :class:`~archsim.cost.types.PowerInputs`),
    each op's fields of that class alone, as one."""
    whole = rows is None or (len(rows) == g and list(rows) == list(range(g)))
    if g == 1 and whole and not per_op:
        return [c if into is None else into.of(c)]
    n = g if whole else len(rows)

    def cut(x: np.ndarray | list[np.ndarray]) -> Any:
        table = x if type(x) is list else x.reshape(g, h)  # a list: one array per op
        return table if whole else [table[i] for i in rows]

    names: list[str] = []
    columns: list[Any] = []
    held = c.__dict__
    for name, v in ((k, held[k]) for k in into.FIELDS) if into else held.items():
        names.append(name)
        if isinstance(v, (np.ndarray, list)):  # a list: one array per op
            columns.append(cut(v))
        elif isinstance(v, dict):
            keys = tuple(v)
            cells = zip(*[cut(x) for x in v.values()], strict=True)
            columns.append(list(map(dict, map(zip, itertools.repeat(keys), cells))) if keys
                           else [{} for _ in range(n)])
        elif per_op and name in per_op:
            columns.append(per_op[name])
        else:
            columns.append(itertools.repeat(v, n))
    built = (into or CostArrays).from_fields
    return [built(dict(zip(names, r, strict=True))) for r in zip(*columns, strict=True)]


@dataclasses.dataclass(eq=False)
class _SumJob:
    """Kernels run one after another (:func:`archsim.cost.common.sum_costs`), each part a row of a
    stacked cost (a request's class, or another job's sum): the op's cost is their sum, with the
    extras of part ``main`` (``None``: none; one part: all its fields as they are)."""

    parts: list[Any]
    kind: str
    flop: float
    main: int | None = None
    ref: tuple[CostArrays, int] | None = None
    result: CostArrays | None = None


@dataclasses.dataclass(eq=False)
class _Conv:
    """A convolution of one channel configuration planned as stacked sums: implicit GEMM with its
    transposes (``main``) and Winograd with them (``winograd``, where it is a candidate)."""

    mask: np.ndarray
    main: _SumJob
    winograd: _SumJob | None
    allowed: np.ndarray

    def ungoverned(self) -> CostArrays | _Autotuned:
        """The op's cost once :meth:`_Planner.run_sums` has summed its jobs, as ``build`` of
        ``_Planner._plan_conv`` gives it: the implicit GEMM's sum, or both candidates to pick from."""
        if self.winograd is None:
            return self.main.result
        return _Autotuned([(self.mask, self.main.result, self.winograd.result)], self.allowed)

    def finish(self) -> CostArrays:
        """The op's governed cost, once both jobs hold theirs (``gpu.with_transfers``, ``_pick``)."""
        if self.winograd is None:
            return self.main.result
        c, w = self.main.result, self.winograd.result
        return _Autotuned([(self.mask, c, w)], self.allowed).finish_governed([c, w])


_SUMMED_ARRAYS = ("latency_s", "dram_activations", "link_bytes", "overhead_s", "launches")
_SUMMED_DICTS = ("time_by_unit_s", "bytes_by_level", "flop_by_unit", "read_bytes", "write_bytes",
                 "energy_breakdown_j")
_INPUT_ARRAYS = tuple(k for k in _SUMMED_ARRAYS if k in PowerInputs.FIELDS)
_INPUT_DICTS = tuple(k for k in _SUMMED_DICTS if k in PowerInputs.FIELDS)


def _sum_rows(jobs: list[_SumJob], h: int) -> CostArrays:
    """The stacked cost of ``jobs`` (one structure: part ``j`` of every job a row of one stacked
    cost): ``sum_costs`` of each job's parts, the same additions in the same order, one numpy
    call per field and part for all the jobs."""
    first = jobs[0]
    sources = [q.ref[0] for q in first.parts]
    rows = [np.asarray([job.parts[j].ref[1] for job in jobs]) for j in range(len(sources))]
    # each part's rows: op row r holds points r*h .. r*h + h - 1 (with one point, the op rows themselves)
    index = rows if h == 1 else [(r[:, None] * h + np.arange(h)).reshape(-1) for r in rows]
    if len(sources) == 1:  # one kernel: its rows as they are
        return _take_index(sources[0], index[0])
    fields: dict[str, Any] = {"kind": first.kind, "device": sources[0].device, "flop": 0.0,
                              "static_power_w": sources[0].static_power_w.take(index[0])}
    main = first.main
    fields["extra"] = {} if main is None else {k: x.take(index[main]) for k, x in sources[main].extra.items()}
    for name in _SUMMED_ARRAYS:
        fields[name] = functools.reduce(np.add, [getattr(src, name).take(ix) for src, ix in zip(sources, index,
                                                                                                strict=True)])
    for name in _SUMMED_DICTS:
        out: dict[str, np.ndarray] = {}
        for src, ix in zip(sources, index, strict=True):
            for k, x in getattr(src, name).items():
                v = x.take(ix)
                out[k] = out[k] + v if k in out else v
        fields[name] = out
    dispatch = [src.dispatch_s.take(ix) for src, ix in zip(sources, index, strict=True) if src.dispatch_s is not None]
    fields["dispatch_s"] = functools.reduce(np.add, dispatch) if dispatch else None
    return CostArrays.from_fields(fields)


def _sum_views(jobs: list[_SumJob], h: int, free: _Writable,
               inputs: bool = False) -> tuple[CostArrays | PowerInputs, int, list[int]]:
    """The sums of ``jobs`` (one structure, as :func:`_sum_rows`): a cost whose every array is a
    (jobs, h) table, row ``j`` the sum of job ``j``'s parts (``sum_costs``: the same additions in the
    same order), with its number of rows and each job's row. Each part's rows are read as a view of
    its stacked cost where the jobs' rows are evenly spaced there (else gathered), and a sum is
    written over the rows of the last part it adds where only these jobs read that part and ``free``
    lets its array be written (no new memory: the class passes' arrays hold the sums, as they hold
    the ops' costs); a key of one part is that part's rows. A job of one part is that part's row as
    it is: the part's stacked cost, its number of ops and the jobs' rows there. With ``inputs``, the
    sums of the fields of :class:`~archsim.cost.types.PowerInputs` alone, as one (what the power
    model reads when only the totals are read of it)."""
    first = jobs[0]
    sources = [q.ref[0] for q in first.parts]
    if len(sources) == 1:  # one kernel: its rows as they are (kept where the kernel's rows are)
        for job in jobs:
            if free.uses.get(id(job.parts[0]), 1) != 1:
                free.uses[id(job)] = 2
        return sources[0], sources[0].latency_s.size // h, [job.parts[0].ref[1] for job in jobs]
    at = [[job.parts[j].ref[1] for job in jobs] for j in range(len(sources))]
    picks = [_row_pick(rows) for rows in at]
    # per part, the ids of its arrays whose rows of these jobs may take a sum (none for a gathered part)
    open_ = [free.arrays(src) if type(pick) is slice and all(free.uses[id(job.parts[j])] == 1 for job in jobs)
             else frozenset() for j, (src, pick) in enumerate(zip(sources, picks, strict=True))]
    made: set[int] = set()  # ids of the arrays of this sum that a later sum may write over

    def rows(x: np.ndarray | list[np.ndarray], j: int) -> np.ndarray | list[np.ndarray]:
        if type(x) is list:  # a sum kept as one array per job
            return [x[r] for r in at[j]]
        table = x.reshape(-1, h)
        pick = picks[j]
        return table[pick] if type(pick) is slice else table.take(pick, axis=0)

    def added(terms: list[tuple[int, Any]]) -> Any:
        views = [rows(x, j) for j, x in terms]
        last, x = terms[-1]
        if len(views) == 1:
            out = views[0]
            if type(out) is not list and id(x) in open_[last]:
                made.add(id(out))
            return out
        if any(type(v) is list for v in views) or id(x) not in open_[last] or any(v.dtype is not _F64 for v in views):
            # no rows to write over: one new array per job, as sum_costs makes them (a new table
            # of many jobs' rows that outlived the call would make the allocator return memory)
            return [added_in_order([v[i] for v in views]) for i in range(len(jobs))]
        out = views[-1]
        head = views[0]
        if len(views) > 2:  # the sum of the others, left to right, in scratch memory
            head = free.scratch(out.shape)
            np.add(views[0], views[1], out=head)
            for v in views[2:-1]:
                head += v
        np.add(head, out, out=out)
        made.add(id(out))
        return out

    fields: dict[str, Any] = {"kind": first.kind, "device": sources[0].device, "flop": 0.0}
    if not inputs:
        fields["static_power_w"] = rows(sources[0].static_power_w, 0)
    main = first.main
    fields["extra"] = {} if main is None else {k: rows(x, main) for k, x in sources[main].extra.items()}
    for name in _INPUT_ARRAYS if inputs else _SUMMED_ARRAYS:
        fields[name] = added([(j, getattr(src, name)) for j, src in enumerate(sources)])
    for name in _INPUT_DICTS if inputs else _SUMMED_DICTS:
        terms: dict[str, list[tuple[int, np.ndarray]]] = {}
        for j, src in enumerate(sources):
            for k, x in getattr(src, name).items():
                terms.setdefault(k, []).append((j, x))
        fields[name] = {k: added(v) for k, v in terms.items()}
    if inputs:
        out = PowerInputs.from_fields({k: fields[k] for k in PowerInputs.FIELDS})
        free.made(out, made)
        return out, len(jobs), list(range(len(jobs)))
    dispatch = [(j, src.dispatch_s) for j, src in enumerate(sources) if src.dispatch_s is not None]
    fields["dispatch_s"] = added(dispatch) if dispatch else None
    out = CostArrays.from_fields(fields)
    free.made(out, made)
    return out, len(jobs), list(range(len(jobs)))


class _Writable:
    """Which arrays of the stacked costs :func:`_sum_views` reads may take sums over their rows:
    ``uses``, how many jobs read each part (a part read by two keeps its rows); of a class's
    stacked cost, each writeable array that shares its memory with no other array of that cost (the
    rows of a part are then read by nothing else once its job is summed); of a sum, the arrays it
    wrote or passed on from such arrays."""

    def __init__(self, uses: dict[int, int]) -> None:
        self.uses = uses
        self._arrays: dict[int, frozenset[int]] = {}
        self._scratch: np.ndarray | None = None

    def scratch(self, shape: tuple[int, int]) -> np.ndarray:
        """Float64 memory of ``shape`` for a sum's first terms, reused by every sum: one block per
        pass instead of one short-lived table per field (freeing a table of 64 KiB or more makes the
        allocator consolidate and return memory, which later allocations fault back in)."""
        size = shape[0] * shape[1]
        if self._scratch is None or self._scratch.size < size:
            self._scratch = np.empty(size)
        return self._scratch[:size].reshape(shape)

    def arrays(self, c: CostArrays) -> frozenset[int]:
        """The ids of the arrays of ``c`` whose rows a sum may write."""
        got = self._arrays.get(id(c))
        if got is None:
            got = self._arrays[id(c)] = _sole_arrays(c)
        return got

    def made(self, c: CostArrays, ids: set[int]) -> None:
        """Records the arrays of the sum ``c`` that a later sum may write."""
        self._arrays[id(c)] = frozenset(ids)


def _sole_arrays(c: CostArrays) -> frozenset[int]:
    """The ids of the writeable arrays of ``c`` whose memory overlaps no other array's of ``c`` (an
    array that two fields hold, or that views another's memory, is written by neither), each
    viewing memory an array owns (not a buffer of another kind of object). Only arrays that view
    the memory of one owner are compared, by the bytes they span."""
    arrays = [v for v in c.__dict__.values() if isinstance(v, np.ndarray)]
    arrays += [x for v in c.__dict__.values() if isinstance(v, dict) for x in v.values()]
    by_owner: dict[int, list[int]] = {}
    foreign = set()
    for i, x in enumerate(arrays):
        while isinstance(x.base, np.ndarray):
            x = x.base
        if x.base is not None:  # memory of another kind of object: never written
            foreign.add(i)
        by_owner.setdefault(id(x), []).append(i)
    shared: set[int] = set()
    for members in by_owner.values():
        if len(members) > 1:
            shared.update(_overlapping([arrays[i] for i in members], members))
    return frozenset(id(x) for i, x in enumerate(arrays)
                     if i not in shared and i not in foreign and x.flags.writeable)


def _overlapping(arrays: list[np.ndarray], ids: list[int]) -> set[int]:
    """The ``ids`` of the ``arrays`` whose bytes overlap another's (with its chain of overlapping
    neighbours, by where they start)."""
    shared: set[int] = set()
    run: list[int] = []
    end = -1
    for lo, hi, i in sorted((*byte_bounds(x), i) for x, i in zip(arrays, ids, strict=True)):
        if lo >= end:
            run = []
        run.append(i)
        if len(run) > 1:
            shared.update(run)
        end = max(end, hi)
    return shared


_F64 = np.dtype(np.float64)


def _row_pick(rows: list[int]) -> slice | np.ndarray:
    """What picks ``rows`` out of a (rows, points) table: a slice where they are evenly spaced
    (a view), else their index (a gather)."""
    start, step = rows[0], rows[1] - rows[0] if len(rows) > 1 else 1
    if step > 0 and rows == list(range(start, start + step * len(rows), step)):
        return slice(start, start + step * (len(rows) - 1) + 1, step)
    return np.asarray(rows)


def _take_index(c: CostArrays, index: np.ndarray | slice) -> CostArrays:
    """``c`` with every array taken at ``index`` (stacked rows: an index array gives copies, a slice
    views of the same values)."""
    pick = (lambda x: x[index]) if type(index) is slice else (lambda x: x.take(index))
    fields: dict[str, Any] = {}
    for name, v in c.__dict__.items():
        if isinstance(v, np.ndarray):
            v = pick(v)
        elif isinstance(v, dict):
            v = {k: pick(x) for k, x in v.items()}
        fields[name] = v
    return CostArrays.from_fields(fields)


def _take(c: CostArrays, rows: list[int], h: int) -> CostArrays:
    """The stacked cost of the ops ``rows`` of the stacked ``c`` (``h`` points each), in that order:
    views of its rows where ``rows`` is one ascending run (a class's whole ops follow the kernels of
    its convolutions, which run first), copies otherwise."""
    if rows[-1] - rows[0] == len(rows) - 1:
        return _take_index(c, slice(rows[0] * h, (rows[-1] + 1) * h))
    return _take_index(c, (np.asarray(rows)[:, None] * h + np.arange(h)).reshape(-1))


def _retag(c: CostArrays | CostTotals, kind: str, flop: float) -> CostArrays | CostTotals:
    """``dataclasses.replace(c, kind=kind, flop=flop)``: a shallow copy with two fields changed."""
    return type(c).from_fields({**c.__dict__, "kind": kind, "flop": flop})


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

    def finish_totals(self, governed: list[CostArrays]) -> CostTotals:
        """:meth:`finish_governed`'s :class:`~archsim.cost.types.CostTotals`: the same picks, over those
        fields alone (the same arrays, or the same values where a pick mixes the candidates)."""
        done = iter(governed)
        out = None
        for mask, _, w in self.configs:
            c = CostTotals.of(next(done))
            if w is not None:
                b = CostTotals.of(next(done))
                use_b = b.latency_s < c.latency_s
                c = _select_totals(use_b if self.allowed is None else use_b & self.allowed, c, b)
            out = c if out is None else _select_totals(mask, out, c)
        return out


def _select_totals(use_b: np.ndarray, a: CostTotals, b: CostTotals) -> CostTotals:
    """``gc.select(use_b, a, b)`` (:func:`archsim.cost.gpu.pick_timed`'s choice) of the totals' fields:
    per point ``b``'s values where ``use_b`` else ``a``'s, a key missing on one side counted as 0, in
    the keys' order there; ``a``'s kind and FLOP. Where every point takes one side whose arrays are
    float64 arrays of the points, its arrays themselves (zeros for a key only the other side has)."""
    shape = use_b.shape
    side = b if use_b.all() else a if not use_b.any() else None
    arrays = [side.latency_s, *side.energy_breakdown_j.values(), *side.flop_by_unit.values()] if side else []
    if side is not None and all(type(v) is np.ndarray and v.dtype == np.float64 and v.shape == shape for v in arrays):
        zero = np.zeros(shape)

        def sel(x: dict[str, np.ndarray], y: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
            picked = y if side is b else x
            return {k: picked.get(k, zero) for k in dict.fromkeys([*x, *y])}

        latency = side.latency_s
    else:
        def sel(x: dict[str, np.ndarray], y: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
            return {k: np.where(use_b, y.get(k, 0.0), x.get(k, 0.0)) for k in dict.fromkeys([*x, *y])}

        latency = np.where(use_b, b.latency_s, a.latency_s)
    return CostTotals.from_fields({"kind": a.kind, "flop": a.flop, "latency_s": latency,
                                   "energy_breakdown_j": sel(a.energy_breakdown_j, b.energy_breakdown_j),
                                   "flop_by_unit": sel(a.flop_by_unit, b.flop_by_unit)})


def _build(ops: Sequence[Any], p: GPUParams, stack_finals: bool = False, keep_finals: bool = False,
           inputs: bool = False) -> tuple[_Planner, list[CostArrays | _Autotuned | _Gemm | _Stream]]:
    """The planner and each op's cost; with ``stack_finals`` or ``keep_finals``, an op that is one
    kernel of a class gets its request, whose ``result`` is set once its stacked cost is cut
    (:func:`governed_many`); with ``stack_finals``, a convolution summed from stacked rows gets its
    :class:`_Conv` too (:meth:`_Planner.run_jobs`). With ``inputs``, a convolution summed from row
    views has its :class:`~archsim.cost.types.PowerInputs` (:meth:`_Planner.run_sums`)."""
    planner = _Planner(p, stack_finals, keep_finals)
    plans = [planner.plan(op) for op in ops]
    planner.run()
    if stack_finals:
        return planner, [plan if isinstance(plan, (_Gemm, _Stream, _Conv)) else plan() if callable(plan) else plan
                         for plan in plans]
    planner.run_sums(inputs)
    return planner, [(plan if keep_finals else plan.result) if isinstance(plan, (_Gemm, _Stream)) else plan.ungoverned()
                     if isinstance(plan, _Conv) else plan() if callable(plan) else plan for plan in plans]


def governed_many(ops: Sequence[Any], p: GPUParams, point: int | None = None,
                  totals: bool = False) -> list[CostArrays] | list[OpCost] | list[CostTotals]:
    """Every op of ``ops`` at its governed clock: ``power.apply(cost_many(ops, p), p, gpu=True)``,
    with each autotuned convolution's candidates governed in the same pass of the power model (the
    governor prices each (op, point) row on its own, so the picked candidate's row is the row its
    pick would give).

    With ``point`` (an index into the points of ``p``), each op's one-point cost at that point
    instead, ``[c.at(point, "", "") for c in governed_many(ops, p)]`` to the bit: the ops that are
    one kernel of a class are read from their class's governed rows (:func:`~archsim.cost.types.
    stacked_at`) without being cut into per-op arrays first (a single estimate).

    With ``totals`` (no ``point``), each op's :class:`~archsim.cost.types.CostTotals` instead: the
    same arrays of those fields, the ops that are one kernel of a class cut into those fields alone
    and the autotuned convolutions picked over them (what a graph's totals read)."""
    from archsim.cost import power

    if totals and point is not None:
        raise ValueError("governed_many: totals and point exclude each other")
    # With totals beyond a few points, the convolutions summed from row views enter the power model
    # as the fields it reads (PowerInputs), which hands back their totals' fields alone.
    planner, built = _build(ops, p, stack_finals=p.n <= STACKED_SUM_POINTS, keep_finals=True, inputs=totals)
    # The ops that are one kernel of a class enter the power model as their class's stacked rows
    # (power.apply's counts): no cutting into ops before it and no re-stacking in it.
    # At a few points convolutions enter it as their stacked sums (planner.run_jobs): no cutting of
    # their kernels into ops and no sum op by op; at more points as their sums of row views.
    flat = [x for c in built if not isinstance(c, (_Gemm, _Stream, _Conv))
            for x in (c.costs() if isinstance(c, _Autotuned) else (c,))]
    stacked = planner.stacked + (planner.run_jobs() if planner.stack_finals else [])
    counts = [len(reqs) for _, reqs in stacked] + [1] * len(flat)
    # With totals beyond a few points every governed cost is read for the totals' fields alone.
    done = power.apply([c for c, _ in stacked] + flat, p, gpu=True, counts=counts,
                       totals=totals and not planner.stack_finals)
    # point: each whole-op request's one-point cost (request id -> OpCost), with its op's kind and
    # FLOP as the retag below would give them.
    # A convolution of one configuration without a Winograd candidate is its main job's sum: its
    # block is read the same way when every job of the block is such a sum (job id -> convolution).
    pointed: dict[int, OpCost] = {}
    tags: dict[int, tuple[str, float]] = {}
    plain: dict[int, _Conv] = {}
    # point, blocks of sums with Winograd candidates: job id -> (job, its values at the point
    # (stacked_rows), its block, its row there)
    read: dict[int, tuple[_SumJob, tuple[Any, ...], CostArrays, int]] = {}
    if point is not None:
        for op, c in zip(ops, built, strict=True):
            if isinstance(c, (_Gemm, _Stream, _Conv)):
                tags[id(c)] = (op.kind, planner.flop(op))
            if isinstance(c, _Conv) and c.winograd is None:
                plain[id(c.main)] = c
    for (_, reqs), c in zip(stacked, done, strict=False):
        sums = isinstance(reqs[0], _SumJob)  # a block is all requests or all sums
        if point is not None and (not sums or all(id(q) in plain for q in reqs)):
            owners = [plain[id(q)] for q in reqs] if sums else reqs
            kinds, flops = [], []
            for q, owner in zip(reqs, owners, strict=True):
                row_kind, row_flop = (q.kind, q.flop) if sums else (c.kind, c.flop)
                kind, flop = tags[id(owner)]
                same = row_kind == kind and row_flop == flop  # the final loop's retag
                kinds.append(row_kind if same else kind)
                flops.append(row_flop if same else flop)
            pointed.update(zip(map(id, owners), stacked_at(c, len(reqs), p.n, point, kinds, flops), strict=True))
            continue
        if point is not None:  # sums with Winograd candidates among them: read at the point, picked below
            rows = stacked_rows(c, len(reqs), p.n, point)
            read.update((id(q), (q, row, c, j)) for j, (q, row) in enumerate(zip(reqs, rows, strict=True)))
            continue
        per_op = {"kind": [q.kind for q in reqs], "flop": [q.flop for q in reqs]} if sums else None
        for q, result in zip(reqs, _split(c, len(reqs), p.n, per_op=per_op,
                                          into=CostTotals if totals and not sums else None), strict=True):
            q.result = result
    if read:
        allowed = bool(p.conv_autotune[point] > 0)
        for c in built:
            if isinstance(c, _Conv) and id(c.main) in read:
                pointed[id(c)] = _conv_at(c, read, tags[id(c)], allowed, p.n, point)
    governed = iter(done[len(stacked):])
    out = []
    for op, c in zip(ops, built, strict=True):
        if id(c) in pointed:
            out.append(pointed[id(c)])
            continue
        if isinstance(c, (_Gemm, _Stream)):
            c = c.result
        elif isinstance(c, _Conv):
            c = c.finish()
        elif isinstance(c, _Autotuned):
            c = (c.finish_totals if totals else c.finish_governed)([next(governed) for _ in c.costs()])
        else:
            c = next(governed)
        if totals and type(c) is not CostTotals:
            c = CostTotals.of(c)
        flop = planner.flop(op)
        c = c if (c.kind == op.kind and c.flop == flop) else _retag(c, op.kind, flop)
        out.append(c if point is None else c.at(point, "", ""))
    return out


def _conv_at(conv: _Conv, read: dict[int, tuple[_SumJob, tuple[Any, ...], CostArrays, int]],
             tag: tuple[str, float], allowed: bool, h: int, i: int) -> OpCost:
    """The one-point cost of a row-stacked convolution at point ``i``, from its jobs' values there
    (``read``, :func:`~archsim.cost.types.stacked_rows`): ``conv.finish()`` retagged with the op's
    kind and FLOP (``tag``) and read with ``at(i)``, to the bit, without cutting the blocks into
    ops. ``allowed``: whether the software times Winograd at the point (``conv.allowed[i]``).

    With a Winograd candidate, the pick of :meth:`_Autotuned.finish_governed` at the point: the
    candidate of the smaller governed latency (Winograd where allowed and strictly faster), its
    values, keys only the other has as 0 (``gpu.select``); the implicit GEMM's static power, kind
    and FLOP; its tile facts NaN where Winograd is picked, ``winograd`` 1 or 0, and the picked
    candidate's governor entries last (``gpu.pick_timed``)."""
    from archsim.cost.power import EXTRA_KEYS

    q, row, stack, j = read[id(conv.main)]
    kind, flop = tag
    if not (q.kind == kind and q.flop == flop):  # the final retag of governed_many
        q_kind, q_flop = kind, flop
    else:
        q_kind, q_flop = q.kind, q.flop
    if conv.winograd is None:
        return _point_cost("", "", q_kind, stack.device, q_flop, bool(stack.flop_by_unit), *row,
                           lambda: stack.bounds()[j * h + i])
    a, b = row, read[id(conv.winograd)][1]
    use_b = b[3] < a[3] and allowed  # latencies: the governed times the library compares
    side = b if use_b else a

    def sel(x: dict[str, float], y: dict[str, float]) -> dict[str, float]:
        picked = y if use_b else x
        return {k: picked.get(k, 0.0) for k in dict.fromkeys([*x, *y])}

    times, breakdown, extra, by_unit, levels, reads, writes = (sel(a[n], b[n]) for n in (0, 1, 2, 5, 6, 7, 8))
    nan = float("nan")
    extra = {**{k: nan if use_b else v for k, v in a[2].items() if k not in EXTRA_KEYS},
             "winograd": 1.0 if use_b else 0.0, **{k: extra[k] for k in EXTRA_KEYS if k in extra}}
    dispatch = None if a[4] is None and b[4] is None else 0.0 if side[4] is None else side[4]
    latency = side[3]

    def array_bound() -> str:  # CostArrays.bounds of the picked cost at this point (a NaN time)
        one = {k: np.array([v]) for k, v in times.items()}
        return _one_point_bound(one, latency, dispatch)

    return _point_cost("", "", q_kind, stack.device, q_flop, bool(by_unit), times, breakdown, extra, latency,
                       dispatch, by_unit, levels, reads, writes, side[9], side[10], side[11], side[12], a[13],
                       array_bound)


def _one_point_bound(times: dict[str, np.ndarray], latency: float, dispatch: float | None) -> str:
    """:meth:`CostArrays.bounds` of a one-point cost with these times, latency and host dispatch."""
    one = np.array([latency])
    return CostArrays.from_fields(dict(
        kind="", device="gpu", flop=0.0, latency_s=one, time_by_unit_s=times, bytes_by_level={}, flop_by_unit={},
        read_bytes={}, write_bytes={}, dram_activations=one, link_bytes=one, overhead_s=one, launches=one,
        energy_breakdown_j={}, static_power_w=one, extra={},
        dispatch_s=None if dispatch is None else np.array([dispatch]))).bounds()[0]


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
