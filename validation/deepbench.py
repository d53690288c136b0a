"""Development check: archsim's error on DeepBench GEMM and convolution timings (V100, P100, T4).

``python -m validation.deepbench [--csv OUT] [--rows]`` prints the MAPE per device and family (GEMM
fp32, GEMM fp16, forward convolution fp32 / fp16) of ``archsim.estimate`` with the stock preset of
each device (``DEVICES``) against the measured cuBLAS/cuDNN times in ``validation/data/deepbench/``
(copied from baidu-research/DeepBench, results/train/DeepBench_NV_{V100,P100,T4}.xlsx; every row
keeps its source). The V100 is the first development set, P100 and T4 the second. No per-shape
constant is fitted: the same model and preset fields run on every GPU.

DeepBench's ``precision`` column is read literally (``PRECISIONS``): "Float" is fp32 storage and
math; "16 bit inputs, 16 bit multiplication, 32 bit addition" (V100, T4) is fp16 on Tensor Cores;
"16 bit inputs, 32 bit multiplication, 32 bit addition" (P100) is fp16 storage with fp32 math
(``compute_dtype="fp32"``), which runs at the fp32 rate.

DeepBench's tensors are NCHW. On a Tensor-Core GPU the model pads channels to the MMA multiple
(``tensor_core.channel_multiple``) and, for R x S > 1 filters, adds cuDNN's NCHW -> NHWC input
and filter transposes (``efficiency.conv_nchw_transposes``); strided convolutions read every input
row they touch whole (a row is fetched in L2 lines). These are device-level fields with sources,
the same for every GPU.

The convolution library's algorithm is chosen as the benchmark chose it (``_benchmark_policy``):
autotuned, except implicit precomputed GEMM for Tensor-Core math.

The measured times are per call of a loop of back-to-back calls, so they include the launch
overhead of each kernel; convolution rows where cuDNN chose Winograd or FFT (fewer FLOP than the
direct algorithm) are reported both with all rows and restricted to IMPLICIT_GEMM-family choices.
"""

from __future__ import annotations

import argparse
import functools
from pathlib import Path

import numpy as np
import pandas as pd

import archsim.presets as presets
from archsim import ops
from archsim.engines import estimate

DATA = Path(__file__).resolve().parent / "data" / "deepbench"


PRECISIONS: dict[str, tuple[str, str]] = {
    "Float": ("fp32", "fp32"),
    "16 bit inputs, 16 bit multiplication, 32 bit addition": ("fp16", "fp16"),
    "16 bit inputs, 32 bit multiplication, 32 bit addition": ("fp16", "fp32"),
}
"""DeepBench precision label -> (storage dtype, compute dtype)."""

DEVICES: dict[str, tuple[str, str, tuple[str, str]]] = {
    "NVIDIA V100 (DGX-1)": ("v100", "gpu/v100-sxm2-16gb", ("deepbench_gemm_v100.csv", "deepbench_conv_v100.csv")),
    "NVIDIA P100": ("p100", "gpu/p100-16gb", ("deepbench_gemm_p100_t4.csv", "deepbench_conv_p100_t4.csv")),
    "NVIDIA T4": ("t4", "gpu/t4", ("deepbench_gemm_p100_t4.csv", "deepbench_conv_p100_t4.csv")),
}
"""DeepBench device name -> (short name, archsim preset, (GEMM file, convolution file))."""

PRESET = DEVICES["NVIDIA V100 (DGX-1)"][1]


def _dtypes(precision: str) -> tuple[str, str]:
    try:
        return PRECISIONS[precision]
    except KeyError:
        raise ValueError(f"unknown DeepBench precision {precision!r}; known: {', '.join(PRECISIONS)}") from None


def _family(dt: str, compute: str) -> str:
    return dt if dt == compute else f"{dt}_{compute}math"


def _device_frame(path: Path, device: str) -> pd.DataFrame:
    df = pd.read_csv(path)
    return df[df.device == device]


def gemm_rows(gpu: object, data: Path = DATA, device: str = "NVIDIA V100 (DGX-1)") -> pd.DataFrame:
    """Predicted vs measured time for every DeepBench GEMM row of ``device``."""
    df = _device_frame(data / DEVICES[device][2][0], device)
    out = []
    for r in df.itertuples():
        dt, compute = _dtypes(r.precision)
        op = ops.Gemm(int(r.M), int(r.N), int(r.K), dtype=dt, compute_dtype=compute, trans_a=r.transA == "T",
                      trans_b=r.transB == "T")
        res = estimate(op, gpu).ops[0]
        out.append({"family": f"gemm_{_family(dt, compute)}", "shape": f"{r.M}x{r.N}x{r.K} {r.transA}{r.transB}",
                    "measured_s": r.time_ms * 1e-3, "predicted_s": res.latency_s, "bound": res.bound})
    return pd.DataFrame(out)


