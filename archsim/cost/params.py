"""Parameter packs: the numbers of N hardware points as numpy arrays, one entry per point.

The cost functions read devices only through these packs, so one code path serves a single
estimate (N = 1) and a sweep (N points): the results of :func:`archsim.estimate_many` are the same
floats as N calls of :func:`archsim.estimate`. Every value is an SI float taken from a named field
of the hardware model (on-chip energies already scaled to the device's node); a precision a device
lacks has rate 0 and energy NaN, so using it is detected, never silently free.
"""

from __future__ import annotations

import collections
import dataclasses
import itertools
import operator
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from archsim.energy.chip import chip_power, chip_terms
from archsim.errors import EngineError
from archsim.hardware import PRECISIONS, CPUDevice, GPUDevice, Link, PIMDevice, PowerModel
from archsim.hardware.gpu import MMA_FLOP_PER_INSTRUCTION

__all__ = ["GPUParams", "TiledGPUParams", "CPUParams", "PIMParams", "LinkParams", "CacheParams"]


_ITSELF = object()
"""What a pack keeps as its continuation where that is the pack itself (:meth:`GPUParams.continuation`):
a marker, not a reference to itself, so that a pack that is no longer used is freed at once by its
reference count (a self-reference would hold its arrays until the cyclic garbage collector runs)."""


def _arr(values: Sequence[float]) -> np.ndarray:
    return np.asarray(values, dtype=np.float64)


def _energy(table: dict, precision: str, scale: float) -> float:
    value = table.get(precision)
    return float(value) * scale if value is not None else float("nan")


