"""``python -m validation report``: archsim's predictions against the committed measurements.

For every device folder under ``validation/data/`` with a ``measurements.csv``, each measured case is
rebuilt from the kernel modules (by name), described, and predicted with ``archsim.estimate`` on the
preset recorded in ``provenance.json``. The predictor receives the case and the hardware only: the
measured times are joined to the predictions afterwards. Per kernel family the report gives the mean
absolute percentage error (MAPE) and the mean signed error (positive: archsim predicts too slow), a
predicted-vs-measured log-log scatter and an error-vs-size plot, and fails (exit status 1) when a
family exceeds its error budget.

The DeepBench V100 library timings and the CPU measurements are separate sections
(:mod:`validation.sections`), labelled so that neither is read as a measurement of the GPU kernels.

Error budgets (MAPE, percent): the table ``BUDGETS_PCT`` below. Families in ``UNBUDGETED`` are reported
without a budget, for the reason given there.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from validation import dataio, sections
from validation.cases import KernelCase

__all__ = [
    "BUDGETS_PCT",
    "KERNEL_UNMET",
    "UNBUDGETED",
    "Predictor",
    "PredictedRow",
    "FamilyError",
    "DeviceReport",
    "archsim_predict",
    "case_index",
    "family_errors",
    "report_device",
    "run_report",
]

# Error budget per family: MAPE of predicted vs measured median time, in percent.
BUDGETS_PCT: dict[str, float] = {
    "bandwidth": 10.0,  # copy / scale / triad: DRAM bandwidth and launch overhead
    "elementwise": 10.0,  # relu, gelu
    "reduction": 15.0,  # shared-memory tree sum
    "softmax": 15.0,
    "layernorm": 15.0,
    "matmul-tiled": 15.0,  # shared-memory tiled fp32 matmul, T = 8, 16, 32
    "conv": 15.0,  # direct conv2d
}
UNBUDGETED: dict[str, str] = {
    "matmul-naive": "a deliberately poor kernel: shows the gap to the tiled kernel, not a model target",
    "gemm-cublas": "vendor library: reported against the preset's calibrated matmul rate",
    "peak-compute": "a ceiling measurement (FMA chains) rather than a workload",
    "latency": "pointer chase: checks the memory-latency fields, reported per working set",
}

# Known misses of the budgets above on a measured device, keyed "<device folder>/<family>": the MAPE
# ceiling the family must stay at or under (no regression) and what the measurements show. Nothing in the
# model was fitted to these rows: each entry is a held-out result, reported as it came out.
KERNEL_UNMET: dict[str, tuple[float, str]] = {
    "h200/bandwidth": (13.7, "too fast at every size under 16M elements: the smallest kernels take 4.2-4.5 us "
                             "from event to event against 3.83 us predicted, and 64K-1M elements 17-26 % "
                             "(the ramp from the launch floor to the plateau is ~1-3 us longer than the model's "
                             "one latency per wave); the 2^28-element plateau depends on the access mix, which "
                             "the model's one DRAM efficiency does not: copy/scale 3.02 TB/s grid-stride and "
                             "2.72 TB/s one element per thread (1M blocks of 256), triad 3.46-3.62 TB/s "
                             "(2 reads per write), predicted 3.2 TB/s for all (triad 8-14 % too slow)"),
    "h200/elementwise": (14.7, "relu and gelu as the bandwidth family: 7-29 % too fast below 2^22 elements (the "
                               "launch floor and ramp), 7-14 % at 2^25-2^28 (relu 3.02 TB/s, gelu 2.83 TB/s "
                               "measured, 3.28 TB/s predicted)"),
    "h200/reduction": (31.2, "the one-launch tree sum (a ticket atomic, a threadfence, the last block summing "
                             "the partials) takes 6.5-7.4 us up to 2^19 elements against 3.8-4.3 us predicted "
                             "(42-44 %): the Reduce op prices a library reduction's launch and one pass, not "
                             "the last block's serial finish; 2^25 -9 %, 2^28 within 0.2 %"),
    "h200/softmax": (50.4, "one 256-thread block per row, three passes over the row (max, sum of exp, write), "
                           "each thread's loads one at a time in a loop: 1.1-1.7 TB/s measured from 8192 rows up "
                           "where the Softmax op, priced as a library kernel streaming the row once at the DRAM "
                           "plateau, predicts "
                           "3.2 TB/s (36-62 % too fast); describing this kernel as a Kernel with its passes and "
                           "bytes in flight is the fix"),
    "h200/layernorm": (53.7, "as softmax (same block-per-row, three-pass structure): 1.1-1.7 TB/s measured from "
                             "8192 rows up, 44-64 % too fast"),
    "h200/matmul-tiled": (27.8, "the description's traffic is the same for every tile size T, so T = 8, 16 and "
                                "32 are predicted alike (36 us at 512^3); measured, T = 32 is within 3.6-11 % "
                                "from 512^3 up, T = 16 6-27 %, T = 8 39-51 % too fast (a block of 64 threads and "
                                "two barriers per 8 FMAs per thread); at 128^3 (16-256 blocks on 132 SMs) "
                                "34-72 %"),
    "h200/conv": (91.2, "the direct convolution runs at 0.3-0.9 TFLOP/s against its L1 bound of ~8 TFLOP/s: "
                        "its compiled inner loop (numba-cuda 0.30 PTX, sm_90) spends ~20 64-bit integer "
                        "instructions (index arithmetic, numba's negative-index wrap, the padding tests) per "
                        "FMA, so it is bound by integer issue, which a Kernel description cannot declare yet"),
}

Predictor = Callable[[KernelCase, Any], float]
Log = Callable[[str], None]


def archsim_predict(case: KernelCase, hardware: Any) -> float:
    """Seconds archsim's roofline engine predicts for the case's description (summed over a list)."""
    import archsim

    work = case.describe()
    works = work if isinstance(work, list | tuple) else [work]
    return float(sum(archsim.estimate(w, hardware).latency_s for w in works))


def _load_preset(preset: str) -> Any:
    import archsim

    return archsim.load_preset(preset)


@dataclass(frozen=True)
class PredictedRow:
    name: str
    family: str
    measured_s: float
    q1_s: float
    q3_s: float
    predicted_s: float
    bytes_moved: int
    flop: int

    @property
    def error_pct(self) -> float:
        """Signed relative error of the prediction, percent of the measurement."""
        return 100.0 * (self.predicted_s - self.measured_s) / self.measured_s


@dataclass(frozen=True)
class FamilyError(sections.BudgetVerdict):
    family: str
    n: int
    mape_pct: float
    signed_pct: float
    budget_pct: float | None
    ceiling_pct: float | None = None  # a known miss (KERNEL_UNMET): acceptable at or under this MAPE


@dataclass
class DeviceReport:
    device: str
    preset: str | None
    rows: list[PredictedRow] = field(default_factory=list)
    families: list[FamilyError] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)

    @property
    def over_budget(self) -> list[FamilyError]:
        """Families over budget that are not known misses under their ceiling (these fail the report)."""
        return [f for f in self.families if not f.acceptable]


def case_index(targets: Sequence[str], packages: dict[str, list[str]] | None = None) -> dict[str, KernelCase]:
    """Every case of every size set, by name (the same name at two size sets is the same case)."""
    from validation.discover import discover

    index: dict[str, KernelCase] = {}
    for target in targets:
        for sizes in ("tiny", "quick", "full"):
            pk = packages.get(target) if packages else None
            for case in discover(target, sizes, pk):
                index.setdefault(case.name, case)
    return index


def family_errors(
    rows: Sequence[PredictedRow], budgets: dict[str, float] | None = None, device: str | None = None
) -> list[FamilyError]:
    """MAPE and mean signed error per family, with its budget (None: unbudgeted) and, for a known miss of
    ``device`` (:data:`KERNEL_UNMET`), its ceiling; sorted by family."""
    budgets = BUDGETS_PCT if budgets is None else budgets
    out = []
    for fam in sorted({r.family for r in rows}):
        errs = [r.error_pct for r in rows if r.family == fam]
        unmet = KERNEL_UNMET.get(f"{device}/{fam}")
        out.append(
            FamilyError(
                fam, len(errs), sum(abs(e) for e in errs) / len(errs), sum(errs) / len(errs), budgets.get(fam),
                None if unmet is None else unmet[0],
            )
        )
    return out


def report_device(
    folder: Path,
    cases: dict[str, KernelCase],
    predict: Predictor,
    load_hardware: Callable[[str], Any],
    preset: str | None = None,
) -> DeviceReport | None:
    """Predict every measured case of ``folder``; None when the folder has no measurements."""
    csv_path = folder / "measurements.csv"
    if not csv_path.exists():
        return None
    measured = dataio.read_measurements(csv_path)
    if not measured:
        return None
    prov_path = folder / "provenance.json"
    prov = dataio.read_json(prov_path) if prov_path.exists() else {}
    preset = preset or prov.get("preset")
    rep = DeviceReport(device=folder.name, preset=preset)
    if preset is None:
        return rep
    hardware = load_hardware(preset)
    # Predictions first, from the cases alone; the measurements are joined afterwards.
    known = [m.name for m in measured if m.name in cases]
    predicted = {name: predict(cases[name], hardware) for name in known}
    for name, seconds in predicted.items():
        if not (isinstance(seconds, float | int) and 0.0 < seconds < float("inf")):
            raise ValueError(f"{name}: predictor returned {seconds!r}; expected a positive finite time in s")
    for m in measured:
        if m.name not in cases:
            rep.unknown.append(m.name)
            continue
        rep.rows.append(
            PredictedRow(
                m.name, m.family, m.median_s, m.q1_s, m.q3_s, predicted[m.name], m.bytes_moved, m.flop
            )
        )
    rep.families = family_errors(rep.rows, device=rep.device)
    return rep


def _write_tables(rep: DeviceReport, out: Path) -> None:
    with (out / "predictions.csv").open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(
            [
                "name",
                "family",
                "measured_s",
                "q1_s",
                "q3_s",
                "predicted_s",
                "error_pct",
                "bytes_moved",
                "flop",
            ]
        )
        for r in rep.rows:
            w.writerow(
                [
                    r.name,
                    r.family,
                    repr(r.measured_s),
                    repr(r.q1_s),
                    repr(r.q3_s),
                    repr(r.predicted_s),
                    f"{r.error_pct:.3f}",
                    r.bytes_moved,
                    r.flop,
                ]
            )
    with (out / "families.csv").open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["family", "n", "mape_pct", "signed_pct", "budget_pct", "within_budget", "ceiling_pct"])
        for f in rep.families:
            w.writerow(
                [
                    f.family,
                    f.n,
                    f"{f.mape_pct:.3f}",
                    f"{f.signed_pct:.3f}",
                    "" if f.budget_pct is None else f.budget_pct,
                    "" if f.within_budget is None else f.within_budget,
                    "" if f.ceiling_pct is None else f.ceiling_pct,
                ]
            )


def summary_lines(rep: DeviceReport) -> list[str]:
    lines = [f"{rep.device} (preset {rep.preset}): {len(rep.rows)} cases"]
    lines.append(f"  {'family':<14} {'n':>4} {'MAPE %':>8} {'signed %':>9} {'budget %':>9}  verdict")
    for f in rep.families:
        budget = "-" if f.budget_pct is None else f"{f.budget_pct:.0f}"
        if f.within_budget is None:
            verdict = "unbudgeted: " + UNBUDGETED.get(f.family, "no budget set")
        elif f.within_budget:
            verdict = "ok"
        elif f.acceptable:
            verdict = f"known miss (ceiling {f.ceiling_pct:g} %, see report.KERNEL_UNMET)"
        else:
            verdict = "OVER BUDGET"
        lines.append(
            f"  {f.family:<14} {f.n:>4} {f.mape_pct:>8.1f} {f.signed_pct:>+9.1f} {budget:>9}  {verdict}"
        )
    for name in rep.unknown:
        lines.append(f"  unknown case (no kernel of that name): {name}")
    return lines


def _power(folder: Path, out_dir: Path, log: Log) -> sections.Section | None:
    # The power section, and beside it the per-point table and the power-vs-intensity figure.
    sec = sections.power_section(folder)
    if sec is not None:
        from validation import power

        rs = power.rows(folder)
        for path in [power.write_rows(rs, out_dir / "power"), *power.write_figure(rs, out_dir / "power")]:
            log(f"  wrote {path}")
    return sec


SectionBuilder = Callable[[Path, Path, Log], "sections.Section | None"]

# Folders reported as a section of their own: folder name -> (builder, what to log when it finds no
# data). CPU measurement folders are recognised by their content (sections.is_cpu_measure_folder).
OWN_SECTIONS: dict[str, tuple[SectionBuilder, str]] = {
    "deepbench": (lambda folder, _out, _log: sections.deepbench_section(folder), "no DeepBench CSVs in {folder}"),
    "power": (_power, "no gpu-roofline power data in {folder}"),
    "gpu-stream": (lambda folder, _out, _log: sections.gpu_stream_section(folder), "no gpu-stream CSV in {folder}"),
}


def _own_section(folder: Path) -> tuple[SectionBuilder, str] | None:
    if folder.name in OWN_SECTIONS:
        return OWN_SECTIONS[folder.name]
    if sections.is_cpu_measure_folder(folder):
        return (lambda f, _out, _log: sections.cpu_section(f),
                f"no CPU measurements for {folder.name} (no case of that name)")
    return None


def run_report(
    data_dir: Path,
    out_dir: Path,
    devices: Sequence[str] | None = None,
    preset: str | None = None,
    log: Log | None = None,
    predict: Predictor = archsim_predict,
    load_hardware: Callable[[str], Any] = _load_preset,
    packages: dict[str, list[str]] | None = None,
    software: bool = False,
) -> int:
    """Report every device folder; 0 if all budgeted families are within budget, 1 if one is over, 2 for
    data that cannot be predicted (no preset, unknown case names).

    ``data_dir/deepbench/`` (DeepBench's published V100, P100 and T4 library timings),
    ``data_dir/gpu-stream/`` (gpu-benches streaming kernels on ten GPUs) and ``cpu-*`` folders in the
    format of :mod:`validation.cpu_measure` are reported as their own sections (:mod:`validation.sections`);
    a DeepBench or gpu-stream family over its budget also gives status 1. ``software=True`` adds the software-stack
    section (:mod:`validation.software`: whole-model times under framework profiles), whose budgets
    count the same way."""
    from validation import plots

    log = log or (lambda _msg: None)
    folders = (
        [data_dir / d for d in devices] if devices else sorted(p for p in data_dir.glob("*") if p.is_dir())
    )
    if not folders:
        log(f"no measurements: no device folders under {data_dir}")
        return 0
    reports = []
    extra: list[sections.Section] = []
    for folder in folders:
        own = _own_section(folder)
        if own is not None:
            build, missing = own
            sec = build(folder, out_dir, log)
            if sec is None:
                log(missing.format(folder=folder))
            else:
                extra.append(sec)
            continue
        csv_path = folder / "measurements.csv"
        targets = sorted({m.target for m in dataio.read_measurements(csv_path)}) if csv_path.exists() else []
        rep = report_device(
            folder, case_index(targets, packages) if targets else {}, predict, load_hardware, preset
        )
        if rep is None:
            log(f"no measurements for {folder.name} ({csv_path} missing or empty)")
            continue
        if rep.preset is None:
            log(f"{folder.name}: no preset recorded in provenance.json; pass --preset")
        reports.append(rep)
    status = 0
    for rep in reports:
        log(f"== kernels measured by this project: {rep.device} ==")
        for line in summary_lines(rep):
            log(line)
        if rep.preset is None or rep.unknown:
            status = max(status, 2)
        if rep.over_budget:
            status = max(status, 1)
        if rep.rows:
            dest = out_dir / rep.device
            dest.mkdir(parents=True, exist_ok=True)
            _write_tables(rep, dest)
            (dest / "summary.txt").write_text("\n".join(summary_lines(rep)) + "\n")
            for path in plots.write_plots(rep, dest, BUDGETS_PCT):
                log(f"  wrote {path}")
    if software:
        from validation.software import software_section

        extra.append(software_section())
    for sec in extra:
        for line in sections.section_lines(sec):
            log(line)
        if sec.over_budget:
            status = max(status, 1)
        for path in sections.write_section(sec, out_dir):
            log(f"  wrote {path}")
    return status
