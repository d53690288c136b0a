"""The cost model's entry point: ``op_cost(op, device, options) -> OpCost``, shared by both engines.

For one op on one device (or a :class:`~archsim.hardware.System`) it resolves which device runs the
op, builds that device's parameter pack (:mod:`archsim.cost.params`) and calls the per-device cost
function (:mod:`archsim.cost.gpu`, ``cpu``, ``pim``, ``link``), vectorised over hardware points;
``op_cost`` is the one-point view, and :func:`op_cost_arrays` the many-point one used by
:func:`archsim.estimate_many`. The roofline engine sums these costs over a graph; the discrete-event
engine schedules them on resources. Both therefore agree by construction when nothing overlaps or
contends.

Host dispatch (``CostOptions.host_dispatch``): a GPU of a System is driven by its host, whose
framework spends ``host.efficiency.op_overhead_s`` dispatching each operator (the framework's
operator dispatch and the operator's first launch API call); every further kernel the operator's
library launches (cuDNN's NCHW <-> NHWC transposes around a Tensor-Core convolution, Winograd's
transforms, a split-K reduction) costs the host the launch API call alone,
``host.efficiency.launch_api_s``: the framework dispatches once per operator. An operator of L
launches thus costs the host ``op_overhead + (L - 1) x launch_api``, its first kernel carrying the
operator's dispatch. Launches are asynchronous: the host issues kernel i+1 while kernel i runs, so
the dispatch is exposed only when it outlasts the kernel. Each kernel of a GPU op then takes
``max(kernel_s + gpu overhead, its host dispatch)`` (the GPU overhead is the launch latency and
pipeline fill); the bound is ``overhead`` where the host's dispatch is the larger. Unfused attention
is the sum of separate framework operators (two matrix products and a softmax in eager code), each
dispatched in full. This is the
CPU-bound regime of an asynchronous launch queue (PyTorch docs, "CUDA semantics: Asynchronous
execution": GPU operations are enqueued and return at once; PyTorch blog, "Accelerating PyTorch with
CUDA Graphs", 2021: with short kernels the CPU's launch work, not the GPU, sets the time). Per op,
not per queue: a long kernel does not bank dispatch time for the short kernels after it, so a
sequence that alternates long and short kernels is charged slightly more than a real queue. A bare
GPU device has no host and pays the launch latency alone.

With a software profile (``CostOptions.software``, :mod:`archsim.software`), the per-operator
dispatch and the further launches are the profile's host work priced on the host CPU model
(instructions / (IPC x clock): ``op_dispatch_instructions`` and ``launch_api_instructions``)
instead of the host preset's ``op_overhead_s`` and ``launch_api_s``, and the per-operator work is
the per-op overhead of ops on the host CPU.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np

from archsim.cost import gpu as gpu_cost
from archsim.cost import power
from archsim.cost.params import CPUParams, GPUParams, LinkParams, PIMParams
from archsim.cost.types import DEVICE_ROLES, LINK_KINDS, CostArrays, CostOptions, OpCost
from archsim.errors import EngineError
from archsim.hardware import CPUDevice, GPUDevice, Link, PIMDevice, System

__all__ = ["op_cost", "op_cost_arrays", "resolve_device", "plain_gpus", "host_dispatch_s", "host_launch_s",
           "role_params", "is_link", "software_efficiency"]


def resolve_device(hardware: Any, op_kind: str, options: CostOptions) -> tuple[str, Any]:
    """The (role, device or link) that runs an op of ``op_kind`` on ``hardware``.

    On a System, host-device transfers use ``host_link``; other ops run on ``options.device``, or
    the GPU when present, else the host. A plain device runs everything it can; a transfer on a
    plain GPU or CPU is an error (there is no link to price), on a PIM device it uses its host link.
    """
    if type(hardware) is GPUDevice and options.device is None and op_kind not in LINK_KINDS:
        return "gpu", hardware  # the common case first: what the checks below give a plain GPU
    if isinstance(hardware, System):
        if op_kind in LINK_KINDS:
            if options.device == "pim":
                if hardware.pim is None:
                    raise EngineError("device='pim' but the system has no [pim]")
                return "link", hardware.pim.host_link
            if hardware.host_link is None:
                raise EngineError(f"a {op_kind} transfer needs the system's host_link; {hardware.name} has none")
            return "link", hardware.host_link
        role = options.device or ("gpu" if hardware.gpu is not None else "host")
        dev = {"gpu": hardware.gpu, "host": hardware.host, "pim": hardware.pim}[role]
        if dev is None:
            raise EngineError(f"device={role!r} but the system {hardware.name!r} has no {role}; "
                              f"allowed: {[r for r in DEVICE_ROLES if _has(hardware, r)]}")
        return role, dev
    if options.device is not None:
        raise EngineError(f"device={options.device!r} applies to a System only; got a {type(hardware).__name__}")
    if op_kind in LINK_KINDS:
        if isinstance(hardware, PIMDevice):
            return "link", hardware.host_link
        raise EngineError(f"a {op_kind} transfer needs a link: pass a System with a host_link, "
                          f"not a lone {type(hardware).__name__}")
    if isinstance(hardware, GPUDevice):
        return "gpu", hardware
    if isinstance(hardware, CPUDevice):
        return "host", hardware
    if isinstance(hardware, PIMDevice):
        return "pim", hardware
    raise EngineError(f"hardware must be a CPUDevice, GPUDevice, PIMDevice or System, got {type(hardware).__name__}")


def plain_gpus(hardware: Sequence[Any], options: CostOptions) -> bool:
    """Whether :func:`resolve_device` gives ``("gpu", point)`` at every point of ``hardware`` for every
    op kind but a transfer: each point a plain :class:`GPUDevice` (its class exactly) and no
    ``options.device`` (the first case of :func:`resolve_device`, checked for all points in one pass)."""
    return options.device is None and set(map(type, hardware)) == {GPUDevice}


def _has(system: System, role: str) -> bool:
    return {"gpu": system.gpu, "host": system.host, "pim": system.pim}[role] is not None


def host_dispatch_s(hardware: Any, options: CostOptions) -> float:
    """Seconds the host spends dispatching one framework operator on the GPU of ``hardware``, its
    first kernel launch included (0 without a host).

    On a :class:`~archsim.hardware.System` with ``options.host_dispatch``, the software profile's
    per-operator work, or without one the host CPU's ``efficiency.op_overhead_s`` (the framework's
    per-operator dispatch, the same time a CPU op pays); on a bare device, or with
    ``host_dispatch=False``, 0.
    """
    if options.host_dispatch and isinstance(hardware, System):
        if options.software is not None:
            return float(options.software.dispatch_s(hardware.host))
        return float(hardware.host.efficiency.op_overhead_s)
    return 0.0


def host_launch_s(hardware: Any, options: CostOptions) -> float:
    """Seconds the host spends on each kernel launch of an operator after its first (the launch API
    call alone): the software profile's ``launch_api_instructions`` priced on the host, or without
    one the host CPU's ``efficiency.launch_api_s``; 0 where :func:`host_dispatch_s` is 0."""
    if options.host_dispatch and isinstance(hardware, System):
        if options.software is not None:
            return float(options.software.launch_api_s(hardware.host))
        return float(hardware.host.efficiency.launch_api_s)
    return 0.0