@dataclass(frozen=True)
class GPUParams:
    """Arrays over hardware points of every GPU field the cost functions use."""

    n: int
    sm_count: np.ndarray
    clock_hz: np.ndarray
    warp_size: np.ndarray
    registers_per_sm: np.ndarray
    max_registers_per_thread: np.ndarray
    shared_memory_bytes: np.ndarray
    max_shared_memory_per_block_bytes: np.ndarray
    max_warps: np.ndarray
    max_blocks: np.ndarray
    max_threads_per_block: np.ndarray
    sfu_per_sm: np.ndarray
    l1_size_bytes: np.ndarray
    l1_bandwidth_per_sm_bytes_per_s: np.ndarray
    l1_latency_s: np.ndarray
    l2_size_bytes: np.ndarray
    l2_line_bytes: np.ndarray
    sector_bytes: np.ndarray
    l2_bandwidth_bytes_per_s: np.ndarray
    l2_latency_s: np.ndarray
    dram_bandwidth_bytes_per_s: np.ndarray
    dram_latency_s: np.ndarray
    dram_row_buffer_bytes: np.ndarray
    dram_loaded_latency_coefficient: np.ndarray
    dram_bandwidth_efficiency: np.ndarray
    dram_read_only_efficiency: np.ndarray
    dram_write_only_efficiency: np.ndarray
    l2_bandwidth_efficiency: np.ndarray
    vector_efficiency: np.ndarray
    # CUDA-core efficiency of the convolution library's implicit-GEMM kernels (efficiency.conv_vector_efficiency,
    # vector_efficiency when unset).
    conv_vector_efficiency: np.ndarray
    tensor_efficiency: np.ndarray
    launch_overhead_s: np.ndarray
    gemm_pipeline_stages: np.ndarray
    gemm_cluster_size: np.ndarray
    gemm_max_split_k: np.ndarray
    tensor_channel_multiple: np.ndarray
    # FLOP per issued warp-level MMA instruction (tensor_core.flop_per_instruction; the power model's
    # instruction count).
    tensor_flop_per_instruction: np.ndarray
    conv_nchw_transposes: np.ndarray
    vector_flop_per_cycle_per_sm: dict[str, np.ndarray]
    # Per cycle of clock_hz: the Tensor Cores' own rate x tensor_clock / clock (see _gpu_row).
    tensor_flop_per_cycle_per_sm: dict[str, np.ndarray]
    vector_flop_j: dict[str, np.ndarray]
    tensor_flop_j: dict[str, np.ndarray]
    # The same two with fp16 accumulation (an op's accumulate_dtype="fp16"): the preset's
    # tensor_core.fp16_accumulate_flop_per_cycle_per_sm / energy.tensor_flop_fp16_accumulate where it
    # lists the precision, else the fp32-accumulate value above.
    tensor_fp16_accumulate_flop_per_cycle_per_sm: dict[str, np.ndarray]
    tensor_fp16_accumulate_flop_j: dict[str, np.ndarray]
    special_flop_j: np.ndarray
    # Tensor Core operand delivery per 16-bit MMA FLOP (energy.tensor_operand_flop, node-scaled).
    tensor_operand_flop_j: np.ndarray
    register_j_per_byte: np.ndarray
    l1_read_j_per_byte: np.ndarray
    l1_write_j_per_byte: np.ndarray
    l2_read_j_per_byte: np.ndarray
    l2_write_j_per_byte: np.ndarray
    dram_read_j_per_byte: np.ndarray
    dram_write_j_per_byte: np.ndarray
    dram_activation_j: np.ndarray
    static_power_w: np.ndarray
    has_power: np.ndarray
    power_limit_w: np.ndarray
    board_power_w: np.ndarray
    dram_background_w: np.ndarray
    phy_power_w: np.ndarray
    core_leakage_w: np.ndarray
    uncore_leakage_w: np.ndarray
    leakage_exponent: np.ndarray
    core_clock_power_w: np.ndarray
    issue_j: np.ndarray
    noc_j_per_byte: np.ndarray
    dram_interface_j_per_byte: np.ndarray
    v_min: np.ndarray
    v_max: np.ndarray
    knee_clock_hz: np.ndarray
    max_voltage_clock_hz: np.ndarray
    min_clock_hz: np.ndarray
    host_dispatch_s: np.ndarray
    host_launch_s: np.ndarray
    # Per point, 1 where the convolution library autotunes its forward algorithm (the faster of
    # implicit GEMM and Winograd), 0 for implicit GEMM alone: a software profile's
    # algorithm_selection (archsim.cost.dispatch.role_params), 1 without a profile.
    conv_autotune: np.ndarray

    @classmethod
    def from_devices(cls, devices: Sequence[GPUDevice],
                     host_dispatch_s: Sequence[float] | None = None,
                     host_launch_s: Sequence[float] | None = None) -> GPUParams:
        """Pack ``devices`` (all GPUs) into arrays: one flat row of floats per device, then columns.

        ``host_dispatch_s`` is, per point, the host's time to dispatch one framework operator, its
        first kernel launch included (s; the host CPU's ``efficiency.op_overhead_s`` when the GPU is
        driven by a System's host, see :func:`archsim.cost.dispatch.host_dispatch_s`);
        ``host_launch_s`` the host's time of each further kernel launch of the same operator (the
        launch API call alone, :func:`archsim.cost.dispatch.host_launch_s`). ``None`` means no host
        (0 everywhere).
        """
        if cls is GPUParams and len(devices) == 1 and (host_dispatch_s is None or len(host_dispatch_s) == 1):
            # A lone device (a single estimate): its pack is kept on it, per host dispatch time.
            g = devices[0]
            key = ("0.0" if host_dispatch_s is None else repr(float(host_dispatch_s[0]))) + ":" + (
                "0.0" if host_launch_s is None else repr(float(host_launch_s[0])))  # -0.0 apart from 0.0
            held = g.__dict__.get(_PACKS_KEY)
            if held is None:
                held = g.__dict__[_PACKS_KEY] = _Kept({})
            pack = held.value.get(key)
            if pack is None:
                pack = cls._pack(devices, host_dispatch_s, host_launch_s)
                for v in pack.__dict__.values():  # shared by every estimate on this object: never written
                    for a in (v.values() if isinstance(v, dict) else (v,)):
                        if isinstance(a, np.ndarray):
                            a.flags.writeable = False
                held.value[key] = pack
            return pack
        return cls._pack(devices, host_dispatch_s, host_launch_s)

    @classmethod
    def _pack(cls, devices: Sequence[GPUDevice], host_dispatch_s: Sequence[float] | None,
              host_launch_s: Sequence[float] | None = None) -> GPUParams:
        """:meth:`from_devices`, built."""
        # Each model object's row is kept on it (_packed_table). Points of a sweep or of model_copy
        # share sub-table contents, so the parts of new rows are computed once per distinct content.
        memo: dict = {}
        table = _packed_table(devices, memo)
        if table.shape[1] != len(_GPU_SCALARS) + len(_GPU_TABLES) * len(PRECISIONS):
            raise EngineError(f"GPU parameter row has {table.shape[1]} values; the pack expects "
                              f"{len(_GPU_SCALARS)} + {len(_GPU_TABLES)} x {len(PRECISIONS)}")
        # Field by field, each a contiguous array (the table's columns as rows of its transpose):
        # every cost function reads whole fields.
        cols = iter(np.ascontiguousarray(table.T) if len(devices) > 1 else table.T)
        kw: dict = {name: next(cols) for name in _GPU_SCALARS}
        for name in _GPU_TABLES:
            kw[name] = {p: next(cols) for p in PRECISIONS}
        host = {}
        for name, given in (("host_dispatch_s", host_dispatch_s), ("host_launch_s", host_launch_s)):
            arr = np.zeros(len(devices)) if given is None else _arr(given)
            if arr.shape != (len(devices),) or not np.all(np.isfinite(arr) & (arr >= 0)):
                raise EngineError(f"{name} must be {len(devices)} finite non-negative seconds, got {given!r}")
            host[name] = arr
        kw.update(n=len(devices), conv_autotune=np.ones(len(devices)), **host)
        # Every field given, in declaration order, as the frozen __init__ would set them (no
        # __post_init__): without its ~70 object.__setattr__ calls, once per estimate.
        out = object.__new__(cls)
        names = _GPU_PARAMS_FIELDS if cls is GPUParams else _field_names(cls)
        out.__dict__.update({name: kw[name] for name in names})
        return out

    def continuation(self) -> GPUParams:
        """This pack for the kernels an operator launches after its first: each pays the launch API's
        host time (``host_launch_s``) in place of the framework's dispatch (kept on the pack)."""
        held = self.__dict__.get("_continuation")
        if held is None:
            if np.array_equal(self.host_dispatch_s, self.host_launch_s):
                held = _ITSELF
            else:
                held = object.__new__(type(self))
                held.__dict__.update({**{k: v for k, v in self.__dict__.items() if k != "_continuation"},
                                      "host_dispatch_s": self.host_launch_s})
            self.__dict__["_continuation"] = held
        return self if held is _ITSELF else held

    def tiled(self, g: int) -> TiledGPUParams:
        """This pack repeated ``g`` times along the point axis (row ``i * n + h`` is point ``h``)."""
        return TiledGPUParams(self, g)


class TiledGPUParams:
    """A :class:`GPUParams` repeated ``g`` times along the point axis, for ``g`` stacked ops.

    Each field is tiled when first read and kept (a kernel class reads a few dozen of the pack's
    ~130 arrays, and one precision of each per-precision table): the same values as tiling them all.
    Read-only like the pack it views.
    """

    def __init__(self, base: GPUParams, g: int) -> None:
        self.__dict__.update(_base=base, _g=g, n=base.n * g)

    def __getattr__(self, name: str) -> object:
        value = getattr(self.__dict__["_base"], name)
        g = self.__dict__["_g"]
        if isinstance(value, np.ndarray):
            value = _tile(value, g)
        elif isinstance(value, dict):
            value = _TiledTable(value, g)
        self.__dict__[name] = value
        return value

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"TiledGPUParams is read-only (field {name!r})")

    def continuation(self) -> TiledGPUParams:
        """:meth:`GPUParams.continuation`, tiled the same way (kept on this view)."""
        held = self.__dict__.get("_continuation")
        if held is None:
            base = self.__dict__["_base"]
            cont = base.continuation()
            held = _ITSELF if cont is base else self.replaced(
                _base=cont, host_dispatch_s=_tile(cont.host_dispatch_s, self.__dict__["_g"]))
            self.__dict__["_continuation"] = held
        return self if held is _ITSELF else held

    def replaced(self, **fields: Any) -> TiledGPUParams:
        """This view with ``fields`` (name -> tiled value, or ``_base``) in place of its own; the
        fields tiled so far are shared (read-only)."""
        out = object.__new__(TiledGPUParams)
        out.__dict__.update({k: v for k, v in self.__dict__.items() if k != "_continuation"})
        out.__dict__.update(fields)
        return out


