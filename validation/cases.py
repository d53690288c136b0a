"""The unit of the validation suite: one kernel at one size, paired with what archsim predicts from.

A :class:`KernelCase` knows how to build fresh inputs, run the real kernel, compute a numpy reference
for a correctness check, and describe the work to archsim. ``describe`` never sees a measurement:
predictions are made from the kernel's description and the hardware preset alone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

Target = Literal["gpu", "cpu"]


@dataclass(frozen=True)
class KernelCase:
    """One kernel at one problem size.

    Attributes:
        name: unique id, e.g. ``"triad/grid-stride/n=16777216"``.
        family: error-budget family, e.g. ``"bandwidth"``, ``"matmul-tiled"``, ``"reduction"``.
        target: ``"gpu"`` (numba-CUDA) or ``"cpu"`` (numba CPU).
        params: the size and variant parameters (plain ints/strings), recorded with measurements.
        make_inputs: ``seed -> inputs`` (host numpy arrays; the driver moves them to the device).
        run: ``inputs -> output``; executes the real kernel once (the driver times it).
        reference: ``inputs -> expected output`` in numpy, for the correctness check.
        describe: ``() -> work`` that archsim predicts from (an op or kernel description).
        rtol: relative error bound of the output against the reference.
    """

    name: str
    family: str
    target: Target
    params: dict[str, Any]
    make_inputs: Callable[[int], Any]
    run: Callable[[Any], Any]
    reference: Callable[[Any], Any]
    describe: Callable[[], Any]
    rtol: float = 1e-5
    tags: tuple[str, ...] = field(default_factory=tuple)
