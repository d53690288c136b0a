"""Trace-driven set-associative cache-hierarchy simulator.

Any number of levels, each private (one instance per core) or shared, inclusive of the levels above
it or not; LRU, tree-PLRU, FIFO or random replacement; write-back or write-through, with or without
write-allocate; a next-line or a stride prefetcher. The hot loop is one numba kernel
(:mod:`archsim.microarch._cache_engine`); this module holds the typed configuration, the state and
the statistics.

Semantics (what a hit, a miss and a byte moved mean here):

- A trace entry ``(address, size, is_write)`` is split into the lines it touches; each line is one
  demand request at the first level (a load or a partial store of the bytes in that line).
- A miss that allocates picks a victim (an invalid way first, then the policy), installs the line,
  and then, depth-first and in this order: writes the victim back to the next level if dirty,
  fills the line from the next level (``line_bytes`` moved; a full-line write-back needs no fill),
  forwards a write-through store, and issues the prefetch. Requests from a level above count as
  reads (fills) or writes (write-backs, write-throughs) of the level below.
- An inclusive level back-invalidates its victim in every level above it (for the cores that share
  it); a dirty copy found there makes the victim dirty. Non-inclusive levels do nothing (NINE).
  Exclusive (victim) caches are not modelled.
- Prefetches fill the level that issued them (from the next level); they count as ``prefetches``,
  not as demand accesses. Next-line: on a demand miss, line + 1. Stride: a reference-prediction
  table indexed by 4 KiB page, trained on every demand access; after the same non-zero stride is
  seen twice it prefetches line + stride (Chen & Baer, IEEE TC 1995, without the PC, which traces
  here do not carry).
- No coherence: private copies of a line in two cores are independent (traces of disjoint data).
- The last level's fills and write-backs are the DRAM traffic.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

import numpy as np

from archsim.errors import SchemaError
from archsim.microarch import _cache_engine as eng

if TYPE_CHECKING:  # pragma: no cover
    from archsim.hardware.memory import Cache

Replacement = Literal["lru", "plru", "fifo", "random"]
WritePolicy = Literal["write-back", "write-through"]
Prefetcher = Literal["none", "next-line", "stride"]

_REPL = {"lru": eng.REPL_LRU, "plru": eng.REPL_PLRU, "fifo": eng.REPL_FIFO, "random": eng.REPL_RANDOM}
_WRITE = ("write-back", "write-through")
_PF = {"none": eng.PF_NONE, "next-line": eng.PF_NEXT_LINE, "stride": eng.PF_STRIDE}


def _pow2(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


@dataclass(frozen=True)
class CacheLevelConfig:
    """One cache level as the simulator sees it.

    Attributes:
        name: level name (``"l1d"``, ``"l2"``...).
        size_bytes: capacity of one instance (per core if private), bytes.
        ways: associativity (``size_bytes / (ways * line_bytes)`` sets; tree-PLRU needs a power of 2).
        line_bytes: line size, a power of two, the same at every level of a hierarchy.
        replacement: ``lru``, ``plru`` (tree pseudo-LRU), ``fifo`` or ``random``.
        write_policy: ``write-back`` or ``write-through``.
        write_allocate: allocate on a store miss; ``None`` means yes for write-back, no for
            write-through (the usual pairings).
        inclusive: this level holds everything the levels above it hold (back-invalidation).
        shared: one instance for all cores (True) or one per core (False).
        prefetcher: ``none``, ``next-line`` or ``stride``.
        stride_table_entries: entries of the stride prefetcher's table.
    """

    name: str
    size_bytes: int
    ways: int
    line_bytes: int = 64
    replacement: Replacement = "lru"
    write_policy: WritePolicy = "write-back"
    write_allocate: bool | None = None
    inclusive: bool = False
    shared: bool = False
    prefetcher: Prefetcher = "none"
    stride_table_entries: int = 16

    def __post_init__(self) -> None:
        where = f"cache level {self.name!r}"
        for fname in ("size_bytes", "ways", "line_bytes", "stride_table_entries"):
            v = getattr(self, fname)
            if not isinstance(v, int | np.integer) or isinstance(v, bool) or v <= 0:
                raise SchemaError(f"{where}: {fname} must be a positive int, got {v!r}")
        if not _pow2(self.line_bytes):
            raise SchemaError(f"{where}: line_bytes {self.line_bytes} is not a power of two")
        if self.size_bytes % (self.ways * self.line_bytes):
            raise SchemaError(
                f"{where}: size_bytes {self.size_bytes} is not divisible by ways x line_bytes "
                f"= {self.ways} x {self.line_bytes}"
            )
        if self.replacement not in _REPL:
            raise SchemaError(f"{where}: replacement {self.replacement!r}; allowed: {sorted(_REPL)}")
        if self.replacement == "plru" and not _pow2(self.ways):
            raise SchemaError(f"{where}: tree-PLRU needs a power-of-two number of ways, got {self.ways}")
        if self.write_policy not in _WRITE:
            raise SchemaError(f"{where}: write_policy {self.write_policy!r}; allowed: {list(_WRITE)}")
        if self.prefetcher not in _PF:
            raise SchemaError(f"{where}: prefetcher {self.prefetcher!r}; allowed: {sorted(_PF)}")

    @property
    def sets(self) -> int:
        """Number of sets of one instance."""
        return self.size_bytes // (self.ways * self.line_bytes)

    @property
    def allocates_on_write(self) -> bool:
        """The effective write-allocate flag."""
        if self.write_allocate is None:
            return self.write_policy == "write-back"
        return self.write_allocate

    @classmethod
    def from_cache(cls, cache: Cache, prefetcher: Prefetcher = "none") -> CacheLevelConfig:
        """The simulator's view of a hardware :class:`archsim.hardware.memory.Cache`."""
        return cls(
            name=cache.name,
            size_bytes=int(cache.size_bytes),
            ways=int(cache.ways),
            line_bytes=int(cache.line_bytes),
            replacement=cache.replacement,
            write_policy=cache.write_policy,
            inclusive=bool(cache.inclusive),
            shared=bool(cache.shared),
            prefetcher=prefetcher,
        )


