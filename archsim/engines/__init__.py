"""Engines: ``estimate(work, hardware, engine="roofline" | "des", ...)`` and ``estimate_many`` for sweeps.

Both engines price ops with the one cost function of :mod:`archsim.cost`. Options are
explicit keyword arguments, validated here:

* ``device``: on a :class:`~archsim.hardware.System`, the role running compute ops (``"gpu"``,
  ``"host"``, ``"pim"``); default the GPU when present, else the host. Transfers use the host link.
* ``overlap``: the roofline engine's graph latency is the longest dependency path instead of the sum.
* ``threads``: CPU threads (default every core).
* ``host_dispatch``: on a System, each GPU kernel waits for the host framework's dispatch
  (``host.efficiency.op_overhead_s`` for an operator's first kernel, ``launch_api_s`` for each
  further one) when that outlasts the kernel (default ``True``; see :mod:`archsim.cost.dispatch`);
  ``False`` prices the GPU's launch latency alone.
* ``software``: a software profile (a name from ``models/software/``, e.g. ``"pytorch-eager"``, or a
  :class:`~archsim.software.SoftwareProfile`); default ``"none"``, device work only. The profile's
  precision and fusion passes rewrite the workload, its per-op and per-launch host work (priced on
  the host CPU model) replaces the host preset's dispatch, its per-iteration work joins the latency, and the
  result splits ``host_s`` from ``device_s`` (see :mod:`archsim.engines.host`).
* discrete-event engine only (see :func:`archsim.engines.des.estimate_des`): ``streams``,
  ``overlap_copies``, ``loader`` (an ``InputPipeline``), ``steps``, ``data_parallel`` (a
  ``DataParallel``), ``offload`` (a ``PIMOffload``); ``None`` leaves the engine's default.
"""

from __future__ import annotations

import importlib.util
import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from archsim.cost import DEVICE_ROLES, CostOptions, OpCost, op_cost
from archsim.errors import EngineError
from archsim.results import RunResult

if TYPE_CHECKING:  # a single estimate never needs pandas (~0.2-0.5 s to import)
    import pandas as pd

__all__ = ["estimate", "estimate_many", "many_columns", "Estimator", "check_options", "op_cost", "OpCost",
           "CostOptions", "ENGINES", "OPTIONS"]

ENGINES: tuple[str, ...] = ("roofline", "des")


def _options(device: str | None, threads: int | None, host_dispatch: bool = True,
             software: Any = None) -> CostOptions:
    if device is not None and device not in DEVICE_ROLES:
        raise EngineError(f"device={device!r} is not allowed; allowed: {', '.join(DEVICE_ROLES)} (or None)")
    if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or threads < 1):
        raise EngineError(f"threads must be a positive int or None, got {threads!r}")
    if not isinstance(host_dispatch, bool):
        raise EngineError(f"host_dispatch must be True or False, got {host_dispatch!r}")
    return CostOptions(device=device, threads=threads, host_dispatch=host_dispatch,  # type: ignore[arg-type]
                       software=software)


OPTIONS: tuple[str, ...] = ("device", "overlap", "threads", "host_dispatch", "software", "streams",
                             "overlap_copies", "loader", "steps", "data_parallel", "offload")
"""The keyword options of :func:`estimate` (the last six for ``engine="des"`` only)."""


def check_options(options: Any, engine: str) -> None:
    """Raise :class:`EngineError` for an engine or option name :func:`estimate` does not take.

    The sweep calls this before running anything, so a typo fails in milliseconds, not after a sweep.
    """
    if engine not in ENGINES:
        raise EngineError(f"unknown engine {engine!r}; allowed: {', '.join(ENGINES)}")
    if not isinstance(options, Mapping):
        raise EngineError(f"engine options must be a table of name = value, got {options!r}")
    unknown = sorted(str(k) for k in options if k not in OPTIONS)
    if unknown:
        raise EngineError(f"unknown engine option(s) {unknown}; allowed: {', '.join(OPTIONS)}")


