"""Convolution parallelism: a 3x3 convolution is embarrassingly parallel -- until it is not.

Question: every output pixel of a convolution can be computed independently, so its time should
fall as 1/p with the number of processors p. How does a 3x3 convolution's time scale with the
number of streaming multiprocessors (SMs) of a V100 and with the number of cores of an EPYC 9654,
and where does the speedup curve stop being linear? Three 3x3 layers from DeepBench show three
regimes: a large VGG-style layer (56x56, 128 -> 256 channels, batch 16) is compute-bound and scales
almost linearly, even past the real SM and core counts (shown as hypothetical wider chips with the
same memory system); a first OCR layer (480x48, 1 -> 16 channels, batch 16) does ~9 multiply-adds
per byte, so the DRAM and L2 bandwidth, which do not grow with p, cap it early; a small layer (7x7,
512 -> 512, batch 8) has few thread-block tiles, so past ~100 SMs its waves are partly empty (wave
quantisation) and its efficiency falls while the large layer's does not.

Presets: gpu/v100-sxm2-16gb (80 SMs; sm_count swept by archsim.Sweep over 1..320),
cpu/epyc-genoa-9654 (96 cores; cores swept over 1..384). All layers in fp32.

Published figures: Baidu DeepBench's measured forward times of the same three convolutions on a V100
(cuDNN, fp32; results/train/DeepBench_NV_V100.xlsx, rows copied with their source into
scenarios/data/deepbench_conv_v100_subset.csv), against archsim's time at the V100's 80 SMs.

Figures: ``speedup`` (main): speedup over one SM / one core against the number of SMs or cores,
with the ideal linear line; ``gpu_time`` and ``cpu_time``: time against SMs and cores per layer.
"""

from __future__ import annotations

import sys
from pathlib import Path

if __name__ == "__main__":  # run as `python scenarios/convolution_parallelism.py`: make the repository root importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pandas as pd

import archsim
from archsim import ops
from archsim.sweep.analysis import to_wide
from scenarios.harness import Comparison, ScenarioOutput, main

NAME = "convolution_parallelism"
DEEPBENCH = Path(__file__).resolve().parent / "data" / "deepbench_conv_v100_subset.csv"
CITE = "Baidu DeepBench, results/train/DeepBench_NV_V100.xlsx, 'Results FP32' (V100 SXM2, cuDNN forward)"
GPU, CPU = "gpu/v100-sxm2-16gb", "cpu/epyc-genoa-9654"
REAL_SMS, REAL_CORES = 80, 96


def layers() -> dict[str, ops.Conv2d]:
    """The two DeepBench vision convolutions (NCHW, 3x3, stride 1, padding 1, fp32)."""
    db = pd.read_csv(DEEPBENCH)
    out = {}
    for r in db.itertuples():
        label = f"{r.W}x{r.H}, {r.C}->{r.K}, batch {r.N}"
        out[label] = ops.Conv2d(int(r.N), int(r.C), int(r.K), int(r.H), int(r.W), kernel=(int(r.R), int(r.S)),
                                padding=(int(r.pad_h), int(r.pad_w)), dtype="fp32", name=label)
    return out


def _sweep(hw: object, axis: str, values: list[int], conv: ops.Conv2d) -> pd.DataFrame:
    wide = to_wide(archsim.Sweep(hw, {axis: values}).run(conv, executor="serial", progress=False))
    return wide[[axis, "status", "latency_s"]].rename(columns={axis: "processors"})


def _knee(frame: pd.DataFrame, efficiency: float = 0.8) -> int:
    """The first processor count whose parallel efficiency (speedup / p) falls below ``efficiency``."""
    below = frame[frame["speedup"] / frame["processors"] < efficiency]
    return int(below["processors"].min()) if not below.empty else -1


