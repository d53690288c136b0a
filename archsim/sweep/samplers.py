"""Samplers: which points of the axes a sweep visits.

* ``grid``: the Cartesian product of every axis's levels (lists, or ranges with ``num``), in the
  order the axes are given (the last axis varies fastest).
* ``random``: ``n`` independent uniform draws (numpy ``default_rng(seed)``).
* ``lhs``: a Latin hypercube of ``n`` points (McKay, Beckman & Conover 1979), ``scipy.stats.qmc``.
* ``sobol``: the first ``n`` points of a scrambled Sobol' sequence (Owen scrambling), ``n`` a power of
  two so the sequence keeps its balance properties (scipy.stats.qmc documentation).

The random samplers draw in the unit hypercube; each axis maps its coordinate to a value: a level of a
list axis (equal-width bins), or a point of a range (linear or logarithmic, counts rounded).
The same ``(axes, sampler, n, seed)`` always gives the same points.
"""

from __future__ import annotations

import itertools
import math
from typing import Any, Literal

import numpy as np
from scipy.stats import qmc

from archsim.errors import SweepError
from archsim.sweep.axes import Axis

__all__ = ["SAMPLERS", "Sampler", "sample"]

Sampler = Literal["grid", "random", "lhs", "sobol"]
SAMPLERS: tuple[str, ...] = ("grid", "random", "lhs", "sobol")


def _unit_cube(sampler: str, d: int, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if sampler == "random":
        return rng.random((n, d))
    if sampler == "lhs":
        return qmc.LatinHypercube(d, rng=rng).random(n)
    if n & (n - 1):
        raise SweepError(f"sampler 'sobol': n={n} is not a power of two; Sobol' points keep their balance "
                         f"only for n = 2^m (e.g. {1 << (n.bit_length() - 1)} or {1 << n.bit_length()})")
    return qmc.Sobol(d, scramble=True, rng=rng).random_base2(n.bit_length() - 1)


def sample(axes: tuple[Axis, ...], sampler: str, n: int | None, seed: int | None) -> list[tuple[Any, ...]]:
    """The points of the sweep: one tuple of axis values (in axis order) per point."""
    from archsim.limits import limits

    if sampler not in SAMPLERS:
        raise SweepError(f"sampler {sampler!r} is not known; allowed: {', '.join(SAMPLERS)}")
    cap = limits().max_points
    if sampler == "grid":
        missing = [a.name for a in axes if a.levels is None]
        if missing:
            raise SweepError(f"sampler 'grid' needs levels on every axis: give a list or a range with 'num' "
                             f"for {', '.join(map(repr, missing))}")
        if n is not None:
            raise SweepError("sampler 'grid' visits every combination of levels: do not pass n")
        # Counted before any point is made: a 10^9-point grid is an error now, not a MemoryError later.
        total = math.prod(len(a.levels) for a in axes)  # type: ignore[arg-type]
        if total > cap:
            sizes = " x ".join(str(len(a.levels)) for a in axes)  # type: ignore[arg-type]
            raise SweepError(f"sampler 'grid': {sizes} = {total} points exceeds the limit {cap} "
                             "(set ARCHSIM_MAX_POINTS to raise it, or sample n points with 'lhs' or 'sobol')")
        return list(itertools.product(*(a.levels for a in axes)))  # type: ignore[misc]
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise SweepError(f"sampler {sampler!r} needs n, a positive number of points; got {n!r}")
    if n > cap:
        raise SweepError(f"sampler {sampler!r}: n={n} exceeds the limit {cap} points (set ARCHSIM_MAX_POINTS)")
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63:
        raise SweepError(f"sampler {sampler!r} needs an integer seed in 0..2^63-1; got {seed!r}")
    u = _unit_cube(sampler, len(axes), n, seed)
    columns = [axis.from_unit(u[:, j]) for j, axis in enumerate(axes)]
    return list(zip(*columns, strict=True))
