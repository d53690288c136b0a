"""The shared cost function of both engines: ``op_cost(op, device, options) -> OpCost``.

For one op on one device it returns the time each compute unit and memory level alone would take,
the bytes moved at each level (from :mod:`archsim.traffic`), the kernel-efficiency effects (from
:mod:`archsim.kernels`), the named overheads, the bound, the latency, and the *action counts* the
energy ledger (:mod:`archsim.energy`) prices. The roofline engine sums these over a graph; the
discrete-event engine schedules them on resources. Both therefore agree by construction when
nothing overlaps or contends.

The per-device work is done by vectorised functions over hardware points (:mod:`archsim.engines.
gpu_cost`, ``cpu_cost``, ``pim_cost``); ``op_cost`` is the one-point view of them, and
:func:`op_cost_arrays` the many-point one used by :func:`archsim.estimate_many`.

Level keys of ``bytes_by_level`` are the level *serving* the bytes: ``"dram"`` (device memory),
``"l2"`` (L2 to the SMs), ``"l1"`` (L1/shared memory to the registers), ``"register"`` (register
file operand traffic), the CPU's cache names (``"l1d"``, ``"l2"``, ``"l3"``), ``"pim"`` (bank to
PIM unit) and ``"link"`` (host-device transfer).

Host dispatch (``CostOptions.host_dispatch``): a GPU of a System is driven by its host, whose
framework spends ``host.efficiency.op_overhead_s`` issuing each kernel (operator dispatch and the
launch API call). Launches are asynchronous: the host issues kernel i+1 while kernel i runs, so the
dispatch is exposed only when it outlasts the kernel. Each kernel of a GPU op then takes
``max(kernel_s + gpu overhead, launches x host dispatch)`` (the GPU overhead is the launch latency
and pipeline fill); the bound is ``overhead`` where the host's dispatch is the larger. This is the
CPU-bound regime of an asynchronous launch queue (PyTorch docs, "CUDA semantics: Asynchronous
execution": GPU operations are enqueued and return at once; PyTorch blog, "Accelerating PyTorch with
CUDA Graphs", 2021: with short kernels the CPU's launch work, not the GPU, sets the time). Per op,
not per queue: a long kernel does not bank dispatch time for the short kernels after it, so a
sequence that alternates long and short kernels is charged slightly more than a real queue. A bare
GPU device has no host and pays the launch latency alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from archsim.errors import EngineError
from archsim.hardware import CPUDevice, GPUDevice, Link, PIMDevice, System

__all__ = ["OpCost", "Actions", "CostOptions", "CostArrays", "op_cost", "op_cost_arrays", "resolve_device",
           "host_dispatch_s", "role_params", "DEVICE_ROLES"]

DEVICE_ROLES: tuple[str, ...] = ("gpu", "host", "pim")
LINK_KINDS: tuple[str, ...] = ("h2d", "d2h")


@dataclass(frozen=True)
class CostOptions:
    """Explicit options of the cost function (validated by :func:`archsim.estimate`).

    Attributes:
        device: for a :class:`~archsim.hardware.System`, the role that runs compute ops
            (``"gpu"``, ``"host"``, ``"pim"``); ``None`` picks the GPU when present, else the host.
        threads: CPU threads (``None``: every core).
        host_dispatch: on a System, GPU kernels wait for the host framework's per-launch dispatch
            (``host.efficiency.op_overhead_s``) when it outlasts them (see the module docstring);
            ``False`` prices the device-side launch latency alone. No effect on a bare device.
    """

    device: Literal["gpu", "host", "pim"] | None = None
    threads: int | None = None
    host_dispatch: bool = True


@dataclass(frozen=True)
class Actions:
    """What an op does, counted for the energy ledger (all floats).

    Attributes:
        flop: FLOP per ``"<unit>:<precision>"`` (``"tensor:fp16"``, ``"vector:fp32"``,
            ``"special"``, ``"pim:fp16"``).
        read_bytes: bytes read at each level (keys as ``bytes_by_level``).
        write_bytes: bytes written at each level.
        dram_activations: DRAM row activations (row opens).
        link_bytes: bytes over the host-device link.
    """

    flop: dict[str, float]
    read_bytes: dict[str, float]
    write_bytes: dict[str, float]
    dram_activations: float = 0.0
    link_bytes: float = 0.0


@dataclass(frozen=True)
class OpCost:
    """The cost of one op on one device: times in s, bytes in B, energies in J.

    ``latency_s = max(time_by_unit_s without "overhead") + time_by_unit_s["overhead"]`` except for
    kernels whose waves alternate bounds, where the wave-by-wave sum (``extra["kernel_s"]``) is
    larger than the max of the per-resource sums; the bound is then the resource with the largest
    sum. ``energy_breakdown_j`` sums to ``energy_j`` and includes static power x latency.
    """

    name: str
    kind: str
    phase: str
    device: str
    flop: float
    latency_s: float
    bound: str
    time_by_unit_s: dict[str, float]
    bytes_by_level: dict[str, float]
    actions: Actions
    overhead_s: float
    launches: float
    energy_j: float
    energy_breakdown_j: dict[str, float]
    static_power_w: float
    extra: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class CostArrays:
    """The cost of one op at H hardware points: every value an array of shape (H,)."""

    kind: str
    device: str
    flop: float
    latency_s: np.ndarray
    time_by_unit_s: dict[str, np.ndarray]
    bytes_by_level: dict[str, np.ndarray]
    flop_by_unit: dict[str, np.ndarray]
    read_bytes: dict[str, np.ndarray]
    write_bytes: dict[str, np.ndarray]
    dram_activations: np.ndarray
    link_bytes: np.ndarray
    overhead_s: np.ndarray
    launches: np.ndarray
    energy_breakdown_j: dict[str, np.ndarray]
    static_power_w: np.ndarray
    extra: dict[str, np.ndarray]
    dispatch_s: np.ndarray | None = None
    """Host dispatch time of the op's launches (s; GPU ops only, ``None`` elsewhere): where it
    equals ``latency_s`` the host's dispatch binds and the bound is ``overhead``."""

    def dispatch_bound(self) -> np.ndarray:
        """Per point, True where the host's dispatch sets the latency."""
        if self.dispatch_s is None:
            return np.zeros(np.shape(self.latency_s), dtype=bool)
        return (self.dispatch_s > 0) & (self.dispatch_s >= self.latency_s)

    def bound_index(self) -> tuple[list[str], np.ndarray]:
        """Keys of the non-overhead times and, per point, the index of the largest."""
        keys = [k for k in self.time_by_unit_s if k != "overhead"]
        stack = np.stack([self.time_by_unit_s[k] for k in keys])
        return keys, np.argmax(stack, axis=0)

    def bounds(self) -> list[str]:
        """The bound name at each point: the largest resource time, or ``overhead`` if that dominates."""
        keys, idx = self.bound_index()
        best = np.stack([self.time_by_unit_s[k] for k in keys]).max(axis=0)
        over = self.time_by_unit_s["overhead"]
        host = self.dispatch_bound()
        return ["overhead" if (over[i] > best[i] or host[i]) else keys[idx[i]] for i in range(len(idx))]

    def at(self, i: int, name: str, phase: str) -> OpCost:
        """The one-point :class:`OpCost` of point ``i``."""
        times = {k: float(v[i]) for k, v in self.time_by_unit_s.items()}
        breakdown = {k: float(v[i]) for k, v in self.energy_breakdown_j.items()}
        extra = {k: float(v[i]) for k, v in self.extra.items()}
        host = False
        if self.dispatch_s is not None:
            extra["host_dispatch_s"] = float(self.dispatch_s[i])
            host = bool(self.dispatch_bound()[i])
        return OpCost(
            name=name, kind=self.kind, phase=phase, device=self.device, flop=float(self.flop),
            latency_s=float(self.latency_s[i]), bound="overhead" if host else _bound(times) or self.bounds()[i],
            time_by_unit_s=times,
            bytes_by_level={k: float(v[i]) for k, v in self.bytes_by_level.items()},
            actions=Actions(flop={k: float(v[i]) for k, v in self.flop_by_unit.items()},
                            read_bytes={k: float(v[i]) for k, v in self.read_bytes.items()},
                            write_bytes={k: float(v[i]) for k, v in self.write_bytes.items()},
                            dram_activations=float(self.dram_activations[i]),
                            link_bytes=float(self.link_bytes[i])),
            overhead_s=float(self.overhead_s[i]), launches=float(self.launches[i]),
            energy_j=float(sum(breakdown.values())), energy_breakdown_j=breakdown,
            static_power_w=float(self.static_power_w[i]), extra=extra,
        )


