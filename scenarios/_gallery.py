"""Redraw the figure gallery: ``python -m scenarios._gallery [--smoke] [--out docs/gallery]``.

Writes one figure of every type archsim draws (``types/<kind>.png`` and ``types/<kind>_text.png``, at
one-column and text width: roofline, breakdown by op and by component, timeline, sweep lines,
heatmap, Pareto front, grouped bars, validation scatter) and the main figure of every scenario
(``<scenario>.png``, the README's gallery), each with its data as CSV, and checks each with
:func:`archsim.plot.layout_problems` (overlapping or clipped text). Exit code 1 if any figure has a
problem. ``--smoke`` runs the scenarios' seconds-long versions (the figures the tests check).
"""

from __future__ import annotations

if __name__ == "__main__" and __package__ in (None, ""):  # run as a file: make the repository root importable
    import sys
    from pathlib import Path as _Path

    sys.path.insert(0, str(_Path(__file__).resolve().parents[1]))

import argparse
import importlib
import pkgutil
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

# The scenario figure shown in the README's gallery (default: the scenario's first figure).
MAIN_FIGURE = {"input_pipeline": "gantt", "data_movement_energy": "ratio", "hbm_sweep": "pareto"}


def _sweep_table() -> Any:
    import archsim

    hw = archsim.load_preset("gpu/h100-sxm5-80gb")
    axes = {"gpu.dram.bandwidth": ["1 TB/s", "2 TB/s", "3.35 TB/s", "5 TB/s"], "gpu.sm_count": [66, 100, 132]}
    return archsim.Sweep(hw, axes).run(archsim.zoo.bert_base(batch=8, dtype="fp16"), executor="serial")


def figure_types() -> dict[str, Callable[[str], Any]]:
    """A small example of every figure type: name -> a function of the width ("column" or "text")."""
    import pandas as pd

    import archsim
    from archsim import plot

    h200 = archsim.load_preset("gpu/h200-sxm-141gb")
    bert = archsim.estimate(archsim.zoo.bert_base(batch=8, seq_len=128, dtype="fp16"), h200)
    r50 = archsim.estimate(archsim.zoo.resnet50(batch=32, dtype="fp16", training=True), h200)
    dp = archsim.estimate(archsim.zoo.resnet18(batch=32, dtype="fp16", training=True),
                          archsim.load_preset("system/dgx-a100"), engine="des",
                          data_parallel=archsim.DataParallel(gpus=8))
    table = _sweep_table()
    bw, sm = "gpu.dram.bandwidth_bytes_per_s", "gpu.sm_count"
    swept = "bert_base, batch 8, fp16 on NVIDIA H100 SXM5 80GB"  # what a sweep spec titles its plots
    speed = pd.DataFrame({"model": ["MLP", "MLP", "CNN", "CNN"], "gpu": ["K80", "P100", "K80", "P100"],
                          "speedup": [2.6, 4.0, 4.0, 10.6], "published": [1.2, 1.5, 4.4, 9.1]})
    val = pd.DataFrame({"family": ["gemm", "gemm", "stream", "stream", "conv"],
                        "predicted_s": [1e-3, 2e-3, 1e-4, 3e-4, 5e-4],
                        "measured_s": [1.1e-3, 1.6e-3, 1e-4, 2e-4, 6e-4]})
    return {
        "roofline": lambda w: plot.roofline(bert, h200, width=w),
        "breakdown_op": lambda w: plot.breakdown(r50, by="op", width=w),
        "breakdown_component": lambda w: plot.breakdown(r50, by="component", width=w),
        "timeline": lambda w: plot.timeline(dp, width=w),
        "timeline_by_op": lambda w: plot.timeline(dp, color_by="op", width=w),
        "sweep_lines": lambda w: plot.sweep_lines(table, bw, "latency_s", hue=sm, width=w, title=swept),
        "heatmap": lambda w: plot.heatmap(table, bw, sm, "latency_s", width=w, title=swept),
        "pareto": lambda w: plot.pareto(table, hue=sm, width=w, title=swept),
        "bars": lambda w: plot.bars(speed, "model", "speedup", "gpu", marker="published", reference=1.0, logy=True,
                                    width=w),
        "validation_scatter": lambda w: plot.validation_scatter(val, width=w),
    }


def _scenario_names() -> list[str]:
    import scenarios

    return sorted(m.name for m in pkgutil.iter_modules(scenarios.__path__)
                  if m.name != "harness" and not m.name.startswith("_"))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scenarios._gallery", description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="the scenarios' seconds-long versions")
    parser.add_argument("--out", type=Path, default=Path("docs") / "gallery", help="gallery folder")
    parser.add_argument("--types-only", action="store_true", help="only the figure types, no scenarios")
    args = parser.parse_args(argv)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from archsim.plot import layout_problems, save

    problems: list[str] = []

    def write(fig: Any, stem: Path) -> None:
        found = layout_problems(fig)
        problems.extend(f"{stem}: {p}" for p in found)
        save(fig, stem, formats=("png",))
        print(f"{stem}.png" + (f"  ({len(found)} layout problems)" if found else ""))
        plt.close(fig)

    for kind, draw in figure_types().items():
        write(draw("column"), args.out / "types" / kind)
        write(draw("text"), args.out / "types" / f"{kind}_text")
    if not args.types_only:
        for name in _scenario_names():
            out = importlib.import_module(f"scenarios.{name}").run(args.smoke)
            key = MAIN_FIGURE.get(name, next(iter(out.figures)))
            for other, fig in out.figures.items():
                if other != key:
                    problems.extend(f"{name}/{other}: {p}" for p in layout_problems(fig))
                    plt.close(fig)
            write(out.figures[key], args.out / name)
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
