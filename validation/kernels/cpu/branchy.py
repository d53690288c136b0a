"""The branchy loop ``if x[i] > 0: s += x[i]`` on sorted and unsorted data, float64, one thread.

Two variants (see :func:`archsim.microarch.traces.branchy`): ``select`` is the loop as written,
which LLVM if-converts (no branch: sorted and unsorted should run alike); ``store`` adds a
conditional store of x[i], which keeps the branch (unsorted data: ~50% mispredictions).
"""

from __future__ import annotations

import numpy as np

from archsim.microarch import traces
from validation.cases import KernelCase
from validation.kernels.cpu import _loops
from validation.kernels.cpu._common import check_sizes

SEED = 0  # the data is part of the workload: describe() regenerates the same signs


def _case(n: int, sorted_: bool, variant: str) -> KernelCase:
    def make_inputs(seed: int):
        # The branch pattern is the workload, so the data ignore the run seed (see SEED).
        x = np.array(traces.branchy_data(n, sorted_, SEED))
        return x, np.empty(n)

    def run(inputs):
        x, out = inputs
        if variant == "select":
            return np.array(_loops.branchy_select(x))
        return np.array(_loops.branchy_store(x, out)[0])

    order = "sorted" if sorted_ else "unsorted"
    return KernelCase(
        name=f"cpu/branchy-{variant}/{order}/n={n}", family=f"cpu-branchy-{variant}", target="cpu",
        params={"n": n, "sorted": sorted_, "variant": variant},
        make_inputs=make_inputs, run=run, reference=lambda inp: np.array(inp[0][inp[0] > 0].sum()),
        describe=lambda: traces.branchy(n, sorted_, variant, seed=SEED), rtol=1e-9,
    )


def cases(sizes: str = "quick") -> list[KernelCase]:
    n = 1 << 12 if check_sizes(sizes) == "quick" else 1 << 24
    return [_case(n, s, v) for v in ("select", "store") for s in (True, False)]
