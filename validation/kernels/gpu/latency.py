"""Pointer chase: one thread follows ``i <- next[i]`` through a random cycle; latency per access.

``next`` is a single random cycle (successive slots of a random permutation) over ``n`` int32 slots
spaced one 128-byte line apart (``stride`` = 32 slots), so every step touches a new line and no
prefetcher can guess it. Each load depends on the previous one: time = steps x load-to-use latency
of the level that holds the working set (``n * 128`` bytes: L1, L2 or DRAM). The driver keeps this
kernel's buffers warm.
"""

from __future__ import annotations

import functools

import numpy as np
from numba import cuda

from validation import workloads
from validation.cases import KernelCase
from validation.kernels.gpu._common import check_sizes, launch_1d, rng

FAMILY = "latency"
STRIDE = 32  # int32 slots per 128-byte line


@cuda.jit
def chase(out, nxt, steps):
    i = 0
    for _ in range(steps):
        i = nxt[i]
    out[0] = i


def _cycle(lines: int, seed: int) -> np.ndarray:
    """``succ`` with ``succ[order[k]] = order[k + 1]`` (cyclically) for a random order: one cycle.

    Every cyclic permutation arises from exactly ``lines`` orders (its rotations), so it is uniform.
    """
    order = rng(seed).permutation(lines)
    succ = np.empty(lines, np.int64)
    succ[order] = np.roll(order, -1)
    return succ


def _inputs(lines: int, seed: int) -> dict[str, np.ndarray]:
    perm = _cycle(lines, seed)
    nxt = np.zeros(lines * STRIDE, np.int32)
    nxt[np.arange(lines) * STRIDE] = perm * STRIDE
    return {"out": np.zeros(1, np.int32), "nxt": nxt}


def _reference(steps: int, inp):
    nxt = inp["nxt"]
    i = 0
    for _ in range(steps):
        i = int(nxt[i])
    return np.array([i], np.int32)


def _run(steps: int, inp):
    chase[1, 1](inp["out"], inp["nxt"], steps)
    return inp["out"]


# (lines, steps): 16 KiB (L1), 4 MiB (L2), 1 GiB (DRAM, also TLB reach).
_SIZES = {
    "tiny": ((16, 40),),
    "quick": ((128, 4096), (1 << 15, 4096)),
    "full": ((128, 20000), (1 << 12, 20000), (1 << 15, 20000), (1 << 18, 10000), (1 << 23, 10000)),
}


def _case(lines: int, steps: int) -> KernelCase:
    ws = lines * STRIDE * 4
    launch = launch_1d(1, 1, registers=16)
    name = f"pointer-chase/working_set={ws},steps={steps}"
    return KernelCase(
        name=name,
        family=FAMILY,
        target="gpu",
        params={"lines": lines, "stride_bytes": STRIDE * 4, "working_set_bytes": ws, "steps": steps},
        make_inputs=functools.partial(_inputs, lines),
        run=functools.partial(_run, steps),
        reference=functools.partial(_reference, steps),
        describe=functools.partial(
            workloads.kernel,
            name,
            "float32",  # no arithmetic: names the element class only (archsim has no int32)
            launch,
            dependent_accesses=steps,
            working_set_bytes=ws,
            dram_read_bytes=min(ws, 128 * steps),
            dram_write_bytes=4,
        ),
        rtol=0.0,
        launch=launch,
        bytes_moved=128 * steps,
        flop=0,
        cache_policy="warm",
    )


def cases(sizes: str) -> list[KernelCase]:
    check_sizes(sizes)
    return [_case(lines, steps) for lines, steps in _SIZES[sizes]]
