"""Tensor Core GEMM through cuBLAS (CuPy's ``matmul``): numba cannot issue MMA instructions.

fp16 inputs accumulate in fp32 on Tensor Cores (cuBLAS's default compute type for half inputs in
CuPy; CuPy has no bfloat16 arrays); fp32 runs on the FP32 pipes (CuPy leaves TF32 off unless
CUPY_TF32=1). The op description is archsim's ``Gemm`` itself: this is the kernel a framework would call.

CuPy is imported only when a case runs: it is present on the GPU machine, absent from CI, and the
driver skips these cases with the reason when it cannot import it.
"""

from __future__ import annotations

import functools

import numpy as np

from validation import workloads
from validation.cases import KernelCase
from validation.check import rtol_for
from validation.kernels.gpu._common import check_sizes, rng

FAMILY = "gemm-cublas"

_SIZES = {
    "tiny": ((32, 32, 32),),
    "quick": ((1024, 1024, 1024), (4096, 4096, 4096)),
    "full": (
        (256, 256, 256),
        (1024, 1024, 1024),
        (2048, 2048, 2048),
        (4096, 4096, 4096),
        (8192, 8192, 8192),
        (8192, 8192, 1024),
        (16384, 1024, 4096),
    ),
}
_DTYPES = ("float16", "float32")


def _inputs(dtype: str, m: int, n: int, k: int, seed: int) -> dict[str, np.ndarray]:
    g = rng(seed)
    a = g.uniform(-1, 1, (m, k)).astype(np.float32)
    b = g.uniform(-1, 1, (k, n)).astype(np.float32)
    dt = np.dtype(dtype)
    return {"out": np.zeros((m, n), dt), "a": a.astype(dt), "b": b.astype(dt)}


def _reference(inp):
    # An fp32 reference (error ~ sqrt(k) * 6e-8, far inside the bounds) keeps the 8192^3 check to ~1 s
    # on the host; fp16 inputs convert to fp32 exactly.
    return inp["a"].astype(np.float32) @ inp["b"].astype(np.float32)


def _run(inp):
    import cupy

    cupy.matmul(inp["a"], inp["b"], out=inp["out"])
    return inp["out"]


def _case(dtype: str, m: int, n: int, k: int) -> KernelCase:
    elem = np.dtype(dtype).itemsize
    dram_read, dram_write = elem * (m * k + k * n), elem * m * n
    return KernelCase(
        name=f"gemm-cublas/{dtype}/m={m},n={n},k={k}",
        family=FAMILY,
        target="gpu",
        params={"m": m, "n": n, "k": k, "dtype": dtype},
        make_inputs=functools.partial(_inputs, dtype, m, n, k),
        run=_run,
        reference=_reference,
        describe=functools.partial(workloads.gemm, m, n, k, dtype),
        rtol=rtol_for(dtype),
        backend="cupy",
        bytes_moved=dram_read + dram_write,
        flop=2 * m * n * k,
        tags=("tensor-core",) if elem == 2 else (),
    )


def cases(sizes: str) -> list[KernelCase]:
    check_sizes(sizes)
    return [_case(dt, *mnk) for dt in _DTYPES for mnk in _SIZES[sizes]]