def _bound(times: dict[str, float]) -> str | None:
    """:meth:`CostArrays.bounds` of one point from its times (the first largest non-overhead key,
    ``overhead`` if that is larger); ``None`` when a time is NaN (the array rule then decides)."""
    best_key, best = None, -np.inf
    for k, v in times.items():
        if v != v:
            return None
        if k != "overhead" and v > best:
            best_key, best = k, v
    if best_key is None:
        return None
    return "overhead" if times["overhead"] > best else best_key


def resolve_device(hardware: Any, op_kind: str, options: CostOptions) -> tuple[str, Any]:
    """The (role, device or link) that runs an op of ``op_kind`` on ``hardware``.

    On a System, host-device transfers use ``host_link``; other ops run on ``options.device``, or
    the GPU when present, else the host. A plain device runs everything it can; a transfer on a
    plain GPU or CPU is an error (there is no link to price), on a PIM device it uses its host link.
    """
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


def _has(system: System, role: str) -> bool:
    return {"gpu": system.gpu, "host": system.host, "pim": system.pim}[role] is not None


def host_dispatch_s(hardware: Any, options: CostOptions) -> float:
    """Seconds the host spends dispatching one GPU kernel of ``hardware`` (0 without a host).

    On a :class:`~archsim.hardware.System` with ``options.host_dispatch``, the host CPU's
    ``efficiency.op_overhead_s`` (the framework's per-operator dispatch, the same time a CPU op
    pays); on a bare device, or with ``host_dispatch=False``, 0.
    """
    if options.host_dispatch and isinstance(hardware, System):
        return float(hardware.host.efficiency.op_overhead_s)
    return 0.0


