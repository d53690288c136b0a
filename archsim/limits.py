"""Bounds on the work one call may ask for, checked before anything is allocated or simulated.

A typo (``num = 1e9`` levels, ``steps = 10**9``) should be a one-line error in milliseconds, not an
hour of allocation ending in ``MemoryError``. Each bound has a default far above any real use and
an environment variable that raises (or lowers) it for a run that really needs more:

========================  =================================  ===========
limit                     variable                           default
========================  =================================  ===========
sweep points              ``ARCHSIM_MAX_POINTS``             1,000,000
levels of one axis        ``ARCHSIM_MAX_AXIS_LEVELS``        100,000
simulated DES tasks       ``ARCHSIM_MAX_DES_TASKS``          2,000,000
Dask connect timeout (s)  ``ARCHSIM_DASK_TIMEOUT_S``         10
========================  =================================  ===========

(DES tasks = ops x steps x data-parallel replicas; the simulator handles ~10^5 tasks per second.)
"""

from __future__ import annotations

import os
from dataclasses import dataclass, fields

from archsim.errors import ArchsimError

__all__ = ["Limits", "limits"]


@dataclass(frozen=True)
class Limits:
    """The bounds in force (see the module documentation)."""

    max_points: int = 1_000_000
    max_axis_levels: int = 100_000
    max_des_tasks: int = 2_000_000
    dask_timeout_s: float = 10.0


_ENV = {"max_points": "ARCHSIM_MAX_POINTS", "max_axis_levels": "ARCHSIM_MAX_AXIS_LEVELS",
        "max_des_tasks": "ARCHSIM_MAX_DES_TASKS", "dask_timeout_s": "ARCHSIM_DASK_TIMEOUT_S"}


def limits() -> Limits:
    """The defaults, with any ``ARCHSIM_MAX_*`` environment variable applied (read on each call)."""
    values: dict[str, float | int] = {}
    for f in fields(Limits):
        text = os.environ.get(_ENV[f.name])
        if text is None:
            continue
        kind = float if f.name.endswith("_s") else int
        try:
            value = kind(text)
        except ValueError:
            raise ArchsimError(f"{_ENV[f.name]}={text!r} is not a{'' if kind is int else ' positive'} "
                               f"{'integer' if kind is int else 'number'}") from None
        if not value > 0:
            raise ArchsimError(f"{_ENV[f.name]}={text!r} must be positive")
        values[f.name] = value
    return Limits(**values)  # type: ignore[arg-type]
