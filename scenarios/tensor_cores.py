"""Tensor Cores: how much of the advertised matrix speedup does a GEMM actually get?

Question: NVIDIA advertised Volta's Tensor Cores as "12x" the FP32 throughput of the P100 (125 vs
10.6 TFLOP/s) and every generation since with a bigger ratio (A100 TF32/BF16, H100 TF32/BF16/FP8).
For square GEMMs of 128..8192 on V100 (FP32 on the CUDA cores vs FP16 on the Tensor Cores), A100
and H100, what fraction of those ratios does archsim predict is achieved, and from what size on?
Small GEMMs are bound by launch overhead and too few thread blocks for the SMs (wave quantisation),
so the tensor/FP32 speedup only approaches the advertised ratio for large matrices.

Presets: gpu/p100-16gb, gpu/v100-sxm2-16gb, gpu/a100-sxm4-80gb, gpu/h100-sxm5-80gb.

Published figures: the advertised peaks (scenarios/data/tensor_core_peaks.csv, from the NVIDIA
P100/V100/A100/H100 whitepapers and datasheets; the "12 times" quote is from NVIDIA's "Programming
Tensor Cores in CUDA 9", 2017) and Baidu DeepBench's measured V100 GEMM rates (cuBLAS, FP32 and
FP16-in/FP32-accumulate; ten shapes from tiny-N to large, both precisions, copied with their source
from DeepBench_NV_V100.xlsx into scenarios/data/deepbench_gemm_v100_subset.csv).

Figures: ``throughput`` (main): achieved TFLOP/s vs matrix size, one line per GPU and precision;
``speedup``: achieved speedup of each Tensor Core precision over the same GPU's FP32 at the largest
size, with the advertised peak ratio as diamonds; ``deepbench``: archsim vs DeepBench per shape.
"""

from __future__ import annotations

import sys
from pathlib import Path

if __name__ == "__main__":  # run as `python scenarios/tensor_cores.py`: make the repository root importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np
import pandas as pd

import archsim
from archsim import ops
from scenarios.harness import Comparison, ScenarioOutput, main

NAME = "tensor_cores"
DATA = Path(__file__).resolve().parent / "data"
PEAKS = DATA / "tensor_core_peaks.csv"
DEEPBENCH = DATA / "deepbench_gemm_v100_subset.csv"
DEEPBENCH_CITE = "Baidu DeepBench, results/train/DeepBench_NV_V100.xlsx (V100 SXM2, cuBLAS)"

# (label in tensor_core_peaks.csv, preset, precisions: the first is the FP32 baseline)
GPUS = (
    ("P100 SXM2", "gpu/p100-16gb", ("fp32",)),
    ("V100 SXM2", "gpu/v100-sxm2-16gb", ("fp32", "fp16")),
    ("A100 SXM4", "gpu/a100-sxm4-80gb", ("fp32", "tf32", "bf16")),
    ("H100 SXM5", "gpu/h100-sxm5-80gb", ("fp32", "tf32", "bf16", "fp8_e4m3")),
)
DEEPBENCH_DTYPE = {"Float": "fp32", "16 bit inputs, 16 bit multiplication, 32 bit addition": "fp16"}


def _rate(m: int, n: int, k: int, dtype: str, hw: object) -> tuple[float, str]:
    """Achieved FLOP/s of one GEMM and what bounds it."""
    res = archsim.estimate(ops.Gemm(m, n, k, dtype=dtype), hw)
    return res.flop / res.latency_s, res.ops[0].bound


