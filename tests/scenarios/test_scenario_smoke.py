"""Every scenario runs in smoke mode and matches its golden summary.

Goldens live in ``tests/scenarios/golden/<name>.json`` with their provenance; regenerate them with
``python -m pytest tests/scenarios --update-golden`` after a deliberate model change (never by
pasting printed numbers).
"""

from __future__ import annotations

import datetime as dt
import importlib
import json
import math
import pkgutil
from pathlib import Path

import matplotlib
import matplotlib.pyplot as plt
import pytest

import archsim
import scenarios
from scenarios.harness import ScenarioOutput, format_report, write_outputs

matplotlib.use("Agg")

GOLDEN = Path(__file__).parent / "golden"
NAMES = sorted(m.name for m in pkgutil.iter_modules(scenarios.__path__) if m.name != "harness"
               and not m.name.startswith("_"))


def _close(a: object, b: object) -> bool:
    if isinstance(a, float | int) and isinstance(b, float | int) and not isinstance(a, bool):
        return math.isclose(float(a), float(b), rel_tol=1e-6, abs_tol=1e-12)
    return a == b


def test_there_are_scenarios() -> None:
    assert len(NAMES) >= 1


@pytest.mark.parametrize("name", NAMES)
def test_scenario_smoke_matches_golden(name: str, tmp_path: Path, update_golden: bool) -> None:
    module = importlib.import_module(f"scenarios.{name}")
    assert module.NAME == name
    assert module.__doc__ and len(module.__doc__) > 200, "a scenario states its question, presets and figures"
    out = module.run(True)
    assert isinstance(out, ScenarioOutput)
    assert out.summary, "a scenario reports headline numbers"
    assert out.comparisons, "a scenario compares with the published figure it reproduces"
    text = format_report(name, out)
    assert name in text
    written = write_outputs(name, out, tmp_path)
    assert (tmp_path / "summary.json").is_file()
    for fig in out.figures:
        assert (tmp_path / f"{fig}.pdf") in written and (tmp_path / f"{fig}.png") in written
    # paper-ready: no overlapping or clipped text in any figure (matplotlib's text bounding boxes)
    problems = {key: archsim.plot.layout_problems(fig) for key, fig in out.figures.items()}
    assert not {k: v for k, v in problems.items() if v}, problems
    plt.close("all")
    summary = json.loads(json.dumps(out.summary, default=float))
    path = GOLDEN / f"{name}.json"
    if update_golden or not path.exists():
        if not update_golden:
            pytest.fail(f"no golden summary for {name}: run pytest tests/scenarios --update-golden")
        record = {
            "provenance": {
                "generated_by": "python -m pytest tests/scenarios --update-golden",
                "archsim_version": archsim.__version__,
                "date": dt.date.today().isoformat(),
                "mode": "smoke",
            },
            "summary": summary,
        }
        path.write_text(json.dumps(record, indent=2, sort_keys=True) + "\n")
        return
    golden = json.loads(path.read_text())["summary"]
    assert set(golden) == set(summary), f"summary keys changed: {sorted(set(golden) ^ set(summary))}"
    bad = {k: (golden[k], summary[k]) for k in golden if not _close(golden[k], summary[k])}
    assert not bad, f"{name} smoke summary differs from golden (golden, now): {bad}"