def _field_names(cls: type) -> tuple[str, ...]:
    """The dataclass field names of a parameter-pack class, in declaration order."""
    return tuple(f.name for f in dataclasses.fields(cls))


_GPU_PARAMS_FIELDS = _field_names(GPUParams)


def _tile(value: np.ndarray, g: int) -> np.ndarray:
    """``np.tile(value, g)`` (a new array), for a 1-d ``value`` through ndarray methods: np.tile's
    Python wrapper costs ~3x the copy at these sizes, and a stacked class reads dozens of fields."""
    if value.ndim != 1:
        return np.tile(value, g)
    return value.reshape(1, -1).repeat(g, axis=0).reshape(-1)


class _TiledTable(Mapping):
    """A per-precision table of a :class:`TiledGPUParams`: each entry tiled when first read."""

    def __init__(self, table: dict[str, np.ndarray], g: int) -> None:
        self._table, self._g, self._done = table, g, {}

    def __getitem__(self, key: str) -> np.ndarray:
        got = self._done.get(key)
        if got is None:
            got = self._done[key] = _tile(self._table[key], self._g)
        return got

    def __iter__(self) -> Iterator[str]:
        return iter(self._table)

    def __len__(self) -> int:
        return len(self._table)


_GPU_SCALARS = (
    "sm_count", "clock_hz", "warp_size", "registers_per_sm", "max_registers_per_thread", "shared_memory_bytes",
    "max_shared_memory_per_block_bytes", "max_warps", "max_blocks", "max_threads_per_block", "sfu_per_sm",
    "l1_size_bytes", "l1_bandwidth_per_sm_bytes_per_s", "l1_latency_s", "l2_size_bytes", "l2_line_bytes",
    "sector_bytes", "l2_bandwidth_bytes_per_s", "l2_latency_s", "dram_bandwidth_bytes_per_s", "dram_latency_s",
    "dram_row_buffer_bytes", "dram_loaded_latency_coefficient", "dram_bandwidth_efficiency",
    "dram_read_only_efficiency",
    "dram_write_only_efficiency", "l2_bandwidth_efficiency", "vector_efficiency", "conv_vector_efficiency",
    "tensor_efficiency", "launch_overhead_s", "gemm_pipeline_stages", "gemm_cluster_size",
    "gemm_max_split_k",
    "tensor_channel_multiple", "tensor_flop_per_instruction",
    "conv_nchw_transposes", "special_flop_j", "tensor_operand_flop_j", "register_j_per_byte", "l1_read_j_per_byte",
    "l1_write_j_per_byte",
    "l2_read_j_per_byte", "l2_write_j_per_byte", "dram_read_j_per_byte", "dram_write_j_per_byte",
    "dram_activation_j", "static_power_w", *("has_power", "power_limit_w", "board_power_w", "dram_background_w",
    "phy_power_w", "core_leakage_w", "uncore_leakage_w", "leakage_exponent", "core_clock_power_w", "issue_j",
    "noc_j_per_byte", "dram_interface_j_per_byte", "v_min", "v_max", "knee_clock_hz", "max_voltage_clock_hz",
    "min_clock_hz"),
)
_GPU_TABLES = ("vector_flop_per_cycle_per_sm", "tensor_flop_per_cycle_per_sm", "vector_flop_j", "tensor_flop_j",
               "tensor_fp16_accumulate_flop_per_cycle_per_sm", "tensor_fp16_accumulate_flop_j")
_GPU_ROW_LEN = len(_GPU_SCALARS) + len(_GPU_TABLES) * len(PRECISIONS)


_ROW_KEY = "_archsim_gpu_row"
"""Key of a GPU model's packed row (its float64 bytes) in its instance ``__dict__`` (not a field:
dumps and ``repr`` do not see it; pydantic's ``==`` compares models by their fields where their
``__dict__``s differ, and equal fields give equal rows), set as its content hash is
(:meth:`HardwareModel.content_hash`)."""

_PACKS_KEY = "_archsim_gpu_packs"
"""Key of a GPU model's one-device packs (per host dispatch time) in its instance ``__dict__``."""


class _Kept:
    """A value derived from a model, held in its ``__dict__``. Compared by identity: pydantic's ``==``
    first compares whole ``__dict__``s, and an array there would make that comparison raise."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


def _packed_table(devices: Sequence[GPUDevice], memo: dict) -> np.ndarray:
    """The (devices, row) table of :func:`_gpu_row`, each device's row computed once per model object.

    The row depends on the model's fields only, and models are frozen: a sweep or a caller that
    estimates the same points again (another workload, another option) packs them by joining the
    kept rows. A ``model_copy`` with changes is validated afresh, without the row; one without
    changes keeps it (same content). The rows not kept yet are computed together
    (:func:`_gpu_rows`). Each kept row is its own small immutable object (the row's float64 bytes):
    rows kept as views of one table would keep the table's whole block alive with any of them, and
    a block of that size returned to the system later changes how the allocator serves the next
    pass's temporaries (a fresh-point ``estimate_many`` measured ~1.2x slower in a long-lived
    process). Bytes, not arrays: one table's rows are cut in one pass and joined in one call."""
    if not devices:
        return np.zeros((0, _GPU_ROW_LEN))
    held = list(map(dict.get, map(_INSTANCE_DICT, devices), itertools.repeat(_ROW_KEY)))
    missing = held.count(None)
    if not missing:  # every row kept (a sweep's or a repeated call's points)
        return _joined(held)
    every = missing == len(held)
    fresh = range(len(devices)) if every else [i for i, h in enumerate(held) if h is None]
    table = _gpu_rows(devices if every else [devices[i] for i in fresh], memo)
    data, size = table.tobytes(), table.shape[1] * table.itemsize
    rows = list(map(data.__getitem__, map(slice, range(0, len(data), size), range(size, len(data) + size, size))))
    if every:
        # Each device's row into its instance __dict__, in one pass.
        collections.deque(map(dict.__setitem__, map(_INSTANCE_DICT, devices), itertools.repeat(_ROW_KEY), rows), 0)
        return table
    for i, row in zip(fresh, rows, strict=True):
        devices[i].__dict__[_ROW_KEY] = held[i] = row
    return _joined(held)


