"""The two ceilings a GPU preset is calibrated with, measured apart from the validation kernels.

* device-to-device copy (``cuMemcpyDtoD``) of a buffer far larger than L2: the achievable DRAM
  bandwidth, reported both as bytes copied per second and as bytes read + written per second;
* peak matmul rate: cuBLAS GEMM through CuPy on large square fp16 (Tensor Core) and fp32 matrices.

Each value carries its method, size and repetition count; medians of CUDA-event timings.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["measure_ceilings"]

REPS = 20


def _median_s(
    launch: Callable[[], None],
    start_event: Callable[[], Any],
    elapsed_s: Callable[[Any, Any], float],
    sync: Callable[[], None],
) -> float:
    launch()
    sync()
    times = []
    for _ in range(REPS):
        s, e = start_event(), start_event()
        s.record()
        launch()
        e.record()
        e.synchronize()
        times.append(elapsed_s(s, e))
    return float(np.median(times))


def measure_ceilings(memory_budget_bytes: int, log: Callable[[str], None]) -> dict[str, Any]:
    from numba import cuda

    out: dict[str, Any] = {}
    nbytes = int(min(2 << 30, memory_budget_bytes // 2)) // 4 * 4
    src = cuda.device_array(nbytes // 4, np.float32)
    dst = cuda.device_array(nbytes // 4, np.float32)
    t = _median_s(
        lambda d=dst, s=src: d.copy_to_device(s),
        cuda.event,
        lambda s, e: s.elapsed_time(e) / 1e3,
        cuda.synchronize,
    )
    out["d2d_copy"] = {
        "method": "cuMemcpyDtoD via numba DeviceNDArray.copy_to_device",
        "bytes": nbytes,
        "repeats": REPS,
        "median_s": t,
        "copied_bytes_per_s": nbytes / t,
        "read_plus_write_bytes_per_s": 2 * nbytes / t,
    }
    log(f"ceiling d2d copy: {2 * nbytes / t / 1e9:.0f} GB/s read+write")
    del src, dst
    try:
        import cupy
    except ImportError as exc:
        out["matmul"] = {"skipped": f"cupy not importable ({exc}); numba cannot drive Tensor Cores"}
        return out
    out["matmul"] = {}
    for dtype, n in (("float16", 8192), ("float32", 8192)):
        # Random operands: Tensor Core power (and so clocks) depends on the data; ones would flatter.
        a = cupy.random.random((n, n), dtype=cupy.float32).astype(dtype)
        b = cupy.random.random((n, n), dtype=cupy.float32).astype(dtype)
        c = cupy.empty((n, n), dtype=dtype)
        t = _median_s(
            lambda a=a, b=b, c=c: cupy.matmul(a, b, out=c),
            cupy.cuda.Event,
            lambda s, e: cupy.cuda.get_elapsed_time(s, e) / 1e3,
            cupy.cuda.Device().synchronize,
        )
        flop = 2 * n**3
        out["matmul"][dtype] = {
            "method": "cuBLAS via cupy.matmul",
            "m": n,
            "n": n,
            "k": n,
            "repeats": REPS,
            "median_s": t,
            "flop_per_s": flop / t,
        }
        log(f"ceiling matmul {dtype}: {flop / t / 1e12:.0f} TFLOP/s")
        del a, b, c
    return out
