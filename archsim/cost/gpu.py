"""Cost of an op on GPUs (vectorised over hardware points).

* GEMM and convolution (implicit GEMM, cuDNN's IMPLICIT_GEMM algorithm; depthwise convolutions run
  a memory-bound direct kernel) go through the tiled-kernel model of :func:`archsim.cost.kernels.gpu_gemm`
  on Tensor Cores when the device rates the precision there, else on the CUDA cores; DRAM traffic
  is the L2 tiling model of :mod:`archsim.cost.traffic`.
* GEMV, elementwise, reductions, normalisations, pooling, embedding, copies and optimizer steps are
  streaming kernels (:func:`archsim.cost.kernels.gpu_stream`): compulsory bytes at L2 and DRAM.
* Fused attention streams K and V per Q block (flash-style traffic); unfused attention is the sum
  of its decomposed kernels.

The unit of a matrix product (GEMM, convolution, attention) is chosen by its math precision, the
op's ``compute_dtype`` (storage ``dtype`` when unset): the Tensor Cores when they list it, else the
CUDA cores' lanes of that precision, so fp16 storage with fp32 math runs at the fp32 rate. A math
precision that neither unit lists (fp16 on a Fermi GTX 580, bf16 on Volta) is an
:class:`~archsim.errors.EngineError` naming the precisions the GPU does run: it is never priced
faster than fp32. A streaming op's precision the CUDA cores do not list runs at the fp32 lane rate
and is priced at the fp32 energy: frameworks up-convert such elementwise work.

The accumulator (an op's ``accumulate_dtype``; default fp32 / int32) keys the Tensor Core rate and MAC
energy with the input precision: fp16 accumulation of fp16 / fp8 inputs takes
``tensor_core.fp16_accumulate_flop_per_cycle_per_sm`` (GeForce: twice the fp32-accumulate rate) and
``energy.tensor_flop_fp16_accumulate``, counted under ``"tensor:<input>:fp16"``; the default keeps
``"tensor:<input>"`` and today's tables. CUDA-core math is not affected.

Register-file traffic (for energy) is 3 operand accesses per 2 vector FLOP (an FMA reads two
operands and the accumulator... counted as 1.5 elements per FLOP) plus, for tiled kernels, each
shared-memory byte written into and read out of registers once (2 x the L1 bytes).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from archsim.cost import kernels as kn
from archsim.cost import traffic as tr
from archsim.cost.common import elem_bytes, flop_classes, io_bytes, precision_of, sum_costs
from archsim.cost.params import GPUParams
from archsim.cost.types import CostArrays
from archsim.energy import EnergyPrices, account
from archsim.errors import EngineError
from archsim.hardware.gpu import MMA_OPERAND_BYTES_PER_FLOP

__all__ = ["cost"]

_LEVELS = ("register", "l1", "l2", "dram")


def _prices(p: GPUParams, zero: np.ndarray | None = None) -> dict[str, Any]:
    """The energy prices of ``p`` (no link: ``zero``, an array of zeros of the points, when given)."""
    return dict(
        read_j_per_byte={"register": p.register_j_per_byte, "l1": p.l1_read_j_per_byte,
                         "l2": p.l2_read_j_per_byte, "dram": p.dram_read_j_per_byte},
        write_j_per_byte={"register": p.register_j_per_byte, "l1": p.l1_write_j_per_byte,
                          "l2": p.l2_write_j_per_byte, "dram": p.dram_write_j_per_byte},
        activation_j=p.dram_activation_j, link_j_per_byte=np.zeros(p.n) if zero is None else zero,
        static_power_w=p.static_power_w)


def _vector_key(p: GPUParams, prec: str) -> str:
    """The CUDA-core precision that runs ``prec`` (fp32 when the lanes table lacks it)."""
    return prec if (p.vector_flop_per_cycle_per_sm[prec] > 0).all() else "fp32"


def _finish(op: Any, p: GPUParams, times: dict[str, np.ndarray], kernel_s: np.ndarray, overhead: np.ndarray,
            launches: np.ndarray, level_bytes: dict[str, np.ndarray], wfrac: dict[str, float | np.ndarray],
            flop_units: dict[str, np.ndarray], extra: dict[str, np.ndarray]) -> CostArrays:
    """Assemble a :class:`CostArrays`: latency, read/write split, DRAM activations, energy."""
    return assemble(op.kind, float(op.flop()), p, times, kernel_s, overhead, launches, level_bytes, wfrac,
                    flop_units, extra)


def assemble(kind: str, flop: float, p: GPUParams, times: dict[str, np.ndarray], kernel_s: np.ndarray,
             overhead: np.ndarray, launches: np.ndarray, level_bytes: dict[str, np.ndarray],
             wfrac: dict[str, float | np.ndarray], flop_units: dict[str, np.ndarray],
             extra: dict[str, np.ndarray]) -> CostArrays:
    """:func:`_finish` for a kernel given by its kind and FLOP (rows of ``p`` may be stacked ops)."""
    if p.n >= ASSEMBLE_ROWS_MIN:  # many rows: compiled, where it covers them
        rows = _assembled_rows(kind, flop, p, times, kernel_s, overhead, launches, level_bytes, wfrac, flop_units,
                               extra)
        if rows is not None:
            return rows
    zero = np.zeros(p.n)  # no link: its bytes and price (only read)
    prices = _prices(p, zero)
    flop_j = {key: _flop_price(p, key) for key in flop_units}
    # The host's dispatch of the launches overlaps the previous kernels (asynchronous launches) and
    # is exposed only where it outlasts this kernel plus its launch latency (archsim.cost.dispatch).
    # The first launch carries p.host_dispatch_s (the operator's dispatch, or the launch API call
    # alone in a continuation pack, GPUParams.continuation); each further one the launch API call.
    dispatch = p.host_dispatch_s + np.maximum(launches - 1.0, 0.0) * p.host_launch_s
    device_s = kernel_s + overhead
    host_bound = dispatch > device_s
    latency, overhead = _host_bound(host_bound, dispatch, device_s, kernel_s, overhead)
    reads, writes = _split_reads(level_bytes, wfrac)
    # Streaming access opens each DRAM row once (a row buffer's worth of bytes per activation).
    activations = level_bytes["dram"] / p.dram_row_buffer_bytes
    energy = account(EnergyPrices(flop_j=flop_j, **prices), flop_units, reads, writes, activations, zero, latency)
    if (p.tensor_operand_flop_j > 0.0).any():
        # Operand delivery inside the Tensor Cores: per 16-bit MMA FLOP, scaled by each precision's
        # operand bytes per FLOP; data movement, reported apart from the MAC energies ("compute").
        operand = [flop_units[k] * _operand_ratio(k) for k in flop_units if k.startswith("tensor:")]
        if operand:
            energy["tensor_operand"] = sum(operand[1:], operand[0]) * p.tensor_operand_flop_j
    times = {**times, "overhead": overhead}
    return CostArrays.from_fields(dict(
        kind=kind, device="gpu", flop=flop, latency_s=latency, time_by_unit_s=times, bytes_by_level=level_bytes,
        flop_by_unit=flop_units, read_bytes=reads, write_bytes=writes, dram_activations=activations, link_bytes=zero,
        overhead_s=overhead, launches=launches, energy_breakdown_j=energy, static_power_w=p.static_power_w,
        extra=extra, dispatch_s=dispatch))


ASSEMBLE_ROWS_MIN = 256
"""Fewest rows (stacked ops x points, of a pack of several points) from which :func:`assemble` runs compiled
(:func:`_assembled_rows`): below, its array code costs less than the call; a pack of one point never does."""


def _flop_price(p: GPUParams, key: str) -> np.ndarray:
    """The energy per FLOP of a FLOP-by-unit key (:func:`assemble`'s prices): ``"special"``, ``"vector:<prec>"``,
    ``"tensor:<input>"`` (fp32 / int32 accumulate) or ``"tensor:<input>:fp16"`` (fp16 accumulate, tensor_key)."""
    unit, _, prec = key.partition(":")
    prec, _, acc = prec.partition(":")
    return (p.special_flop_j if unit == "special"
            else (p.tensor_fp16_accumulate_flop_j if acc else p.tensor_flop_j)[prec] if unit == "tensor"
            else p.vector_flop_j[prec])


def _operand_ratio(key: str) -> float:
    """A Tensor-Core FLOP-by-unit key's operand bytes per FLOP over those of a 16-bit MMA (the scale of
    :func:`assemble`'s operand energy)."""
    return MMA_OPERAND_BYTES_PER_FLOP[key.split(":")[1]] / MMA_OPERAND_BYTES_PER_FLOP["fp16"]


def _rows_of(x: Any, n: int) -> np.ndarray | None:
    """``x`` when it is a float64 array of ``n`` values (a C-contiguous, writable one as it is, another copied:
    the compiled code is specialised for those), else ``None``."""
    if type(x) is not np.ndarray or x.dtype != np.float64 or x.shape != (n,):
        return None
    return x if x.flags.c_contiguous and x.flags.writeable else x.copy()


def _assemble_points(base: GPUParams) -> np.ndarray:
    """:func:`~archsim.cost.gemm_search.assemble_rows`' point table of the pack ``base``, kept on it."""
    from archsim.cost import gemm_search as engine

    def build() -> np.ndarray:
        return kn._frozen(np.array([getattr(base, f) for f in engine.ASSEMBLE_POINT_FIELDS], dtype=np.float64))

    return kn._kept(base, ("assemble_points",), engine.ASSEMBLE_POINT_FIELDS, build)


def _assembled_rows(kind: str, flop: float, p: GPUParams, times: dict[str, np.ndarray], kernel_s: np.ndarray,
                    overhead: np.ndarray, launches: np.ndarray, level_bytes: dict[str, np.ndarray],
                    wfrac: dict[str, float | np.ndarray], flop_units: dict[str, np.ndarray],
                    extra: dict[str, np.ndarray]) -> CostArrays | None:
    """:func:`assemble` in one compiled pass over the rows (:func:`~archsim.cost.gemm_search.assemble_rows`),
    the same floats, for the rows of a pack of several points (``p``, or ``p`` tiled for stacked ops)
    with at least :data:`ASSEMBLE_ROWS_MIN` rows, float64 arrays of the rows, the four GPU levels with
    the register file's write share a number, at most three FLOP units and finite FLOP prices;
    ``None`` otherwise (the array code then runs, and raises what it raises)."""
    from archsim.cost import gemm_search as engine

    n = p.n
    if n < ASSEMBLE_ROWS_MIN:
        return None
    base = getattr(p, "_base", p)
    h = base.n
    if h < 2 or n % h or tuple(level_bytes) != _LEVELS or not 0 < len(flop_units) <= 3:
        return None
    register_w = wfrac.get("register", 0.0)
    if type(register_w) is not float:
        return None
    arrays = [_rows_of(x, n) for x in (kernel_s, overhead, launches, p.host_dispatch_s, *level_bytes.values(),
                                         wfrac.get("l1"), wfrac.get("l2"), wfrac.get("dram"), *flop_units.values())]
    if any(x is None for x in arrays):
        return None
    prices = [_flop_price(base, key) for key in flop_units]
    if not all(np.isfinite(x).all() for x in prices):
        return None
    # Operand delivery inside the Tensor Cores (assemble): each Tensor-Core unit's FLOP scaled by its ratio.
    priced = bool((base.tensor_operand_flop_j > 0.0).any())
    ratios = np.array([_operand_ratio(k) if priced and k.startswith("tensor:") else np.nan for k in flop_units],
                      dtype=np.float64)
    operand = priced and bool((ratios == ratios).any())
    flops = arrays[11:]
    flops += [flops[0]] * (3 - len(flops))
    # One array per figure, not one (figures, rows) block: the ops' costs keep row views of them, and a
    # block is freed only with its last view, in one piece large enough for glibc at its default
    # thresholds to hand back to the system and fault in again on the next call (a sweep's chunks).
    out = tuple([np.empty(n) for _ in engine.ASSEMBLE_OUT_FIELDS])
    same = level_bytes["l1"] is level_bytes["l2"] and wfrac["l1"] is wfrac["l2"]
    engine.assemble_rows(*arrays[:8], register_w, *arrays[8:11], same, *flops, len(flop_units),
                         np.array(prices, dtype=np.float64), ratios, operand, _assemble_points(base), out)
    (dispatch, latency, overhead, activations, r_reg, r_l1, r_l2, r_dram, w_reg, w_l1, w_l2, w_dram,
     *energy) = out
    if same:
        r_l1, w_l1 = r_l2, w_l2
    keys = ("compute", *_LEVELS, "static", "tensor_operand") if operand else ("compute", *_LEVELS, "static")
    zero = np.zeros(n)  # no link
    return CostArrays.from_fields(dict(
        kind=kind, device="gpu", flop=flop, latency_s=latency, time_by_unit_s={**times, "overhead": overhead},
        bytes_by_level=level_bytes, flop_by_unit=flop_units,
        read_bytes=dict(zip(_LEVELS, (r_reg, r_l1, r_l2, r_dram), strict=True)),
        write_bytes=dict(zip(_LEVELS, (w_reg, w_l1, w_l2, w_dram), strict=True)), dram_activations=activations,
        link_bytes=zero, overhead_s=overhead, launches=launches,
        energy_breakdown_j=dict(zip(keys, energy[:len(keys)], strict=True)),
        static_power_w=p.static_power_w, extra=extra, dispatch_s=dispatch))


def _host_bound(host_bound: np.ndarray, dispatch: np.ndarray, device_s: np.ndarray, kernel_s: np.ndarray,
                overhead: Any) -> tuple[np.ndarray, Any]:
    """(latency, overhead) in s: ``np.where(host_bound, dispatch, device_s)`` and ``np.where(host_bound,
    dispatch - kernel_s, overhead)``; where the host binds at no point, ``device_s`` and ``overhead``
    as they are (the same floats, without the copies) when both are float64 arrays of the points."""
    if (not host_bound.any() and type(overhead) is np.ndarray and overhead.dtype == np.float64
            and overhead.shape == device_s.shape == host_bound.shape and device_s.dtype == np.float64):
        return device_s, overhead
    return np.where(host_bound, dispatch, device_s), np.where(host_bound, dispatch - kernel_s, overhead)


def _split_reads(level_bytes: dict[str, np.ndarray],
                 wfrac: dict[str, float | np.ndarray]) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """(read, written) bytes per level: ``level_bytes[lv] * (1.0 - w)`` and ``level_bytes[lv] * w``
    with ``w = wfrac.get(lv, 0.0)``. A kernel's levels often share their bytes and write share (a
    streaming kernel's L1 and L2): each distinct product, and ``1.0 - w`` of each distinct share, is
    computed once and shared by the levels that have it (only read, as every cost's arrays)."""
    reads: dict[str, np.ndarray] = {}
    writes: dict[str, np.ndarray] = {}
    kept: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}
    rest: dict[int, Any] = {}
    for lv, v in level_bytes.items():
        w = wfrac.get(lv, 0.0)
        pair = kept.get((id(v), id(w)))
        if pair is None:
            r = rest.get(id(w))
            if r is None:
                r = rest[id(w)] = 1.0 - w
            pair = kept[(id(v), id(w))] = (v * r, v * w)
        reads[lv], writes[lv] = pair
    return reads, writes