def run(smoke: bool) -> ScenarioOutput:
    """Square GEMMs on CUDA cores vs Tensor Cores; achieved vs advertised speedups; DeepBench V100."""
    sizes = (128, 1024, 8192) if smoke else tuple(2**p for p in range(7, 14))
    peaks = pd.read_csv(PEAKS).set_index(["gpu", "dtype"])
    hardware = {label: archsim.load_preset(preset) for label, preset, _ in GPUS}

    rows = []
    for label, preset, dtypes in GPUS:
        for dtype in dtypes:
            for n in sizes:
                rate, bound = _rate(n, n, n, dtype, hardware[label])
                peak = float(peaks.at[(label, dtype), "peak_tflops"]) * 1e12
                rows.append({"gpu": label, "preset": preset, "dtype": dtype, "config": f"{label.split()[0]} {dtype}",
                             "n": n, "achieved_flop_per_s": rate, "advertised_flop_per_s": peak,
                             "fraction_of_peak": rate / peak, "bound": bound})
    gemm = pd.DataFrame(rows)

    big = gemm[gemm["n"] == max(sizes)].set_index(["gpu", "dtype"])
    speed_rows = []
    for label, _, dtypes in GPUS:
        for dtype in dtypes[1:]:
            achieved = big.at[(label, dtype), "achieved_flop_per_s"] / big.at[(label, "fp32"), "achieved_flop_per_s"]
            advertised = big.at[(label, dtype), "advertised_flop_per_s"] / big.at[(label, "fp32"),
                                                                                    "advertised_flop_per_s"]
            speed_rows.append({"gpu": label, "comparison": f"{label.split()[0]} {dtype} / fp32", "dtype": dtype,
                               "achieved_speedup": achieved, "advertised_speedup": advertised})
    volta = big.at[("V100 SXM2", "fp16"), "achieved_flop_per_s"] / big.at[("P100 SXM2", "fp32"), "achieved_flop_per_s"]
    speed_rows.insert(0, {"gpu": "V100 SXM2", "comparison": "V100 fp16 / P100 fp32", "dtype": "fp16",
                          "achieved_speedup": volta, "advertised_speedup": 12.0})
    speedups = pd.DataFrame(speed_rows)

    # Size from which the V100 Tensor Cores are 4x its CUDA cores (half the advertised ~8x).
    v = gemm[gemm["gpu"] == "V100 SXM2"].pivot(index="n", columns="dtype", values="achieved_flop_per_s")
    ratio = v["fp16"] / v["fp32"]
    crossing = int(ratio[ratio >= 4.0].index.min()) if (ratio >= 4.0).any() else -1

    db = pd.read_csv(DEEPBENCH)
    db_rows = []
    for r in db.itertuples():
        dtype = DEEPBENCH_DTYPE[r.precision]
        rate, bound = _rate(int(r.M), int(r.N), int(r.K), dtype, hardware["V100 SXM2"])
        db_rows.append({"dtype": dtype, "M": r.M, "N": r.N, "K": r.K, "predicted_flop_per_s": rate,
                        "deepbench_flop_per_s": r.tflops * 1e12, "error": rate / (r.tflops * 1e12) - 1,
                        "bound": bound, "source": r.source})
    deepbench = pd.DataFrame(db_rows)
    deepbench["shape"] = [f"{m}x{n}x{k}" for m, n, k in zip(deepbench.M, deepbench.N, deepbench.K, strict=True)]

    summary: dict[str, float | str] = {}
    for r in speed_rows:
        summary[f"achieved_speedup[{r['comparison']}]"] = r["achieved_speedup"]
    for r in rows:
        if r["n"] == max(sizes):
            summary[f"fraction_of_peak[{r['config']}, n={r['n']}]"] = r["fraction_of_peak"]
    summary["v100_size_where_tensor_cores_reach_4x"] = crossing
    for dtype in ("fp32", "fp16"):
        err = deepbench.loc[deepbench["dtype"] == dtype, "error"].abs()
        summary[f"deepbench_v100_mape[{dtype}]"] = float(err.mean())

    comparisons = [Comparison(f"{r['comparison']} speedup at n={max(sizes)}", r["achieved_speedup"],
                              r["advertised_speedup"], "x",
                              "NVIDIA, Programming Tensor Cores in CUDA 9 (2017): 12x P100 FP32" if i == 0 else
                              "advertised peak ratio, NVIDIA whitepapers/datasheets (tensor_core_peaks.csv)")
                   for i, r in enumerate(speed_rows)]
    for dtype in ("fp32", "fp16"):
        sub = deepbench[deepbench["dtype"] == dtype]
        flop = sub.M * sub.N * sub.K
        for pick in (int(np.argmax(flop.to_numpy())), int(np.argmin(flop.to_numpy()))):
            r = sub.iloc[pick]
            comparisons.append(Comparison(f"V100 {dtype} GEMM {r['shape']}", r["predicted_flop_per_s"] / 1e12,
                                          r["deepbench_flop_per_s"] / 1e12, "TFLOP/s", DEEPBENCH_CITE))

    mape = {d: summary[f"deepbench_v100_mape[{d}]"] for d in ("fp32", "fp16")}
    h100_tc = gemm[(gemm["gpu"] == "H100 SXM5") & (gemm["n"] == max(sizes)) & (gemm["dtype"] != "fp32")]
    notes = [
        f"DeepBench V100, ten shapes per precision: mean |error| {mape['fp32'] * 100:.0f}% (FP32), "
        f"{mape['fp16'] * 100:.0f}% (FP16 Tensor Cores); DeepBench's transposes are not modelled.",
        "The achieved speedup stays below the advertised peak ratio: at the largest size FP32 GEMMs reach "
        f"{big.xs('fp32', level='dtype')['fraction_of_peak'].min() * 100:.0f}% or more of their peak, the Tensor "
        "Core ones less where the engine finds them bound by on-chip data movement instead of the Tensor Cores "
        f"(H100 tensor precisions at n={max(sizes)}: {', '.join(sorted(set(h100_tc['bound'])))}, "
        f"{h100_tc['fraction_of_peak'].mean() * 100:.0f}% of peak).",
    ]
    if crossing > 0:
        notes.append(f"On the V100 the Tensor Cores are 4x the CUDA cores (half the advertised 8x) from n={crossing}.")

    from archsim import plot

    fig_tp = plot.sweep_lines(gemm, "n", "achieved_flop_per_s", hue="config", logx=True, logy=True)
    ax = fig_tp.axes[0]
    for line in ax.get_lines():  # FP32 baselines dashed, so ten lines stay apart with an 8-colour palette
        if "fp32" in line.get_label():
            line.set_linestyle("--")
    handles, labels = ax.get_legend_handles_labels()
    with plot.style():
        ax.legend(handles, [t.replace("config = ", "") for t in labels], fontsize=5, loc="upper left",
                  bbox_to_anchor=(1.0, 1.0))
    ax.set_xlabel("square GEMM size n (m = n = k)")
    fig_sp = plot.bars(speedups, "comparison", "achieved_speedup", marker="advertised_speedup",
                       marker_label="advertised (peak ratio)", ylabel="speedup over FP32 (x)", width="text")
    fig_db = plot.validation_scatter(deepbench, "predicted_flop_per_s", "deepbench_flop_per_s", hue="dtype")
    return ScenarioOutput(summary=summary, tables={"gemm": gemm, "speedups": speedups, "deepbench": deepbench},
                          figures={"throughput": fig_tp, "speedup": fig_sp, "deepbench": fig_db},
                          comparisons=comparisons, notes=notes)


if __name__ == "__main__":
    raise SystemExit(main(run, NAME))
