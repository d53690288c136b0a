"""Calibration of the power-model fields of ``gpu/a40-48gb`` and ``gpu/l40-48gb`` on gpu-roofline.

Run ``python -m validation.power_fit`` to re-derive the values committed in the presets' ``[power]``
tables. A least-squares fit per GPU (relative power and clock errors of the per-intensity means over
devices; L40 device 0 only, the one at the preset's 300 W limit) of the clock network's
``clock_energy_density`` (C V^2 per die area, :mod:`archsim.energy.chip`), ``issue_energy``,
``v_min`` and ``knee_clock``; the other GPUs in the area form take the mean of the two densities
(A40 86.8, L40 47.7: 67.3 pJ/mm^2 at 0.9 V). The L40's points
never run below ~1400 MHz, above its knee (1304 MHz), so its knee cannot be identified from them
(the fit is flat along it): it is held. Everything else (leakage density, board power from the idle
power, the NoC's wire energy per byte-mm, memory-interface energies, the arithmetic/register/cache
energies, the time model) is fixed from its source before the fit. The two GPUs put the density a
factor 1.8 apart; one density shared by both (``SHARED``, a joint fit) gives 56 pJ/mm^2 with the
A40's issue energy running to 596 pJ and its v_min to the 0.5 V bound: the data identify the
density only weakly. This is the development set: the fit and the report's power section use the
same data.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

SHARED: tuple[str, ...] = ()
"""Fields fitted once for every GPU (none: each GPU has its own clock density)."""
PER_GPU = ("clock_energy_density_j_per_m2", "issue_energy_j", "v_min_v", "knee_clock_hz")
SCALE = {"clock_energy_density_j_per_m2": 1e-6, "issue_energy_j": 1e-9, "v_min_v": 1.0, "knee_clock_hz": 1e9}
"""Units of the fitted values: pJ/mm^2 (1e-12 J / 1e-6 m^2), nJ, V, GHz."""
GPUS = {"gpu/a40-48gb": ("NVIDIA A40", PER_GPU), "gpu/l40-48gb": ("NVIDIA L40", PER_GPU[:3])}
"""Preset -> (the GPU's name in the data, its own fitted fields)."""


def _targets(folder: Path, gpu: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    import pandas as pd

    d = pd.read_csv(folder / "gpu_roofline_power_a40_l40.csv")
    d = d[(d.gpu == gpu) & ~((d.gpu == "NVIDIA L40") & (d.device_id != 0))]
    m = d.groupby("inner_its").mean(numeric_only=True)
    return m.index.to_numpy(), m.power_W.to_numpy(), m.clock_MHz.to_numpy(), int(d.blocks.iloc[0])


def _bounds(field: str, base) -> tuple[float, float]:
    return {"clock_energy_density_j_per_m2": (0.0, 500.0), "issue_energy_j": (0.01, 2.0),
            "v_min_v": (0.5, base.power.v_max_v),
            "knee_clock_hz": (0.2 * base.clock_hz / 1e9, 0.99 * base.clock_hz / 1e9)}[field]


def fit(folder: Path, gpus: dict[str, tuple[str, tuple[str, ...]]] = GPUS) -> dict[str, dict[str, float]]:
    """The fitted fields per preset (the shared ones repeated in each), SI units."""
    from scipy.optimize import least_squares

    import archsim
    from archsim.presets import load_preset
    from validation.power import kernel

    bases = {p: load_preset(p) for p in gpus}
    data = {p: _targets(folder, gpu) for p, (gpu, _) in gpus.items()}
    ops = {p: [kernel(data[p][3], int(n)) for n in data[p][0]] for p in gpus}
    names = [(None, f) for f in SHARED] + [(p, f) for p, (_, own) in gpus.items() for f in own]

    def fields(x: np.ndarray, preset: str) -> dict[str, float]:
        return {f: v * SCALE[f] for (p, f), v in zip(names, x, strict=True) if p in (None, preset)}

    def run(x: np.ndarray, preset: str) -> tuple[np.ndarray, np.ndarray]:
        base = bases[preset]
        g = base.model_copy(update={"power": base.power.model_copy(update=fields(x, preset))})
        rs = [archsim.estimate(op, g) for op in ops[preset]]
        return (np.array([r.average_power_w for r in rs]), np.array([r.ops[0].extra["clock_hz"] / 1e6 for r in rs]))

    def resid(x: np.ndarray) -> np.ndarray:
        out = []
        for p in gpus:
            w, f = run(x, p)
            out += [(w - data[p][1]) / data[p][1], (f - data[p][2]) / data[p][2]]
        return np.concatenate(out)

    first = next(iter(gpus))
    x0 = np.array([getattr(bases[p or first].power, f) / SCALE[f] for p, f in names])
    lo, hi = (np.array(b) for b in zip(*(_bounds(f, bases[p or first]) for p, f in names), strict=True))
    res = least_squares(resid, np.clip(x0, lo, hi), bounds=(lo, hi), diff_step=1e-3)
    out = {}
    for p in gpus:
        w, f = run(res.x, p)
        print(f"{p}: power MAPE {100 * np.mean(np.abs(w - data[p][1]) / data[p][1]):.2f} %, "
              f"clock MAPE {100 * np.mean(np.abs(f - data[p][2]) / data[p][2]):.2f} %")
        out[p] = fields(res.x, p)
    return out


if __name__ == "__main__":
    fits = fit(Path(__file__).parent / "data" / "power")
    for preset, values in fits.items():
        print(preset, {k: v / SCALE[k] for k, v in values.items()})
    key = "clock_energy_density_j_per_m2"
    density = np.mean([v[key] for v in fits.values()]) / SCALE[key]
    print(f"clock_energy_density for the other area-form GPUs (mean): {density:.1f} pJ/mm^2")
