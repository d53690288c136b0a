"""Helpers shared by the per-device cost modules: op facts, read/write split, kernel sequences."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from archsim.engines.cost import CostArrays

__all__ = ["flop_classes", "io_bytes", "write_fraction", "sum_costs", "precision_of", "elem_bytes"]


def flop_classes(op: Any) -> tuple[float, float, float]:
    """(matmul, vector, special) FLOP of ``op``."""
    b = op.flop_breakdown()
    return float(b.get("matmul", 0)), float(b.get("vector", 0)), float(b.get("special", 0))


def io_bytes(op: Any) -> tuple[float, float]:
    """(input, output) bytes of ``op``: every input read once, every output written once."""
    return float(sum(t.bytes for t in op.inputs())), float(sum(t.bytes for t in op.outputs()))


def write_fraction(op: Any) -> float:
    """Share of the compulsory bytes that are writes (outputs / (inputs + outputs))."""
    i, o = io_bytes(op)
    return o / (i + o) if i + o > 0 else 0.0


def precision_of(op: Any) -> str:
    """The op's hardware precision key (``"fp16"``...)."""
    return op.dtype.precision


def elem_bytes(op: Any) -> float:
    """Bytes per element of the op's dtype."""
    return float(op.dtype.bytes)


def _add(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    out = dict(a)
    for k, v in b.items():
        out[k] = out[k] + v if k in out else v
    return out


def _add_optional(a: np.ndarray | None, b: np.ndarray | None) -> np.ndarray | None:
    if a is None:
        return b
    return a if b is None else a + b


def sum_costs(parts: Sequence[CostArrays], kind: str, flop: float) -> CostArrays:
    """Kernels run one after another: times, bytes, actions, energies and overheads add up."""
    first = parts[0]
    acc = first
    for nxt in parts[1:]:
        acc = CostArrays(
            kind=kind, device=first.device, flop=flop,
            latency_s=acc.latency_s + nxt.latency_s,
            time_by_unit_s=_add(acc.time_by_unit_s, nxt.time_by_unit_s),
            bytes_by_level=_add(acc.bytes_by_level, nxt.bytes_by_level),
            flop_by_unit=_add(acc.flop_by_unit, nxt.flop_by_unit),
            read_bytes=_add(acc.read_bytes, nxt.read_bytes),
            write_bytes=_add(acc.write_bytes, nxt.write_bytes),
            dram_activations=acc.dram_activations + nxt.dram_activations,
            link_bytes=acc.link_bytes + nxt.link_bytes,
            overhead_s=acc.overhead_s + nxt.overhead_s,
            launches=acc.launches + nxt.launches,
            energy_breakdown_j=_add(acc.energy_breakdown_j, nxt.energy_breakdown_j),
            static_power_w=first.static_power_w,
            extra={},
            dispatch_s=_add_optional(acc.dispatch_s, nxt.dispatch_s),
        )
    return CostArrays(**{**acc.__dict__, "kind": kind, "flop": flop})
