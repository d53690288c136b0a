"""A run under a software profile: the graph passes before the engine, the host's time after it.

Before: the profile's precision policy and fusion rules rewrite the workload
(:func:`archsim.software.apply_passes`); the cost model prices each op with the profile's per-op host
work in place of the host preset's dispatch (:mod:`archsim.cost.dispatch`).

After: the per-iteration host work (the Python step, ``Session.run``, the graph launch) joins the
engine's latency. When the iteration ends with a device synchronisation it is serial with the
device (latency + iteration work); otherwise the host runs it while the device drains its queue
(the larger of the device latency and all the host's work). ``host_s`` is the exposed host time:
the iteration work that is not hidden plus, per op, the dispatch that outlasted its kernel
(``overhead_s`` of an op whose bound is the host's dispatch); ``device_s`` the rest. Ops the host
bound are renamed ``bound="host"``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from archsim.errors import EngineError
from archsim.hardware import CPUDevice, GPUDevice, System
from archsim.results import RunResult
from archsim.software import SoftwareProfile, apply_passes, fused_names

if TYPE_CHECKING:  # only finish_many's frame is a DataFrame; importing pandas costs ~0.5 s
    import pandas as pd

__all__ = ["prepare", "prepare_many", "tf32_available", "check_host", "finish", "finish_many", "host_of"]


def host_of(hardware: Any) -> CPUDevice | None:
    """The CPU that runs the framework: a System's host, or a lone CPU device itself."""
    if isinstance(hardware, System):
        return hardware.host
    if isinstance(hardware, CPUDevice):
        return hardware
    return None


def check_host(hardware: Any, profile: SoftwareProfile) -> None:
    """An error when the profile prices host work and ``hardware`` has no host to price it on."""
    if profile.has_host_work and host_of(hardware) is None:
        raise EngineError(f"software={profile.name!r} prices host work on the system's host CPU; "
                          f"a lone {type(hardware).__name__} has none: pass a System, or software='none'")


def tf32_available(hardware: Any, device: str | None = None) -> bool:
    """Whether the GPU that runs the matrix ops of ``hardware`` has a TF32 Tensor-Core rate: a lone
    GPU, or a System's GPU unless ``device`` sends the work elsewhere ("host", "pim")."""
    gpu = hardware if isinstance(hardware, GPUDevice) else getattr(hardware, "gpu", None)
    if gpu is None or device in ("host", "pim") or gpu.tensor_core is None:
        return False
    return gpu.tensor_core.flop_per_cycle_per_sm.get("tf32", 0) > 0


def prepare(work: Any, hardware: Any, profile: SoftwareProfile, device: str | None = None) -> Any:
    """``work`` as the profile runs it (after :func:`check_host`) on ``hardware``: a profile that
    allows TF32 runs fp32 matrix ops in TF32 where that GPU has it."""
    check_host(hardware, profile)
    return apply_passes(work, profile, profile.precision.allow_tf32 and tf32_available(hardware, device))


def prepare_many(work: Any, points: Sequence[Any], profile: SoftwareProfile, device: str | None = None) -> Any:
    """:func:`prepare` for a stack of hardware points, which share one rewritten workload: an error
    when a TF32-allowing profile meets points that disagree on TF32 (one runs fp32 matrix ops on
    CUDA cores, another on Tensor Cores)."""
    for h in points:
        check_host(h, profile)
    if not points:
        return work
    if profile.precision.allow_tf32:
        has = {tf32_available(h, device) for h in points}
        if len(has) > 1:
            raise EngineError(f"software={profile.name!r} allows TF32, and the points disagree on whether the GPU "
                              "has TF32 Tensor Cores: estimate the two groups apart")
    return prepare(work, points[0], profile, device)


def _op_host_s(o: Any, dispatch_host_s: float) -> float:
    """Exposed host seconds of one op result."""
    d = o.extra.get("host_dispatch_s", 0.0)
    if d > 0 and d >= o.latency_s * (1 - 1e-12):
        return o.extra.get("overhead_s", 0.0)
    if o.device == "host":
        return min(o.latency_s, dispatch_host_s)
    return 0.0


