"""Development check: archsim's error on DeepBench GEMM and convolution timings measured on a V100.

``python -m validation.deepbench [--csv OUT] [--rows]`` prints the MAPE per family (GEMM fp32,
GEMM fp16, forward convolution fp32 / fp16) of ``archsim.estimate`` with the stock
``gpu/v100-sxm2-16gb`` preset against the measured cuBLAS/cuDNN times in
``validation/data/deepbench/`` (copied from baidu-research/DeepBench, results/train/
DeepBench_NV_V100.xlsx; every row keeps its source). No per-shape constant is fitted: the same
model and preset fields run on every GPU. DeepBench's "16 bit inputs, 32 bit accumulation" rows
are fp16 (Tensor Cores); "Float" rows are fp32 (CUDA cores).

DeepBench's tensors are NCHW. On a Tensor-Core GPU the model pads channels to the MMA multiple
(``tensor_core.channel_multiple``) and, for R x S > 1 filters, adds cuDNN's NCHW -> NHWC input
and filter transposes (``efficiency.conv_nchw_transposes``); strided convolutions read every input
row they touch whole (a row is fetched in L2 lines). These are device-level fields with sources,
the same for every GPU.

The measured times are per call of a loop of back-to-back calls, so they include the launch
overhead of each kernel; convolution rows where cuDNN chose Winograd or FFT (fewer FLOP than the
direct algorithm) are reported both with all rows and restricted to IMPLICIT_GEMM-family choices.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

import archsim.presets as presets
from archsim import ops
from archsim.engines import estimate

DATA = Path(__file__).resolve().parent / "data" / "deepbench"


def _dtype(precision: str) -> str:
    return "fp16" if precision.startswith("16") else "fp32"


PRESET = "gpu/v100-sxm2-16gb"


def gemm_rows(gpu: object, data: Path = DATA) -> pd.DataFrame:
    """Predicted vs measured time for every DeepBench GEMM row."""
    df = pd.read_csv(data / "deepbench_gemm_v100.csv")
    out = []
    for r in df.itertuples():
        dt = _dtype(r.precision)
        op = ops.Gemm(int(r.M), int(r.N), int(r.K), dtype=dt, trans_a=r.transA == "T", trans_b=r.transB == "T")
        res = estimate(op, gpu).ops[0]
        out.append({"family": f"gemm_{dt}", "shape": f"{r.M}x{r.N}x{r.K} {r.transA}{r.transB}",
                    "measured_s": r.time_ms * 1e-3, "predicted_s": res.latency_s, "bound": res.bound})
    return pd.DataFrame(out)


def conv_rows(gpu: object, data: Path = DATA) -> pd.DataFrame:
    """Predicted vs measured forward time for every DeepBench convolution row."""
    df = pd.read_csv(data / "deepbench_conv_v100.csv")
    out = []
    for r in df.itertuples():
        dt = _dtype(r.precision)
        op = ops.Conv2d(int(r.N), int(r.C), int(r.K), int(r.H), int(r.W), kernel=(int(r.R), int(r.S)),
                        stride=(int(r.stride_h), int(r.stride_w)), padding=(int(r.pad_h), int(r.pad_w)), dtype=dt)
        res = estimate(op, gpu).ops[0]
        algo = str(r.fwd_algo)
        out.append({"family": f"conv_fwd_{dt}", "shape": f"N{r.N} C{r.C} {r.H}x{r.W} K{r.K} {r.R}x{r.S}/{r.stride_h}",
                    "measured_s": r.fwd_ms * 1e-3, "predicted_s": res.latency_s, "bound": res.bound,
                    "algo": algo, "gemm_algo": "GEMM" in algo})
    return pd.DataFrame(out)


def report(rows: pd.DataFrame) -> pd.DataFrame:
    """MAPE (%) and median APE per family."""
    rows = rows.assign(ape=np.abs(rows.predicted_s - rows.measured_s) / rows.measured_s * 100)
    summary = rows.groupby("family").ape.agg(rows="count", mape_pct="mean", median_ape_pct="median")
    return summary


def summary(data: Path = DATA) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(every row's prediction, MAPE per family): the four dtype families, then ``gemm_all``,
    ``conv_fwd_all`` and ``conv_fwd_implicit_gemm_algos`` (rows where cuDNN chose an implicit-GEMM
    algorithm)."""
    gpu = presets.load_preset(PRESET)
    gemm, conv = gemm_rows(gpu, data), conv_rows(gpu, data)
    rows = pd.concat([gemm, conv], ignore_index=True)
    families = pd.concat([report(rows), report(gemm.assign(family="gemm_all")),
                          report(conv.assign(family="conv_fwd_all")),
                          report(conv[conv.gemm_algo].assign(family="conv_fwd_implicit_gemm_algos"))])
    return rows, families


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--csv", type=Path, help="write every row's prediction here")
    parser.add_argument("--rows", action="store_true", help="print every row")
    args = parser.parse_args(argv)
    rows, families = summary()
    print(families.round(1).to_string())
    if args.rows:
        print(rows.to_string())
    if args.csv:
        rows.to_csv(args.csv, index=False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
