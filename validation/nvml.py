"""Board power and SM clock sampled through NVML while a GPU case is timed.

:class:`PowerSampler` polls ``nvmlDeviceGetPowerUsage`` (board power, mW) and the SM clock from a
background thread every ``interval_s`` while the timed loop runs, and reads the board's energy
counter (``nvmlDeviceGetTotalEnergyConsumption``, mJ, Volta and later) before and after. A case's
energy per run is the mean sampled power x the median event time of one run; the counter's
difference over the loop (which also covers the spin kernels between batches) is recorded beside
it. Without ``pynvml`` (package nvidia-ml-py) or a driver, :meth:`PowerSampler.start` returns
``None`` and the timing runs as before.
"""

from __future__ import annotations

import threading
import time
from typing import Any

__all__ = ["PowerSampler"]


class PowerSampler:
    """Samples one device's power and clock until :meth:`stop`; a context manager."""

    def __init__(self, nvml: Any, handle: Any, interval_s: float) -> None:
        self._nvml, self._h, self._interval = nvml, handle, interval_s
        self._watts: list[float] = []
        self._mhz: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._energy0 = self._energy_j()
        self._t0 = time.perf_counter()
        self._thread.start()

    @classmethod
    def start(cls, device_index: int = 0, interval_s: float = 0.005) -> PowerSampler | None:
        """A running sampler of ``device_index``, or None where NVML is not available."""
        try:
            import pynvml

            pynvml.nvmlInit()
            return cls(pynvml, pynvml.nvmlDeviceGetHandleByIndex(device_index), interval_s)
        except Exception:  # no package, no driver, no device: time without power
            return None

    def _energy_j(self) -> float | None:
        try:
            return self._nvml.nvmlDeviceGetTotalEnergyConsumption(self._h) / 1e3
        except Exception:  # pre-Volta boards have no energy counter
            return None

    def _loop(self) -> None:
        nv = self._nvml
        while not self._stop.is_set():
            try:
                self._watts.append(nv.nvmlDeviceGetPowerUsage(self._h) / 1e3)
                self._mhz.append(float(nv.nvmlDeviceGetClockInfo(self._h, nv.NVML_CLOCK_SM)))
            except Exception:
                break
            self._stop.wait(self._interval)

    def stop(self, run_s: float | None = None) -> dict[str, Any]:
        """Stop sampling; the summary (W, MHz, J), with energy per run when ``run_s`` (s) is given."""
        self._stop.set()
        self._thread.join()
        window = time.perf_counter() - self._t0
        e1 = self._energy_j()
        w, f = sorted(self._watts), sorted(self._mhz)
        out: dict[str, Any] = {"power_samples": len(w), "window_s": window}
        if w:
            mean = sum(w) / len(w)
            out.update(power_mean_w=mean, power_median_w=w[len(w) // 2], power_max_w=w[-1],
                       sm_clock_median_mhz=f[len(f) // 2] if f else None)
            if run_s is not None:
                out["energy_per_run_j"] = mean * run_s
        if self._energy0 is not None and e1 is not None:
            out["energy_counter_j"] = e1 - self._energy0
        try:
            self._nvml.nvmlShutdown()
        except Exception:
            pass
        return out
