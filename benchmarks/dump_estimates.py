"""A deterministic field-by-field text dump of estimates, to check that a speed change alters no result.

``python benchmarks/dump_estimates.py OUT.txt [--quick]`` writes, one value a line with ``repr`` of
every float (so a difference in the last bit shows),

* the roofline ``estimate`` of 6 zoo models on 8 GPU and CPU presets: every field of the
  ``RunResult`` and of each ``OpResult``;
* a lone GEMM and a lone convolution on each GPU preset;
* ``estimate_many`` of each model over a few ``model_copy`` variants of two presets (every column);
* the same through a caller-owned ``archsim.Estimator`` (cold, then warm);
* the discrete-event engine on one case (results, timeline, utilisation);
* a small serial ``Sweep`` (the tidy table).

Compare two dumps with ``cmp``: a speed change must leave them byte-identical. ``_meta`` entries
that are not results (version, timing) are left out.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import archsim  # noqa: E402
from archsim.workload import zoo  # noqa: E402
from archsim.workload.ops import Conv2d, Gemm  # noqa: E402

PRESETS = ("gpu/v100-sxm2-16gb", "gpu/h100-sxm5-80gb", "gpu/a100-sxm4-40gb", "gpu/t4", "gpu/rtx-4090",
           "gpu/mi100", "cpu/epyc-genoa-9654", "cpu/skylake-16vcpu")


def models(quick: bool) -> list[tuple[str, Any]]:
    """The 6 zoo models (small batches with ``quick``)."""
    b = 1 if quick else 32
    return [
        (f"resnet50-b{b}-fp16", zoo.resnet50(batch=b, dtype="fp16")),
        ("resnet50-b2-fp32-train", zoo.resnet50(batch=2, dtype="fp32", training=True)),
        ("bert_base-b8-fp16", zoo.bert_base(batch=8, dtype="fp16")),
        ("gpt2-b1-s256-fp16", zoo.gpt2(batch=1, seq_len=256, dtype="fp16")),
        (f"mobilenet_v2-b{b}-fp32", zoo.mobilenet_v2(batch=b, dtype="fp32")),
        ("vgg16-b4-fp16", zoo.vgg16(batch=4, dtype="fp16")),
    ]


def fmt(value: Any) -> str:
    """Deterministic text of a value: floats by ``repr``, containers item by item in their order."""
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {fmt(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(fmt(v) for v in value) + "]"
    if hasattr(value, "item") and getattr(value, "shape", None) == ():  # numpy scalar
        return type(value).__name__ + ":" + fmt(value.item())
    return repr(value)


def dump_result(out: list[str], tag: str, res: Any) -> None:
    """Every field of a RunResult and of its ops (and timeline), one line each (or the error raised)."""
    if isinstance(res, Exception):
        out.append(f"{tag} error = {type(res).__name__}: {res}")
        return
    for f in dataclasses.fields(res):
        if f.name in ("ops", "timeline"):
            continue
        value = getattr(res, f.name)
        if f.name == "_meta":
            value = {k: v for k, v in value.items() if k not in ("archsim_version", "version", "elapsed_s",
                                                                 "wall_s", "created")}
        out.append(f"{tag} {f.name} = {fmt(value)}")
    for i, op in enumerate(res.ops):
        for f in dataclasses.fields(op):
            out.append(f"{tag} op{i} {f.name} = {fmt(getattr(op, f.name))}")
    for i, entry in enumerate(res.timeline):
        out.append(f"{tag} tl{i} = {fmt(dataclasses.astuple(entry))}")


def dump_frame(out: list[str], tag: str, frame: Any) -> None:
    """A DataFrame column by column, cell by cell (index included)."""
    out.append(f"{tag} index = {fmt(list(frame.index))}")
    for col in frame.columns:
        out.append(f"{tag} {col} = {fmt(list(frame[col]))}")


def run(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)``, or the archsim error it raised (dumped as such)."""
    try:
        return fn(*args, **kwargs)
    except archsim.ArchsimError as exc:
        return exc


def variants(hw: Any) -> list[Any]:
    """A few ``model_copy`` variants of a device preset (bandwidth, clock, SM or core count)."""
    out = [hw]
    if hw.kind == "gpu":
        for scale in (0.5, 1.7):
            dram = hw.dram.model_copy(update={"bandwidth": f"{hw.dram.bandwidth_bytes_per_s * scale:.6g} B/s"})
            out.append(hw.model_copy(update={"dram": dram, "sm_count": max(1, int(hw.sm_count * scale)),
                                             "clock": f"{hw.clock_hz * (0.8 + 0.2 * scale):.6g} Hz"}))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--quick", action="store_true", help="smaller batches (a faster, less complete dump)")
    args = ap.parse_args(argv)
    out: list[str] = []
    graphs = models(args.quick)
    hws = {pid: archsim.load_preset(pid) for pid in PRESETS}
    for pid, hw in hws.items():
        for name, graph in graphs:
            dump_result(out, f"estimate {pid} {name}", run(archsim.estimate, graph, hw))
        if hw.kind == "gpu":
            for dtype in ("fp16", "fp32"):
                dump_result(out, f"gemm {pid} {dtype}", run(archsim.estimate, Gemm(4096, 4096, 4096, dtype=dtype), hw))
                dump_result(out, f"gemm-small {pid} {dtype}",
                            run(archsim.estimate, Gemm(128, 768, 3072, dtype=dtype, batch=4), hw))
            conv = Conv2d(32, 64, 64, 56, 56, kernel=(3, 3), padding=(1, 1), dtype="fp16")
            dump_result(out, f"conv {pid}", run(archsim.estimate, conv, hw))
    for pid in ("gpu/v100-sxm2-16gb", "gpu/h100-sxm5-80gb"):
        pts = variants(hws[pid])
        for name, graph in graphs:
            dump_frame(out, f"many {pid} {name}", archsim.estimate_many(graph, pts))
            for i, p in enumerate(pts):
                dump_result(out, f"point {pid} {name} {i}", run(archsim.estimate, graph, p))
    est = archsim.Estimator()
    for rep in ("cold", "warm"):
        for name, graph in graphs[:3]:
            dump_result(out, f"estimator-{rep} {name}", run(est.estimate, graph, hws["gpu/v100-sxm2-16gb"]))
    dgx = archsim.load_preset("system/dgx-1-v100")
    dump_result(out, "system dgx-1-v100 resnet50", run(archsim.estimate, graphs[0][1], dgx))
    dump_result(out, "des dgx-1-v100 resnet50", run(archsim.estimate, zoo.resnet50(batch=8, dtype="fp16"), dgx,
                                                               engine="des"))
    sweep = archsim.Sweep("gpu/h100-sxm5-80gb", axes={"gpu.dram.bandwidth": ["1 TB/s", "3.35 TB/s", "8 TB/s"],
                                                     "gpu.sm_count": [66, 132]})
    table = sweep.run(zoo.resnet50(batch=1, dtype="fp16"), executor="serial", progress=False)
    dump_frame(out, "sweep h100", table)
    args.out.write_text("\n".join(out) + "\n")
    print(f"{len(out)} lines -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
