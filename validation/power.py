"""Board power and SM clock of the gpu-benches gpu-roofline kernel, predicted vs measured.

The kernel (te42kyfo/gpu-benches ``gpu-roofline/main.cu``, float32 build): every thread streams
pairs of floats from two arrays and runs ``N`` dependent FMAs on each (``v = v * a - b``), so a
launch reads ``2 x 4 B`` and does ``2 + 2N`` FLOP per pair: 0.25 FLOP/B at ``N = 0`` up to ~128 at
``N = 512``. Blocks of 256 threads, ``M = 4000`` pairs per thread, as many blocks as fit (6 per SM
here). The measurement (``gpu_roofline_power_a40_l40.csv``) records, per device and intensity,
the median SM clock and the largest of 21 NVML board-power samples during 1000 back-to-back
launches: a sustained state, which is what the DVFS model predicts.

Each point is predicted with the stock preset (``gpu/a40-48gb``, ``gpu/l40-48gb``) by
:func:`archsim.estimate` of an explicit :class:`archsim.ops.Kernel`: the time model, the power model
and the power-limit governor together; nothing measured enters the prediction. A device whose
power plateau shows a different limit from the preset's can be given one (``POWER_LIMIT_W``): the
limit is an administrator setting (``nvidia-smi -pl``), not a property of the chip.
"""

from __future__ import annotations

import csv
import functools
from dataclasses import dataclass
from pathlib import Path

__all__ = ["PowerRow", "PRESETS", "POWER_BUDGET_PCT", "CLOCK_BUDGET_PCT", "predict", "rows", "summary",
           "DATA_FILE", "POWER_LIMIT_W", "families", "write_rows",
           "write_figure"]

DATA_FILE = "gpu_roofline_power_a40_l40.csv"
PRESETS = {"NVIDIA A40": "gpu/a40-48gb", "NVIDIA L40": "gpu/l40-48gb"}
POWER_BUDGET_PCT = 10.0
CLOCK_BUDGET_PCT = 5.0
# L40 device 1 plateaus at 352-358 W and boosts to 2520 MHz: the L40S data sheet's 350 W and 2520 MHz,
# not the L40's 300 W. Its limit is set to 350 W (an administrator setting; the chip model is unchanged).
POWER_LIMIT_W: dict[tuple[str, int], float] = {("NVIDIA L40", 1): 350.0}
BLOCK = 256
PAIRS_PER_THREAD = 4000


@dataclass(frozen=True)
class PowerRow:
    gpu: str
    device_id: int
    flop_per_byte: float
    measured_w: float
    measured_mhz: float
    predicted_w: float
    predicted_mhz: float
    bound: str
    measured_bytes_per_s: float = float("nan")
    predicted_bytes_per_s: float = float("nan")

    @property
    def power_error_pct(self) -> float:
        return 100.0 * (self.predicted_w - self.measured_w) / self.measured_w

    @property
    def clock_error_pct(self) -> float:
        return 100.0 * (self.predicted_mhz - self.measured_mhz) / self.measured_mhz


def kernel(blocks: int, inner_its: int):
    """The gpu-roofline launch with ``inner_its`` FMAs per element pair, as an archsim Kernel."""
    import archsim

    pairs = blocks * BLOCK * PAIRS_PER_THREAD
    return archsim.ops.Kernel(name=f"gpu-roofline/N={inner_its}", flop_vector=(2 + 2 * inner_its) * pairs,
                              dram_read_bytes=2 * 4 * pairs, grid=blocks, block=BLOCK, registers_per_thread=32)


@functools.lru_cache(maxsize=1024)
def predict(preset: str, blocks: int, inner_its: int, power_limit_w: float | None = None) -> tuple[float, float, str]:
    """(average power W, clock MHz, bound) of one launch on ``preset``."""
    import archsim
    from archsim.presets import load_preset

    gpu = load_preset(preset)
    if power_limit_w is not None:
        gpu = gpu.model_copy(update={"power_limit_w": f"{power_limit_w!r} W"})
    r = archsim.estimate(kernel(blocks, inner_its), gpu)
    op = r.ops[0]
    return r.average_power_w, op.extra["clock_hz"] / 1e6, op.bound


def rows(folder: Path) -> list[PowerRow]:
    """Every measured point of ``folder/DATA_FILE`` with its prediction."""
    out = []
    with (folder / DATA_FILE).open(newline="") as fh:
        for rec in csv.DictReader(fh):
            preset = PRESETS[rec["gpu"]]
            limit = POWER_LIMIT_W.get((rec["gpu"], int(rec["device_id"])))
            w, mhz, bound = predict(preset, int(rec["blocks"]), int(rec["inner_its"]), limit)
            out.append(PowerRow(rec["gpu"], int(rec["device_id"]), float(rec["flop_per_byte"]),
                                float(rec["power_W"]), float(rec["clock_MHz"]), w, mhz, bound))
    return out


