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


def _runs_tf32(hardware: Any, software: str | None, device: str | None) -> bool:
    """Whether the run's software profile turns fp32 matrix ops into TF32 on this hardware."""
    if not software or software == "none":
        return False
    from archsim.engines.host import tf32_available
    from archsim.errors import ArchsimError
    from archsim.software import load_software

    try:
        profile = load_software(software)
    except ArchsimError:  # a profile built in code, not on disk: no hint rather than a wrong one
        return False
    return profile.precision.allow_tf32 and tf32_available(hardware, device)


def precision_note(hardware: Any, precision: str | None, device: str | None = None, onnx: bool = False,
                   software: str | None = None) -> str | None:
    """A hint when the run's precision leaves a much faster unit of the device idle (fp32 on Tensor Cores).

    ``onnx``: the workload came from an ONNX file, whose types the file fixes (``--dtype`` does not apply),
    so the hint says how to get the faster precision there. ``software``: the run's profile name; one
    that allows TF32 runs fp32 matrix ops at the TF32 rate, which the hint then quotes."""
    if precision is None:
        return None
    mine = peak_for(hardware, precision, device)
    what = f"{precision} peaks at"
    if precision == "fp32" and _runs_tf32(hardware, software, device):
        mine = peak_for(hardware, "tf32", device) or mine
        what = f"fp32 matrix ops run as tf32 under {software}'s allow_tf32, peaking at"
    if mine is None:
        return None
    for other in ("bf16", "fp16"):
        theirs = peak_for(hardware, other, device)
        if other != precision and theirs is not None and theirs[1] >= 2 * mine[1]:
            how = (f"an ONNX file exported in {other} would run" if onnx else f"--dtype {other} runs")
            return (f"note: {what} {human(mine[1], 'flop_rate')} ({mine[0]}) on this device; "
                    f"{how} on {theirs[0]} ({human(theirs[1], 'flop_rate')}), as mixed-precision "
                    "training and inference usually do")
    return None


def _software_name(result: Any) -> str | None:
    sw = result._meta.get("software")
    return sw.get("name") if isinstance(sw, dict) else sw


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
    if whole <= 0:
        return "-"
    pct = 100 * part / whole
    # below 1%, two significant digits ("0.079%"), not a "0%" that reads as nothing
    return f"{pct:.2g}%" if 0 < pct < 0.995 else f"{pct:.0f}%"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _rate(rate: float, unit: str) -> str:
    """Three significant digits, thousands separated: ``1,690,000 samples/s``, ``15,000 samples/s``."""
    if rate >= 100:
        return f"{float(f'{rate:.3g}'):,.0f} {unit}"
    return f"{rate:.3g} {unit}"


def summary_lines(result: Any, hardware: Any = None, *, device: str | None = None, top: int = 5,
                  onnx: bool = False) -> list[str]:
    """The summary ``archsim estimate`` prints: totals, throughput, energy by component, time by bound and
    phase, the ``top`` slowest ops, and a precision hint.

    A data-parallel run holds one copy of every op per GPU: its peak is that of all its GPUs, its time
    by bound is GPU time summed over them, and each of the slowest ops is listed once."""
    w = result._meta.get("workload") or {}
    opts = result._meta.get("options") or {}
    replicas = int((opts.get("data_parallel") or {}).get("gpus") or 1)
    lat, energy = result.latency_s, result.energy_j
    count = _count(len(result.ops), "op") + (f" ({replicas} GPUs x {len(result.ops) // replicas})"
                                            if replicas > 1 else "")
    lines = [f"{_title(result)} on {result.hardware} ({result.engine} engine): {count}"]
    rows = [("latency", human(lat, "time")), ("energy", human(energy, "energy"))]
    if lat > 0:
        rows.append(("average power", human(energy / lat, "power")))
        if w.get("batch"):
            # a discrete-event run may hold several steps and several data-parallel replicas
            rate = w["batch"] * (opts.get("steps") or 1) * replicas / lat
            unit = "tokens/s" if str(w.get("model", "")).endswith(".decode") else "samples/s"
            rows.append(("throughput", _rate(rate, unit)))
            per = "token" if unit == "tokens/s" else "sample"
            rows.append((f"energy per {per}", human(energy / (rate * lat), "energy")))
        achieved = result.flop / lat
        peak = peak_for(hardware, w.get("precision"), device) if hardware is not None else None
        text = human(achieved, "flop_rate")
        if peak is not None:
            across = f" on {replicas} GPUs" if replicas > 1 else ""
            text += (f" ({_share(achieved, replicas * peak[1])} of {human(replicas * peak[1], 'flop_rate')}, "
                     f"{peak[0]}{across})")
        rows.append(("achieved", text))
    # FLOP take the SI prefixes of FLOP/s (there is no bare-FLOP unit in archsim.units)
    rows.append(("work", human(result.flop, "flop_rate").removesuffix("/s") if result.flop > 0 else "0 FLOP"))
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
    summed = f" (GPU time summed over {replicas} GPUs)" if replicas > 1 else ""
    lines.append(f"time by bound{summed}: " + ", ".join(
        f"{b} {human(t, 'time')} ({_share(t, serial)}, {_count(int(n), 'op')})"
        for b, (t, n) in sorted(by_bound.items(), key=lambda kv: -kv[1][0])))
    if len(by_phase) > 1:
        lines.append(f"time by phase{summed}: " + ", ".join(f"{p} {human(t, 'time')} ({_share(t, serial)})"
                                                            for p, t in by_phase.items()))
    # a data-parallel run repeats every op per GPU: list each once (names are unique within a replica)
    distinct = list({o.name: o for o in sorted(result.ops, key=lambda o: o.latency_s)}.values()) \
        if replicas > 1 else list(result.ops)
    slow = sorted(distinct, key=lambda o: -o.latency_s)[:top]
    if slow:
        each = f", each on all {replicas} GPUs" if replicas > 1 else ""
        lines.append(f"slowest {len(slow)} of {len(distinct)} ops{each} (every op: --per-op):")
        lines += list(_op_rows(slow, indent=2))
    note = (precision_note(hardware, w.get("precision"), device, onnx=onnx, software=_software_name(result))
            if hardware is not None else None)
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