def _joined(rows: list[bytes]) -> np.ndarray:
    """The (rows, values) float64 table of kept rows (:func:`_packed_table`): a new writeable array,
    the same values as stacking the rows' arrays."""
    return np.frombuffer(bytearray().join(rows), dtype=np.float64).reshape(len(rows), -1)


def _gpu_row(g: GPUDevice, memo: dict | None = None) -> list[float]:
    """The flat numeric view of one GPU: the values of ``_GPU_SCALARS`` then of ``_GPU_TABLES``
    (one per precision), each read from its named field once, on-chip energies scaled to the node.

    ``memo`` (owned by the caller) holds the parts of rows read from sub-objects, keyed by the
    ``id`` of those sub-objects (alive in the caller's list; sweep points and model_copy copies
    share the base's untouched ones) and the top-level values they use, and the per-precision
    parts by content: the same floats, computed once (:func:`_gpu_segments`).
    Tensor-Core FLOP are per SM-clock cycle: the cost functions time every unit at clock_hz, so a
    Tensor Core clock that differs (H100: 1.83 vs 1.98 GHz, the datasheet's Tensor peaks) scales the rate.
    """
    top, core, power, tables = _gpu_segments(g, {} if memo is None else memo)
    return [top[0], top[1], *core[0], top[2], *core[1], top[3], *power, *tables]


def _gpu_segments(g: GPUDevice, memo: dict) -> tuple[tuple[float, ...], tuple[list[float], list[float]], list[float],
                                                       list[float]]:
    """The parts of :func:`_gpu_row`: the top-level values (``sm_count``, ``clock_hz``,
    ``sector_bytes``, ``static_power_w``), the two runs of sub-object values (:func:`_gpu_core`), the
    power values (:func:`_power_row`) and the per-precision tables (:func:`_gpu_tables`). The last
    three are ``memo``'s objects: devices with equal keys get the same list objects."""
    sm, l2, dram, eff, en, tc_obj, pw = g.sm, g.l2, g.dram, g.efficiency, g.energy, g.tensor_core, g.power
    clock = g.clock_hz
    # Segments read from sub-objects only (and the clock): once per distinct (sub-objects, clock).
    key = ("core", id(sm), id(l2), id(dram), id(eff), id(en), id(tc_obj), clock)
    if (core := memo.get(key)) is None:
        core = memo[key] = _gpu_core(sm, l2, dram, eff, en, tc_obj, clock)
    limit, static = g.effective_power_limit_w, g.static_power_w
    key = ("power", id(pw), id(dram), limit, clock, g.sm_count, g.die_area_m2, g.die_sm_count, static)
    if (part := memo.get(key)) is None:
        part = memo[key] = _power_row(pw, limit, clock, dram.background_power_w, dram.bandwidth_bytes_per_s, g)
    ids = ("tables", id(sm), id(tc_obj), id(en), tensor_per_clock := g.tensor_clock / clock)
    if (parts := memo.get(ids)) is None:
        tc = tc_obj.flop_per_cycle_per_sm if tc_obj else {}
        parts = memo[ids] = _gpu_tables(sm.fma_lanes, tc, tc_obj, en, en.scale, tensor_per_clock, memo)
    return (g.sm_count, clock, g.sector_bytes, static + dram.background_power_w), core, part, parts


def _gpu_rows(devices: Sequence[GPUDevice], memo: dict) -> np.ndarray:
    """The (devices, row) table of :func:`_gpu_row`, filled block by block: each distinct part
    computed and converted once and copied to the rows that share it, and the power values computed
    column-wise over the devices of each power model (:func:`_power_block`).

    A part is distinct per the identities of the sub-objects it reads (sweep points and model_copy
    copies share the base's untouched ones; the list holds them alive meanwhile) and the top-level
    values it uses, as in :func:`_gpu_segments`; the values every device shares (the same object
    throughout: a sweep's untouched sub-tables) are read once. The same float64 values as
    converting each device's row list: one IEEE conversion per value, and the other values by the
    same operations on the same operands, element by element."""
    n = len(devices)
    (sm, l2, dram, eff, en, tc_obj, pw, clock, tensor_clock, sms, sector, static, limit, area,
     die_sms) = _point_fields(devices)
    # Each distinct DRAM's background power and bandwidth, read once.
    dram_first, dram_code = dram_codes = _distinct_objects(dram)
    background_a, bandwidth_a = (np.asarray(c, dtype=np.float64)[dram_code]
                                 for c in zip(*[_DRAM_POINT_FIELDS(dram[i]) for i in dram_first], strict=True))
    if _same(tensor_clock) and _same(clock):
        tensor_per_clock = [tensor_clock[0] / clock[0]] * n
    else:
        tensor_per_clock = [t / c for t, c in zip(tensor_clock, clock, strict=True)]
    core_first, core_code = _distinct_keys(n, [(sm, True), (l2, True), (dram, True), (eff, True), (en, True),
                                               (tc_obj, True), (clock, False)], {id(dram): dram_codes})
    cores = [_gpu_core(sm[i], l2[i], dram[i], eff[i], en[i], tc_obj[i], clock[i]) for i in core_first]
    table_first, table_code = _distinct_keys(n, [(sm, True), (tc_obj, True), (en, True), (tensor_per_clock, False)])
    tables = [_gpu_tables(sm[i].fma_lanes, tc_obj[i].flop_per_cycle_per_sm if tc_obj[i] else {}, tc_obj[i],
                          en[i], en[i].scale, tensor_per_clock[i], memo) for i in table_first]
    before = _rows_of([c[0] for c in cores], core_code)
    after = _rows_of([c[1] for c in cores], core_code)
    table = _rows_of(tables, table_code)
    static_a = np.asarray(static, dtype=np.float64)
    top = np.asarray([sms, clock, sector], dtype=np.float64).T
    power = np.empty((n, len(_POWER_COLUMNS)))
    pw_first, pw_code = _distinct_keys(n, [(pw, True)])
    inputs = (limit, top[:, 1], background_a, bandwidth_a, top[:, 0], area, die_sms, static_a)
    if len(pw_first) == 1:
        power[:] = _power_block(pw[0], inputs)
    else:
        for k, first in enumerate(pw_first):
            rows = np.flatnonzero(pw_code == k)
            power[rows] = _power_block(pw[first], [[column[i] for i in rows.tolist()] for column in inputs])
    return np.concatenate([top[:, 0:2], before, top[:, 2:3], after, (static_a + background_a)[:, None], power,
                           table], axis=1)


