"""Text the command line prints for a result: the summary of ``archsim estimate`` and its per-op table.

Values leave SI here (with :mod:`archsim.plot`, the only places that do): :func:`human` keeps three
significant digits, trailing zeros included, so columns of numbers read alike (``"1.00 J"``,
``"12.3 ms"``, ``"989 TFLOP/s"``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from archsim.units import format_si

__all__ = ["human", "summary_lines", "op_table_lines", "precision_note", "peak_for"]


def human(value: float, dimension: str, digits: int = 3) -> str:
    """``value`` (SI) with an SI prefix and ``digits`` significant digits: ``human(0.9996, "energy") == "1.00 J"``."""
    text = format_si(value, dimension, digits=digits)
    number, _, unit = text.partition(" ")
    if "e" in number or number in ("0", "nan", "inf", "-inf"):
        return text
    significant = len(number.lstrip("-").replace(".", "").lstrip("0"))
    if significant < digits:
        pad = digits - significant
        number = number + ("" if "." in number else ".") + "0" * pad
    return f"{number} {unit}"


def peak_for(hardware: Any, precision: str | None, device: str | None = None) -> tuple[str, float] | None:
    """``(ceiling name, FLOP/s)`` of the fastest compute ceiling for ``precision`` (None: any), or None."""
    from archsim.plot.roofline import ceilings

    try:
        compute = [c for c in ceilings(hardware, device) if c.kind == "compute"]
    except Exception:  # noqa: BLE001 - a device the roofline plot does not know has no peak to quote
        return None
    if precision is not None:
        compute = [c for c in compute if precision in c.name.rpartition(" ")[2].split("/")]
    if not compute:
        return None
    best = max(compute, key=lambda c: c.rate)
    return best.name, best.rate


def precision_note(hardware: Any, precision: str | None, device: str | None = None) -> str | None:
    """A hint when the run's precision leaves a much faster unit of the device idle (fp32 on Tensor Cores)."""
    if precision is None:
        return None
    mine = peak_for(hardware, precision, device)
    if mine is None:
        return None
    for other in ("bf16", "fp16"):
        theirs = peak_for(hardware, other, device)
        if other != precision and theirs is not None and theirs[1] >= 2 * mine[1]:
            return (f"note: {precision} peaks at {human(mine[1], 'flop_rate')} ({mine[0]}) on this device; "
                    f"--dtype {other} runs on {theirs[0]} ({human(theirs[1], 'flop_rate')}), as mixed-precision "
                    "training and inference usually do")
    return None


def _title(result: Any) -> str:
    w = result._meta.get("workload") or {}
    parts = [w.get("model") or result.workload]
    if w.get("batch") is not None:
        parts.append(f"batch {w['batch']}")
    if w.get("dtype"):
        parts.append(str(w["dtype"]))
    if w.get("training"):
        parts.append("training step")
    return ", ".join(str(p) for p in parts)


def _share(part: float, whole: float) -> str:
    return f"{100 * part / whole:.0f}%" if whole > 0 else "-"


def summary_lines(result: Any, hardware: Any = None, *, device: str | None = None, top: int = 5) -> list[str]:
    """The summary ``archsim estimate`` prints: totals, throughput, energy by component, time by bound and
    phase, the ``top`` slowest ops, and a precision hint."""
    w = result._meta.get("workload") or {}
    lat, energy = result.latency_s, result.energy_j
    lines = [f"{_title(result)} on {result.hardware} ({result.engine} engine): {len(result.ops)} ops"]
    rows = [("latency", human(lat, "time")), ("energy", human(energy, "energy"))]
    if lat > 0:
        rows.append(("average power", human(energy / lat, "power")))
        if w.get("batch"):
            # a discrete-event run may hold several steps and several data-parallel replicas
            opts = result._meta.get("options") or {}
            replicas = (opts.get("data_parallel") or {}).get("gpus") or 1
            rate = w["batch"] * (opts.get("steps") or 1) * replicas / lat
            unit = "tokens/s" if str(w.get("model", "")).endswith(".decode") else "samples/s"
            rows.append(("throughput", f"{rate:,.0f} {unit}" if rate >= 100 else f"{rate:.3g} {unit}"))
        achieved = result.flop / lat
        peak = peak_for(hardware, w.get("precision"), device) if hardware is not None else None
        text = human(achieved, "flop_rate")
        if peak is not None:
            text += f" ({_share(achieved, peak[1])} of {human(peak[1], 'flop_rate')}, {peak[0]})"
        rows.append(("achieved", text))
    rows.append(("work", f"{result.flop:.3g} FLOP"))
    rows.append(("data movement", f"{100 * result.data_movement_fraction:.1f}% of energy"))
    width = max(len(k) for k, _ in rows)
    lines += [f"  {k:<{width}}  {v}" for k, v in rows]
    lines.append("energy by component: " + ", ".join(
        f"{k} {human(v, 'energy')} ({_share(v, energy)})"
        for k, v in sorted(result.energy_breakdown_j.items(), key=lambda kv: -kv[1])))
    by_bound: dict[str, list[float]] = {}
    by_phase: dict[str, float] = {}
    for o in result.ops:
        entry = by_bound.setdefault(o.bound, [0.0, 0])
        entry[0] += o.latency_s
        entry[1] += 1
        by_phase[o.phase] = by_phase.get(o.phase, 0.0) + o.latency_s
    serial = sum(o.latency_s for o in result.ops)
    lines.append("time by bound: " + ", ".join(
        f"{b} {human(t, 'time')} ({_share(t, serial)}, {int(n)} ops)"
        for b, (t, n) in sorted(by_bound.items(), key=lambda kv: -kv[1][0])))
    if len(by_phase) > 1:
        lines.append("time by phase: " + ", ".join(f"{p} {human(t, 'time')} ({_share(t, serial)})"
                                                   for p, t in by_phase.items()))
    slow = sorted(result.ops, key=lambda o: -o.latency_s)[:top]
    if slow:
        lines.append(f"slowest {len(slow)} of {len(result.ops)} ops (every op: --per-op):")
        lines += list(_op_rows(slow, indent=2))
    note = precision_note(hardware, w.get("precision"), device) if hardware is not None else None
    if note:
        lines.append(note)
    return lines


def _op_rows(ops: Iterable[Any], indent: int = 2) -> Iterable[str]:
    ops = list(ops)
    width = max([len("op"), *(len(o.name) for o in ops)])
    kind = max([len("kind"), *(len(o.kind) for o in ops)])
    pad = " " * indent
    yield f"{pad}{'op':<{width}}  {'kind':<{kind}}  {'phase':<8} {'latency':>10} {'energy':>10}  bound"
    for o in ops:
        yield (f"{pad}{o.name:<{width}}  {o.kind:<{kind}}  {o.phase:<8} {human(o.latency_s, 'time'):>10} "
               f"{human(o.energy_j, 'energy'):>10}  {o.bound}")


def op_table_lines(result: Any) -> list[str]:
    """Every op: name, kind, phase, latency, energy and bound, one line each."""
    return [f"{_title(result)} on {result.hardware} ({result.engine} engine): {len(result.ops)} ops",
            *_op_rows(result.ops)]