def run(smoke: bool) -> ScenarioOutput:
    """Time of two 3x3 convolutions against SM count (V100) and core count (EPYC 9654)."""
    gpu = archsim.load_preset(GPU)
    cpu = archsim.load_preset(CPU)
    sms = [1, 8, 40, 80, 160, 320] if smoke else [1, 2, 4, 8, 12, 16, 20, 24, 32, 40, 48, 56, 64, 72, 80,
                                                  96, 120, 160, 240, 320]
    cores = [1, 8, 48, 96, 384] if smoke else [1, 2, 4, 8, 16, 24, 32, 48, 64, 80, 96, 128, 192, 256, 384]
    db = pd.read_csv(DEEPBENCH)
    parts = []
    for label, conv in layers().items():
        for device, hw, axis, values in (("V100 SMs", gpu, "gpu.sm_count", sms), ("EPYC cores", cpu, "cores", cores)):
            frame = _sweep(hw, axis, values, conv)
            base = float(frame.loc[frame["processors"] == 1, "latency_s"].iloc[0])
            frame = frame.assign(layer=label, device=device, speedup=base / frame["latency_s"])
            parts.append(frame)
    table = pd.concat(parts, ignore_index=True)
    table["series"] = table["layer"] + " / " + table["device"]

    summary: dict[str, float | str] = {}
    comparisons = []
    for r in db.itertuples():
        label = f"{r.W}x{r.H}, {r.C}->{r.K}, batch {r.N}"
        for device, real in (("V100 SMs", REAL_SMS), ("EPYC cores", REAL_CORES)):
            sub = table[(table["layer"] == label) & (table["device"] == device)]
            summary[f"speedup[{label} | {device} = {real}]"] = float(sub.loc[sub["processors"] == real,
                                                                             "speedup"].iloc[0])
            summary[f"knee_80pct_efficiency[{label} | {device}]"] = _knee(sub)
        at80 = table[(table["layer"] == label) & (table["device"] == "V100 SMs") & (table["processors"] == REAL_SMS)]
        predicted = float(at80["latency_s"].iloc[0])
        summary[f"v100_time_s[{label}]"] = predicted
        comparisons.append(Comparison(f"V100 forward time, {label}", predicted * 1e3, float(r.fwd_ms), "ms", CITE))

    gpu_rows = table[table["device"] == "V100 SMs"]
    notes = [f"Counts above {REAL_SMS} SMs and {REAL_CORES} cores are hypothetical wider chips with the same "
             "memory system. 'knee' = the first count at which parallel efficiency (speedup / p) drops below "
             "80% (-1: never within the sweep)."]
    for label in layers():
        for device in ("V100 SMs", "EPYC cores"):
            sub = table[(table["layer"] == label) & (table["device"] == device)]
            best = sub.loc[sub["latency_s"].idxmin()]
            notes.append(f"{label} on {device}: knee at {_knee(sub)}, speedup {float(sub['speedup'].max()):.0f}x "
                         f"at best (reached at p = {int(best['processors'])}).")
    algos = ", ".join(f"{r.W}x{r.H}: {r.fwd_algo}" for r in db.itertuples())
    notes.append(f"cuDNN's algorithms in DeepBench ({algos}): Winograd does ~2.25-4x fewer multiplies than the "
                 "direct convolution archsim prices, which is why archsim is slower than the measurement on "
                 "the large Winograd layer.")
    if smoke:
        notes.append("smoke run: 6 SM counts and 5 core counts")

    from archsim import plot

    fig_speed = plot.sweep_lines(table, "processors", "speedup", hue="series", logx=True, logy=True)
    ax = fig_speed.axes[0]
    top = float(table["processors"].max())
    ax.plot([1, top], [1, top], color="0.4", linestyle="--", linewidth=0.7, label="ideal (speedup = p)")
    ax.set_xlabel("processors p (SMs or cores)")
    ax.set_ylabel("speedup over p = 1")
    handles, labels = ax.get_legend_handles_labels()
    with plot.style():
        ax.legend(handles, [t.replace("series = ", "") for t in labels], fontsize=5, loc="upper left")
    fig_gpu = plot.sweep_lines(gpu_rows, "processors", "latency_s", hue="layer", logx=True, logy=True)
    fig_gpu.axes[0].axvline(REAL_SMS, color="0.4", linestyle=":", linewidth=0.7)
    fig_gpu.axes[0].set_xlabel("V100 SMs (dotted: the real 80)")
    cpu_rows = table[table["device"] == "EPYC cores"]
    fig_cpu = plot.sweep_lines(cpu_rows, "processors", "latency_s", hue="layer", logx=True, logy=True)
    fig_cpu.axes[0].axvline(REAL_CORES, color="0.4", linestyle=":", linewidth=0.7)
    fig_cpu.axes[0].set_xlabel("EPYC 9654 cores (dotted: the real 96)")
    return ScenarioOutput(summary=summary, tables={"scaling": table},
                          figures={"speedup": fig_speed, "gpu_time": fig_gpu, "cpu_time": fig_cpu},
                          comparisons=comparisons, notes=notes)


if __name__ == "__main__":
    raise SystemExit(main(run, NAME))
