"""What every scenario shares: command line, output folder, tables, figures, published comparisons.

A scenario module defines ``NAME`` and ``run(smoke: bool) -> ScenarioOutput`` and ends with
``if __name__ == "__main__": raise SystemExit(main(run, NAME))``. :func:`main` parses ``--smoke``
and ``--out``, writes ``results/<name>/`` (CSV tables, PDF+PNG figures, ``summary.json``) and prints
the headline table and each comparison with a published figure and its error.

``--smoke`` runs a reduced version in seconds (fewer sizes, smaller batches) whose summary the test
suite compares with a golden file in ``tests/scenarios/golden/``.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from archsim.errors import ArchsimError

__all__ = ["Comparison", "ScenarioOutput", "main", "write_outputs", "format_report"]


@dataclass(frozen=True)
class Comparison:
    """One number archsim predicts next to the published figure it reproduces.

    ``published`` may be ``None`` for a qualitative claim (then ``claim`` says what is checked and
    ``holds`` whether archsim agrees).
    """

    what: str
    predicted: float
    published: float | None
    unit: str
    source: str
    claim: str = ""
    holds: bool | None = None

    @property
    def error(self) -> float | None:
        """Signed relative error (predicted - published) / published, or None."""
        if self.published in (None, 0):
            return None
        return (self.predicted - self.published) / self.published  # type: ignore[operator]


@dataclass
class ScenarioOutput:
    """What a scenario produced: headline numbers, tables, figures and published comparisons.

    ``summary`` holds plain floats/ints/strings only (it is the golden-checked part).
    """

    summary: dict[str, Any]
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    figures: dict[str, Any] = field(default_factory=dict)
    comparisons: list[Comparison] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _fmt(value: float) -> str:
    if value == 0 or not math.isfinite(value):
        return f"{value:g}"
    return f"{value:.4g}"


def format_report(name: str, out: ScenarioOutput) -> str:
    """The text a scenario prints: summary lines, then one line per published comparison."""
    lines = [f"== {name} =="]
    for key, value in out.summary.items():
        lines.append(f"  {key}: {_fmt(value) if isinstance(value, float) else value}")
    if out.comparisons:
        lines.append("  comparison with published figures:")
        for c in out.comparisons:
            if c.published is not None:
                err = c.error
                err_s = f"{err * 100:+.1f}%" if err is not None else "n/a"
                lines.append(f"    {c.what}: archsim {_fmt(c.predicted)} {c.unit} vs published "
                             f"{_fmt(c.published)} {c.unit} ({err_s})  [{c.source}]")
            else:
                verdict = {True: "holds", False: "does NOT hold", None: "n/a"}[c.holds]
                lines.append(f"    {c.what}: {c.claim}: {verdict} (archsim {_fmt(c.predicted)} {c.unit})"
                             f"  [{c.source}]")
    lines.extend(f"  note: {n}" for n in out.notes)
    return "\n".join(lines)


def write_outputs(name: str, out: ScenarioOutput, folder: Path) -> list[Path]:
    """Write tables (CSV), figures (PDF+PNG) and summary.json into ``folder``; return the paths."""
    from archsim.plot import save

    folder.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for key, frame in out.tables.items():
        path = folder / f"{key}.csv"
        frame.to_csv(path, index=False)
        written.append(path)
    for key, fig in out.figures.items():
        written.extend(Path(p) for p in save(fig, folder / key))
    summary = {
        "scenario": name,
        "summary": out.summary,
        "comparisons": [
            {"what": c.what, "predicted": c.predicted, "published": c.published, "unit": c.unit,
             "error": c.error, "source": c.source, "claim": c.claim, "holds": c.holds}
            for c in out.comparisons
        ],
    }
    path = folder / "summary.json"
    path.write_text(json.dumps(summary, indent=2, sort_keys=True, default=float) + "\n")
    written.append(path)
    return written


def main(run: Callable[[bool], ScenarioOutput], name: str, argv: Sequence[str] | None = None) -> int:
    """Command line of a scenario: ``[--smoke] [--out DIR] [--no-plots]``."""
    parser = argparse.ArgumentParser(prog=f"scenarios/{name}.py", description=(run.__doc__ or "").strip())
    parser.add_argument("--smoke", action="store_true", help="a reduced run that takes seconds")
    parser.add_argument("--out", type=Path, default=Path("results") / name, help="output folder")
    parser.add_argument("--no-plots", action="store_true", help="skip writing figures")
    args = parser.parse_args(argv)
    import matplotlib

    matplotlib.use("Agg")
    try:
        out = run(args.smoke)
    except ArchsimError as exc:
        print(f"{name}: error: {exc}", file=sys.stderr)
        return 2
    if args.no_plots:
        out.figures.clear()
    print(format_report(name, out))
    written = write_outputs(name, out, args.out)
    print(f"  wrote {len(written)} files to {args.out}/")
    return 0
