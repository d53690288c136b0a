"""Result values of the engines: one :class:`OpResult` per op, one :class:`RunResult` per run.

Results are plain frozen values in SI units; keys of the per-level and per-component dicts are
short names (``"dram"``, ``"l2"``, ``"compute:tensor"``), and :meth:`RunResult.to_frame` turns them
into unit-suffixed columns (``dram_bytes``, ``time_memory:dram_s``, ``energy_dram_j``). Only plots
and the CLI turn these into human units.

The bound of an op names what limits it: ``compute:<unit>`` (``compute:tensor``,
``compute:vector``, ``compute:special``, ``compute:pim``), ``memory:<level>`` (``memory:dram``,
``memory:l2``...), ``link`` (host-device or inter-device transfer), ``latency`` (a dependent chain of
accesses) or ``overhead`` (launch/dispatch dominates).
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pandas costs ~0.2-0.5 s to import: only the frame methods load it
    import pandas as pd

__all__ = ["OpResult", "RunResult", "TimelineEntry", "ENERGY_ARITHMETIC", "ENERGY_STATIC"]

# Energy components that are not data movement; every other component is (register,
# tensor_operand, l1, l2, l3, noc, dram, dram_interface, link, pim). ``issue`` (instruction
# fetch/decode/scheduling/operand collection) is the control that drives the arithmetic;
# ``static`` (board and DRAM background), ``leakage`` and ``clock`` (the clock network) are drawn
# whatever the op does.
ENERGY_ARITHMETIC = ("compute", "issue")
ENERGY_STATIC = ("static", "leakage", "clock")


@dataclass(frozen=True)
class OpResult:
    """The estimate of one op on one device.

    Attributes:
        name: op label (unique within a run where the workload gives unique names).
        kind: op kind (``"gemm"``, ``"conv2d"``...).
        phase: ``"forward"``, ``"backward"`` or ``"update"``.
        device: the device role that ran it (``"gpu"``, ``"host"``, ``"pim"``, or the device name).
        flop: FLOP executed: the arithmetic the kernels run, e.g. a Winograd convolution's transformed
            products and transforms, a Tensor-Core convolution's padded channels (what the roofline
            plot places the op at).
        flop_nominal: FLOP of the op as defined (direct convolution, unpadded); ``None``: equal to ``flop``.
        bytes_by_level: bytes moved at each memory level/link (``{"dram": ..., "l2": ...}``).
        time_by_unit_s: time each compute unit / level / overhead alone would take, in s.
        bound: the key of ``time_by_unit_s`` that sets the latency (see module doc).
        latency_s: time of the op, in s.
        energy_j: energy of the op, in J (sum of ``energy_breakdown_j``).
        energy_breakdown_j: component -> J (``"compute"``, ``"register"``, ``"l1"``, ``"dram"``,
            ``"link"``, ``"static"``...).
        start_s: start time on the timeline (discrete-event engine; 0 for the roofline).
        extra: engine-specific values (occupancy, waves, efficiency factors), floats only; on a
            device with a power model ``clock_hz`` (the DVFS clock the op ran at), ``power_w`` (its
            average power) and ``power_limited`` (1 where the power limit lowered the clock).
        fused: names of the workload ops a software profile's fusion pass merged into this one
            (empty when the op was not fused).
    """

    name: str
    kind: str
    phase: str
    device: str
    flop: float
    bytes_by_level: dict[str, float]
    time_by_unit_s: dict[str, float]
    bound: str
    latency_s: float
    energy_j: float
    energy_breakdown_j: dict[str, float]
    start_s: float = 0.0
    extra: dict[str, float] = field(default_factory=dict)
    flop_nominal: float | None = None
    fused: tuple[str, ...] = ()

    @property
    def end_s(self) -> float:
        """``start_s + latency_s``."""
        return self.start_s + self.latency_s

    @property
    def arithmetic_intensity(self) -> float:
        """FLOP per DRAM byte (inf when the op moves no DRAM bytes)."""
        dram = self.bytes_by_level.get("dram", 0.0)
        return self.flop / dram if dram > 0 else math.inf


@dataclass(frozen=True)
class TimelineEntry:
    """One busy interval of one resource (discrete-event engine)."""

    op: str
    resource: str
    start_s: float
    end_s: float
    bytes: float = 0.0
    energy_j: float = 0.0


@dataclass(frozen=True)
class RunResult:
    """The estimate of a whole workload on a piece of hardware.

    ``energy_breakdown_j`` sums to ``energy_j``; ``latency_s`` is the critical path (the sum of op
    latencies for a serial run, the makespan for the discrete-event engine). With a software profile,
    ``host_s`` is the part of ``latency_s`` the host's framework work sets (per-iteration work and
    dispatch the device could not hide) and ``device_s`` the rest (``host_s + device_s ==
    latency_s``); without one, ``host_s`` is 0 and ``device_s`` the latency.
    """

    engine: str
    hardware: str
    workload: str
    latency_s: float
    energy_j: float
    energy_breakdown_j: dict[str, float]
    ops: tuple[OpResult, ...]
    timeline: tuple[TimelineEntry, ...] = ()
    utilisation: dict[str, float] = field(default_factory=dict)
    _meta: dict[str, Any] = field(default_factory=dict)
    host_s: float = 0.0
    device_s: float | None = None

    def __post_init__(self) -> None:
        if self.device_s is None:
            object.__setattr__(self, "device_s", self.latency_s - self.host_s)

    @property
    def bound(self) -> str:
        """``"host"`` when the host's framework work is at least half the latency, else ``"device"``."""
        return "host" if self.host_s >= 0.5 * self.latency_s and self.host_s > 0 else "device"

    @property
    def flop(self) -> float:
        """Total FLOP of the run."""
        return float(sum(o.flop for o in self.ops))

    @property
    def average_power_w(self) -> float:
        """Average power over the run: energy / latency, in W (0 for a zero-latency run)."""
        return self.energy_j / self.latency_s if self.latency_s > 0 else 0.0

    @property
    def clock_by_op_hz(self) -> dict[str, float]:
        """The clock each op ran at (Hz; ops of a device without a power model are left out)."""
        return {o.name: o.extra["clock_hz"] for o in self.ops if "clock_hz" in o.extra}

    @property
    def data_movement_energy_j(self) -> float:
        """Energy of every component that is neither arithmetic nor static power, in J."""
        return sum(v for k, v in self.energy_breakdown_j.items()
                   if k not in ENERGY_ARITHMETIC and k not in ENERGY_STATIC)

    @property
    def data_movement_fraction(self) -> float:
        """Share of the total energy spent moving data (0..1)."""
        return self.data_movement_energy_j / self.energy_j if self.energy_j > 0 else 0.0

    @property
    def bound_counts(self) -> dict[str, int]:
        """How many ops each bound limits."""
        out: dict[str, int] = {}
        for o in self.ops:
            out[o.bound] = out.get(o.bound, 0) + 1
        return out

    def to_frame(self) -> pd.DataFrame:
        """One row per op; unit-suffixed columns (``latency_s``, ``dram_bytes``, ``energy_dram_j``).

        ``flop`` is the FLOP executed and ``flop_nominal`` the op's as defined (see :class:`OpResult`);
        the engine's own numbers (tile sizes, clock, ``flop_in_tiles``...) follow as further columns,
        NaN for ops they do not apply to."""
        import pandas as pd

        rows = []
        for o in self.ops:
            row: dict[str, Any] = {
                "name": o.name, "kind": o.kind, "phase": o.phase, "device": o.device,
                "bound": o.bound, "flop": o.flop,
                "flop_nominal": o.flop if o.flop_nominal is None else o.flop_nominal,
                "start_s": o.start_s, "latency_s": o.latency_s,
                "energy_j": o.energy_j,
            }
            row.update({f"{k}_bytes": v for k, v in o.bytes_by_level.items()})
            row.update({f"time_{k}_s": v for k, v in o.time_by_unit_s.items()})
            row.update({f"energy_{k}_j": v for k, v in o.energy_breakdown_j.items()})
            row.update(o.extra)
            if o.fused:
                row["fused_from"] = ", ".join(o.fused)
            rows.append(row)
        return pd.DataFrame(rows)

    def timeline_frame(self) -> pd.DataFrame:
        """The timeline as a frame: op, resource, start_s, end_s, bytes, energy_j."""
        import pandas as pd

        return pd.DataFrame([asdict(t) for t in self.timeline],
                            columns=["op", "resource", "start_s", "end_s", "bytes", "energy_j"])

    def summary(self) -> dict[str, float]:
        """Headline numbers: latency_s, energy_j, flop, data_movement_fraction, achieved FLOP/s."""
        return {
            "latency_s": self.latency_s,
            "energy_j": self.energy_j,
            "flop": self.flop,
            "achieved_flop_per_s": self.flop / self.latency_s if self.latency_s > 0 else 0.0,
            "data_movement_fraction": self.data_movement_fraction,
            "average_power_w": self.average_power_w,
        }

    def to_json(self) -> str:
        """A JSON document of the whole result (round-trips through :meth:`from_json`)."""
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> RunResult:
        """Rebuild a result written by :meth:`to_json`."""
        data = json.loads(text)
        data["ops"] = tuple(OpResult(**{**o, "fused": tuple(o.get("fused", ()))}) for o in data["ops"])
        data["timeline"] = tuple(TimelineEntry(**t) for t in data["timeline"])
        return cls(**data)
