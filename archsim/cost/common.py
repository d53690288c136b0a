"""Helpers shared by the per-device cost modules: op facts, read/write split, kernel sequences."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np

from archsim.cost.types import CostArrays

__all__ = ["flop_classes", "io_bytes", "write_fraction", "sum_costs", "precision_of", "elem_bytes",
           "added_in_order"]


def flop_classes(op: Any) -> tuple[float, float, float]:
    """(matmul, vector, special) FLOP of ``op``."""
    b = op.flop_breakdown()
    return float(b.get("matmul", 0)), float(b.get("vector", 0)), float(b.get("special", 0))


def io_bytes(op: Any) -> tuple[float, float]:
    """(input, output) bytes of ``op``: every input read once, every output written once."""
    totals = getattr(op, "io_totals", None)  # archsim ops keep the sums (workload.ops.base.Op.io_totals)
    if totals is None:
        return float(sum(t.bytes for t in op.inputs())), float(sum(t.bytes for t in op.outputs()))
    read, written = totals()
    return float(read), float(written)


def write_fraction(op: Any) -> float:
    """Share of the compulsory bytes that are writes (outputs / (inputs + outputs))."""
    i, o = io_bytes(op)
    return o / (i + o) if i + o > 0 else 0.0


def precision_of(op: Any) -> str:
    """The hardware precision key (``"fp16"``...) of the op's arithmetic: its ``compute_dtype`` where it
    has one (GEMM, convolution, attention), else its storage dtype. Bytes follow :func:`elem_bytes`."""
    return op.math_dtype.precision


def elem_bytes(op: Any) -> float:
    """Bytes per element of the op's dtype."""
    return float(op.dtype.bytes)


_F64 = np.dtype(np.float64)


def added_in_order(arrays: Sequence[Any]) -> Any:
    """``arrays[0] + arrays[1] + ...`` added left to right (``functools.reduce(np.add, arrays)``, to the
    bit): the first sum is a new array and, when it is a float64 array, the others are added into it
    in place (the same operation on the same operands, without a new array per add: a sixth faster
    over a graph's ops); one array is returned as it is. The arrays given are only read."""
    total = arrays[0]
    if len(arrays) == 1:
        return total
    total = total + arrays[1]
    if type(total) is not np.ndarray or total.dtype is not _F64:
        return functools.reduce(np.add, arrays[2:], total)
    try:
        for v in arrays[2:]:
            total += v
    except (TypeError, ValueError):  # a later array widens the shape or the type: add them all anew
        return functools.reduce(np.add, arrays)
    return total


def _sum_dicts(dicts: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """Key by key, the sum of the dicts holding that key, added left to right (keys in order of first
    appearance)."""
    out: dict[str, np.ndarray] = {}
    for d in dicts:
        for k, v in d.items():
            out[k] = out[k] + v if k in out else v
    return out


def sum_costs(parts: Sequence[CostArrays], kind: str, flop: float) -> CostArrays:
    """Kernels run one after another: times, bytes, actions, energies and overheads add up (left to
    right); the first kernel's device and static power are kept, its extras are not."""
    first = parts[0]
    if len(parts) == 1:
        return CostArrays.from_fields({**first.__dict__, "kind": kind, "flop": flop})
    fields: dict[str, Any] = {"kind": kind, "device": first.device, "flop": flop,
                              "static_power_w": first.static_power_w, "extra": {}}
    for name in _ARRAY_FIELDS:
        fields[name] = functools.reduce(np.add, [getattr(p, name) for p in parts])
    for name in _DICT_FIELDS:
        fields[name] = _sum_dicts([getattr(p, name) for p in parts])
    dispatch = [p.dispatch_s for p in parts if p.dispatch_s is not None]
    fields["dispatch_s"] = functools.reduce(np.add, dispatch) if dispatch else None
    return CostArrays.from_fields(fields)


_ARRAY_FIELDS = ("latency_s", "dram_activations", "link_bytes", "overhead_s", "launches")
_DICT_FIELDS = ("time_by_unit_s", "bytes_by_level", "flop_by_unit", "read_bytes", "write_bytes",
                "energy_breakdown_j")