def _benchmark_policy(gpu: object, compute: str) -> object:
    """The algorithm choice DeepBench's ``conv_bench.cu`` makes: it autotunes
    (``cudnnFindConvolutionForwardAlgorithm``, ``USE_GET 0``), except that with cuDNN >= 7 and
    Tensor-Core math it then sets IMPLICIT_PRECOMP_GEMM for the forward pass ("Tensor Op math only
    supports IMPLICIT_PRECOMP_GEMM algorithm", baidu-research/DeepBench code/nvidia/conv_bench.cu).
    So Tensor-Core rows run under ``algorithm_selection = "heuristic"`` (implicit precomputed GEMM
    only); the rest under the default (``None``: autotuned). A benchmark setting, not a row's
    measured algorithm (which the prediction never reads)."""
    tc = getattr(gpu, "tensor_core", None)
    if compute == "fp32" or tc is None or compute not in tc.flop_per_cycle_per_sm:
        return None
    return _selection_profile("heuristic")


@functools.lru_cache(maxsize=4)
def _selection_profile(selection: str) -> object:
    """The device-only profile (``none``) with ``algorithm_selection = selection``, built once."""
    from archsim.software import load_software, with_updates

    return with_updates(load_software("none"), {"algorithm_selection": selection})


def _conv_op(r: object, dt: str, compute: str, pass_: str = "forward") -> ops.Conv2d:
    """The convolution of DeepBench row ``r`` (its forward pass, or ``pass_`` of training's backward)."""
    return ops.Conv2d(int(r.N), int(r.C), int(r.K), int(r.H), int(r.W), kernel=(int(r.R), int(r.S)),
                      stride=(int(r.stride_h), int(r.stride_w)), padding=(int(r.pad_h), int(r.pad_w)), dtype=dt,
                      compute_dtype=compute, pass_=pass_, phase="forward" if pass_ == "forward" else "backward")


def conv_rows(gpu: object, data: Path = DATA, device: str = "NVIDIA V100 (DGX-1)", software: object = None
              ) -> pd.DataFrame:
    """Predicted vs measured forward time for every DeepBench convolution row of ``device``
    (``software``: a profile for :func:`archsim.estimate`, e.g. another ``algorithm_selection``)."""
    df = _device_frame(data / DEVICES[device][2][1], device)
    out = []
    for r in df.itertuples():
        dt, compute = _dtypes(r.precision)
        op = _conv_op(r, dt, compute)
        res = estimate(op, gpu, software=_benchmark_policy(gpu, compute) if software is None else software).ops[0]
        algo = str(r.fwd_algo)
        out.append({"family": f"conv_fwd_{_family(dt, compute)}",
                    "shape": f"N{r.N} C{r.C} {r.H}x{r.W} K{r.K} {r.R}x{r.S}/{r.stride_h}",
                    "measured_s": r.fwd_ms * 1e-3, "predicted_s": res.latency_s, "bound": res.bound,
                    "algo": algo, "gemm_algo": "GEMM" in algo})
    return pd.DataFrame(out)


BACKWARD_PASSES: dict[str, str] = {"backward_data": "bwd_input_ms", "backward_weight": "bwd_params_ms"}
"""Conv2d pass -> the DeepBench column that times it (``cudnnConvolutionBackwardData`` / ``...Filter``)."""


def conv_backward_rows(gpu: object, data: Path = DATA, device: str = "NVIDIA V100 (DGX-1)") -> pd.DataFrame:
    """Predicted vs measured backward-data and backward-filter time for every DeepBench convolution row
    of ``device`` that times them (rows with an empty column are skipped). DeepBench autotunes both
    passes (``cudnnFind...``) except under Tensor-Core math, where it sets ``ALGO_1`` for each, an
    implicit GEMM: the passes run under the same policy as the forward rows (:func:`_benchmark_policy`)."""
    df = _device_frame(data / DEVICES[device][2][1], device)
    out = []
    for r in df.itertuples():
        dt, compute = _dtypes(r.precision)
        for pass_, column in BACKWARD_PASSES.items():
            measured = getattr(r, column)
            if pd.isna(measured) or measured <= 0:  # not timed
                continue
            op = _conv_op(r, dt, compute, pass_)
            res = estimate(op, gpu, software=_benchmark_policy(gpu, compute)).ops[0]
            name = "data" if pass_ == "backward_data" else "filter"
            out.append({"family": f"conv_bwd_{name}_{_family(dt, compute)}",
                        "shape": f"N{r.N} C{r.C} {r.H}x{r.W} K{r.K} {r.R}x{r.S}/{r.stride_h}",
                        "measured_s": measured * 1e-3, "predicted_s": res.latency_s, "bound": res.bound})
    return pd.DataFrame(out)


