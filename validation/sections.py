"""The report's sections that are not this project's GPU kernel measurements.

* DeepBench: vendor-library timings (cuBLAS GEMM, cuDNN forward convolution) that Baidu's DeepBench
  published for a V100, predicted with the stock ``gpu/v100-sxm2-16gb`` preset by
  :mod:`validation.deepbench`. It is the development set of the library-op models (``Gemm``,
  ``Conv2d``), not a measurement of any kernel in ``validation/kernels``.
* CPU: ``validation/data/cpu-*/measurements.csv`` written by :mod:`validation.cpu_measure` (numba CPU
  kernels on the measuring machine), predicted by :func:`validation.cpu_compare.compare` with the
  interval core model.

Each section is a :class:`Section`: a title, the per-family MAPE with its budget, and notes. Budgets
(MAPE, percent) are targets set for the models, not fitted to the figures.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "DEEPBENCH_TITLE",
    "DEEPBENCH_BUDGETS_PCT",
    "SectionFamily",
    "Section",
    "is_cpu_measure_folder",
    "deepbench_section",
    "POWER_TITLE",
    "power_section",
    "cpu_section",
    "section_lines",
    "write_section",
]

DEEPBENCH_TITLE = "vendor-library timings (cuBLAS/cuDNN) published by DeepBench on V100 — development set"
# MAPE budgets of the DeepBench families, percent: all GEMM rows (fp32 and fp16) and all forward
# convolution rows, whatever algorithm cuDNN chose.
DEEPBENCH_BUDGETS_PCT: dict[str, float] = {"gemm_all": 15.0, "conv_fwd_all": 25.0}
_DEEPBENCH_FILES = ("deepbench_gemm_v100.csv", "deepbench_conv_v100.csv")
POWER_TITLE = ("board power and SM clock of gpu-roofline (gpu-benches) on A40 and L40, predicted by the power "
               "model and the power-limit governor — development set")
_CPU_MEASURE_COLUMNS = {"name", "family", "median_s", "iqr_s", "repeats", "correct"}


@dataclass(frozen=True)
class SectionFamily:
    family: str
    n: int
    mape_pct: float
    budget_pct: float | None

    @property
    def within_budget(self) -> bool | None:
        return None if self.budget_pct is None else self.mape_pct <= self.budget_pct


@dataclass
class Section:
    name: str
    title: str
    families: list[SectionFamily]
    notes: list[str] = field(default_factory=list)

    @property
    def over_budget(self) -> list[SectionFamily]:
        return [f for f in self.families if f.within_budget is False]


def deepbench_section(folder: Path) -> Section | None:
    """The DeepBench V100 check on the CSVs in ``folder``; None when they are absent."""
    if not all((folder / f).exists() for f in _DEEPBENCH_FILES):
        return None
    from validation import deepbench

    _rows, fams = deepbench.summary(folder)
    families = [
        SectionFamily(str(fam), int(r["rows"]), float(r["mape_pct"]), DEEPBENCH_BUDGETS_PCT.get(str(fam)))
        for fam, r in fams.iterrows()
    ]
    notes = [
        f"predicted with the stock preset {deepbench.PRESET}; measured times are DeepBench's (results/train/"
        "DeepBench_NV_V100.xlsx), not this project's",
        "conv_fwd_implicit_gemm_algos: the rows where cuDNN chose an implicit-GEMM algorithm (no Winograd/FFT)",
    ]
    return Section("deepbench", DEEPBENCH_TITLE, families, notes)


def power_section(folder: Path) -> Section | None:
    """The gpu-roofline power/clock check on ``folder/gpu_roofline_power_a40_l40.csv``; None when absent."""
    from validation import power

    if not (folder / power.DATA_FILE).exists():
        return None
    rs = power.rows(folder)
    families = [SectionFamily(name, n, mape, budget) for name, n, mape, budget in power.families(rs)]
    worst = max((abs(r.clock_error_pct) for r in rs if (r.gpu, r.device_id) not in power.POWER_LIMIT_W), default=0.0)
    notes = [
        "predicted with the stock presets gpu/a40-48gb and gpu/l40-48gb (archsim.estimate of an explicit Kernel "
        "per point: time model + power model + governor); measured: gpu-benches commit 1c36d50 (NVML max power, "
        "median clock of 21 samples)",
        "development set: 4 power fields per GPU were fitted on these points (validation/power_fit.py)",
        "L40 device 1 runs at 350 W (L40S-class limit and 2520 MHz boost): evaluated with power_limit = 350 W, "
        "reported without a budget",
        f"largest clock error within the budgeted families: {worst:.1f} %",
    ]
    return Section("power", POWER_TITLE, families, notes)


def is_cpu_measure_folder(folder: Path) -> bool:
    """True when ``folder/measurements.csv`` has the columns :mod:`validation.cpu_measure` writes."""
    path = folder / "measurements.csv"
    if not path.exists():
        return False
    with path.open(newline="") as fh:
        header = next(csv.reader(fh), [])
    return _CPU_MEASURE_COLUMNS <= set(header)


def cpu_section(folder: Path) -> Section | None:
    """The CPU kernels measured in ``folder`` against the core model; None without measurements."""
    if not is_cpu_measure_folder(folder):
        return None
    from validation.cpu_compare import compare

    profile = (folder / "latency_profile.csv").exists()
    rows = compare(folder / "measurements.csv", use_profile=profile)
    if not rows:
        return None
    by_family: dict[str, list[float]] = {}
    for r in rows:
        by_family.setdefault(r["family"], []).append(abs(r["error_pct"]))
    families = [SectionFamily(f, len(v), sum(v) / len(v), None) for f, v in sorted(by_family.items())]
    everything = [e for v in by_family.values() for e in v]
    families.append(SectionFamily("cpu-all", len(everything), sum(everything) / len(everything), None))
    notes = [
        "numba CPU kernels timed by validation.cpu_measure, predicted by the interval core model "
        + ("with the measured latency profile" if profile else "(preset only: no latency_profile.csv)"),
        "no budget set for the CPU families: reported, not asserted",
    ]
    return Section(folder.name, f"CPU kernels measured by this project: {folder.name}", families, notes)


def section_lines(sec: Section) -> list[str]:
    lines = [f"== {sec.title} =="]
    lines += [f"  {n}" for n in sec.notes]
    lines.append(f"  {'family':<30} {'n':>4} {'MAPE %':>8} {'budget %':>9}  verdict")
    for f in sec.families:
        budget = "-" if f.budget_pct is None else f"{f.budget_pct:.0f}"
        verdict = "no budget" if f.within_budget is None else ("ok" if f.within_budget else "OVER BUDGET")
        lines.append(f"  {f.family:<30} {f.n:>4} {f.mape_pct:>8.1f} {budget:>9}  {verdict}")
    return lines


def write_section(sec: Section, out: Path) -> Sequence[Path]:
    """``families.csv`` and ``summary.txt`` under ``out/<section name>/``."""
    dest = out / sec.name
    dest.mkdir(parents=True, exist_ok=True)
    with (dest / "families.csv").open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["family", "n", "mape_pct", "budget_pct", "within_budget"])
        for f in sec.families:
            w.writerow([f.family, f.n, f"{f.mape_pct:.3f}", "" if f.budget_pct is None else f.budget_pct,
                        "" if f.within_budget is None else f.within_budget])
    (dest / "summary.txt").write_text("\n".join(section_lines(sec)) + "\n")
    return [dest / "families.csv", dest / "summary.txt"]
