"""Cost of an op on CPUs (vectorised over hardware points).

Compute: cores x clock x SIMD lanes x FMA pipes x 2 x efficiency (:func:`archsim.cost.kernels.cpu_compute_rate`),
on the matrix unit (AMX-like) for matmul FLOP when the core rates the precision there. Memory: the
tiling model of :mod:`archsim.cost.traffic` gives the bytes each cache level serves to the level inside
it; the register file is the innermost "cache" (``VECTOR_REGISTERS`` architectural SIMD registers).
DRAM bandwidth is the lower of STREAM-like peak and misses in flight x line / latency (Little's
law, :func:`archsim.cost.kernels.cpu_dram_bandwidth`). Overheads: the framework's per-op dispatch and a
fork/join when more than one thread runs.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from archsim.cost import kernels as kn
from archsim.cost import traffic as tr
from archsim.cost.common import elem_bytes, flop_classes, io_bytes, precision_of, sum_costs
from archsim.cost.params import CPUParams
from archsim.cost.types import CostArrays
from archsim.energy import EnergyPrices, account
from archsim.errors import EngineError

__all__ = ["cost", "VECTOR_REGISTERS"]

VECTOR_REGISTERS = 32
"""Architectural SIMD registers per core (AVX-512 zmm0-31; AArch64 v0-v31): the register-level tile."""




def _bytes_at(op: Any, capacity: np.ndarray) -> np.ndarray:
    """Bytes crossing into a level of ``capacity`` for ``op`` (traffic model by op kind)."""
    e = elem_bytes(op)
    if op.kind == "gemm":
        m, batch = op.m, op.batch
        if getattr(op, "weight", False) and batch > 1:
            m, batch = m * batch, 1
        return np.maximum(tr.gemm_bytes(tr.GemmShape(m, op.n, op.k, batch, e, e, e), capacity), op.min_bytes())
    if op.kind == "gemv":
        return np.maximum(tr.gemm_bytes(tr.GemmShape(op.m, 1, op.k, op.batch, e, e, e), capacity), op.min_bytes())
    if op.kind == "conv2d" and not op.is_depthwise_like and op.pass_ == "forward":
        r, s = op.kernel
        g = op.groups
        c, kout = op.in_channels // g, op.out_channels // g
        shape = tr.GemmShape(op.batch * op.out_height * op.out_width, kout, c * r * s, g, e, e, e)
        a = tr.conv_a_pass_bytes(op.batch, c, op.height, op.width, r, s, op.out_height, op.out_width, e, capacity)
        return np.maximum(tr.conv_bytes(shape, a * g, capacity), op.min_bytes())
    if op.kind == "conv2d" and not op.is_depthwise_like:
        g = op.as_gemm()
        return np.maximum(tr.gemm_bytes(tr.GemmShape(g.m, g.n, g.k, g.batch, e, e, e), capacity), op.min_bytes())
    return tr.streaming_bytes(float(op.min_bytes()), capacity)


def cost(op: Any, p: CPUParams, threads: int | None) -> CostArrays:
    """The cost of ``op`` at every CPU of ``p`` with ``threads`` threads (``None``: all cores)."""
    if op.kind in ("h2d", "d2h"):
        raise EngineError(f"{op.label}: a {op.kind} transfer runs on a link, not on the host CPU")
    if op.kind == "attention" and not op.fused:
        return sum_costs([cost(sub, p, threads) for sub in op.decompose()], op.kind, float(op.flop()))
    nthreads = p.cores if threads is None else np.minimum(float(threads), p.cores)
    prec = precision_of(op)
    mm, vector, special = flop_classes(op)
    vec_prec = prec if np.all(p.vector_flop_per_cycle[prec] > 0) else "fp32"
    matrix_rate = kn.cpu_compute_rate(p, prec, True, nthreads)
    vector_rate = kn.cpu_compute_rate(p, vec_prec, False, nthreads)
    use_mx = matrix_rate > 0
    if np.any(vector_rate <= 0):
        raise EngineError(f"{op.label}: the CPU has no vector FMA rate for {vec_prec}")
    times = {"compute:matrix": np.divide(mm, matrix_rate, out=np.zeros(p.n), where=use_mx),
             "compute:vector": (vector + special + np.where(use_mx, 0.0, mm)) / vector_rate}
    # Level capacities from the core outwards: registers, then each cache; bytes served by level i are
    # the bytes crossing into the level inside it.
    caps = [VECTOR_REGISTERS * p.simd_bytes] + [c.capacity_bytes for c in p.caches]
    level_bytes: dict[str, np.ndarray] = {}
    for cache, inner_cap in zip(p.caches, caps[:-1], strict=True):
        level_bytes[cache.name] = _bytes_at(op, inner_cap)
        times[f"memory:{cache.name}"] = level_bytes[cache.name] / cache.bandwidth_bytes_per_s
    level_bytes["dram"] = _bytes_at(op, caps[-1])
    times["memory:dram"] = level_bytes["dram"] / kn.cpu_dram_bandwidth(p, nthreads)
    e = elem_bytes(op)
    level_bytes = {"register": 1.5 * e * (mm + vector) + level_bytes[p.caches[0].name], **level_bytes}
    overhead = p.op_overhead_s + np.where(nthreads > 1, p.parallel_overhead_s, 0.0)
    kernel_s = np.max(np.stack(list(times.values())), axis=0)
    latency = kernel_s + overhead
    in_b, out_b = io_bytes(op)
    wf = out_b / (in_b + out_b) if in_b + out_b > 0 else 0.0
    reads = {k: v * (1.0 - wf) for k, v in level_bytes.items()}
    writes = {k: v * wf for k, v in level_bytes.items()}
    reads["register"], writes["register"] = level_bytes["register"] * 2 / 3, level_bytes["register"] / 3
    activations = level_bytes["dram"] / p.dram_row_buffer_bytes
    flop_units = {f"matrix:{prec}": np.where(use_mx, mm, 0.0),
                  f"vector:{vec_prec}": vector + np.where(use_mx, 0.0, mm) + np.zeros(p.n),
                  "special": np.full(p.n, special)}
    flop_j = {f"matrix:{prec}": p.matrix_flop_j[prec], f"vector:{vec_prec}": p.vector_flop_j[vec_prec],
              "special": p.special_flop_j}
    read_j = {"register": p.register_j_per_byte, "dram": p.dram_read_j_per_byte,
              **{c.name: c.read_j_per_byte for c in p.caches}}
    write_j = {"register": p.register_j_per_byte, "dram": p.dram_write_j_per_byte,
               **{c.name: c.write_j_per_byte for c in p.caches}}
    prices = EnergyPrices(flop_j=flop_j, read_j_per_byte=read_j, write_j_per_byte=write_j,
                          activation_j=p.dram_activation_j, link_j_per_byte=np.zeros(p.n),
                          static_power_w=p.static_power_w)
    energy = account(prices, flop_units, reads, writes, activations, np.zeros(p.n), latency)
    times["overhead"] = overhead
    return CostArrays(kind=op.kind, device="host", flop=float(op.flop()), latency_s=latency, time_by_unit_s=times,
                      bytes_by_level=level_bytes, flop_by_unit=flop_units, read_bytes=reads, write_bytes=writes,
                      dram_activations=activations, link_bytes=np.zeros(p.n), overhead_s=overhead,
                      launches=np.ones(p.n), energy_breakdown_j=energy, static_power_w=p.static_power_w,
                      extra={"threads": np.asarray(nthreads, dtype=np.float64) + np.zeros(p.n)})