_GPU_POINT_FIELDS = operator.attrgetter(
    "sm", "l2", "dram", "efficiency", "energy", "tensor_core", "power", "clock_hz", "tensor_clock", "sm_count",
    "sector_bytes", "static_power_w", "effective_power_limit_w", "die_area_m2", "die_sm_count")
"""The GPU fields (and derived properties) :func:`_gpu_rows` reads, in one call per device."""

_GPU_DICT_FIELDS = operator.itemgetter(
    "sm", "l2", "dram", "efficiency", "energy", "tensor_core", "power", "clock_hz", "sm_count", "sector_bytes",
    "static_power_w", "die_area_m2", "die_sm_count", "tensor_clock_hz", "power_limit_w", "tdp_w")
"""The fields of ``_GPU_POINT_FIELDS`` as a GPUDevice holds them in its instance ``__dict__``, then the
fields its derived properties ``tensor_clock`` and ``effective_power_limit_w`` read."""

_DRAM_POINT_FIELDS = operator.attrgetter("background_power_w", "bandwidth_bytes_per_s")


def _point_fields(devices: Sequence[GPUDevice]) -> tuple[tuple[Any, ...], ...]:
    """``_GPU_POINT_FIELDS`` of each device, as one tuple per field: plain GPUDevices' fields read
    from their instance ``__dict__`` (where pydantic keeps them) and their derived properties
    through the properties, other models (a subclass, a stand-in) by attribute."""
    if set(map(type, devices)) == {GPUDevice}:
        try:
            (sm, l2, dram, eff, en, tc_obj, pw, clock, sms, sector, static, area, die_sms, tensor_clock_hz,
             power_limit, tdp) = zip(*map(_GPU_DICT_FIELDS, map(_INSTANCE_DICT, devices)), strict=True)
        except KeyError:  # a model built without some field (model_construct): by attribute
            pass
        else:
            # GPUDevice.tensor_clock and .effective_power_limit_w, column by column
            tensor_clock = tuple([t if t is not None else c for t, c in zip(tensor_clock_hz, clock, strict=True)])
            limit = tuple([p if p is not None else t for p, t in zip(power_limit, tdp, strict=True)])
            return sm, l2, dram, eff, en, tc_obj, pw, clock, tensor_clock, sms, sector, static, limit, area, die_sms
    return tuple(zip(*map(_GPU_POINT_FIELDS, devices), strict=True))


_INSTANCE_DICT = operator.attrgetter("__dict__")


def _same(values: Sequence[Any]) -> bool:
    """Whether every entry of ``values`` is the same object as the first."""
    return all(map(operator.is_, values, itertools.repeat(values[0])))


def _distinct_keys(n: int, columns: Sequence[tuple[Sequence[Any], bool]],
                   known: Mapping[int, tuple[list[int], np.ndarray]] | None = None) -> tuple[list[int], np.ndarray]:
    """:func:`_distinct` of the ``n`` keys made of one entry of each column (its ``id`` where the
    column's flag is set, else its value); a column holding one object throughout keys nothing
    apart and is left out (the same first indices and numbers). ``known`` maps ``id(column)`` to
    :func:`_distinct_objects` of a column computed before."""
    varying = [(c, by_id) for c, by_id in columns if not _same(c)]
    if not varying:
        return [0], np.zeros(n, dtype=np.intp)
    if len(varying) == 1 and varying[0][1]:
        column = varying[0][0]
        got = None if known is None else known.get(id(column))
        return got if got is not None else _distinct_objects(column)
    return _distinct(zip(*[map(id, c) if by_id else iter(c) for c, by_id in varying], strict=True))


