"""Direct 2-D convolution (stride 1, no padding, 3 x 3), float64, one thread."""

from __future__ import annotations

import numpy as np

from archsim.microarch import traces
from validation.cases import KernelCase
from validation.kernels.cpu import _loops
from validation.kernels.cpu._common import check_sizes


def _reference(inp):
    x, w, _ = inp
    co, ci, kr, ks = w.shape
    oh, ow = x.shape[1] - kr + 1, x.shape[2] - ks + 1
    win = np.lib.stride_tricks.sliding_window_view(x, (kr, ks), axis=(1, 2))[:, :oh, :ow]
    return np.einsum("cyxrs,ocrs->oyx", win, w)


def _case(cin: int, cout: int, hw: int) -> KernelCase:
    k = 3

    def make_inputs(seed: int):
        rng = np.random.default_rng(seed)
        return rng.random((cin, hw, hw)), rng.random((cout, cin, k, k)), np.zeros((cout, hw - k + 1, hw - k + 1))

    def run(inputs):
        _loops.conv2d(*inputs)
        return inputs[2]

    return KernelCase(
        name=f"cpu/conv2d/c={cin}x{cout}/hw={hw}", family="cpu-conv2d", target="cpu",
        params={"cin": cin, "cout": cout, "h": hw, "w": hw, "k": k},
        make_inputs=make_inputs, run=run, reference=_reference,
        describe=lambda: traces.conv2d(cin, cout, hw, hw, k), rtol=1e-10,
    )


def cases(sizes: str = "quick") -> list[KernelCase]:
    if check_sizes(sizes) == "quick":
        return [_case(2, 3, 10)]
    return [_case(16, 16, 66), _case(32, 32, 130)]
