"""Device-side operations of the GPU driver, for numba-CUDA kernels and for CuPy (cuBLAS) calls.

Both backends enqueue on the legacy default stream of the primary context, so numba's helper kernels
(poison, flush, spin) order correctly with CuPy's GEMMs and with the CUDA events around them.
Importing this module imports ``numba.cuda``: the caller decides first whether it is the simulator.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numba import config, cuda

from validation.check import poison_value

__all__ = ["NumbaBackend", "CupyBackend", "backend_for", "device_properties", "spin", "fill"]


@cuda.jit
def fill(flat, value):
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    while i < flat.size:
        flat[i] = value
        i += stride


@cuda.jit
def spin(out, iters):
    # A dependent FMA chain in one thread: keeps the GPU busy while the host enqueues the timed runs.
    x = out[0]
    for _ in range(iters):
        x = x * 0.9999 + 0.0001
    out[0] = x


def _fill(arr: Any, value: float | int) -> None:
    flat = arr.reshape(arr.size) if arr.ndim != 1 else arr
    fill[min(1024, max(1, math.ceil(arr.size / 256))), 256](flat, arr.dtype.type(value))


def _attr(read: Any) -> Any:
    try:
        return read()
    except Exception:  # noqa: BLE001 - any driver error means "unknown" here
        return None


def device_properties() -> dict[str, Any]:
    """Name, SM count, clocks (Hz), L2 size, memory, compute capability, driver/runtime/numba versions."""
    import numba

    props: dict[str, Any] = {"numba_version": numba.__version__, "simulator": bool(config.ENABLE_CUDASIM)}
    try:
        import numba_cuda

        props["numba_cuda_version"] = getattr(numba_cuda, "__version__", "unknown")
    except ImportError:
        props["numba_cuda_version"] = None
    dev = cuda.get_current_device()
    props["compute_capability"] = ".".join(map(str, dev.compute_capability))
    if config.ENABLE_CUDASIM:
        props.update(name="numba CUDA simulator", sm_count=None, l2_bytes=0)
        return props
    name = dev.name
    props["name"] = name.decode() if isinstance(name, bytes) else str(name)
    # One unreadable attribute must not stop a measurement run: it is recorded as None.
    props["sm_count"] = _attr(lambda: int(dev.MULTIPROCESSOR_COUNT))
    props["sm_clock_max_hz"] = _attr(lambda: int(dev.CLOCK_RATE) * 1000)  # CUDA reports kHz
    props["memory_clock_max_hz"] = _attr(lambda: int(dev.MEMORY_CLOCK_RATE) * 1000)
    props["memory_bus_width_bits"] = _attr(lambda: int(dev.GLOBAL_MEMORY_BUS_WIDTH))
    props["l2_bytes"] = _attr(lambda: int(dev.L2_CACHE_SIZE))
    mem = _attr(lambda: cuda.current_context().get_memory_info())
    props["memory_free_bytes"], props["memory_total_bytes"] = (
        (int(mem[0]), int(mem[1])) if mem else (None, None)
    )
    props["cuda_driver_version"] = _attr(lambda: ".".join(map(str, cuda.cudadrv.driver.driver.get_version())))
    props["cuda_runtime_version"] = _attr(lambda: ".".join(map(str, cuda.runtime.get_version())))
    return props


class NumbaBackend:
    """Device arrays and events of numba-CUDA."""

    name = "numba-cuda"

    def to_device(self, host: dict[str, np.ndarray]) -> dict[str, Any]:
        return {k: cuda.to_device(v) for k, v in host.items()}

    def duplicate(self, dev: dict[str, Any]) -> dict[str, Any]:
        out = {}
        for k, v in dev.items():
            c = cuda.device_array_like(v)
            c.copy_to_device(v)
            out[k] = c
        return out

    def poison(self, arr: Any) -> None:
        _fill(arr, poison_value(arr.dtype))

    def to_host(self, arr: Any) -> np.ndarray:
        return arr.copy_to_host()

    def event(self) -> Any:
        return cuda.event()  # timing is on by default

    @staticmethod
    def elapsed_s(start: Any, end: Any) -> float:
        return start.elapsed_time(end) / 1e3

    def synchronize(self) -> None:
        cuda.synchronize()


class CupyBackend(NumbaBackend):
    """CuPy arrays and events, for cuBLAS calls."""

    name = "cupy"

    def __init__(self) -> None:
        import cupy

        self._cp = cupy

    def to_device(self, host: dict[str, np.ndarray]) -> dict[str, Any]:
        return {k: self._cp.asarray(v) for k, v in host.items()}

    def duplicate(self, dev: dict[str, Any]) -> dict[str, Any]:
        return {k: v.copy() for k, v in dev.items()}

    def poison(self, arr: Any) -> None:
        arr.fill(poison_value(arr.dtype))

    def to_host(self, arr: Any) -> np.ndarray:
        return self._cp.asnumpy(arr)

    def event(self) -> Any:
        return self._cp.cuda.Event()

    def elapsed_s(self, start: Any, end: Any) -> float:
        return self._cp.cuda.get_elapsed_time(start, end) / 1e3

    def synchronize(self) -> None:
        self._cp.cuda.Device().synchronize()


def backend_for(kind: str) -> NumbaBackend:
    """The backend of a case's ``backend`` field; ImportError (with the reason) if CuPy is missing."""
    if kind == "numba-cuda":
        return NumbaBackend()
    if kind == "cupy":
        return CupyBackend()
    raise ValueError(f"backend: {kind!r} is not a GPU backend; expected 'numba-cuda' or 'cupy'")