def _checked(result: RunResult) -> RunResult:
    # Every accepted input must give a finite, non-negative answer; anything else is out-of-range input
    # that the field bounds did not catch, reported instead of returned.
    for name, value in (("latency_s", result.latency_s), ("energy_j", result.energy_j)):
        if not (math.isfinite(value) and value >= 0):
            raise EngineError(f"the estimate's {name} is {value!r}: a hardware or workload value is out of "
                              "range (check very large or very small fields)")
    return result


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
             data_parallel: Any = None, offload: Any = None, host_dispatch: bool = True,
             software: Any = None, **unknown: Any) -> RunResult:
    """Estimate the time and energy of ``work`` (an op or an OpGraph) on ``hardware``.

    ``engine="roofline"`` is the analytical engine; ``"des"`` the discrete-event one (when installed).
    Raises :class:`~archsim.errors.EngineError` for an unknown engine, option name (listing
    :data:`OPTIONS`) or option value, and for a result that is not finite.
    """
    if unknown:
        raise EngineError(f"estimate() got unknown option(s) {sorted(unknown)}; allowed: {', '.join(OPTIONS)}")
    return _guarded(work, hardware, engine, device, overlap, threads, streams, overlap_copies, loader, steps,
                    data_parallel, offload, host_dispatch, software, None)


def _guarded(*args: Any) -> RunResult:
    try:
        return _checked(_estimate_with_software(*args))
    except (OverflowError, ZeroDivisionError) as exc:
        raise EngineError(f"arithmetic {type(exc).__name__} while estimating: a hardware or workload value is "
                          f"out of range ({exc})") from None


class Estimator:
    """:func:`estimate` with a cache of op costs that the caller owns (no state outside the object).

    ``Estimator().estimate(work, hardware, ...)`` takes the arguments of :func:`estimate` and returns
    the same result, to the bit. The roofline engine keeps the cost of every distinct op it prices,
    per hardware content (:meth:`~archsim.hardware.HardwareModel.content_hash`) and device options,
    so ops seen before on that hardware are not priced again: the forward ops of a training graph
    after its inference graph, a graph re-estimated with ``overlap=True``, or a notebook re-running a
    cell. Each op's cost is the same with or without its neighbours (:mod:`archsim.cost.gpu_batch`
    stacks ops without changing any op's numbers), so the cache cannot change a result. Runs with a
    software profile (which rewrites the graph) and the discrete-event engine are not cached. The
    cache grows with the distinct ops and hardware estimated; :meth:`clear` empties it.
    """

    def __init__(self) -> None:
        self._costs: dict[tuple[Any, ...], dict[Any, Any]] = {}

    def estimate(self, work: Any, hardware: Any, engine: str = "roofline", *, device: str | None = None,
                 overlap: bool = False, threads: int | None = None, streams: int | None = None,
                 overlap_copies: bool | None = None, loader: Any = None, steps: int | None = None,
                 data_parallel: Any = None, offload: Any = None, host_dispatch: bool = True,
                 software: Any = None, **unknown: Any) -> RunResult:
        """:func:`estimate`, reusing the op costs this estimator has computed before."""
        if unknown:
            raise EngineError(f"estimate() got unknown option(s) {sorted(unknown)}; allowed: {', '.join(OPTIONS)}")
        return _guarded(work, hardware, engine, device, overlap, threads, streams, overlap_copies, loader, steps,
                        data_parallel, offload, host_dispatch, software, self._costs)

    def clear(self) -> None:
        """Forget every cached op cost."""
        self._costs.clear()