@dataclass(frozen=True)
class HierarchyConfig:
    """Levels from the core outwards, the number of cores and the seed of random replacement."""

    levels: tuple[CacheLevelConfig, ...]
    n_cores: int = 1
    seed: int = 1

    def __post_init__(self) -> None:
        object.__setattr__(self, "levels", tuple(self.levels))
        if not self.levels:
            raise SchemaError("hierarchy: levels must name at least one cache level")
        if not isinstance(self.n_cores, int) or self.n_cores <= 0:
            raise SchemaError(f"hierarchy: n_cores must be a positive int, got {self.n_cores!r}")
        if self.seed == 0:
            raise SchemaError("hierarchy: seed must be non-zero (xorshift has a zero fixed point)")
        lines = {lv.line_bytes for lv in self.levels}
        if len(lines) != 1:
            raise SchemaError(f"hierarchy: all levels need one line size, got {sorted(lines)}")
        names = [lv.name for lv in self.levels]
        if len(set(names)) != len(names):
            raise SchemaError(f"hierarchy: duplicate level names {names}")
        seen_shared = False
        for lv in self.levels:
            if seen_shared and not lv.shared:
                raise SchemaError(f"hierarchy: private level {lv.name!r} below a shared level")
            seen_shared = seen_shared or lv.shared

    @property
    def line_bytes(self) -> int:
        return self.levels[0].line_bytes

    @classmethod
    def from_device(cls, cpu, n_cores: int | None = None, prefetcher: Prefetcher = "none",
                    seed: int = 1) -> HierarchyConfig:
        """The data-cache hierarchy of a :class:`archsim.hardware.cpu.CPUDevice`.

        ``n_cores`` defaults to the device's core count; ``prefetcher`` applies to the first level.
        """
        levels = [CacheLevelConfig.from_cache(c, prefetcher=prefetcher if i == 0 else "none")
                  for i, c in enumerate(cpu.caches)]
        return cls(levels=tuple(levels), n_cores=n_cores or int(cpu.cores), seed=seed)


