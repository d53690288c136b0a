"""``python -m validation selftest``: every kernel's correctness at tiny sizes, and the timing path.

On a machine without a GPU this runs under numba's CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``, set by
``__main__`` before numba is imported); the simulator executes kernels thread by thread in Python, so
it checks results and exercises the driver's loop but yields no timings. CuPy cases are skipped with the
reason when CuPy is absent (it is on the GPU machine, not in CI).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from validation.check import CorrectnessError
from validation.discover import PACKAGES, discover
from validation.timing import TimingConfig

__all__ = ["SelftestResult", "selftest", "TINY_TIMING"]

# One warm-up and two timed runs through two rotated buffer sets execute every branch of the timing loop;
# the simulator runs a CUDA thread as a Python thread, so each extra launch costs seconds.
TINY_TIMING = TimingConfig(
    target_s=0.0, min_reps=2, max_reps=2, warmup=1, batch=2, max_sets=2, memory_budget_bytes=1 << 24
)
# Correctness only: the checked run, then a single timed run.
CHECK_TIMING = TimingConfig(
    target_s=0.0, min_reps=1, max_reps=1, warmup=0, batch=1, max_sets=1, memory_budget_bytes=1 << 24
)


SIM_L2_BYTES = 4096


@dataclass
class SelftestResult:
    passed: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def selftest(
    target: str,
    sizes: str = "tiny",
    packages: list[str] | None = None,
    only: list[str] | None = None,
    full_timing: tuple[str, ...] = ("copy/gs",),
    log: Callable[[str], None] | None = None,
) -> SelftestResult:
    """Check every case (name containing one of ``only``, if given); cases whose name contains one of
    ``full_timing`` also go through warm-up, two timed runs and buffer rotation."""
    from validation import measure as m

    log = log or (lambda _msg: None)
    packages = packages if packages is not None else [PACKAGES[target]]
    res = SelftestResult()
    # A 4 KiB "L2" makes the tiny cases rotate buffers and flush, so those paths run too.
    gpu = m._Gpu(l2_bytes=SIM_L2_BYTES) if target == "gpu" else None
    for case in discover(target, sizes, packages):
        if only and not any(o in case.name for o in only):
            continue
        cfg = TINY_TIMING if any(t in case.name for t in full_timing) else CHECK_TIMING
        t0 = time.monotonic()
        try:
            if gpu is not None:
                _, diag = m._measure_gpu(case, gpu, cfg, seed=1)
            else:
                _, diag = m._measure_cpu(case, cfg, seed=1, llc=0)
        except ImportError as exc:
            res.skipped.append(f"{case.name}: cannot import ({exc})")
            log(f"skip {case.name}: {exc}")
            continue
        except CorrectnessError as exc:
            res.failed.append(str(exc))
            log(f"FAIL {exc}")
            continue
        res.passed.append(case.name)
        log(f"ok   {case.name} (err {diag['relative_error']:.1e}, {time.monotonic() - t0:.1f} s)")
    return res