def _estimate_with_software(work: Any, hardware: Any, engine: str, device: str | None, overlap: bool,
                            threads: int | None, streams: int | None, overlap_copies: bool | None, loader: Any,
                            steps: int | None, data_parallel: Any, offload: Any, host_dispatch: bool,
                            software: Any, costs: dict[tuple[Any, ...], dict[Any, Any]] | None) -> RunResult:
    if software is None:  # the default: device work only, no profile to read
        return _estimate(work, hardware, engine, device, overlap, threads, streams, overlap_copies, loader, steps,
                         data_parallel, offload, _options(device, threads, host_dispatch), costs)
    from archsim.software import resolve_software

    profile = resolve_software(software)
    if profile.is_none:
        return _estimate(work, hardware, engine, device, overlap, threads, streams, overlap_copies, loader, steps,
                         data_parallel, offload, _options(device, threads, host_dispatch), costs)
    from archsim.engines import host

    run_work = host.prepare(work, hardware, profile, device)
    options = _options(device, threads, host_dispatch, profile)
    result = _estimate(run_work, hardware, engine, device, overlap, threads, streams, overlap_copies, loader, steps,
                       data_parallel, offload, options)
    return host.finish(result, run_work, hardware, profile, iterations=steps or 1)


def _estimate(work: Any, hardware: Any, engine: str, device: str | None, overlap: bool, threads: int | None,
              streams: int | None, overlap_copies: bool | None, loader: Any, steps: int | None, data_parallel: Any,
              offload: Any, options: CostOptions, costs: dict[tuple[Any, ...], dict[Any, Any]] | None = None
              ) -> RunResult:
    if not isinstance(engine, str):
        raise EngineError(f"engine must be a name; allowed: {', '.join(ENGINES)}; got {engine!r}")
    if not isinstance(overlap, bool):
        raise EngineError(f"overlap must be True or False, got {overlap!r}")
    des_options = {k: v for k, v in (("streams", streams), ("overlap_copies", overlap_copies), ("loader", loader),
                                     ("steps", steps), ("data_parallel", data_parallel), ("offload", offload))
                   if v is not None}
    if engine == "roofline":
        if des_options:
            raise EngineError(f"{', '.join(des_options)} appl{'ies' if len(des_options) == 1 else 'y'} to "
                              "engine='des' only")
        from archsim.engines.roofline import estimate_roofline
        return _with_workload(estimate_roofline(work, hardware, options, overlap=overlap, costs=costs), work)
    if engine == "des":
        if importlib.util.find_spec("archsim.engines.des") is None:
            raise EngineError(f"engine 'des' is not available in this build; allowed engines: {', '.join(ENGINES)}")
        from archsim.engines import des
        if overlap:
            raise EngineError("overlap applies to engine='roofline'; the discrete-event engine schedules ops itself")
        return _with_workload(des.estimate_des(work, hardware, options, **des_options), work)
    raise EngineError(f"unknown engine {engine!r}; allowed: {', '.join(ENGINES)}")


def estimate_many(work: Any, hardware: Sequence[Any], *, device: str | None = None, overlap: bool = False,
                  threads: int | None = None, host_dispatch: bool = True, software: Any = None,
                  **unknown: Any) -> pd.DataFrame:
    """The roofline estimate of ``work`` at every hardware point, vectorised: one row per point.

    Columns: ``latency_s``, ``energy_j``, ``energy_<component>_j``, ``data_movement_fraction``,
    ``flop``; index ``point`` (the position in ``hardware``). Equal to per-point :func:`estimate`
    (with a software profile too: its passes once, its host work priced on each point's host).
    """
    return _many_checked(work, hardware, device, overlap, threads, host_dispatch, software, unknown, as_columns=False)


def many_columns(work: Any, hardware: Sequence[Any], *, device: str | None = None, overlap: bool = False,
                 threads: int | None = None, host_dispatch: bool = True, software: Any = None,
                 **unknown: Any) -> dict[str, np.ndarray]:
    """The numeric columns of :func:`estimate_many`'s frame, in its order: name -> float64 array over
    ``hardware`` (``latency_s`` in s, ``energy_j`` and ``energy_<component>_j`` in J,
    ``data_movement_fraction`` a fraction, ``flop`` a count; the same values, options and errors).
    Without a software profile no DataFrame is built: what a sweep reads, point after point."""
    return _many_checked(work, hardware, device, overlap, threads, host_dispatch, software, unknown, as_columns=True)