def _gemm_like(op: Any, p: GPUParams, shape: tr.GemmShape, dram_bytes: np.ndarray, a_stream: np.ndarray,
               extra_vector_flop: float, extra_dram_bytes: float, wfrac: float,
               library: str = kn.GEMM_LIBRARY) -> CostArrays:
    mm = float(op.flop_breakdown().get("matmul", 0))
    parts = gemm_parts(p, precision_of(op), op.label, shape.m, shape.n, shape.k, shape.batch, shape.a_bytes,
                       shape.b_bytes, shape.c_bytes, dram_bytes + extra_dram_bytes, a_stream, extra_vector_flop, mm,
                       library=library, accumulate=narrow_accumulate(op))
    return _finish(op, p, *parts)


def narrow_accumulate(op: Any) -> str | None:
    """``"fp16"`` when the op's matrix products accumulate in fp16 (``accumulate_dtype="fp16"``), else
    ``None`` (the default wide accumulator, fp32 or int32, however it was spelled)."""
    # fp16 is the one narrow accumulator (ACCUMULATE_DTYPES): an explicit "fp32" is the default.
    return "fp16" if getattr(op, "accumulate_dtype", None) == "fp16" else None


def tensor_key(prec: str, accumulate: str | None) -> str:
    """The FLOP-by-unit key of Tensor-Core work: ``"tensor:fp16"`` (fp32 accumulate) or
    ``"tensor:fp16:fp16"`` (fp16 accumulate, priced at ``energy.tensor_flop_fp16_accumulate``)."""
    return f"tensor:{prec}" if accumulate is None else f"tensor:{prec}:{accumulate}"


