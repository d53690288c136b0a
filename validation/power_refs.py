"""Published clock and throughput of dense matrix products on an A100 under its power limit, predicted.

Each is one published figure, reported in the power section without a budget, and each prediction is
:func:`archsim.estimate` of a stock preset; the published figure never enters it at run time (the
preset's fields are literals with their sources). ``clock_a100_hpl`` is a reference: nothing is
tuned to it. ``tflops_a100_gemm16`` is a calibration point (development data): the A100 preset's
``energy.tensor_operand_flop`` was set so that this GEMM draws the 400 W limit at the clock He's
figures imply, and its ``efficiency.tensor_efficiency`` (0.945) is the zero-input run's fraction of
peak; its error here measures how well the rounded field and the time model reproduce it, not a
prediction.

* ``clock_a100_hpl``: NVIDIA's Rpeak practice for HPL on the A100 SXM4 took the SM clock the GPU
  sustains at its 400 W power limit while running HPL, 1305 MHz (boost 1410 MHz): G. Lockwood,
  "Peak FLOPS", glennklockwood.com/garden/peak-FLOPS. HPL's time is its trailing-matrix DGEMM on
  the FP64 Tensor Cores; a large square fp64 GEMM stands in for it.
* ``tflops_a100_gemm16``: an 8192^3 16-bit cuBLAS GEMM (PyTorch) on an A100 with ``torch.randn``
  inputs runs at 257-258 TFLOP/s, and at 295 TFLOP/s with all-zero inputs, which switch less of the
  datapath and so draw less power at the same clock: the random-input GEMM is power-limited.
  H. He, "Strangely, Matrix Multiplications on GPUs Run Faster When Given 'Predictable' Data!",
  thonking.ai, 2024. The 258 TFLOP/s figure (inputs as in a real workload) is the calibration point:
  the zero-input run gives cuBLAS's unthrottled efficiency, 295 / 312 = 0.945, and the ratio the
  clock (258 / 295 = 0.875 of 1410 = 1233 MHz) at which the random-input GEMM meets 400 W.

Held-out measurements on big chips (``ROOFLINE_FILE``): the same gpu-benches gpu-roofline kernel as the
development set (:mod:`validation.power`), run by its author on an A100 SXM4 40GB node (8 boards,
``gpu-roofline/alex_a100_40.txt``) and on one H200 (``gpu-roofline/h200.txt``), te42kyfo/gpu-benches
commit e4e93a3: NVML board power and SM clock per intensity, 0.25-128 FLOP/B. Nothing was fitted to
them; they are reported per GPU without a budget (the power model's shared rules were derived on the
A40 and L40 and are not yet within 10 % here) and predicted exactly as the development set is, from
the stock preset (``ROOFLINE_PRESETS``) and the launch (blocks, inner iterations) alone. The boards
are the SXM parts: the A100s draw up to 309 W (the PCIe A100 40GB is limited to 250 W) and the H200
675 W (the H200 NVL to 600 W); 864 and 1056 blocks are 8 per SM on 108 and 132 SMs.
"""

from __future__ import annotations

import csv
import functools
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Reference", "REFERENCES", "predict", "families", "ROOFLINE_FILE", "ROOFLINE_PRESETS",
           "roofline_rows", "roofline_families", "Decomposition", "decompose"]

ROOFLINE_FILE = "gpu_roofline_power_a100_h200.csv"
ROOFLINE_PRESETS = {"NVIDIA A100-SXM4-40GB": ("gpu/a100-sxm4-40gb", "a100"),
                    "NVIDIA H200": ("gpu/h200-sxm-141gb", "h200")}
"""GPU name in ``ROOFLINE_FILE`` -> (the stock preset it is predicted with, the family tag)."""


@dataclass(frozen=True)
class Reference:
    """One published figure: ``quantity`` (``clock_mhz`` or ``tflops``) of a square GEMM of size ``n``."""

    family: str
    preset: str
    n: int
    dtype: str
    quantity: str
    published: float
    source: str


REFERENCES: tuple[Reference, ...] = (
    Reference("clock_a100_hpl", "gpu/a100-sxm4-40gb", 16384, "fp64", "clock_mhz", 1305.0,
              "Lockwood, glennklockwood.com/garden/peak-FLOPS: NVIDIA's A100 HPL Rpeak clock at the power limit"),
    Reference("tflops_a100_gemm16", "gpu/a100-sxm4-40gb", 8192, "bf16", "tflops", 258.0,
              "He, thonking.ai 2024, 'Strangely, Matrix Multiplications ... Predictable Data': cuBLAS, randn inputs; "
              "calibration point of the A100's energy.tensor_operand_flop and efficiency.tensor_efficiency"),
)