def finish(result: RunResult, work: Any, hardware: Any, profile: SoftwareProfile, iterations: int = 1) -> RunResult:
    """``result`` with the profile's per-iteration host work, the host/device split and fused names."""
    ops_by_name = {}
    for op in getattr(work, "ops", (work,)):
        names = fused_names(op)
        if names:
            ops_by_name[op.label] = names
    host = host_of(hardware)
    dispatch_host = profile.dispatch_s(host) if (host is not None and profile.has_host_work) else 0.0
    ops = []
    exposed = 0.0
    dispatch_total = 0.0
    for o in result.ops:
        h = _op_host_s(o, dispatch_host) if profile.has_host_work else 0.0
        exposed += h
        dispatch_total += o.extra.get("host_dispatch_s", 0.0)  # the op's dispatch, all its launches
        if o.device == "host":
            dispatch_total += dispatch_host
        changes: dict[str, Any] = {}
        if h > 0 and o.device != "host" and o.bound == "overhead":
            changes["bound"] = "host"
        if o.name in ops_by_name:
            changes["fused"] = ops_by_name[o.name]
        ops.append(dataclasses.replace(o, **changes) if changes else o)
    # the discrete-event engine's data-parallel runs list every replica's ops: one replica's share
    n_work = len(getattr(work, "ops", (work,)))
    replicas = max(1, round(len(result.ops) / n_work)) if n_work else 1
    exposed /= replicas
    dispatch_total /= replicas
    iteration = profile.iteration_s(host) * iterations if (host is not None and profile.has_host_work) else 0.0
    latency = result.latency_s
    if profile.sync_per_iteration:
        latency, host_s = latency + iteration, exposed + iteration
    else:
        busy = iteration + dispatch_total
        host_s = exposed + max(0.0, busy - latency)
        latency = max(latency, busy)
    host_s = min(host_s, latency)
    meta = {**result._meta, "software": {"name": profile.name, "launch_mode": profile.launch_mode,
                                         "iteration_s": iteration, "dispatch_s": dispatch_host,
                                         "sync_per_iteration": profile.sync_per_iteration}}
    static_w = 0.0
    if result.latency_s > 0 and "static" in result.energy_breakdown_j:
        static_w = result.energy_breakdown_j["static"] / result.latency_s
    breakdown = dict(result.energy_breakdown_j)
    if static_w and latency > result.latency_s:
        # the devices idle (drawing static power) while the host runs its per-iteration work
        breakdown["static"] = breakdown["static"] + static_w * (latency - result.latency_s)
    return dataclasses.replace(result, latency_s=latency, ops=tuple(ops), _meta=meta, host_s=host_s,
                               device_s=latency - host_s, energy_breakdown_j=breakdown,
                               energy_j=float(sum(breakdown.values())))


def finish_many(frame: pd.DataFrame, hardware: Sequence[Any], profile: SoftwareProfile) -> pd.DataFrame:
    """:func:`finish` for the rows of :func:`archsim.estimate_many` (profiles that synchronise per
    iteration: their per-iteration work adds to each point's latency, the idle devices' static power
    with it). Adds ``host_iteration_s``."""
    if not profile.sync_per_iteration:
        raise EngineError(f"estimate_many with software={profile.name!r}: only profiles with "
                          "sync_per_iteration = true are vectorised; use estimate per point")
    iteration = np.array([profile.iteration_s(host_of(h)) if (profile.has_host_work and host_of(h) is not None)
                          else 0.0 for h in hardware])
    out = frame.copy()
    latency = out["latency_s"].to_numpy()
    if "energy_static_j" in out:
        static = out["energy_static_j"].to_numpy()
        rate = np.divide(static, latency, out=np.zeros_like(static), where=latency > 0)
        extra = rate * iteration
        out["energy_static_j"] = static + extra
        out["energy_j"] = out["energy_j"].to_numpy() + extra
        movement = out["data_movement_fraction"].to_numpy() * frame["energy_j"].to_numpy()
        out["data_movement_fraction"] = np.divide(movement, out["energy_j"].to_numpy(),
                                                  out=np.zeros_like(movement), where=out["energy_j"].to_numpy() > 0)
    out["latency_s"] = latency + iteration
    out["host_iteration_s"] = iteration
    return out