@dataclass(frozen=True)
class LevelStats:
    """Counts of one level, summed over its instances. Requests are line-granular.

    Counts are ints from a simulation, floats once scaled from a sample (:meth:`HierarchyStats.scaled`).

    ``bytes_from_below`` / ``bytes_to_below`` are the bytes moved between this level and the next
    (fills; write-backs plus write-through stores); for the last level, the DRAM traffic.
    """

    name: str
    reads: int
    read_misses: int
    writes: int
    write_misses: int
    evictions: int
    writebacks: int
    prefetches: int
    back_invalidations: int
    bytes_from_below: int
    bytes_to_below: int

    @property
    def accesses(self) -> int:
        return self.reads + self.writes

    @property
    def misses(self) -> int:
        return self.read_misses + self.write_misses

    @property
    def hits(self) -> int:
        return self.accesses - self.misses

    @property
    def miss_ratio(self) -> float:
        """Misses / accesses (0 for an untouched level)."""
        return self.misses / self.accesses if self.accesses else 0.0


_COUNT_FIELDS = ("reads", "read_misses", "writes", "write_misses", "evictions", "writebacks", "prefetches",
                 "back_invalidations", "bytes_from_below", "bytes_to_below")


@dataclass(frozen=True)
class HierarchyStats:
    """Per-level statistics, from the core outwards."""

    levels: tuple[LevelStats, ...]

    def __getitem__(self, name: str) -> LevelStats:
        for lv in self.levels:
            if lv.name == name:
                return lv
        raise KeyError(f"no level {name!r}; levels: {[lv.name for lv in self.levels]}")

    @property
    def dram_read_bytes(self) -> int:
        return self.levels[-1].bytes_from_below

    @property
    def dram_write_bytes(self) -> int:
        return self.levels[-1].bytes_to_below

    def bytes_between(self) -> dict[str, int]:
        """Bytes moved across each boundary: ``{"l1d-l2": ..., ..., "l3-dram": ...}``."""
        names = [lv.name for lv in self.levels] + ["dram"]
        return {f"{names[i]}-{names[i + 1]}": lv.bytes_from_below + lv.bytes_to_below
                for i, lv in enumerate(self.levels)}

    def scaled(self, factor: float) -> HierarchyStats:
        """Every count multiplied by ``factor`` (floats): the estimate of a whole run from a sample."""
        return HierarchyStats(tuple(
            LevelStats(lv.name, *(getattr(lv, f) * factor for f in _COUNT_FIELDS)) for lv in self.levels
        ))

    def to_dict(self) -> dict[str, dict[str, int]]:
        return {lv.name: {k: v for k, v in lv.__dict__.items() if k != "name"} for lv in self.levels}


def _column(values, dtype, n: int, name: str) -> np.ndarray:
    arr = np.ascontiguousarray(values, dtype=dtype).reshape(-1)
    if arr.shape[0] not in (1, n):
        raise SchemaError(f"trace: {name} has {arr.shape[0]} entries for {n} addresses")
    return arr