@functools.lru_cache(maxsize=16)
def predict(ref: Reference) -> dict[str, float]:
    """Predicted ``clock_mhz``, ``tflops`` and ``power_w`` of ``ref``'s GEMM on its stock preset."""
    import archsim
    from archsim.presets import load_preset

    r = archsim.estimate(archsim.ops.Gemm(ref.n, ref.n, ref.n, dtype=ref.dtype), load_preset(ref.preset))
    op = r.ops[0]
    return {"clock_mhz": op.extra["clock_hz"] / 1e6, "tflops": 2.0 * ref.n**3 / op.latency_s / 1e12,
            "power_w": op.extra["power_w"]}


def families() -> list[tuple[str, int, float, float | None]]:
    """(family, 1, |error| %, no budget) per reference, in the form of :func:`validation.power.families`."""
    out = []
    for ref in REFERENCES:
        got = predict(ref)[ref.quantity]
        out.append((ref.family, 1, 100.0 * abs(got - ref.published) / ref.published, None))
    return out


def roofline_rows(folder: Path) -> list:
    """Every point of ``folder/ROOFLINE_FILE`` with its prediction (:class:`validation.power.PowerRow`).

    The prediction is :func:`validation.power.predict` of the preset and the launch (blocks, inner
    iterations): the measured columns never enter it."""
    from validation.power import PowerRow
    from validation.power import predict as predict_launch

    out = []
    with (folder / ROOFLINE_FILE).open(newline="") as fh:
        for rec in csv.DictReader(fh):
            preset = ROOFLINE_PRESETS[rec["gpu"]][0]
            w, mhz, bound = predict_launch(preset, int(rec["blocks"]), int(rec["inner_its"]))
            out.append(PowerRow(rec["gpu"], int(rec["device_id"]), float(rec["flop_per_byte"]),
                                float(rec["power_W"]), float(rec["clock_MHz"]), w, mhz, bound,
                                measured_bytes_per_s=1e9 * float(rec["bandwidth_GBps"]),
                                predicted_bytes_per_s=_predicted_rate(preset, int(rec["blocks"]),
                                                                      int(rec["inner_its"]))))
    return out


@functools.lru_cache(maxsize=1024)
def _predicted_rate(preset: str, blocks: int, inner_its: int) -> float:
    """DRAM bytes per second of the predicted launch (its bytes over its predicted time)."""
    import archsim
    from archsim.presets import load_preset
    from validation.power import kernel

    op = kernel(blocks, inner_its)
    return op.dram_read_bytes / archsim.estimate(op, load_preset(preset)).latency_s


def roofline_families(rows: list) -> list[tuple[str, int, float, float | None]]:
    """(family, n, MAPE %, no budget): power and clock of each held-out GPU (:func:`validation.power.summary`)."""
    from validation.power import summary

    per_gpu = summary(rows)
    out = []
    for gpu, (_preset, tag) in ROOFLINE_PRESETS.items():
        if (s := per_gpu.get(gpu)) is not None:
            out.append((f"power_{tag}_roofline", int(s["n"]), s["power_mape_pct"], None))
            out.append((f"clock_{tag}_roofline", int(s["n"]), s["clock_mape_pct"], None))
    return out


@dataclass(frozen=True)
class Decomposition:
    """Least-squares split of board power over points at one clock: ``P = constant_w + instruction_j x
    warp instructions/s + dram_j_per_byte x DRAM B/s`` (``rms_w``: the residual)."""

    constant_w: float
    instruction_j: float
    dram_j_per_byte: float
    rms_w: float


def decompose(rows: list, predicted: bool = False) -> Decomposition:
    """The split of the measured (or, with ``predicted``, the predicted) power of gpu-roofline ``rows``.

    Per point (the mean over boards at each intensity), the kernel issues one FMA warp instruction per
    64 FLOP and one 32-bit load warp instruction per 128 B (``2 + 2N`` FLOP per 8 B pair): warp
    instructions/s = FLOP/s / 64 + B/s / 128, FLOP/s = intensity x B/s. The DRAM term therefore holds
    everything proportional to the bytes streamed (load instructions, L2, on-chip network, memory
    controller, PHY and DRAM); the constant holds board, leakage and clock-network power. Each fit
    uses its own byte rates: the measured ones for the measured power, the predicted ones for the
    predicted power.
    """
    import numpy as np

    by: dict[float, list] = {}
    for r in rows:
        by.setdefault(r.flop_per_byte, []).append(r)
    fpb = np.array(sorted(by))
    bps = np.array([np.mean([r.predicted_bytes_per_s if predicted else r.measured_bytes_per_s for r in by[x]])
                    for x in fpb])
    watts = np.array([np.mean([r.predicted_w if predicted else r.measured_w for r in by[x]]) for x in fpb])
    a = np.column_stack([np.ones_like(bps), fpb * bps / 64.0 + bps / 128.0, bps])
    coef, *_ = np.linalg.lstsq(a, watts, rcond=None)
    rms = float(np.sqrt(np.mean((watts - a @ coef) ** 2)))
    return Decomposition(float(coef[0]), float(coef[1]), float(coef[2]), rms)