def role_params(role: str, hardware: Sequence[Any], targets: Sequence[Any], options: CostOptions) -> Any:
    """The parameter pack of ``targets`` (the devices or links of role ``role`` resolved from
    ``hardware``, point by point); a GPU pack carries each point's :func:`host_dispatch_s`."""
    from archsim.engines.params import CPUParams, GPUParams, LinkParams, PIMParams

    if role == "gpu":
        return GPUParams.from_devices(list(targets), [host_dispatch_s(h, options) for h in hardware])
    builder = {"host": CPUParams.from_devices, "pim": PIMParams.from_devices, "link": LinkParams.from_links}.get(role)
    if builder is None:
        raise EngineError(f"unknown device role {role!r}; allowed: {DEVICE_ROLES}")
    return builder(list(targets))


def op_cost_arrays(op: Any, role: str, targets: Sequence[Any], options: CostOptions,
                   params: Any = None) -> CostArrays:
    """The cost of ``op`` at every device (or link) in ``targets``, all of role ``role``.

    ``params`` is the pre-built parameter pack of ``targets`` (built here when ``None``, then
    without host dispatch: pass :func:`role_params` of the hardware to include it), so a sweep
    packs each hardware list once for all of its ops.
    """
    from archsim.engines import cpu_cost, gpu_cost, link_cost, pim_cost
    from archsim.engines.params import CPUParams, GPUParams, LinkParams, PIMParams

    if role == "link":
        p = params if params is not None else LinkParams.from_links(list(targets))
        return link_cost.cost(op, p)
    if role == "gpu":
        p = params if params is not None else GPUParams.from_devices(list(targets))
        return gpu_cost.cost(op, p)
    if role == "host":
        p = params if params is not None else CPUParams.from_devices(list(targets))
        return cpu_cost.cost(op, p, options.threads)
    if role == "pim":
        p = params if params is not None else PIMParams.from_devices(list(targets))
        return pim_cost.cost(op, p)
    raise EngineError(f"unknown device role {role!r}; allowed: {DEVICE_ROLES}")


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
    return arrays.at(0, getattr(op, "label", getattr(op, "name", kind)) or kind, getattr(op, "phase", "forward"))


def is_link(target: Any) -> bool:
    """True for a :class:`~archsim.hardware.Link`."""
    return isinstance(target, Link)
