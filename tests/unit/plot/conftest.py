"""Plot tests render off-screen (Agg) from hand-built results; figures are closed after each test."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from archsim.presets import load_preset  # noqa: E402
from archsim.results import OpResult, RunResult, TimelineEntry  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="session")
def v100():
    return load_preset("gpu/v100-sxm2-16gb")


def _op(name, flop, dram, l2, latency, bound, energy, start=0.0):
    return OpResult(name=name, kind="gemm" if "gemm" in name else "elementwise", phase="forward", device="gpu",
                    flop=flop, bytes_by_level={"dram": dram, "l2": l2}, time_by_unit_s={bound: latency},
                    bound=bound, latency_s=latency, energy_j=sum(energy.values()), energy_breakdown_j=energy,
                    start_s=start)


@pytest.fixture
def run_result():
    ops = (
        _op("gemm1", 2e12, 4e9, 8e9, 0.02, "compute:tensor", {"compute": 1.5, "dram": 0.13, "l2": 0.1, "static": 0.8}),
        _op("relu1", 1e9, 8e9, 8e9, 0.009, "memory:dram", {"compute": 0.001, "dram": 0.25, "l2": 0.1, "static": 0.36},
            start=0.02),
        _op("gemm2", 5e11, 2e9, 3e9, 0.006, "compute:tensor", {"compute": 0.4, "dram": 0.06, "l2": 0.04,
                                                               "static": 0.24}, start=0.029),
    )
    total = {k: sum(o.energy_breakdown_j.get(k, 0) for o in ops) for k in ("compute", "dram", "l2", "static")}
    timeline = (TimelineEntry("gemm1", "sm", 0.0, 0.02), TimelineEntry("relu1", "sm", 0.02, 0.029),
                TimelineEntry("relu1", "dram", 0.02, 0.029), TimelineEntry("gemm2", "sm", 0.029, 0.035))
    return RunResult(engine="des", hardware="V100", workload="toy net", latency_s=0.035,
                     energy_j=sum(total.values()), energy_breakdown_j=total, ops=ops, timeline=timeline)