def tensor_rate_of(p: GPUParams, prec: str, accumulate: str | None = None) -> np.ndarray:
    """Tensor-Core FLOP/cycle/SM of inputs ``prec`` accumulated in ``accumulate`` (None: fp32/int32)."""
    table = p.tensor_flop_per_cycle_per_sm if accumulate is None else p.tensor_fp16_accumulate_flop_per_cycle_per_sm
    return table[prec]


def gemm_unit(p: GPUParams, prec: str, label: str, accumulate: str | None = None,
              library: str = kn.GEMM_LIBRARY) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(uses Tensor Cores, FLOP/cycle/SM, efficiency) of a GEMM of precision ``prec`` at each point;
    ``accumulate="fp16"`` takes the Tensor Cores' fp16-accumulate rate (:func:`tensor_rate_of`).
    A convolution library's kernels (``library`` not the GEMM library) on the CUDA cores run at
    ``efficiency.conv_vector_efficiency``: their im2col address arithmetic shares the FP32 cores
    on SMs without INT32 cores of their own."""
    tensor_rate = tensor_rate_of(p, prec, accumulate)
    vector_rate = p.vector_flop_per_cycle_per_sm[prec]
    use_tc = tensor_rate > 0
    rate = np.where(use_tc, tensor_rate, vector_rate)
    if (rate <= 0).any():
        runs = [q for q in p.tensor_flop_per_cycle_per_sm
                if np.all((p.tensor_flop_per_cycle_per_sm[q] > 0) | (p.vector_flop_per_cycle_per_sm[q] > 0))]
        raise EngineError(f"{label}: compute_dtype {prec!r} has no math unit on this GPU (neither Tensor Cores nor "
                          f"CUDA cores run it); allowed: {', '.join(runs)} (e.g. compute_dtype='fp32' for "
                          "fp32 math on narrower storage)")
    vector_eff = p.vector_efficiency if library == kn.GEMM_LIBRARY else p.conv_vector_efficiency
    return use_tc, rate, np.where(use_tc, p.tensor_efficiency, vector_eff)


def gemm_parts(p: GPUParams, prec: str, label: str, m: Any, n: Any, k_dim: Any, batch: Any, a_b: Any, b_b: Any,
               c_b: Any, dram_bytes: np.ndarray, a_stream: np.ndarray, extra_vector_flop: Any, mm: Any,
               kernel: kn.GemmKernel | None = None, library: str = kn.GEMM_LIBRARY,
               accumulate: str | None = None,
               unit: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None) -> tuple:
    """The pieces :func:`assemble` takes for a tiled GEMM kernel (shape values scalars or per-row arrays).

    ``dram_bytes`` is the L2 tiling model's DRAM traffic plus any extra bytes (bias), ``mm`` the
    matmul FLOP and ``extra_vector_flop`` the epilogue's vector FLOP. ``kernel``, when given, is the
    already predicted :func:`archsim.cost.kernels.gpu_gemm` of these rows; ``library`` the kernel
    catalogue it chooses from (``kernels.CONV_LIBRARY`` for a forward convolution); ``accumulate``
    the narrow accumulator (:func:`narrow_accumulate`; None: fp32/int32), which sets the Tensor-Core
    rate and MAC energy. ``unit``, when given, is :func:`gemm_unit` of these rows.
    """
    vkey = _vector_key(p, prec)
    vector_rate = p.vector_flop_per_cycle_per_sm[vkey]
    use_tc, rate, eff = unit if unit is not None else gemm_unit(p, prec, label, accumulate, library)
    k = kernel if kernel is not None else kn.gpu_gemm(p, m, n, k_dim, batch, a_b, b_b, c_b, rate, eff, dram_bytes,
                                                      a_stream_factor=a_stream, library=library)
    epilogue = extra_vector_flop / (vector_rate * p.clock_hz * p.vector_efficiency * p.sm_count)
    zero = np.zeros(p.n)
    times = {"compute:tensor": np.where(use_tc, k.compute_s, 0.0),
             "compute:vector": np.where(use_tc, epilogue, k.compute_s + epilogue),
             "memory:l1": k.l1_s, "memory:l2": k.l2_s, "memory:dram": k.dram_s}
    overhead = k.launches * p.launch_overhead_s + k.fill_s
    kernel_s = k.time_s - k.fill_s + epilogue
    register = 2.0 * k.l1_bytes + 1.5 * c_b * extra_vector_flop
    level_bytes = {"register": register, "l1": k.l1_bytes, "l2": k.l2_bytes, "dram": k.dram_bytes}
    out_frac = c_b * m * n * batch
    wf = {lv: (out_frac / np.maximum(level_bytes[lv], 1.0)).clip(0.0, 1.0) for lv in ("l1", "l2", "dram")}
    wf["register"] = 1.0 / 3.0
    flop_units = {tensor_key(prec, accumulate): np.where(use_tc, mm, 0.0), f"vector:{vkey}": np.where(use_tc, 0.0, mm)
                  + extra_vector_flop + zero}
    extra = {"tile_m": k.bm, "tile_n": k.bn, "split_k": k.split_k, "waves": k.waves,
             "blocks_per_sm": k.blocks_per_sm, "occupancy": k.achieved_occupancy,
             # FLOP of the whole output tiles the kernel computes (partial tiles run in full): the
             # tile-quantisation waste; the op's executed FLOP (``flop``) counts only padded channels.
             "flop_in_tiles": k.flop_executed,
             "blocks": np.ceil(m / k.bm) * np.ceil(n / k.bn) * batch * k.split_k}
    return times, kernel_s, overhead, k.launches, level_bytes, wf, flop_units, extra


def stacked_gemm_parts(p: GPUParams, base: GPUParams, prec: str, ops: np.ndarray, kernel: kn.GemmKernel,
                       use_tc: np.ndarray, accumulate: str | None = None) -> tuple:
    """:func:`gemm_parts` of G GEMMs stacked over the H points of ``base`` (``p``: ``base`` tiled, rows
    op-major), in one compiled pass (:func:`archsim.cost.gemm_search.gemm_rows`), the same floats.

    ``ops`` (G, 6): each GEMM's m, n, batch, C bytes, epilogue vector FLOP and matmul FLOP; ``kernel``
    the rows' predicted :func:`archsim.cost.kernels.gpu_gemm_grid`; ``use_tc`` (H,) the first of
    :func:`gemm_unit` of ``base`` (whether the GEMMs run on the Tensor Cores at each point)."""
    from archsim.cost import gemm_search as engine

    vkey = _vector_key(base, prec)
    points = np.array([base.vector_flop_per_cycle_per_sm[vkey], base.clock_hz, base.vector_efficiency,
                       base.sm_count, base.launch_overhead_s], dtype=np.float64)
    k = kernel
    out = tuple([np.empty(p.n) for _ in engine.GEMM_ROWS_OUT_FIELDS])  # one array per figure (_assembled_rows)
    engine.gemm_rows(np.ascontiguousarray(ops, dtype=np.float64), points, np.ascontiguousarray(use_tc, dtype=np.bool_),
                     k.time_s, k.compute_s, k.fill_s, k.launches, k.l1_bytes, k.l2_bytes, k.dram_bytes, k.bm, k.bn,
                     k.split_k, out)
    tensor, vector, overhead, kernel_s, register, w_l1, w_l2, w_dram, flop_tensor, flop_vector, blocks = out
    times = {"compute:tensor": tensor, "compute:vector": vector, "memory:l1": k.l1_s, "memory:l2": k.l2_s,
             "memory:dram": k.dram_s}
    level_bytes = {"register": register, "l1": k.l1_bytes, "l2": k.l2_bytes, "dram": k.dram_bytes}
    wf = {"l1": w_l1, "l2": w_l2, "dram": w_dram, "register": 1.0 / 3.0}
    flop_units = {tensor_key(prec, accumulate): flop_tensor, f"vector:{vkey}": flop_vector}
    extra = {"tile_m": k.bm, "tile_n": k.bn, "split_k": k.split_k, "waves": k.waves,
             "blocks_per_sm": k.blocks_per_sm, "occupancy": k.achieved_occupancy, "flop_in_tiles": k.flop_executed,
             "blocks": blocks}
    return times, kernel_s, overhead, k.launches, level_bytes, wf, flop_units, extra


def _gemm(op: Any, p: GPUParams) -> CostArrays:
    e = elem_bytes(op)
    m, n, k, batch = op.m, op.n, op.k, op.batch
    if getattr(op, "weight", False) and batch > 1:
        m, batch = m * batch, 1  # a shared weight: the batch is more rows of one GEMM
    shape = tr.GemmShape(m, n, k, batch, e, e, e)
    _, vector, _ = flop_classes(op)
    bias_bytes = e * n if getattr(op, "bias", False) else 0.0
    dram = tr.gemm_bytes(shape, p.l2_size_bytes)
    return _gemm_like(op, p, shape, dram, np.ones(p.n), vector, bias_bytes, 0.0)


WINOGRAD_TILE = 4
"""Output tile of Winograd F(4x4, 3x3): (4 + 3 - 1)^2 = 36 transformed positions per 16 outputs
(Lavin & Gray, "Fast Algorithms for Convolutional Neural Networks", CVPR 2016; cuDNN's
WINOGRAD_NONFUSED)."""

WINOGRAD_TRANSFORM = WINOGRAD_TILE + 2
"""Side of the transformed tile (6): every Winograd kernel works on 6 x 6 transformed tiles, so a
5 x 5 filter runs F(2x2, 5x5) (6 - 5 + 1 = 2 outputs per side, 36 products per 4 outputs instead of
100: 2.8x fewer multiplies), the variant of Lavin & Gray's F(m x m, r x r) family with the transform
size of F(4x4, 3x3)."""

WINOGRAD_FILTERS: tuple[tuple[int, int], ...] = ((3, 3), (5, 5))
"""Filters the Winograd path runs: cuDNN's WINOGRAD_NONFUSED forward algorithm supports 3 x 3 and
5 x 5 filters at stride 1 and dilation 1 (cuDNN Developer Guide, cudnnConvolutionForward's table of
supported configurations; DeepBench's V100/P100/T4 logs show cuDNN choosing it for 5 x 5 stride-1
layers)."""


def winograd_applies(op: Any) -> bool:
    """A forward, ungrouped, stride-1, undilated convolution with a filter of :data:`WINOGRAD_FILTERS`."""
    return (op.pass_ == "forward" and tuple(op.kernel) in WINOGRAD_FILTERS and op.stride == (1, 1)
            and op.dilation == (1, 1) and op.groups == 1)


def winograd_plan(op: Any) -> tuple[int, int, int]:
    """(transformed tile side t, output tile side m, tiles) of a Winograd convolution F(m x m, r x r),
    m = t - r + 1 (t = :data:`WINOGRAD_TRANSFORM`)."""
    t = WINOGRAD_TRANSFORM
    m = t - op.kernel[0] + 1
    tiles = op.batch * -(-op.out_height // m) * -(-op.out_width // m)
    return t, m, tiles


def _winograd(op: Any, p: GPUParams) -> CostArrays:
    """Non-fused Winograd F(m x m, r x r) on 6 x 6 tiles: input transform, filter transform, 36 batched
    GEMMs, output transform.

    Multiplies drop from r^2 per output to 36/m^2 (3x3: 2.25, 4x fewer; 5x5: 9, 2.8x fewer); each
    transform is a streaming kernel that reads a tensor and writes its transformed version (36/m^2
    times larger for activations).
    """
    t, _m, tiles = winograd_plan(op)
    c, k = op.in_channels, op.out_channels
    e = elem_bytes(op)
    prec = precision_of(op)
    x_b = op.batch * c * op.height * op.width * e
    y_b = op.batch * k * op.out_height * op.out_width * e
    w_b = k * c * op.kernel[0] * op.kernel[1] * e
    xt_b, yt_b, wt_b = tiles * c * t * t * e, tiles * k * t * t * e, k * c * t * t * e
    # B^T d B and A^T m A per tile: each transformed element is a short sum of tile entries, counted as
    # t*t vector FLOP per transformed element (the 6x6 transform's adds).
    gemm = winograd_gemm(op)
    pc = p.continuation()
    parts = [
        _stream_raw(op, p, prec, e, t * t * xt_b / e, 0.0, x_b, xt_b, np.full(p.n, x_b + xt_b)),
        _stream_raw(op, pc, prec, e, t * t * wt_b / e, 0.0, w_b, wt_b, np.full(p.n, w_b + wt_b)),
        _gemm(gemm, pc),
        _stream_raw(op, pc, prec, e, t * t * yt_b / e, 0.0, yt_b, y_b, np.full(p.n, yt_b + y_b)),
    ]
    return sum_costs(parts, op.kind, float(op.flop()))


def _pick(a: CostArrays, b: CostArrays, p: GPUParams, allowed: np.ndarray | None = None) -> CostArrays:
    """Per point, the faster of two algorithms (cuDNN's cudnnFindConvolutionForwardAlgorithm times each
    candidate on the device and picks the fastest), ``b`` only where ``allowed`` (every point when
    ``None``). Each candidate is timed at the clock it runs at: a candidate whose power the limit
    caps is timed at its lowered clock (:func:`archsim.cost.power.apply`, the governor), as the
    library's own timing sees it. The costs returned are at the nominal clock, like every op cost."""
    from archsim.cost import power

    timed_a, timed_b = power.apply([a, b], p, gpu=True)
    return pick_timed(a, b, timed_a.latency_s, timed_b.latency_s, allowed)


