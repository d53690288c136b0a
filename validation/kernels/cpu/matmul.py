"""Matmul loop orders on the CPU: i-j-k, i-k-j and blocked (64 x 64 tiles), float64, one thread."""

from __future__ import annotations

import numpy as np

from archsim.microarch import traces
from validation.cases import KernelCase
from validation.kernels.cpu import _loops
from validation.kernels.cpu._common import check_sizes

TILE = 64


def _case(n: int, order: str) -> KernelCase:
    def make_inputs(seed: int):
        rng = np.random.default_rng(seed)
        return rng.random((n, n)), rng.random((n, n)), np.zeros((n, n))

    def run(inputs):
        a, b, c = inputs
        if order == "ijk":
            _loops.matmul_ijk(a, b, c)
        elif order == "ikj":
            _loops.matmul_ikj(a, b, c)
        else:
            _loops.matmul_blocked(a, b, c, TILE)
        return c

    return KernelCase(
        name=f"cpu/matmul-{order}/n={n}", family=f"cpu-matmul-{order}", target="cpu",
        params={"n": n, "order": order, "tile": TILE if order == "blocked" else 0},
        make_inputs=make_inputs, run=run, reference=lambda inp: inp[0] @ inp[1],
        describe=lambda: traces.matmul(n, order, tile=TILE), rtol=1e-10,
    )


def cases(sizes: str = "quick") -> list[KernelCase]:
    ns = (48, 96) if check_sizes(sizes) == "quick" else (256, 512, 1024)
    return [_case(n, order) for order in ("ijk", "ikj", "blocked") for n in ns]