def role_params(role: str, hardware: Sequence[Any], targets: Sequence[Any], options: CostOptions) -> Any:
    """The parameter pack of ``targets`` (the devices or links of role ``role`` resolved from
    ``hardware``, point by point); a GPU pack carries each point's :func:`host_dispatch_s` and
    :func:`host_launch_s`."""
    if role == "gpu":
        packed = GPUParams.from_devices(list(targets), *_host_times(hardware, targets, options))
        if options.software is not None and options.software.channels_last:
            # NHWC tensors throughout: no layout transforms around Tensor-Core convolutions
            packed = dataclasses.replace(packed, conv_nchw_transposes=np.zeros(packed.n))
        if options.software is not None and options.software.algorithm_selection == "heuristic":
            # cuDNN's heuristic pick without timing: implicit GEMM for every convolution
            packed = dataclasses.replace(packed, conv_autotune=np.zeros(packed.n))
        return packed
    if role == "host" and options.software is not None:
        # the framework's per-op host work, priced on the CPU that runs it
        packed = CPUParams.from_devices(list(targets))
        return dataclasses.replace(packed, op_overhead_s=np.asarray(
            [float(options.software.dispatch_s(t)) for t in targets], dtype=np.float64))
    builder = {"host": CPUParams.from_devices, "pim": PIMParams.from_devices, "link": LinkParams.from_links}.get(role)
    if builder is None:
        raise EngineError(f"unknown device role {role!r}; allowed: {DEVICE_ROLES}")
    return builder(list(targets))


