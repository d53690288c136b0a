"""The NVML power sampler on a fake NVML: power and clock samples, energy per run, energy counter."""

import time

import pytest

from validation.nvml import PowerSampler


class FakeNvml:
    NVML_CLOCK_SM = 1

    def __init__(self):
        self.energy_mj = 1_000_000

    def nvmlDeviceGetPowerUsage(self, h):  # noqa: N802 (NVML's names)
        return 250_000  # mW

    def nvmlDeviceGetClockInfo(self, h, kind):  # noqa: N802
        return 1410

    def nvmlDeviceGetTotalEnergyConsumption(self, h):  # noqa: N802
        self.energy_mj += 500
        return self.energy_mj

    def nvmlShutdown(self):  # noqa: N802
        pass


def test_sampler_summary():
    s = PowerSampler(FakeNvml(), None, interval_s=0.001)
    time.sleep(0.02)
    out = s.stop(run_s=2e-3)
    assert out["power_samples"] >= 1
    assert out["power_mean_w"] == out["power_max_w"] == 250.0 and out["sm_clock_median_mhz"] == 1410.0
    # 250 W x 2 ms = 0.5 J per run; the counter moved 500 mJ between the two reads.
    assert out["energy_per_run_j"] == pytest.approx(0.5) and out["energy_counter_j"] == pytest.approx(0.5)


def test_no_nvml_means_no_sampler(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "pynvml", None)  # import fails
    assert PowerSampler.start() is None