def summary(rs: list[PowerRow]) -> dict[str, dict[str, float]]:
    """Per GPU (and ``all``): n, power MAPE %, clock MAPE %, largest clock error %."""
    groups: dict[str, list[PowerRow]] = {}
    for r in rs:
        groups.setdefault(r.gpu, []).append(r)
        groups.setdefault("all", []).append(r)
    out = {}
    for g, xs in groups.items():
        out[g] = {"n": float(len(xs)),
                  "power_mape_pct": sum(abs(x.power_error_pct) for x in xs) / len(xs),
                  "clock_mape_pct": sum(abs(x.clock_error_pct) for x in xs) / len(xs),
                  "clock_max_err_pct": max(abs(x.clock_error_pct) for x in xs)}
    return out


def families(rs: list[PowerRow]) -> list[tuple[str, int, float, float | None]]:
    """(family, n, MAPE %, budget %) of power and clock: A40 (all devices) and L40 device 0 within
    budget, L40 device 1 (a board at a 350 W limit the preset does not describe) reported alone."""
    groups = {
        "a40": [r for r in rs if r.gpu == "NVIDIA A40"],
        "l40": [r for r in rs if r.gpu == "NVIDIA L40" and (r.gpu, r.device_id) not in POWER_LIMIT_W],
        "l40_dev1_350w": [r for r in rs if (r.gpu, r.device_id) in POWER_LIMIT_W],
    }
    out = []
    for name, xs in groups.items():
        if not xs:
            continue
        budgeted = name != "l40_dev1_350w"
        out.append((f"power_{name}", len(xs), sum(abs(x.power_error_pct) for x in xs) / len(xs),
                    POWER_BUDGET_PCT if budgeted else None))
        out.append((f"clock_{name}", len(xs), sum(abs(x.clock_error_pct) for x in xs) / len(xs),
                    CLOCK_BUDGET_PCT if budgeted else None))
    return out


def write_rows(rs: list[PowerRow], dest: Path) -> Path:
    """``points.csv``: every measured point with its prediction and errors."""
    dest.mkdir(parents=True, exist_ok=True)
    path = dest / "points.csv"
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["gpu", "device_id", "flop_per_byte", "measured_w", "predicted_w", "power_error_pct",
                    "measured_mhz", "predicted_mhz", "clock_error_pct", "bound"])
        for r in rs:
            w.writerow([r.gpu, r.device_id, r.flop_per_byte, r.measured_w, f"{r.predicted_w:.2f}",
                        f"{r.power_error_pct:.3f}", r.measured_mhz, f"{r.predicted_mhz:.1f}",
                        f"{r.clock_error_pct:.3f}", r.bound])
    return path


def write_figure(rs: list[PowerRow], dest: Path) -> list[Path]:
    """``power_vs_intensity.{png,pdf}``: board power and SM clock against FLOP/B, measured points
    (one marker per device) and the predicted line, one column per GPU."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    gpus = sorted({r.gpu for r in rs})
    fig = Figure(figsize=(5.0 * len(gpus), 6.5))
    FigureCanvasAgg(fig)
    axes = fig.subplots(2, len(gpus), squeeze=False, sharex=True)
    for col, gpu in enumerate(gpus):
        xs = [r for r in rs if r.gpu == gpu]
        for k, dev in enumerate(sorted({r.device_id for r in xs})):
            pts = sorted((r for r in xs if r.device_id == dev), key=lambda r: r.flop_per_byte)
            colour = f"C{k % 10}"
            label = f"device {dev}" + (" (350 W limit)" if (gpu, dev) in POWER_LIMIT_W else "")
            shown = k == 0 or (gpu, dev) in POWER_LIMIT_W  # one labelled device and its line per board kind
            for row, (meas, pred) in enumerate((("measured_w", "predicted_w"), ("measured_mhz", "predicted_mhz"))):
                ax = axes[row][col]
                ax.plot([r.flop_per_byte for r in pts], [getattr(r, meas) for r in pts], "o", ms=2.5,
                        color=colour, alpha=0.6, label=f"{label} measured" if shown else None)
                if shown:
                    ax.plot([r.flop_per_byte for r in pts], [getattr(r, pred) for r in pts], "-", color=colour,
                            lw=1.5, label=f"{label} predicted")
        axes[0][col].set_title(f"{gpu}: gpu-roofline (fp32 FMA stream)")
        axes[0][col].set_ylabel("board power (W)")
        axes[1][col].set_ylabel("SM clock (MHz)")
        axes[1][col].set_xlabel("arithmetic intensity (FLOP/B)")
        for row in (0, 1):
            axes[row][col].set_xscale("log", base=2)
            axes[row][col].grid(True, alpha=0.3)
        axes[0][col].legend(fontsize=7)
    paths = []
    for ext in ("png", "pdf"):
        p = dest / f"power_vs_intensity.{ext}"
        fig.savefig(p, dpi=150, bbox_inches="tight")
        paths.append(p)
    return paths