@dataclass
class CacheSimulator:
    """A cache hierarchy with explicit state; :meth:`run` may be called repeatedly on trace chunks."""

    config: HierarchyConfig
    _arrays: dict[str, np.ndarray] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        cfg = self.config
        n_lv = len(cfg.levels)
        lvl = np.zeros((n_lv, eng.N_LVL_CFG), np.int64)
        inst_of = np.zeros((n_lv, cfg.n_cores), np.int64)
        rows = []
        base = pbase = 0
        max_pf = 1
        for i, lv in enumerate(cfg.levels):
            lvl[i] = (_REPL[lv.replacement], lv.write_policy == "write-back", lv.allocates_on_write,
                      lv.inclusive, _PF[lv.prefetcher], lv.stride_table_entries, lv.shared)
            max_pf = max(max_pf, lv.stride_table_entries)
            copies = 1 if lv.shared else cfg.n_cores
            for k in range(cfg.n_cores):
                inst_of[i, k] = len(rows) + (0 if lv.shared else k)
            for _ in range(copies):
                sets, ways = lv.sets, lv.ways
                mask = sets - 1 if _pow2(sets) else -1
                log2w = ways.bit_length() - 1
                setbits = sets.bit_length() - 1 if mask >= 0 else -1
                rows.append((sets, ways, mask, base, pbase, log2w, setbits))
                base += sets * ways
                pbase += sets * max(ways - 1, 1)
        n_inst = len(rows)
        pf_tab = np.zeros((n_inst, max_pf, 4), np.int64)
        pf_tab[:, :, 0] = -1
        self._arrays = {
            "lvl_cfg": lvl, "inst_of": inst_of, "inst_cfg": np.array(rows, np.int64),
            "tags": np.full(base, -1, np.int32), "plru": np.zeros(pbase, np.uint8), "pf_tab": pf_tab,
            "state": np.array([0, cfg.seed], np.int64),
            "counters": np.zeros((n_inst, eng.N_COUNTERS), np.int64),
        }

    def run(self, addresses, sizes=8, is_write=False, cores=0) -> CacheSimulator:
        """Feed a trace chunk. ``sizes``, ``is_write`` and ``cores`` may be arrays or scalars.

        Args:
            addresses: byte addresses (non-negative ints).
            sizes: access sizes, bytes (> 0).
            is_write: store flags.
            cores: issuing core per access (0 .. n_cores-1).
        """
        addr = np.ascontiguousarray(addresses, dtype=np.int64)
        if addr.ndim != 1:
            raise SchemaError(f"trace: addresses must be 1-D, got shape {addr.shape}")
        n = addr.shape[0]
        # Scalars stay length-1 arrays (the kernel indexes them at 0): no per-access copies.
        size = _column(sizes, np.int64, n, "sizes")
        wr = _column(is_write, np.bool_, n, "is_write")
        core = _column(cores, np.int64, n, "cores")
        if n:
            if addr.min() < 0:
                raise SchemaError("trace: addresses must be non-negative")
            if size.min() <= 0:
                raise SchemaError("trace: sizes must be positive")
            if core.min() < 0 or core.max() >= self.config.n_cores:
                raise SchemaError(f"trace: cores must lie in 0..{self.config.n_cores - 1}")
            # Tags are stored in 30 bits (int32 with a dirty bit); prefetches may reach 2x the line.
            shift = self.config.line_bytes.bit_length() - 1
            top_line = 2 * ((int(addr.max()) + int(size.max())) >> shift) + 2
            if top_line // min(lv.sets for lv in self.config.levels) >= 1 << 30:
                raise SchemaError(f"trace: address {int(addr.max())} is beyond the simulated address space")
        a = self._arrays
        line_shift = self.config.line_bytes.bit_length() - 1
        eng.simulate(addr, size, wr, core, line_shift, len(self.config.levels), a["lvl_cfg"],
                     a["inst_of"], a["inst_cfg"], a["tags"], a["plru"],
                     a["pf_tab"], a["state"], a["counters"])
        return self

    def reset_stats(self) -> None:
        """Zero the counters, keeping the cache contents (after a warm-up)."""
        self._arrays["counters"][:] = 0

    def stats(self) -> HierarchyStats:
        """Counters so far, summed over each level's instances."""
        cnt = self._arrays["counters"]
        inst_of = self._arrays["inst_of"]
        out = []
        for i, lv in enumerate(self.config.levels):
            rows = np.unique(inst_of[i])
            tot = cnt[rows].sum(axis=0)
            out.append(LevelStats(lv.name, *(int(x) for x in tot)))
        return HierarchyStats(tuple(out))


def simulate_trace(config: HierarchyConfig, addresses, sizes=8, is_write=False, cores=0) -> HierarchyStats:
    """Run one trace through a fresh hierarchy and return its statistics."""
    return CacheSimulator(config).run(addresses, sizes, is_write, cores).stats()
