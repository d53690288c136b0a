"""``python -m validation measure``: check every kernel against numpy, then time it.

Per case: fresh random inputs (seeded), outputs poisoned, one checked run against the numpy reference
(a wrong kernel is reported and not timed), warm-up, then timed runs (``timing.py``) summarised by the
median and quartiles. Rows are appended to ``measurements.csv`` as they are taken, so a run cut short
keeps what it measured. The GPU ceilings (``ceilings.py``) are measured separately, after the kernels.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from validation import dataio, provenance
from validation.cases import KernelCase
from validation.check import CorrectnessError, check, poison_value
from validation.discover import PACKAGES, discover, kernel_modules
from validation.stats import summarize
from validation.timing import FULL, QUICK, TimingConfig, time_cpu

__all__ = ["MeasureResult", "measure", "REPO"]

REPO = Path(__file__).resolve().parent.parent
Log = Callable[[str], None]


@dataclass
class MeasureResult:
    measured: list[str] = field(default_factory=list)
    failed: list[dict[str, str]] = field(default_factory=list)
    skipped: list[dict[str, str]] = field(default_factory=list)


def _nbytes(inputs: dict[str, Any]) -> int:
    return int(sum(v.nbytes for v in inputs.values()))


def _row(case: KernelCase, times_s: list[float]) -> dataio.Measurement:
    st = summarize(times_s)
    return dataio.Measurement(
        case.name,
        case.family,
        case.target,
        case.params,
        st.median_s,
        st.q1_s,
        st.q3_s,
        st.repeats,
        case.bytes_moved,
        case.flop,
    )


class _Gpu:
    """Device state shared by all GPU cases: properties, flush buffer, calibrated spin kernel."""

    def __init__(self, l2_bytes: int | None = None) -> None:
        """``l2_bytes`` overrides the device's (the simulator has none; the selftest sets a small one)."""
        import numpy as np
        from numba import config, cuda

        from validation import gpu_backend, timing

        self.gb = gpu_backend
        self.props = gpu_backend.device_properties()
        self.simulator = bool(config.ENABLE_CUDASIM)
        device_l2 = self.props.get("l2_bytes")
        if l2_bytes is not None:
            self.l2_bytes = l2_bytes
        elif device_l2:
            self.l2_bytes = int(device_l2)
        else:
            # Unknown L2 on a real device: assume 64 MiB (above every NVIDIA part to date), so cold-cache
            # cases still rotate or flush; the simulator has no cache and gets 0.
            self.l2_bytes = 0 if self.simulator else 64 << 20
        numba_be = gpu_backend.NumbaBackend()
        self._flush_buf = cuda.device_array(max(1, 2 * self.l2_bytes // 4), np.float32)
        if self.simulator:
            self.spin = lambda seconds: None  # the simulator has no timings to protect
        else:
            self.spin = timing.spin_calibrated(
                numba_be, gpu_backend.spin, cuda.to_device(np.ones(1, np.float32))
            )
        free = self.props.get("memory_free_bytes")
        self.memory_budget = int(min(16 << 30, free // 4)) if free else 1 << 30

    def flush(self) -> None:
        self.gb._fill(self._flush_buf, 0.0)


def _measure_gpu(
    case: KernelCase, gpu: _Gpu, cfg: TimingConfig, seed: int
) -> tuple[dataio.Measurement, dict]:
    import numpy as np

    from validation.nvml import PowerSampler
    from validation.timing import time_gpu

    backend = gpu.gb.backend_for(case.backend)  # ImportError when CuPy is absent
    host = case.make_inputs(seed)
    expected = case.reference(host)
    ws = _nbytes(host)
    dev = backend.to_device(host)
    del host
    for name in case.outputs:
        backend.poison(dev[name])
    out = case.run(dev)
    backend.synchronize()
    err = check(case.name, backend.to_host(out), expected, case.rtol)
    del expected
    cfg_case = TimingConfig(
        **{**cfg.__dict__, "memory_budget_bytes": min(cfg.memory_budget_bytes, gpu.memory_budget)}
    )
    sampler = None if gpu.simulator else PowerSampler.start()
    t = time_gpu(case.run, dev, backend, case.cache_policy, ws, gpu.l2_bytes, cfg_case, gpu.spin, gpu.flush)
    # Board power while the case ran (NVML); energy per run = mean power x median run time.
    power = sampler.stop(float(np.median(t.times_s)) if t.times_s else None) if sampler is not None else None
    diag = {
        "relative_error": err,
        "working_set_bytes": ws,
        "buffer_sets": t.sets,
        "l2_flushed": t.flushed,
        "host_enqueue_s": t.enqueue_s,
        "gap_median_s": t.gap_median_s,
        "cache_policy": case.cache_policy,
        "nvml": power,
    }
    if gpu.simulator:
        return None, diag  # the simulator's events carry no time
    return _row(case, t.times_s), diag


def _measure_cpu(case: KernelCase, cfg: TimingConfig, seed: int, llc: int) -> tuple[dataio.Measurement, dict]:
    inputs = case.make_inputs(seed)
    expected = case.reference(inputs)
    for name in case.outputs:
        inputs[name].fill(poison_value(inputs[name].dtype))
    err = check(case.name, case.run(inputs), expected, case.rtol)
    load_before = list(os.getloadavg())
    times, sets = time_cpu(case.run, inputs, case.cache_policy, _nbytes(inputs), llc, cfg)
    diag = {
        "relative_error": err,
        "buffer_sets": sets,
        "loadavg_before": load_before,
        "loadavg_after": list(os.getloadavg()),
        "cache_policy": case.cache_policy,
    }
    return _row(case, times), diag


def _compiled_kernels(target: str, packages: list[str]) -> dict[str, Any]:
    """Registers, shared and local memory of every compiled numba-CUDA kernel (the compiler's view)."""
    info: dict[str, Any] = {}
    if target != "gpu":
        return info
    for package in packages:
        for mod in kernel_modules(package):
            for attr, obj in vars(mod).items():
                overloads = getattr(obj, "overloads", None)
                if not overloads or not hasattr(obj, "get_regs_per_thread"):
                    continue
                for sig in list(overloads):
                    ov = overloads[sig]
                    info[f"{mod.__name__}.{attr}{sig}"] = {
                        "registers_per_thread": getattr(ov, "regs_per_thread", None),
                        "shared_mem_per_block_bytes": getattr(ov, "shared_mem_per_block", None),
                        "local_mem_per_thread_bytes": getattr(ov, "local_mem_per_thread", None),
                    }
    return info


def measure(
    target: str,
    sizes: str,
    out_dir: Path,
    *,
    preset: str | None = None,
    packages: list[str] | None = None,
    only: str | None = None,
    deadline_s: float | None = None,
    ceilings: bool = True,
    seed: int = 0,
    log: Log | None = None,
) -> MeasureResult:
    """Check and time every case of ``target`` at ``sizes``; write the files of ``dataio`` to ``out_dir``."""
    log = log or (lambda _msg: None)
    start = time.monotonic()
    packages = packages if packages is not None else [PACKAGES[target]]
    cfg = QUICK if sizes in ("quick", "tiny") else FULL
    cases = [c for c in discover(target, sizes, packages) if only is None or only in c.name]

    if not cases:
        raise ValueError(f"no {target} cases found in {packages} (sizes={sizes!r}, only={only!r})")
    prov: dict[str, Any] = {
        "target": target,
        "sizes": sizes,
        "timing": cfg.__dict__,
        **provenance.common(REPO),
    }
    gpu = None
    if target == "gpu":
        gpu = _Gpu()
        if gpu.simulator:
            raise RuntimeError(
                "NUMBA_ENABLE_CUDASIM=1: the CUDA simulator gives no timings; "
                "use `python -m validation selftest` for correctness"
            )
        prov["device"] = gpu.props
        prov["nvidia_smi"] = provenance.nvidia_smi()
        prov["cache_policy"] = (
            "cold: rotating buffer copies > 2 x L2, else an L2-sized flush between runs; "
            "warm for cases marked warm"
        )
        name = str(gpu.props.get("name", ""))
    else:
        prov["device"] = provenance.cpu_properties()
        name = prov["device"]["name"]
    prov["preset"] = preset or provenance.preset_for(name)
    out_dir.mkdir(parents=True, exist_ok=True)
    csv_path = out_dir / "measurements.csv"
    if csv_path.exists():
        csv_path.unlink()
    dataio.write_json(out_dir / "provenance.json", prov)

    result, diags = MeasureResult(), {}
    llc = provenance.llc_bytes()
    for i, case in enumerate(cases):
        if deadline_s is not None and time.monotonic() - start > deadline_s:
            result.skipped.append({"name": case.name, "reason": f"deadline of {deadline_s:.0f} s reached"})
            continue
        t0 = time.monotonic()
        try:
            row, diag = (
                _measure_gpu(case, gpu, cfg, seed) if gpu is not None else _measure_cpu(case, cfg, seed, llc)
            )
        except ImportError as exc:
            result.skipped.append({"name": case.name, "reason": f"cannot import: {exc}"})
            log(f"[{i + 1}/{len(cases)}] skip {case.name}: {exc}")
            continue
        except CorrectnessError as exc:
            result.failed.append({"name": case.name, "reason": str(exc)})
            log(f"[{i + 1}/{len(cases)}] FAIL {exc}")
            continue
        except Exception as exc:  # a launch or memory error of one case: record it, measure the rest
            result.failed.append({"name": case.name, "reason": f"{type(exc).__name__}: {exc}"})
            log(f"[{i + 1}/{len(cases)}] ERROR {case.name}: {type(exc).__name__}: {exc}")
            continue
        diags[case.name] = diag
        if row is not None:
            dataio.append_row(csv_path, row)
            result.measured.append(case.name)
            log(
                f"[{i + 1}/{len(cases)}] {case.name}: median {row.median_s:.3e} s "
                f"(IQR {row.q3_s - row.q1_s:.1e}, n={row.repeats}) in {time.monotonic() - t0:.1f} s"
            )
        else:
            log(f"[{i + 1}/{len(cases)}] {case.name}: correct (err {diag['relative_error']:.1e}), not timed")

    dataio.write_json(
        out_dir / "diagnostics.json", {"cases": diags, "compiled": _compiled_kernels(target, packages)}
    )
    dataio.write_json(out_dir / "skipped.json", {"skipped": result.skipped, "failed": result.failed})
    if gpu is not None and ceilings:
        from validation.ceilings import measure_ceilings

        dataio.write_json(out_dir / "ceilings.json", measure_ceilings(gpu.memory_budget, log))
    return result
