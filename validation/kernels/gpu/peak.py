"""Peak FP32/FP64 rate: eight independent FMA chains per thread, all operands in registers.

Thread i runs ``a_j <- a_j * b + c`` for ``iters`` steps on 8 chains (8 independent FMAs per step hide
the FMA latency of 4 cycles with 2 warps per scheduler) and writes the chains' sum. FLOP:
``2 * 8 * iters * threads``. Memory traffic is negligible (3 loads and 1 store per thread).

Inputs repeat with period ``PERIOD`` threads (``b = B[i % PERIOD]``...), which the compiler cannot know,
so the numpy reference needs only ``PERIOD`` chains. ``b`` in [0.5, 0.9) makes the recurrence contract
towards ``c / (1 - b)``: no overflow or denormals, and rounding errors stay bounded.
"""

from __future__ import annotations

import functools

import numpy as np
from numba import cuda

from validation import workloads
from validation.cases import KernelCase
from validation.check import rtol_for
from validation.kernels.gpu._common import check_sizes, launch_1d, rng

FAMILY = "peak-compute"
CHAINS = 8
PERIOD = 1024
THREADS = 256


@cuda.jit
def fma_chains(out, a0, bv, cv, iters):
    i = cuda.grid(1)
    j = i % a0.size
    b = bv[j]
    c = cv[j]
    x0 = a0[j]
    x1 = x0 + c
    x2 = x1 + c
    x3 = x2 + c
    x4 = x3 + c
    x5 = x4 + c
    x6 = x5 + c
    x7 = x6 + c
    for _ in range(iters):
        x0 = x0 * b + c
        x1 = x1 * b + c
        x2 = x2 * b + c
        x3 = x3 * b + c
        x4 = x4 * b + c
        x5 = x5 * b + c
        x6 = x6 * b + c
        x7 = x7 * b + c
    if i < out.size:
        out[i] = x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7


_SIZES = {
    "tiny": ((2, 16),),  # (blocks, iters)
    "quick": ((1056, 1024),),
    # 132 SMs x 8 blocks x 256 threads = one full wave on H100/H200, then 4 waves; iters set the time.
    "full": ((1056, 256), (1056, 4096), (4224, 4096)),
}


def _inputs(dtype: str, blocks: int, seed: int) -> dict[str, np.ndarray]:
    g = rng(seed)
    dt = np.dtype(dtype)
    p = min(PERIOD, blocks * THREADS)
    return {
        "out": np.zeros(blocks * THREADS, dt),
        "a0": g.uniform(-1, 1, p).astype(dt),
        "bv": g.uniform(0.5, 0.9, p).astype(dt),
        "cv": g.uniform(-1, 1, p).astype(dt),
    }


def _reference(iters: int, inp):
    dt = inp["a0"].dtype
    b, c = inp["bv"], inp["cv"]
    xs = [inp["a0"].copy()]
    for _ in range(CHAINS - 1):
        xs.append((xs[-1] + c).astype(dt))
    x = np.stack(xs)
    for _ in range(iters):
        x = (x * b + c).astype(dt)
    per = x.astype(np.float64).sum(axis=0)
    reps = inp["out"].size // per.size
    return np.tile(per, reps)


def _run(blocks: int, iters: int, inp):
    fma_chains[blocks, THREADS](inp["out"], inp["a0"], inp["bv"], inp["cv"], iters)
    return inp["out"]


def _case(dtype: str, blocks: int, iters: int) -> KernelCase:
    threads = blocks * THREADS
    flop = 2 * CHAINS * iters * threads
    launch = launch_1d(blocks, THREADS, registers=32)
    name = f"fma-chain/{dtype}/blocks={blocks},iters={iters}"
    elem = np.dtype(dtype).itemsize
    return KernelCase(
        name=name,
        family=FAMILY,
        target="gpu",
        params={"dtype": dtype, "blocks": blocks, "threads": THREADS, "iters": iters, "chains": CHAINS},
        make_inputs=functools.partial(_inputs, dtype, blocks),
        run=functools.partial(_run, blocks, iters),
        reference=functools.partial(_reference, iters),
        describe=functools.partial(
            workloads.kernel,
            name,
            dtype,
            launch,
            flop_vector=flop,
            dram_write_bytes=elem * threads,
            dram_read_bytes=3 * elem * PERIOD,
        ),
        rtol=rtol_for(dtype),
        launch=launch,
        bytes_moved=elem * (threads + 3 * PERIOD),
        flop=flop,
        cache_policy="warm",
    )


def cases(sizes: str) -> list[KernelCase]:
    check_sizes(sizes)
    return [_case(dt, b, it) for dt in ("float32", "float64") for b, it in _SIZES[sizes]]