def pick_timed(a: CostArrays, b: CostArrays, a_s: np.ndarray, b_s: np.ndarray,
               allowed: np.ndarray | None = None, keep: tuple[str, ...] = ()) -> CostArrays:
    """:func:`_pick` given each candidate's time as the library measures it (``a_s``, ``b_s``).

    ``a``'s tile facts (``extra``) are NaN where ``b`` is picked, except the ``keep`` entries, which
    are taken from the picked candidate (the governor's clock and power of governed candidates)."""
    use_b = b_s < a_s
    if allowed is not None:
        use_b = use_b & allowed
    # Only the ``keep`` entries of the selected tile facts are used: select those alone.
    out = _select(use_b, a, b, {kk: a.extra[kk] for kk in keep if kk in a.extra},
                  {kk: b.extra[kk] for kk in keep if kk in b.extra})
    if use_b.all():
        nan = np.full(use_b.shape, np.nan)  # every a-side tile fact NaN (one array: none is written)
        drop = {kk: nan for kk in a.extra if kk not in keep}
    else:
        drop = {kk: np.where(use_b, np.nan, v) for kk, v in a.extra.items() if kk not in keep}
    extra = {**drop, "winograd": use_b.astype(float), **{kk: out.extra[kk] for kk in keep if kk in out.extra}}
    return CostArrays.from_fields({**out.__dict__, "extra": extra})


