"""STREAM triad a = b + s c and a reduction s = sum(x), float64, one thread."""

from __future__ import annotations

import numpy as np

from archsim.microarch import traces
from validation.cases import KernelCase
from validation.kernels.cpu import _loops
from validation.kernels.cpu._common import check_sizes

SCALAR = 3.0


def _triad(n: int) -> KernelCase:
    def make_inputs(seed: int):
        rng = np.random.default_rng(seed)
        return np.empty(n), rng.random(n), rng.random(n)

    def run(inputs):
        a, b, c = inputs
        _loops.triad(a, b, c, SCALAR)
        return a

    return KernelCase(name=f"cpu/triad/n={n}", family="cpu-bandwidth", target="cpu", params={"n": n},
                      make_inputs=make_inputs, run=run, reference=lambda inp: inp[1] + SCALAR * inp[2],
                      describe=lambda: traces.triad(n), rtol=1e-12)


def _reduction(n: int) -> KernelCase:
    return KernelCase(name=f"cpu/reduction/n={n}", family="cpu-reduction", target="cpu", params={"n": n},
                      make_inputs=lambda seed: np.random.default_rng(seed).random(n),
                      run=lambda x: np.array(_loops.reduction(x)), reference=lambda x: np.array(x.sum()),
                      describe=lambda: traces.reduction(n), rtol=1e-9)


def cases(sizes: str = "quick") -> list[KernelCase]:
    ns = (1 << 12,) if check_sizes(sizes) == "quick" else (1 << 14, 1 << 20, 1 << 24)
    return [f(n) for f in (_triad, _reduction) for n in ns]