def _host_times(hardware: Sequence[Any], targets: Sequence[Any],
                options: CostOptions) -> tuple[list[float] | None, list[float] | None]:
    """The per-point :func:`host_dispatch_s` and :func:`host_launch_s` of ``hardware`` for
    :meth:`GPUParams.from_devices`; (None, None), its "no host" (0 at every point), where no point is a
    System or ``options.host_dispatch`` is off, so both are 0 everywhere (one pass over the types)."""
    if len(hardware) == len(targets) and (not options.host_dispatch or not any(
            issubclass(t, System) for t in set(map(type, hardware)))):
        return None, None
    return [host_dispatch_s(h, options) for h in hardware], [host_launch_s(h, options) for h in hardware]


def op_cost_arrays(op: Any, role: str, targets: Sequence[Any], options: CostOptions,
                   params: Any = None) -> CostArrays:
    """The cost of ``op`` at every device (or link) in ``targets``, all of role ``role``.

    ``params`` is the pre-built parameter pack of ``targets`` (built here when ``None``, then
    without host dispatch: pass :func:`role_params` of the hardware to include it), so a sweep
    packs each hardware list once for all of its ops.
    """
    if role == "link":
        from archsim.cost import link as link_cost  # imported by the first estimate that uses a link

        p = params if params is not None else LinkParams.from_links(list(targets))
        return link_cost.cost(op, p)
    if role == "gpu":
        p = params if params is not None else GPUParams.from_devices(list(targets))
        return power.apply([gpu_cost.cost(op, p)], p, gpu=True)[0]
    if role == "host":
        from archsim.cost import cpu as cpu_cost  # imported by the first estimate that prices host work

        p = params if params is not None else CPUParams.from_devices(list(targets))
        return power.apply([cpu_cost.cost(op, p, options.threads)], p, gpu=False)[0]
    if role == "pim":
        from archsim.cost import pim as pim_cost  # imported by the first estimate on a PIM device

        p = params if params is not None else PIMParams.from_devices(list(targets))
        return pim_cost.cost(op, p)
    raise EngineError(f"unknown device role {role!r}; allowed: {DEVICE_ROLES}")


def software_efficiency(op: Any, role: str, c: CostArrays, options: CostOptions) -> CostArrays:
    """``c`` with the kernel time of ``op`` divided by the software profile's kernel efficiency for
    (``role``, ``op.kind``) (``c`` itself without a profile or at efficiency 1).

    The framework's kernel runs at that fraction of the rate archsim prices on every resource, so
    each non-overhead time and the kernel part of the latency (latency - overhead) scale by 1 / f,
    and static energy with the latency. Where the host's dispatch bound a GPU op, the launch latency
    it hid is taken as 0: the op's new latency is the larger of the dispatch and the slower kernel.
    """
    sw = options.software
    f = 1.0 if sw is None else sw.kernel_efficiency.factor(role, op.kind)
    if f >= 1.0:
        return c
    kernel = c.latency_s - c.overhead_s
    slow = kernel / f
    if c.dispatch_s is not None:
        host = c.dispatch_bound()
        launch = np.where(host, 0.0, c.overhead_s)
        latency = np.maximum(c.dispatch_s, slow + launch)
        overhead = latency - slow
    else:
        latency, overhead = slow + c.overhead_s, c.overhead_s
    ratio = np.divide(latency, c.latency_s, out=np.ones_like(latency), where=c.latency_s > 0)
    times = {k: (v if k == "overhead" else v / f) for k, v in c.time_by_unit_s.items()}
    times["overhead"] = overhead
    energy = {k: (v * ratio if k == "static" else v) for k, v in c.energy_breakdown_j.items()}
    return dataclasses.replace(c, latency_s=latency, overhead_s=overhead, time_by_unit_s=times,
                               energy_breakdown_j=energy,
                               extra={**c.extra, "software_kernel_efficiency": np.full(np.shape(latency), f)})


def op_cost(op: Any, device: Any, options: CostOptions | None = None) -> OpCost:
    """Cost of ``op`` on ``device`` (a device or a System) under ``options``.

    Raises :class:`~archsim.errors.EngineError` for an op kind the device cannot run, a precision
    it lacks, or an option that does not apply.
    """
    options = options or CostOptions()
    kind = getattr(op, "kind", None)
    if not isinstance(kind, str):
        raise EngineError(f"op must be an archsim op with a 'kind', got {type(op).__name__}")
    role, target = resolve_device(device, kind, options)
    arrays = op_cost_arrays(op, role, [target], options, role_params(role, [device], [target], options))
    arrays = software_efficiency(op, role, arrays, options)
    return arrays.at(0, getattr(op, "label", getattr(op, "name", kind)) or kind, getattr(op, "phase", "forward"))


def is_link(target: Any) -> bool:
    """True for a :class:`~archsim.hardware.Link`."""
    return isinstance(target, Link)