def select(use_b: np.ndarray, a: CostArrays, b: CostArrays) -> CostArrays:
    """Per point, ``b`` where ``use_b`` else ``a`` (keys missing on one side count as 0)."""
    return _select(use_b, a, b, a.extra, b.extra)


def _select(use_b: np.ndarray, a: CostArrays, b: CostArrays, a_extra: dict[str, np.ndarray],
            b_extra: dict[str, np.ndarray]) -> CostArrays:
    """:func:`select` with ``a_extra`` and ``b_extra`` in place of the two sides' tile facts."""
    side = b if use_b.all() else a if not use_b.any() else None
    if side is not None:
        uniform = _select_uniform(use_b.shape, side, a, b, (a_extra, b_extra))
        if uniform is not None:
            return uniform

    def sel(x: dict[str, np.ndarray], y: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        keys = dict.fromkeys([*x, *y])
        return {kk: np.where(use_b, y.get(kk, 0.0), x.get(kk, 0.0)) for kk in keys}

    return CostArrays(
        kind=a.kind, device=a.device, flop=a.flop, latency_s=np.where(use_b, b.latency_s, a.latency_s),
        time_by_unit_s=sel(a.time_by_unit_s, b.time_by_unit_s), bytes_by_level=sel(a.bytes_by_level, b.bytes_by_level),
        flop_by_unit=sel(a.flop_by_unit, b.flop_by_unit), read_bytes=sel(a.read_bytes, b.read_bytes),
        write_bytes=sel(a.write_bytes, b.write_bytes),
        dram_activations=np.where(use_b, b.dram_activations, a.dram_activations),
        link_bytes=np.where(use_b, b.link_bytes, a.link_bytes), overhead_s=np.where(use_b, b.overhead_s, a.overhead_s),
        launches=np.where(use_b, b.launches, a.launches),
        energy_breakdown_j=sel(a.energy_breakdown_j, b.energy_breakdown_j), static_power_w=a.static_power_w,
        extra=sel(a_extra, b_extra), dispatch_s=_pick_optional(use_b, a.dispatch_s, b.dispatch_s))


def _select_uniform(shape: tuple[int, ...], side: CostArrays, a: CostArrays, b: CostArrays,
                    extras: tuple[dict[str, np.ndarray], dict[str, np.ndarray]]) -> CostArrays | None:
    """:func:`select` where every point takes ``side`` (``a`` or ``b``): its arrays as they are, a
    key only the other side has as zeros; ``None`` when an array is not a float64 array of
    ``shape`` (the general path then broadcasts and converts as ``np.where`` does). ``extras``:
    the tile facts of ``a`` and ``b`` to select from."""
    def ok(v: Any) -> bool:
        return isinstance(v, np.ndarray) and v.dtype == np.float64 and v.shape == shape

    zero = None
    fields: dict[str, Any] = {"kind": a.kind, "device": a.device, "flop": a.flop}
    for name in ("latency_s", "time_by_unit_s", "bytes_by_level", "flop_by_unit", "read_bytes", "write_bytes",
                 "dram_activations", "link_bytes", "overhead_s", "launches", "energy_breakdown_j",
                 "static_power_w", "extra", "dispatch_s"):
        if name == "static_power_w":
            fields[name] = a.static_power_w
            continue
        pair = extras if name == "extra" else (getattr(a, name), getattr(b, name))
        v = pair[1] if side is b else pair[0]
        if isinstance(v, dict):
            other = pair[0] if side is b else pair[1]
            out = {}
            for kk in dict.fromkeys([*pair[0], *pair[1]]):
                got = v.get(kk)
                if got is None and kk in other:
                    if zero is None:
                        zero = np.zeros(shape)
                    got = zero
                if not ok(got):
                    return None
                out[kk] = got
            fields[name] = out
        elif name == "dispatch_s" and a.dispatch_s is None and b.dispatch_s is None:
            fields[name] = None
        elif v is None:  # dispatch_s missing on the picked side only: 0
            fields[name] = np.zeros(shape)
        elif ok(v):
            fields[name] = v
        else:
            return None
    return CostArrays.from_fields(fields)


def _pick_optional(use_b: np.ndarray, a: np.ndarray | None, b: np.ndarray | None) -> np.ndarray | None:
    """``np.where(use_b, b, a)`` with a missing side counted as 0; ``None`` when both are missing."""
    if a is None and b is None:
        return None
    return np.where(use_b, 0.0 if b is None else b, 0.0 if a is None else a)


def conv_configs(op: Any, p: GPUParams) -> list[tuple[np.ndarray, int, bool]]:
    """The distinct (points, channel multiple, NCHW transposes) a convolution runs with.

    Points whose GPU runs the precision on Tensor Cores pad channels to ``tensor_core.channel_multiple``
    and, with ``efficiency.conv_nchw_transposes``, transpose NCHW tensors to NHWC and back; other
    points run the plain CUDA-core kernel (multiple 1, no transposes).
    """
    return precision_configs(p, precision_of(op))


_SET_CONFIG_POINTS = 32
"""Up to this many points :func:`precision_configs` builds the set of every point's configuration
at once (as cheap as checking for one configuration); above it, one configuration is found by
comparing each column's least and greatest value first."""


def precision_configs(p: GPUParams, prec: str) -> list[tuple[np.ndarray, int, bool]]:
    """:func:`conv_configs` of any convolution of precision ``prec``."""
    use_tc = p.tensor_flop_per_cycle_per_sm[prec] > 0
    mult = np.where(use_tc, p.tensor_channel_multiple, 1.0)
    trans = np.where(use_tc, p.conv_nchw_transposes, 0.0)
    if mult.size > _SET_CONFIG_POINTS and mult.min() == mult.max() and trans.min() == trans.max():
        # one configuration at every point (the common case): no set of per-point tuples to build
        return [(np.ones(mult.shape, dtype=bool), int(mult.flat[0]), bool(trans.flat[0]))]
    keys = sorted(set(zip(mult.tolist(), trans.tolist(), strict=True)))
    return [((mult == m) & (trans == t), int(m), bool(t)) for m, t in keys]


DERIVED_KEY = "_archsim_derived"
"""Key of the values derived from an op (:func:`derived`) in its instance ``__dict__``."""


def derived(op: Any, key: tuple[Any, ...], build: Callable[[], Any]) -> Any:
    """What ``build()`` derives from ``op`` alone (a channel-padded convolution, a Winograd GEMM, the
    point-free values of a kernel request), built once per op object and ``key`` and kept in its
    instance ``__dict__`` under a non-field key, as :meth:`~archsim.workload.ops.base.Op.io_totals`
    keeps its totals: an op's ``==``, ``hash``, ``repr``, ``fields`` and ``replace`` see only its
    fields, and ops are frozen, so the kept value is what ``build()`` would return again. A graph
    priced again (another estimate, another sweep chunk) reuses them instead of rebuilding and
    validating them. ``key`` names everything else ``build`` reads (e.g. a channel multiple). An op
    object without an instance ``__dict__`` (a user's slotted class) gets ``build()`` every time."""
    own = getattr(op, "__dict__", None)
    if own is None:
        return build()
    held = own.get(DERIVED_KEY)
    if held is None:
        held = own[DERIVED_KEY] = {}
    got = held.get(key)
    if got is None:
        got = held[key] = build()
    return got


def pad_channels(op: Any, multiple: int) -> Any:
    """``op`` with its per-group input and output channels rounded up to ``multiple`` (itself if already;
    a padded op is built once per op object and multiple, :func:`derived`)."""
    g = op.groups
    c, k = op.in_channels // g, op.out_channels // g
    cp, kp = -(-c // multiple) * multiple, -(-k // multiple) * multiple
    if (cp, kp) == (c, k):
        return op
    return derived(op, ("padded", cp * g, kp * g),
                   lambda: dataclasses.replace(op, in_channels=cp * g, out_channels=kp * g))


def winograd_gemm(op: Any) -> Any:
    """The batched GEMM of a Winograd convolution F(m x m, r x r) (:func:`winograd_plan`): t^2 GEMMs of
    (tiles x in_channels) x (in_channels x out_channels), built once per op object (:func:`derived`)."""
    from archsim.workload.ops import Gemm

    def build() -> Any:
        t, _m, tiles = winograd_plan(op)
        return Gemm(tiles, op.out_channels, op.in_channels, dtype=op.dtype, batch=t * t,
                    name=f"{op.label}.winograd_gemm", compute_dtype=op.compute_dtype,
                    accumulate_dtype=op.accumulate_dtype)
    return derived(op, ("winograd_gemm",), build)


def layout_transfers(op: Any, padded: Any) -> list[tuple[float, float]]:
    """(read, write) bytes of the NCHW -> NHWC transposes of a Tensor-Core convolution's two inputs.

    Each reads the tensor once and writes it once in NHWC, padded channels included. The output is
    written in NCHW by the main kernel's epilogue (no extra pass), and a 1x1 filter needs no
    transpose: it is a GEMM on the NCHW tensor as it lies (``efficiency.conv_nchw_transposes``).
    """
    if op.kernel == (1, 1):
        return []
    e = elem_bytes(op)
    r, s = op.kernel
    x, xp = (op.batch * c * op.height * op.width * e for c in (op.in_channels, padded.in_channels))
    w, wp = (k * (c // op.groups) * r * s * e for k, c in ((op.out_channels, op.in_channels),
                                                            (padded.out_channels, padded.in_channels)))
    y, yp = (op.batch * k * op.out_height * op.out_width * e for k in (op.out_channels, padded.out_channels))
    if op.pass_ == "forward":
        return [(x, xp), (w, wp)]
    if op.pass_ == "backward_data":  # dY and W in, dX out
        return [(y, yp), (w, wp)]
    return [(x, xp), (y, yp)]  # backward_weight: X and dY in, dW out


def with_transfers(op: Any, main: CostArrays, transfers: list[CostArrays], flop: float) -> CostArrays:
    """The transposes and the main kernel in sequence; the main kernel's tile facts kept."""
    if not transfers:
        return CostArrays.from_fields({**main.__dict__, "kind": op.kind, "flop": flop})
    total = sum_costs([*transfers, main], op.kind, flop)
    return CostArrays.from_fields({**total.__dict__, "extra": main.extra})


def _conv(op: Any, p: GPUParams) -> CostArrays:
    if op.is_depthwise_like:
        return _stream(op, p)
    flop = float(op.flop())
    out = None
    for mask, multiple, transposes in conv_configs(op, p):
        padded = pad_channels(op, multiple)
        transfers = []
        if transposes:
            prec, e = precision_of(op), elem_bytes(op)
            # one operator: its first kernel carries the dispatch, the rest the launch API call alone
            transfers = [_stream_raw(op, p if i == 0 else p.continuation(), prec, e, 0.0, 0.0, rd, wr,
                                     np.full(p.n, rd + wr))
                         for i, (rd, wr) in enumerate(layout_transfers(op, padded))]
        main, winograd = _conv_algorithms(padded, p.continuation() if transfers else p)
        c = with_transfers(op, main, transfers, flop)
        if winograd is not None:
            c = _pick(c, with_transfers(op, winograd, transfers, flop), p, p.conv_autotune > 0)
        out = c if out is None else select(mask, out, c)
    return out


def _conv_algorithms(op: Any, p: GPUParams) -> tuple[CostArrays, CostArrays | None]:
    """The candidate algorithms: implicit GEMM, and Winograd where it applies (3x3 or 5x5, stride 1:
    :func:`winograd_applies`) and the software autotunes (``p.conv_autotune``), else ``None``. The
    caller picks between them once the layout transposes are added (:func:`_pick`): the library
    times the whole convolution."""
    return _implicit_gemm(op, p), (_winograd(op, p) if autotunes(op, p) else None)


def autotunes(op: Any, p: GPUParams) -> bool:
    """True when Winograd is a candidate for ``op`` at some point: it applies, and the software
    times the candidates there (``algorithm_selection = "autotuned"``; a heuristic pick is implicit
    GEMM, :data:`archsim.software.profile.ALGORITHM_SELECTIONS`)."""
    return winograd_applies(op) and bool(np.any(p.conv_autotune))


def touched_bytes(op: Any, p: GPUParams, sector_bytes: float | None = None) -> float:
    """Bytes memory delivers for the input elements a convolution pass reads, in whole DRAM sectors
    (:func:`archsim.cost.traffic.conv_touched_bytes`; the smallest sector of the points, so the floor
    holds at every point; ``sector_bytes``: that smallest sector, when the caller has it)."""
    sector = float(np.min(p.sector_bytes)) if sector_bytes is None else sector_bytes
    return tr.conv_touched_bytes(op.batch, op.in_channels, op.height, op.width, op.kernel,
                                 op.stride, op.padding, op.dilation, op.out_height, op.out_width,
                                 elem_bytes(op), sector)


class ConvGemmView(NamedTuple):
    """A convolution pass as a GEMM per group: C[m, n] = A[m, k] B[k, n] (implicit im2col).

    ``npq`` = batch x output pixels, ``crs`` = channels per group x filter taps; for the forward
    pass (m, n, k) = (NPQ, K, CRS), for backward-weight (CRS, K, NPQ); backward-data is
    dcols[NPQ, CRS] = dY[NPQ, K] W^T with col2im writing ``in_bytes`` (the input's size).
    """

    e: float
    r: int
    s: int
    g: int
    c: int
    kout: int
    npq: int
    crs: int
    in_bytes: float
    m: int
    n: int
    k: int


def conv_gemm_view(op: Any) -> ConvGemmView:
    """The implicit-GEMM dimensions of ``op`` (a Conv2d of any pass), shared by both cost paths."""
    e = elem_bytes(op)
    r, s = op.kernel
    g = op.groups
    c, kout = op.in_channels // g, op.out_channels // g
    npq, crs = op.batch * op.out_height * op.out_width, c * r * s
    in_bytes = op.batch * c * op.height * op.width * e
    if op.pass_ == "backward_data":
        m, n, k = npq, crs, kout
    elif op.pass_ == "backward_weight":
        # dW^T[CRS, K] = cols(X)^T[CRS, NPQ] dY[NPQ, K]: the implicit operand is A again.
        m, n, k = crs, kout, npq
    else:
        m, n, k = npq, kout, crs
    return ConvGemmView(e, r, s, g, c, kout, npq, crs, in_bytes, m, n, k)


def _implicit_gemm(op: Any, p: GPUParams) -> CostArrays:
    v = conv_gemm_view(op)
    e, r, s, g, c, kout, npq, crs, in_bytes = v[:9]
    touched = touched_bytes(op, p) / g  # per group: the A pass is of one group's channels

    def a_pass(cap: np.ndarray) -> np.ndarray:
        return tr.conv_a_pass_bytes(op.batch, c, op.height, op.width, r, s, op.out_height, op.out_width, e, cap,
                                    touched_bytes=touched)

    if op.pass_ == "backward_data":
        # dcols = dY W^T; col2im writes dX (the input's size) rather than the im2col matrix.
        shape = tr.GemmShape(npq, crs, kout, g, e, e, in_bytes / (npq * crs))
        dram = tr.gemm_bytes(shape, p.l2_size_bytes)
        return _gemm_like(op, p, shape, dram, np.ones(p.n), flop_classes(op)[1], 0.0, 0.0)
    m, n, k = v.m, v.n, v.k
    im2col = npq * crs * e
    shape = tr.GemmShape(m, n, k, g, e, e, e)
    dram = tr.conv_bytes(shape, a_pass(p.l2_size_bytes) * g, p.l2_size_bytes)
    a_stream = a_pass(p.l1_size_bytes) / im2col
    bias = e * op.out_channels if getattr(op, "bias", False) else 0.0
    return _gemm_like(op, p, shape, dram, a_stream, flop_classes(op)[1], bias, 0.0, library=conv_library(op))


def conv_library(op: Any) -> str:
    """The kernel catalogue of a convolution pass: cuDNN's forward implicit-GEMM tiles
    (``kernels.CONV_TILES``, no split-K) for the forward pass; the backward passes every tile and
    split-K (``kernels.CONV_BACKWARD_LIBRARY``: cuDNN's weight-gradient kernels do split their NPQ
    reduction, whatever the GEMM library's ``efficiency.gemm_max_split_k``)."""
    return kn.CONV_LIBRARY if op.pass_ == "forward" else kn.CONV_BACKWARD_LIBRARY


ROWWISE_KINDS = ("softmax", "layernorm", "batchnorm")


def rowwise_traffic(op: Any, p: GPUParams) -> tuple[np.ndarray, np.ndarray] | None:
    """(L2, DRAM) bytes of a row-wise two-pass op (softmax, layernorm, batch norm with batch
    statistics: one row per channel), ``None`` for other ops (and inference batch norm, ``rows`` None).

    One thread block normalises one row: a row that fits in the block's shared memory is read once;
    a longer row is read again for the second pass (:func:`archsim.cost.traffic.rowwise_bytes`), from L2
    when the row fits in one SM's share of L2 (every SM streams a row at a time), else from DRAM.
    """
    rows = getattr(op, "rows", None) if op.kind in ROWWISE_KINDS else None
    if rows is None:
        return None
    in_b, _ = io_bytes(op)
    compulsory = float(op.min_bytes())
    row_b = in_b / max(int(rows), 1)
    l2 = tr.rowwise_bytes(compulsory, in_b, row_b, p.max_shared_memory_per_block_bytes)
    dram = tr.rowwise_bytes(compulsory, in_b, row_b, p.l2_size_bytes / p.sm_count)
    return np.asarray(l2, dtype=np.float64), np.asarray(dram, dtype=np.float64)


def _stream(op: Any, p: GPUParams, dram_bytes: np.ndarray | None = None) -> CostArrays:
    mm, vector, special = flop_classes(op)
    in_b, out_b = io_bytes(op)
    compulsory = float(op.min_bytes())
    dram = np.full(p.n, compulsory) if dram_bytes is None else np.maximum(dram_bytes, compulsory)
    l2 = None
    rows = rowwise_traffic(op, p)
    if rows is not None:
        l2, dram = rows
    # GEMV and depthwise MACs run as FMAs on the CUDA cores.
    return _stream_raw(op, p, precision_of(op), elem_bytes(op), vector + mm, special, in_b, out_b, dram, l2)


def _stream_raw(op: Any, p: GPUParams, prec: str, e: float, vector: float, special: float, in_b: float,
                out_b: float, dram: np.ndarray, l2: np.ndarray | None = None) -> CostArrays:
    """A streaming kernel with explicit FLOP and bytes (``op`` names it and gives its total FLOP)."""
    return _finish(op, p, *stream_parts(p, prec, e, vector, special, in_b, out_b, dram, l2_bytes=l2))


def stream_parts(p: GPUParams, prec: str, e: Any, vector: Any, special: Any, in_b: Any, out_b: Any,
                 dram: np.ndarray, threads_total: Any = None, l2_bytes: np.ndarray | None = None,
                 blocks_per_sm: np.ndarray | None = None,
                 stacked: tuple[GPUParams, np.ndarray, np.ndarray] | None = None) -> tuple:
    """The pieces :func:`assemble` takes for a streaming kernel (values scalars or per-row arrays).

    ``l2_bytes`` (default ``dram``) are the bytes the SMs read through L2 and L1; ``blocks_per_sm``
    the default block's occupancy per row when the caller has it (:func:`kernels.stream_blocks_per_sm`).
    ``stacked``: (``base``, values, threads) when the rows are G kernels at the points of the pack
    ``base`` (``p`` is ``base`` tiled, op-major), each kernel's (element bytes, vector FLOP, special
    FLOP, input bytes, output bytes) a row of ``values`` (G, 5) and its threads an entry of
    ``threads`` (G,), in place of ``e`` ... ``out_b`` and ``threads_total`` (``None``): the kernel
    model runs compiled over the rows (:func:`kernels.gpu_stream_stacked`), and what depends on a
    kernel's values alone is computed once per kernel and repeated over its points; the floats of
    those values repeated first.
    """
    vkey = _vector_key(p if stacked is None else stacked[0], prec)
    l2 = dram if l2_bytes is None else np.maximum(l2_bytes, dram)
    if stacked is not None:
        return _stacked_stream_parts(p, vkey, l2, dram, blocks_per_sm, *stacked)
    k = kn.gpu_stream(p, vector, special, l2, dram, p.vector_flop_per_cycle_per_sm[vkey], threads_total,
                      blocks_per_sm=blocks_per_sm)
    level_bytes = {"register": 1.5 * e * vector + l2, "l1": l2, "l2": l2, "dram": dram}
    if np.ndim(in_b) or np.ndim(out_b):
        total = in_b + out_b
        wf: Any = np.divide(out_b, total, out=np.zeros(np.shape(total)), where=total > 0)
    else:
        wf = out_b / (in_b + out_b) if in_b + out_b > 0 else 0.0
    zero = np.zeros(p.n)
    return _stream_pieces(p, k, level_bytes, wf, {f"vector:{vkey}": vector + zero, "special": special + zero})


def _stacked_stream_parts(p: GPUParams, vkey: str, l2: np.ndarray, dram: np.ndarray, blocks_per_sm: np.ndarray | None,
                          base: GPUParams, values: np.ndarray, threads: np.ndarray) -> tuple:
    """:func:`stream_parts` of G kernels stacked over the points of ``base`` (its ``stacked``)."""
    h = base.n
    e, vector, special, in_b, out_b = values.T
    k = kn.gpu_stream_stacked(base, vkey, vector, special, threads, l2, dram, blocks_per_sm)
    register = (1.5 * e * vector).repeat(h)
    register += l2
    total = in_b + out_b
    wf = np.divide(out_b, total, out=np.zeros(len(total)), where=total > 0).repeat(h)
    flop_units = {f"vector:{vkey}": np.add(vector, 0.0).repeat(h), "special": np.add(special, 0.0).repeat(h)}
    return _stream_pieces(p, k, {"register": register, "l1": l2, "l2": l2, "dram": dram}, wf, flop_units)


def _stream_pieces(p: GPUParams, k: kn.StreamKernel, level_bytes: dict[str, np.ndarray], wf: Any,
                   flop_units: dict[str, np.ndarray]) -> tuple:
    """:func:`stream_parts`' pieces from its kernel ``k``, bytes by level, write share and FLOP by unit."""
    times = {"compute:vector": k.compute_s, "compute:special": k.special_s, "memory:l2": k.l2_s,
             "memory:dram": k.dram_s}
    overhead = p.launch_overhead_s + k.fill_s
    extra = {"blocks_per_sm": k.blocks_per_sm, "occupancy": k.achieved_occupancy, "blocks": k.blocks}
    return (times, k.time_s - k.fill_s, overhead, np.ones(p.n), level_bytes,
            {"register": 1.0 / 3.0, "l1": wf, "l2": wf, "dram": wf}, flop_units, extra)


def _gemv(op: Any, p: GPUParams) -> CostArrays:
    e = elem_bytes(op)
    m, batch = op.m, op.batch
    if getattr(op, "weight", False) and batch > 1:
        # A shared weight matrix times `batch` vectors is a skinny GEMM: the matrix is read once.
        shape = tr.GemmShape(m, batch, op.k, 1, e, e, e)
    else:
        shape = tr.GemmShape(m, 1, op.k, batch, e, e, e)
    return _stream(op, p, tr.gemm_bytes(shape, p.l2_size_bytes))


def _attention(op: Any, p: GPUParams) -> CostArrays:
    if not op.fused:
        parts = [cost(sub, p) for sub in op.decompose()]
        return sum_costs(parts, op.kind, float(op.flop()))
    e = elem_bytes(op)
    bh = op.batch * op.heads
    l2_bytes = tr.flash_attention_bytes(bh, op.seq_q, op.seq_kv, op.head_dim, e, p.max_shared_memory_per_block_bytes)
    dram = np.minimum(tr.flash_attention_bytes(bh, op.seq_q, op.seq_kv, op.head_dim, e, p.l2_size_bytes), l2_bytes)
    dram = np.maximum(dram, float(op.min_bytes()))
    l2_bytes = np.maximum(l2_bytes, dram)
    prec, acc = precision_of(op), narrow_accumulate(op)
    mm, vector, special = flop_classes(op)
    tensor_rate = tensor_rate_of(p, prec, acc)
    vkey = _vector_key(p, prec)
    # The matmul's unit: Tensor Cores, else CUDA-core lanes of the math precision (raises if neither;
    # then vkey == prec, so the vector peak is that unit's).
    use_tc, _, _ = gemm_unit(p, prec, op.label, acc)
    peak_v = p.vector_flop_per_cycle_per_sm[vkey] * p.clock_hz * p.sm_count * p.vector_efficiency
    peak_t = tensor_rate * p.clock_hz * p.sm_count * p.tensor_efficiency
    mm_t = np.divide(mm, peak_t, out=np.zeros(p.n), where=use_tc)
    vec_t = (vector + np.where(use_tc, 0.0, mm)) / peak_v
    sfu_t = special / (p.sfu_per_sm * p.clock_hz * p.sm_count * p.vector_efficiency)
    l2_t = l2_bytes / (p.l2_bandwidth_bytes_per_s * p.l2_bandwidth_efficiency)
    dram_t = dram / (p.dram_bandwidth_bytes_per_s * p.dram_bandwidth_efficiency)
    times = {"compute:tensor": mm_t, "compute:vector": vec_t, "compute:special": sfu_t,
             "memory:l2": l2_t, "memory:dram": dram_t}
    kernel_s = np.max(np.stack(list(times.values())), axis=0)
    overhead = p.launch_overhead_s + p.l2_latency_s + p.dram_latency_s
    in_b, out_b = io_bytes(op)
    wf = out_b / (in_b + out_b)
    level_bytes = {"register": 2.0 * l2_bytes + 1.5 * e * vector, "l1": l2_bytes, "l2": l2_bytes, "dram": dram}
    flop_units = {tensor_key(prec, acc): np.where(use_tc, mm, 0.0),
                  f"vector:{vkey}": vector + np.where(use_tc, 0.0, mm), "special": np.full(p.n, special)}
    return _finish(op, p, times, kernel_s, overhead, np.ones(p.n), level_bytes,
                   {"register": 1.0 / 3.0, "l1": wf, "l2": wf, "dram": wf}, flop_units, {})


def _kernel(op: Any, p: GPUParams) -> CostArrays:
    """A user-described kernel (validation kernels): explicit FLOP, bytes, launch shape, dependences."""
    prec = precision_of(op)
    vkey = _vector_key(p, prec)
    dram = float(op.dram_read_bytes + op.dram_write_bytes)
    # Declared L2 / L1 traffic (a tiled kernel's re-reads) replaces the streaming assumption that every
    # byte crosses L2 once and L1 not at all.
    l2 = float(op.l2_bytes) if op.l2_bytes is not None else dram
    l1 = float(op.l1_bytes) if op.l1_bytes is not None else 0.0
    threads = float(np.prod(op.grid) * np.prod(op.block))
    k = kn.gpu_stream(p, float(op.flop_vector), float(op.flop_special), np.full(p.n, l2), np.full(p.n, dram),
                      p.vector_flop_per_cycle_per_sm[vkey], threads_total=threads,
                      threads_per_block=float(np.prod(op.block)), registers_per_thread=float(op.registers_per_thread),
                      shared_per_block=float(op.shared_mem_per_block_bytes),
                      independent=int(op.dependent_accesses) == 0,
                      bytes_per_thread=(kn.STREAM_BYTES_PER_THREAD if op.bytes_in_flight_per_thread is None
                                        else float(op.bytes_in_flight_per_thread)),
                      max_blocks_per_sm=np.inf if op.max_blocks_per_sm is None else float(op.max_blocks_per_sm),
                      read_fraction=float(op.dram_read_bytes) / dram if dram > 0 else None)
    tensor_rate = p.tensor_flop_per_cycle_per_sm[prec]
    use_tc = tensor_rate > 0
    mm = float(op.flop_matmul)
    peak_t = np.where(use_tc, tensor_rate * p.tensor_efficiency, p.vector_flop_per_cycle_per_sm[vkey]
                      * p.vector_efficiency) * p.clock_hz * p.sm_count
    # L1 / shared-memory bandwidth of the SMs the grid occupies.
    l1_bw = p.l1_bandwidth_per_sm_bytes_per_s * np.minimum(p.sm_count, float(np.prod(op.grid)))
    # Without a declared working set, a dependence chain is assumed to miss to DRAM (the bytes it moves).
    ws = float(op.working_set_bytes) if op.working_set_bytes is not None else float("inf")
    chain_latency = np.where(ws <= p.l1_size_bytes, p.l1_latency_s,
                             np.where(ws <= p.l2_size_bytes, p.l2_latency_s, p.l2_latency_s + p.dram_latency_s))
    times = {"compute:tensor": np.where(use_tc, mm / peak_t, 0.0),
             "compute:vector": k.compute_s + np.where(use_tc, 0.0, mm / peak_t),
             "compute:special": k.special_s, "memory:l1": l1 / l1_bw, "memory:l2": k.l2_s,
             "memory:dram": k.dram_s, "latency": float(op.dependent_accesses) * chain_latency}
    kernel_s = np.max(np.stack(list(times.values())), axis=0)
    overhead = p.launch_overhead_s + k.fill_s
    wf = float(op.dram_write_bytes) / dram if dram > 0 else 0.0
    level_bytes = {"register": 1.5 * elem_bytes(op) * float(op.flop_vector) + np.full(p.n, dram),
                   "l1": np.full(p.n, max(l1, l2)), "l2": np.full(p.n, l2), "dram": np.full(p.n, dram)}
    flop_units = {f"tensor:{prec}": np.where(use_tc, mm, 0.0),
                  f"vector:{vkey}": float(op.flop_vector) + np.where(use_tc, 0.0, mm),
                  "special": np.full(p.n, float(op.flop_special))}
    return _finish(op, p, times, kernel_s, overhead, np.ones(p.n), level_bytes,
                   {"register": 1.0 / 3.0, "l1": wf, "l2": wf, "dram": wf}, flop_units,
                   {"blocks_per_sm": k.blocks_per_sm, "occupancy": k.achieved_occupancy, "blocks": k.blocks})


_DISPATCH = {"gemm": _gemm, "conv2d": _conv, "gemv": _gemv, "attention": _attention, "kernel": _kernel}


def cost(op: Any, p: GPUParams) -> CostArrays:
    """The cost of ``op`` at every GPU of ``p``."""
    if op.kind in ("h2d", "d2h"):
        raise EngineError(f"{op.label}: a {op.kind} transfer runs on a link, not on the GPU")
    return _DISPATCH.get(op.kind, _stream)(op, p)