def backward_summary(data: Path = DATA) -> pd.DataFrame:
    """MAPE per device of the backward convolution passes, families ``<device>/conv_bwd_data_all`` and
    ``<device>/conv_bwd_filter_all``: training's other two thirds of a convolution, reported without
    a budget (the forward rows are the development set)."""
    fams = []
    for device in available_devices(data):
        rows = conv_backward_rows(presets.load_preset(DEVICES[device][1]), data, device)
        if rows.empty:
            continue
        for name in ("data", "filter"):
            sel = rows[rows.family.str.startswith(f"conv_bwd_{name}_")]
            fams.append(report(sel.assign(family=f"{DEVICES[device][0]}/conv_bwd_{name}_all")))
    return pd.concat(fams) if fams else pd.DataFrame(columns=["rows", "mape_pct", "median_ape_pct"])


def report(rows: pd.DataFrame) -> pd.DataFrame:
    """MAPE (%) and median APE per family."""
    rows = rows.assign(ape=np.abs(rows.predicted_s - rows.measured_s) / rows.measured_s * 100)
    summary = rows.groupby("family").ape.agg(rows="count", mape_pct="mean", median_ape_pct="median")
    return summary


def device_summary(device: str, data: Path = DATA, gpu: object | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(every row's prediction, MAPE per family) of one device: its dtype families, then ``gemm_all``,
    ``conv_fwd_all`` and ``conv_fwd_implicit_gemm_algos`` (rows where cuDNN chose an implicit-GEMM
    algorithm). ``gpu`` replaces the device's stock preset (a what-if, e.g. another clock)."""
    gpu = presets.load_preset(DEVICES[device][1]) if gpu is None else gpu
    gemm, conv = gemm_rows(gpu, data, device), conv_rows(gpu, data, device)
    rows = pd.concat([gemm, conv], ignore_index=True)
    families = pd.concat([report(rows), report(gemm.assign(family="gemm_all")),
                          report(conv.assign(family="conv_fwd_all")),
                          report(conv[conv.gemm_algo].assign(family="conv_fwd_implicit_gemm_algos"))])
    return rows.assign(device=DEVICES[device][0]), families


def selection_summary(selection: str = "heuristic", data: Path = DATA) -> pd.DataFrame:
    """MAPE per device of the forward convolutions with the convolution library's algorithm picked
    by ``selection`` (:data:`archsim.software.ALGORITHM_SELECTIONS`) instead of autotuned; families
    ``<device>/conv_fwd_all_<selection>``. DeepBench itself autotuned (conv_bench.cu calls
    cudnnFindConvolutionForwardAlgorithm) except for Tensor-Core math, where it sets
    IMPLICIT_PRECOMP_GEMM: a what-if, for information."""
    profile = _selection_profile(selection)
    fams = []
    for device in available_devices(data):
        gpu = presets.load_preset(DEVICES[device][1])
        conv = conv_rows(gpu, data, device, software=profile)
        fams.append(report(conv.assign(family=f"{DEVICES[device][0]}/conv_fwd_all_{selection}")))
    return pd.concat(fams)


BOARD_WHATIFS: dict[str, tuple[str, str]] = {
    "NVIDIA P100": ("gpu/p100-pcie-16gb", "pcie_board"),
}
"""DeepBench device -> (another board's preset, family suffix): what-ifs for a device whose board the
published results do not name. DeepBench's workbook calls its part "P100" only (README, PR #38; the
stored CSVs carry no board), so its rows run on the SXM2 preset (``DEVICES``) and, for information,
on the PCIe board (1303 MHz, 250 W). A what-if, never a fit: the stock preset stays until a source
names the board."""


def board_summary(data: Path = DATA) -> pd.DataFrame:
    """MAPE of ``gemm_all`` and ``conv_fwd_all`` per device of :data:`BOARD_WHATIFS` with that board's
    preset; families ``<device>/<family>_<suffix>`` (e.g. ``p100/gemm_all_pcie_board``)."""
    fams = []
    for device in available_devices(data):
        if device not in BOARD_WHATIFS:
            continue
        preset, suffix = BOARD_WHATIFS[device]
        _rows, f = device_summary(device, data, gpu=presets.load_preset(preset))
        f = f.loc[["gemm_all", "conv_fwd_all"]]
        fams.append(f.set_axis([f"{DEVICES[device][0]}/{name}_{suffix}" for name in f.index], axis=0))
    return pd.concat(fams) if fams else pd.DataFrame(columns=["rows", "mape_pct", "median_ape_pct"])


def available_devices(data: Path = DATA) -> list[str]:
    """The DeepBench devices whose two CSVs are in ``data``."""
    return [d for d, (_, _, files) in DEVICES.items() if all((data / f).exists() for f in files)]


def summary(data: Path = DATA) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(every row's prediction, MAPE per family) over every device in ``data``; family names are
    ``<device>/<family>`` (``v100/gemm_all``, ``p100/conv_fwd_all``...)."""
    all_rows, all_fams = [], []
    for device in available_devices(data):
        rows, fams = device_summary(device, data)
        short = DEVICES[device][0]
        all_rows.append(rows)
        all_fams.append(fams.set_axis([f"{short}/{f}" for f in fams.index], axis=0))
    return pd.concat(all_rows, ignore_index=True), pd.concat(all_fams)


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