def _many_checked(work: Any, hardware: Sequence[Any], device: str | None, overlap: bool, threads: int | None,
                  host_dispatch: bool, software: Any, unknown: dict[str, Any], as_columns: bool) -> Any:
    if unknown:
        allowed = ("device", "overlap", "threads", "host_dispatch", "software")
        raise EngineError(f"estimate_many() got unknown option(s) {sorted(unknown)}; allowed: {', '.join(allowed)} "
                          "(the discrete-event options need engine='des')")
    if not isinstance(overlap, bool):
        raise EngineError(f"overlap must be True or False, got {overlap!r}")
    try:
        return _many_with_software(work, hardware, device, overlap, threads, host_dispatch, software, as_columns)
    except (OverflowError, ZeroDivisionError) as exc:
        raise EngineError(f"arithmetic {type(exc).__name__} while estimating: a hardware or workload value is "
                          f"out of range ({exc})") from None


def _checked_frame(frame: pd.DataFrame) -> pd.DataFrame:
    for name in ("latency_s", "energy_j"):
        values = frame[name].to_numpy()
        if np.all(values >= 0) and np.all(np.isfinite(values)):  # NaN fails the first test
            continue
        bad = frame.index[~(np.isfinite(frame[name]) & (frame[name] >= 0))]
        if len(bad):
            raise EngineError(f"the estimate's {name} is {frame[name][bad[0]]!r} at point {bad[0]}: a hardware or "
                              "workload value is out of range (check very large or very small fields)")
    return frame


def _checked_columns(columns: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """``columns`` (a frame's, index the point positions), after :func:`_checked_frame`'s checks and errors."""
    for name in ("latency_s", "energy_j"):
        values = columns[name]
        if np.all(values >= 0) and np.all(np.isfinite(values)):  # NaN fails the first test
            continue
        bad = np.flatnonzero(~(np.isfinite(values) & (values >= 0)))
        if len(bad):
            raise EngineError(f"the estimate's {name} is {values[bad[0]]!r} at point {bad[0]}: a hardware or "
                              "workload value is out of range (check very large or very small fields)")
    return columns


def _frame_columns(frame: pd.DataFrame) -> dict[str, np.ndarray]:
    """The numeric columns of ``frame`` as float64 arrays, in its order."""
    if all(dtype == np.float64 for dtype in frame.dtypes):
        # Every column a float64 metric (the roofline's frame): each column of its one block.
        block = frame.to_numpy()
        return {str(c): block[:, j] for j, c in enumerate(frame.columns)}
    numeric = frame.select_dtypes("number")
    return {str(c): numeric[c].to_numpy(dtype=float) for c in numeric.columns}


def _many_with_software(work: Any, hardware: Sequence[Any], device: str | None, overlap: bool,
                        threads: int | None, host_dispatch: bool, software: Any, as_columns: bool = False) -> Any:
    """:func:`estimate_many`'s frame, or with ``as_columns`` :func:`many_columns`' columns."""
    from archsim.engines import roofline

    if software is not None:
        from archsim.software import resolve_software

        profile = resolve_software(software)
    if software is None or profile.is_none:
        columns = _checked_columns(roofline.many_columns(work, list(hardware), _options(device, threads, host_dispatch),
                                                         overlap=overlap))
        # The compiled running sums (the same floats as numpy's) serve the calls after this one: their
        # module is loaded once this call's large arrays are freed, not amid them (loaded amid or before
        # them, the memory it keeps changed how glibc reuses their space from call to call, and
        # sweeps or repeated calls refaulted ~3,000 pages a call).
        import archsim.engines.ordered_sums  # noqa: F401
        return columns if as_columns else roofline.columns_frame(columns)
    from archsim.engines import host

    points = list(hardware)
    run_work = host.prepare_many(work, points, profile, device)
    frame = roofline.estimate_many(run_work, points, _options(device, threads, host_dispatch, profile), overlap=overlap)
    frame = _checked_frame(host.finish_many(frame, points, profile))
    return _frame_columns(frame) if as_columns else frame
