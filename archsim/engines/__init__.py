"""Engines: ``estimate(work, hardware, engine="roofline" | "des", ...)`` and ``estimate_many`` for sweeps.

Both engines price ops with the one cost function of :mod:`archsim.cost`. Options are
explicit keyword arguments, validated here:

* ``device``: on a :class:`~archsim.hardware.System`, the role running compute ops (``"gpu"``,
  ``"host"``, ``"pim"``); default the GPU when present, else the host. Transfers use the host link.
* ``overlap``: the roofline engine's graph latency is the longest dependency path instead of the sum.
* ``threads``: CPU threads (default every core).
* ``host_dispatch``: on a System, each GPU kernel waits for the host framework's dispatch
  (``host.efficiency.op_overhead_s``) when that outlasts the kernel (default ``True``; see
  :mod:`archsim.cost`); ``False`` prices the GPU's launch latency alone.
* discrete-event engine only (see :func:`archsim.engines.des.estimate_des`): ``streams``,
  ``overlap_copies``, ``loader`` (an ``InputPipeline``), ``steps``, ``data_parallel`` (a
  ``DataParallel``), ``offload`` (a ``PIMOffload``); ``None`` leaves the engine's default.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from typing import Any

import pandas as pd

from archsim.cost import DEVICE_ROLES, CostOptions, OpCost, op_cost
from archsim.errors import EngineError
from archsim.results import RunResult

__all__ = ["estimate", "estimate_many", "op_cost", "OpCost", "CostOptions", "ENGINES"]

ENGINES: tuple[str, ...] = ("roofline", "des")


def _options(device: str | None, threads: int | None, host_dispatch: bool = True) -> CostOptions:
    if device is not None and device not in DEVICE_ROLES:
        raise EngineError(f"device={device!r} is not allowed; allowed: {', '.join(DEVICE_ROLES)} (or None)")
    if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or threads < 1):
        raise EngineError(f"threads must be a positive int or None, got {threads!r}")
    if not isinstance(host_dispatch, bool):
        raise EngineError(f"host_dispatch must be True or False, got {host_dispatch!r}")
    return CostOptions(device=device, threads=threads, host_dispatch=host_dispatch)  # type: ignore[arg-type]


def _with_workload(result: RunResult, work: Any) -> RunResult:
    """Record what was estimated in ``_meta["workload"]`` (model, batch, dtype, precision, training), so
    figures and the command line can title a saved result without the graph."""
    dtype = getattr(work, "dtype", None)
    graph = hasattr(work, "ops")  # an OpGraph; a single op has no batch of its own
    name = str(getattr(work, "name", None) or getattr(work, "label", None) or result.workload)
    training = bool(getattr(work, "training", False))
    result._meta["workload"] = {
        "model": name.removesuffix(".train") if training else name,
        "batch": getattr(work, "batch", None) if graph else None, "dtype": None if dtype is None else str(dtype),
        "precision": None if dtype is None else dtype.precision, "training": training,
    }
    return result


def estimate(work: Any, hardware: Any, engine: str = "roofline", *, device: str | None = None,
             overlap: bool = False, threads: int | None = None, streams: int | None = None,
             overlap_copies: bool | None = None, loader: Any = None, steps: int | None = None,
             data_parallel: Any = None, offload: Any = None, host_dispatch: bool = True) -> RunResult:
    """Estimate the time and energy of ``work`` (an op or an OpGraph) on ``hardware``.

    ``engine="roofline"`` is the analytical engine; ``"des"`` the discrete-event one (when installed).
    Raises :class:`~archsim.errors.EngineError` for an unknown engine or option value.
    """
    if not isinstance(overlap, bool):
        raise EngineError(f"overlap must be True or False, got {overlap!r}")
    options = _options(device, threads, host_dispatch)
    des_options = {k: v for k, v in (("streams", streams), ("overlap_copies", overlap_copies), ("loader", loader),
                                     ("steps", steps), ("data_parallel", data_parallel), ("offload", offload))
                   if v is not None}
    if engine == "roofline":
        if des_options:
            raise EngineError(f"{', '.join(des_options)} appl{'ies' if len(des_options) == 1 else 'y'} to "
                              "engine='des' only")
        from archsim.engines.roofline import estimate_roofline
        return _with_workload(estimate_roofline(work, hardware, options, overlap=overlap), work)
    if engine == "des":
        if importlib.util.find_spec("archsim.engines.des") is None:
            raise EngineError(f"engine 'des' is not available in this build; allowed engines: {', '.join(ENGINES)}")
        from archsim.engines import des
        if overlap:
            raise EngineError("overlap applies to engine='roofline'; the discrete-event engine schedules ops itself")
        return _with_workload(des.estimate_des(work, hardware, options, **des_options), work)
    raise EngineError(f"unknown engine {engine!r}; allowed: {', '.join(ENGINES)}")


def estimate_many(work: Any, hardware: Sequence[Any], *, device: str | None = None, overlap: bool = False,
                  threads: int | None = None, host_dispatch: bool = True) -> pd.DataFrame:
    """The roofline estimate of ``work`` at every hardware point, vectorised: one row per point.

    Columns: ``latency_s``, ``energy_j``, ``energy_<component>_j``, ``data_movement_fraction``,
    ``flop``; index ``point`` (the position in ``hardware``). Equal to per-point :func:`estimate`.
    """
    if not isinstance(overlap, bool):
        raise EngineError(f"overlap must be True or False, got {overlap!r}")
    from archsim.engines.roofline import estimate_many as _many
    return _many(work, list(hardware), _options(device, threads, host_dispatch), overlap=overlap)