def _distinct_objects(objects: Sequence[Any]) -> tuple[list[int], np.ndarray]:
    """:func:`_distinct` of the objects' identities (``map(id, objects)``), sorted by numpy: the
    first index of each distinct object in order of appearance, and each object's number."""
    ids = np.fromiter(map(id, objects), dtype=np.uintp, count=len(objects))
    _, first, inverse = np.unique(ids, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")  # numbered by first appearance
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return first[order].tolist(), rank[inverse.reshape(-1)]


def _distinct(keys: Iterator[Any]) -> tuple[list[int], np.ndarray]:
    """(the index of the first of each distinct key, in order of appearance; each key's number in
    that order)."""
    seen: dict[Any, int] = {}
    at = np.fromiter(map(seen.setdefault, keys, itertools.count()), dtype=np.intp)  # each key's first index
    first = list(seen.values())
    rank = np.empty(len(at), dtype=np.intp)
    rank[first] = np.arange(len(first))
    return first, rank[at]


def _rows_of(parts: list[list[float]], codes: np.ndarray) -> np.ndarray:
    """The (len(codes), values) table whose row ``i`` is ``parts[codes[i]]``: each part converted once."""
    return np.asarray(parts, dtype=np.float64).reshape(len(parts), -1)[codes]


def _power_block(pw: PowerModel | None, inputs: Sequence[Sequence[Any]]) -> np.ndarray:
    """The :func:`_power_row` of each of several GPUs sharing the power model ``pw``, as a (GPUs,
    values) table; ``inputs`` holds the GPUs' columns of power limit, clock, DRAM background, DRAM
    bandwidth, SM count, die area, die SM count and static power (the values as read from the
    models). Column-wise: each value by the operations of :func:`_power_row` (and
    :func:`archsim.energy.chip.chip_power`) in the same order, element by element (IEEE arithmetic and
    square root, so the same floats)."""
    limit, clock, background, bandwidth, sms, area, die_sms, static = inputs
    k = len(limit)
    out = np.empty((k, len(_POWER_COLUMNS)))
    clock_a = np.asarray(clock, dtype=np.float64)
    background_a = np.asarray(background, dtype=np.float64)
    if pw is None:
        out[:] = [0.0, float("inf"), 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0]
        out[:, 3] = background_a
        out[:, 14] = 0.5 * clock_a
        out[:, 15] = clock_a
        out[:, 16] = clock_a
        return out
    bandwidth_a = np.asarray(bandwidth, dtype=np.float64)
    phy = pw.phy_power_per_bandwidth_j_per_byte * bandwidth_a
    if pw.area_form:
        board, core_leak, uncore_leak, core_clock, noc = _chip_power_columns(
            pw, np.asarray(area, dtype=np.float64), np.asarray(die_sms, dtype=np.float64),
            np.asarray(sms, dtype=np.float64), np.asarray(static, dtype=np.float64), background_a, phy)
    else:
        board, core_leak, uncore_leak, core_clock, noc = (pw.board_power_w, pw.core_leakage_power_w,
                                                          pw.uncore_leakage_power_w, pw.core_clock_power_w,
                                                          pw.noc_energy_j_per_byte)
    floor = pw.min_clock_hz
    columns = (1.0, np.asarray(limit, dtype=np.float64), board, background_a, phy, core_leak, uncore_leak,
               pw.leakage_voltage_exponent, core_clock, pw.issue_energy_j, noc, pw.dram_interface_energy_j_per_byte,
               pw.v_min_v, pw.v_max_v, pw.knee_clock_hz, pw.max_voltage_clock_hz,
               np.where(clock_a < floor, clock_a, float(floor)))  # min(floor, clock): floor unless clock is below
    for j, column in enumerate(columns):
        out[:, j] = column
    return out


def _chip_power_columns(pw: PowerModel, area: np.ndarray, die_sms: np.ndarray, sms: np.ndarray,
                        static: np.ndarray, background: np.ndarray,
                        phy: np.ndarray) -> tuple[np.ndarray, ...]:
    """:func:`archsim.energy.chip.chip_power`'s (board, core leakage, uncore leakage, clock per SM,
    NoC J/B) over GPUs sharing the area-form ``pw``: the same arithmetic (:func:`chip_terms`) on
    arrays (W, J/B; ``phy`` the PHY power per GPU, W)."""
    spare, core_leak, uncore_leak, clock_per_sm, noc, _ = chip_terms(pw, area, die_sms, sms, static, background,
                                                                     phy, np.sqrt)
    board = np.where(0.0 > spare, 0.0, spare)  # max(spare, 0.0): spare unless 0 is above
    return board, core_leak, uncore_leak, clock_per_sm, noc


def _gpu_core(sm: Any, l2: Any, dram: Any, eff: Any, en: Any, tc_obj: Any,
              clock: float) -> tuple[list[float], list[float]]:
    """The values of ``_GPU_SCALARS`` that come from sub-objects (and the clock): those between
    ``clock_hz`` and ``sector_bytes``, and those after it up to ``static_power_w``."""
    l1, s = sm.l1, en.scale
    before = [
        sm.warp_size, sm.registers, sm.max_registers_per_thread, sm.shared_memory_bytes,
        sm.max_shared_memory_per_block_bytes, sm.max_warps, sm.max_blocks, sm.max_threads_per_block,
        sm.special_function_units, l1.size_bytes, l1.bandwidth_bytes_per_s, l1.latency_cycles / clock,
        l2.size_bytes, l2.line_bytes,
    ]
    after = [
        l2.bandwidth_bytes_per_s, l2.latency_cycles / clock,
        dram.bandwidth_bytes_per_s,
        dram.latency_s, dram.row_buffer_bytes, dram.loaded_latency_coefficient, eff.dram_bandwidth_efficiency,
        eff.dram_bandwidth_efficiency if eff.dram_read_only_efficiency is None else eff.dram_read_only_efficiency,
        eff.dram_bandwidth_efficiency if eff.dram_write_only_efficiency is None else eff.dram_write_only_efficiency,
        eff.l2_bandwidth_efficiency,
        eff.vector_efficiency,
        eff.vector_efficiency if eff.conv_vector_efficiency is None else eff.conv_vector_efficiency,
        eff.tensor_efficiency, eff.launch_overhead_s, eff.gemm_pipeline_stages,
        eff.gemm_cluster_size, eff.gemm_max_split_k,
        tc_obj.channel_multiple if tc_obj else 1,
        tc_obj.flop_per_instruction if tc_obj else MMA_FLOP_PER_INSTRUCTION,
        float(eff.conv_nchw_transposes),
        en.special_flop_j * s, en.tensor_operand_flop_j * s, en.register_access_j_per_byte,
        l1.read_energy_j_per_byte * s,
        l1.write_energy_j_per_byte * s, l2.read_energy_j_per_byte * s, l2.write_energy_j_per_byte * s,
        dram.read_energy_j_per_byte, dram.write_energy_j_per_byte, dram.activation_energy_j,
    ]
    return before, after


def _gpu_tables(lanes: dict, tc: dict, tc_obj: Any, en: Any, s: float, tensor_per_clock: float,
                memo: dict) -> list[float]:
    """The per-precision values of ``_GPU_TABLES`` of one GPU (see :func:`_gpu_row`)."""
    # Content keys: dicts of validated ints and floats (validation normalises -0 to 0, so equal keys
    # give equal floats).
    row: list[float] = []
    key = ("lanes", tuple(lanes.items()))
    if (part := memo.get(key)) is None:
        part = memo[key] = [2.0 * lanes.get(p, 0) for p in PRECISIONS]
    row += part
    tc_key = tuple(tc.items())
    key = ("tensor", tc_key, tensor_per_clock)
    if (part := memo.get(key)) is None:
        part = memo[key] = [tc.get(p, 0) * tensor_per_clock for p in PRECISIONS]
    row += part
    vj, tj, aj = en.vector_flop_j, en.tensor_flop_j, en.tensor_flop_fp16_accumulate_j
    tj_key = tuple(tj.items())
    key = ("energy", s, tuple(vj.items()), tj_key)
    if (part := memo.get(key)) is None:
        part = memo[key] = [_energy(vj, p, s) for p in PRECISIONS] + [_energy(tj, p, s) for p in PRECISIONS]
    row += part
    acc = tc_obj.fp16_accumulate_flop_per_cycle_per_sm if tc_obj else {}
    key = ("fp16-accumulate", tc_key, tuple(acc.items()), tensor_per_clock, s, tj_key, tuple(aj.items()))
    if (part := memo.get(key)) is None:
        part = memo[key] = ([acc.get(p, tc.get(p, 0)) * tensor_per_clock for p in PRECISIONS]
                            + [_energy(aj if p in aj else tj, p, s) for p in PRECISIONS])
    row += part
    return row


def _power_row(pw: PowerModel | None, limit_w: float, clock_hz: float, background_w: float,
               dram_bandwidth: float, gpu: Any = None) -> list[float]:
    """The power-model values of a device (``_GPU_SCALARS`` from ``has_power`` on); a device without
    a power model gets an inert row (no limit, flat curve, zero terms). An area-form power model
    (a GPU's) gets its terms from the die (:func:`archsim.energy.chip.chip_power`)."""
    if pw is None:
        return [0.0, float("inf"), 0.0, background_w, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0,
                0.5 * clock_hz, clock_hz, clock_hz]
    if pw.area_form:  # GPUs only (CPUDevice rejects the area terms)
        c = chip_power(pw, gpu.die_area_m2, gpu.die_sm_count, gpu.sm_count, gpu.static_power_w, background_w,
                       dram_bandwidth)
        board, core_leak, uncore_leak, core_clock, noc = (c.board_w, c.core_leakage_w, c.uncore_leakage_w,
                                                          c.core_clock_w, c.noc_j_per_byte)
    else:
        board, core_leak, uncore_leak, core_clock, noc = (pw.board_power_w, pw.core_leakage_power_w,
                                                          pw.uncore_leakage_power_w, pw.core_clock_power_w,
                                                          pw.noc_energy_j_per_byte)
    return [1.0, limit_w, board, background_w, pw.phy_power_per_bandwidth_j_per_byte * dram_bandwidth,
            core_leak, uncore_leak, pw.leakage_voltage_exponent, core_clock,
            pw.issue_energy_j, noc, pw.dram_interface_energy_j_per_byte, pw.v_min_v,
            pw.v_max_v, pw.knee_clock_hz, pw.max_voltage_clock_hz, min(pw.min_clock_hz, clock_hz)]


_POWER_COLUMNS = _GPU_SCALARS[_GPU_SCALARS.index("has_power"):]


def _power_columns(rows: list[list[float]]) -> dict[str, np.ndarray]:
    """The :func:`_power_row` of each device as one array per power field."""
    table = np.asarray(rows, dtype=np.float64).reshape(len(rows), len(_POWER_COLUMNS))
    return {name: table[:, i].copy() for i, name in enumerate(_POWER_COLUMNS)}


@dataclass(frozen=True)
class CacheParams:
    """One CPU cache level over hardware points; bandwidth is the whole chip's (per core x cores if private)."""

    name: str
    capacity_bytes: np.ndarray
    bandwidth_bytes_per_s: np.ndarray
    read_j_per_byte: np.ndarray
    write_j_per_byte: np.ndarray


@dataclass(frozen=True)
class CPUParams:
    """Arrays over hardware points of every CPU field the cost functions use."""

    n: int
    cores: np.ndarray
    clock_hz: np.ndarray
    simd_bytes: np.ndarray
    vector_flop_per_cycle: dict[str, np.ndarray]
    matrix_flop_per_cycle: dict[str, np.ndarray]
    caches: tuple[CacheParams, ...]
    dram_bandwidth_bytes_per_s: np.ndarray
    dram_latency_s: np.ndarray
    dram_row_buffer_bytes: np.ndarray
    max_outstanding_misses: np.ndarray
    line_bytes: np.ndarray
    dram_bandwidth_efficiency: np.ndarray
    compute_efficiency: np.ndarray
    parallel_overhead_s: np.ndarray
    op_overhead_s: np.ndarray
    vector_flop_j: dict[str, np.ndarray]
    matrix_flop_j: dict[str, np.ndarray]
    special_flop_j: np.ndarray
    register_j_per_byte: np.ndarray
    dram_read_j_per_byte: np.ndarray
    dram_write_j_per_byte: np.ndarray
    dram_activation_j: np.ndarray
    static_power_w: np.ndarray
    has_power: np.ndarray
    power_limit_w: np.ndarray
    board_power_w: np.ndarray
    dram_background_w: np.ndarray
    phy_power_w: np.ndarray
    core_leakage_w: np.ndarray
    uncore_leakage_w: np.ndarray
    leakage_exponent: np.ndarray
    core_clock_power_w: np.ndarray
    issue_j: np.ndarray
    noc_j_per_byte: np.ndarray
    dram_interface_j_per_byte: np.ndarray
    v_min: np.ndarray
    v_max: np.ndarray
    knee_clock_hz: np.ndarray
    max_voltage_clock_hz: np.ndarray
    min_clock_hz: np.ndarray

    @classmethod
    def from_devices(cls, devices: Sequence[CPUDevice]) -> CPUParams:
        """Pack ``devices`` (all CPUs with the same cache level names) into arrays.

        A private cache's tile capacity is its own size (each core tiles its share of the work);
        its bandwidth is per core x cores. A shared cache offers its size and bandwidth to all.
        """
        d = devices
        names = [c.name for c in d[0].caches]
        sc = [c.energy.scale for c in d]
        caches = []
        for i, name in enumerate(names):
            levels = [c.caches[i] for c in d]
            caches.append(CacheParams(
                name=name,
                capacity_bytes=_arr([lv.size_bytes for lv in levels]),
                bandwidth_bytes_per_s=_arr([lv.bandwidth_bytes_per_s * (1 if lv.shared else c.cores)
                                            for lv, c in zip(levels, d, strict=True)]),
                read_j_per_byte=_arr([lv.read_energy_j_per_byte * s for lv, s in zip(levels, sc, strict=True)]),
                write_j_per_byte=_arr([lv.write_energy_j_per_byte * s for lv, s in zip(levels, sc, strict=True)]),
            ))
        return cls(
            n=len(d),
            cores=_arr([c.cores for c in d]),
            clock_hz=_arr([c.core.clock_hz for c in d]),
            simd_bytes=_arr([c.core.simd_width_bits / 8 for c in d]),
            vector_flop_per_cycle={p: _arr([c.core.vector_flop_per_cycle(p) for c in d]) for p in PRECISIONS},
            matrix_flop_per_cycle={p: _arr([c.core.matrix_flop_per_cycle_for(p) for c in d]) for p in PRECISIONS},
            caches=tuple(caches),
            dram_bandwidth_bytes_per_s=_arr([c.dram.bandwidth_bytes_per_s for c in d]),
            dram_latency_s=_arr([c.dram.latency_s for c in d]),
            dram_row_buffer_bytes=_arr([c.dram.row_buffer_bytes for c in d]),
            max_outstanding_misses=_arr([c.core.max_outstanding_misses for c in d]),
            line_bytes=_arr([c.caches[0].line_bytes for c in d]),
            dram_bandwidth_efficiency=_arr([c.efficiency.dram_bandwidth_efficiency for c in d]),
            compute_efficiency=_arr([c.efficiency.compute_efficiency for c in d]),
            parallel_overhead_s=_arr([c.efficiency.parallel_overhead_s for c in d]),
            op_overhead_s=_arr([c.efficiency.op_overhead_s for c in d]),
            vector_flop_j={p: _arr([_energy(c.energy.vector_flop_j, p, s) for c, s in zip(d, sc, strict=True)])
                           for p in PRECISIONS},
            matrix_flop_j={p: _arr([_energy(c.energy.tensor_flop_j, p, s) for c, s in zip(d, sc, strict=True)])
                           for p in PRECISIONS},
            special_flop_j=_arr([c.energy.special_flop_j * s for c, s in zip(d, sc, strict=True)]),
            register_j_per_byte=_arr([c.energy.register_access_j_per_byte for c in d]),
            dram_read_j_per_byte=_arr([c.dram.read_energy_j_per_byte for c in d]),
            dram_write_j_per_byte=_arr([c.dram.write_energy_j_per_byte for c in d]),
            dram_activation_j=_arr([c.dram.activation_energy_j for c in d]),
            static_power_w=_arr([c.static_power_w + c.dram.background_power_w for c in d]),
            **_power_columns([_power_row(c.power, c.effective_power_limit_w, c.core.clock_hz,
                                         c.dram.background_power_w, c.dram.bandwidth_bytes_per_s) for c in d]),
        )


@dataclass(frozen=True)
class PIMParams:
    """Arrays over hardware points of a PIM device's units, banks, host link and energy."""

    n: int
    units: np.ndarray
    clock_hz: np.ndarray
    ops_per_cycle: dict[str, np.ndarray]
    bank_bandwidth_bytes_per_s: np.ndarray
    internal_read_j_per_byte: np.ndarray
    compute_efficiency: np.ndarray
    bank_bandwidth_efficiency: np.ndarray
    launch_overhead_s: np.ndarray
    vector_flop_j: dict[str, np.ndarray]
    dram_row_buffer_bytes: np.ndarray
    dram_activation_j: np.ndarray
    static_power_w: np.ndarray

    @classmethod
    def from_devices(cls, devices: Sequence[PIMDevice]) -> PIMParams:
        """Pack PIM ``devices`` into arrays."""
        d = devices
        return cls(
            n=len(d),
            units=_arr([p.units.count for p in d]),
            clock_hz=_arr([p.units.clock_hz for p in d]),
            ops_per_cycle={q: _arr([p.units.ops_per_cycle.get(q, 0.0) for p in d]) for q in PRECISIONS},
            bank_bandwidth_bytes_per_s=_arr([p.units.bank_bandwidth_bytes_per_s for p in d]),
            internal_read_j_per_byte=_arr([p.units.internal_read_energy_j_per_byte for p in d]),
            compute_efficiency=_arr([p.efficiency.compute_efficiency for p in d]),
            bank_bandwidth_efficiency=_arr([p.efficiency.bank_bandwidth_efficiency for p in d]),
            launch_overhead_s=_arr([p.efficiency.launch_overhead_s for p in d]),
            vector_flop_j={q: _arr([_energy(p.energy.vector_flop_j, q, p.energy.scale) for p in d])
                           for q in PRECISIONS},
            dram_row_buffer_bytes=_arr([p.dram.row_buffer_bytes for p in d]),
            dram_activation_j=_arr([p.dram.activation_energy_j for p in d]),
            static_power_w=_arr([p.static_power_w + p.dram.background_power_w for p in d]),
        )


@dataclass(frozen=True)
class LinkParams:
    """Arrays over hardware points of a link (PCIe, NVLink, the host-PIM channel)."""

    n: int
    bandwidth_bytes_per_s: np.ndarray
    latency_s: np.ndarray
    efficiency: np.ndarray
    energy_j_per_byte: np.ndarray

    @classmethod
    def from_links(cls, links: Sequence[Link]) -> LinkParams:
        """Pack ``links`` into arrays."""
        return cls(
            n=len(links),
            bandwidth_bytes_per_s=_arr([lk.bandwidth_bytes_per_s for lk in links]),
            latency_s=_arr([lk.latency_s for lk in links]),
            efficiency=_arr([lk.efficiency for lk in links]),
            energy_j_per_byte=_arr([lk.energy_j_per_byte for lk in links]),
        )
