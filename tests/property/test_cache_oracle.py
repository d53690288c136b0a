"""The numba cache simulator against a brute-force pure-Python oracle on random small hierarchies.

The oracle keeps each set as a Python list of ``[line, dirty, stamp]`` entries with explicit time
stamps (LRU: last use, FIFO: insertion), a per-set list of PLRU bits and the same xorshift64 for
random replacement, and handles child requests by plain recursion. Every counter must agree.
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from archsim.microarch.cache import CacheLevelConfig, CacheSimulator, HierarchyConfig

M64 = (1 << 64) - 1
FIELDS = ("reads", "read_misses", "writes", "write_misses", "evictions", "writebacks", "prefetches",
          "back_invalidations", "bytes_from_below", "bytes_to_below")


class Oracle:
    def __init__(self, cfg: HierarchyConfig):
        self.cfg = cfg
        self.line = cfg.line_bytes
        self.clock = 0
        self.rng = cfg.seed
        self.inst = {}  # (level, instance) -> dict
        for li, lv in enumerate(cfg.levels):
            for k in range(1 if lv.shared else cfg.n_cores):
                self.inst[(li, k)] = {
                    "sets": [[None] * lv.ways for _ in range(lv.sets)],
                    "plru": [[0] * max(lv.ways - 1, 1) for _ in range(lv.sets)],
                    "pf": {},  # table index -> [page, last, stride, conf]
                    "cnt": dict.fromkeys(FIELDS, 0),
                }

    def key(self, li, core):
        return (li, 0 if self.cfg.levels[li].shared else core)

    def rand(self):
        x = self.rng
        x ^= (x << 13) & M64
        x ^= x >> 7
        x ^= (x << 17) & M64
        self.rng = x
        return x

    def touch_plru(self, bits, ways, way):
        node = way + ways - 1
        while node > 0:
            parent = (node - 1) // 2
            bits[parent] = 1 if node == 2 * parent + 1 else 0
            node = parent

    def victim_plru(self, bits, ways):
        node = 0
        while node < ways - 1:
            node = 2 * node + 1 + bits[node]
        return node - (ways - 1)

    def request(self, li, core, line, kind, nb):
        if li == len(self.cfg.levels):
            return  # memory
        lv = self.cfg.levels[li]
        c = self.inst[self.key(li, core)]
        cnt = c["cnt"]
        s = line % lv.sets
        ways = c["sets"][s]
        bits = c["plru"][s]
        way = next((w for w, e in enumerate(ways) if e is not None and e[0] == line), -1)
        wb_line, fill, fwd, pf = None, False, None, None
        install, install_dirty = False, False
        if kind == "prefetch":
            if way < 0:
                cnt["prefetches"] += 1
                install, fill = True, True
        else:
            demand = kind != "writeback"
            cnt["reads" if kind == "read" else "writes"] += 1
            if way >= 0:
                if kind != "read":
                    if lv.write_policy == "write-back":
                        ways[way][1] = True
                    else:
                        fwd = (kind, nb)
                if lv.replacement == "lru":
                    self.clock += 1
                    ways[way][2] = self.clock
                elif lv.replacement == "plru":
                    self.touch_plru(bits, lv.ways, way)
            else:
                cnt["read_misses" if kind == "read" else "write_misses"] += 1
                if kind == "read" or lv.allocates_on_write:
                    install = True
                    fill = kind != "writeback"
                    if kind != "read":
                        if lv.write_policy == "write-back":
                            install_dirty = True
                        else:
                            fwd = (kind, nb)
                else:
                    fwd = (kind, nb)
                if demand and lv.prefetcher == "next-line":
                    pf = line + 1
            if demand and lv.prefetcher == "stride":
                page = line * self.line // 4096 if self.line < 4096 else line
                e = page % lv.stride_table_entries
                ent = c["pf"].get(e)
                if ent is not None and ent[0] == page:
                    stride = line - ent[1]
                    if stride != 0:
                        if stride == ent[2]:
                            ent[3] = min(ent[3] + 1, 3)
                        else:
                            ent[3], ent[2] = 0, stride
                        ent[1] = line
                        if ent[3] >= 1:
                            pf = line + stride
                else:
                    c["pf"][e] = [page, line, 0, 0]
        if install:
            empty = [w for w, e in enumerate(ways) if e is None]
            if empty:
                vw = empty[0]
            elif lv.replacement in ("lru", "fifo"):
                vw = min(range(lv.ways), key=lambda w: ways[w][2])
            elif lv.replacement == "plru":
                vw = self.victim_plru(bits, lv.ways)
            else:
                vw = self.rand() % lv.ways
            victim = ways[vw]
            if victim is not None:
                cnt["evictions"] += 1
                vdirty = victim[1]
                if lv.inclusive:
                    cores = range(self.cfg.n_cores) if lv.shared else [core]
                    for u in range(li):
                        for k in sorted({self.key(u, kk)[1] for kk in cores}):
                            uc = self.inst[(u, k)]
                            uset = uc["sets"][victim[0] % self.cfg.levels[u].sets]
                            for w, e in enumerate(uset):
                                if e is not None and e[0] == victim[0]:
                                    vdirty = vdirty or e[1]
                                    uset[w] = None
                                    uc["cnt"]["back_invalidations"] += 1
                if vdirty:
                    cnt["writebacks"] += 1
                    cnt["bytes_to_below"] += self.line
                    wb_line = victim[0]
            self.clock += 1
            ways[vw] = [line, install_dirty, self.clock]
            if lv.replacement == "plru":
                self.touch_plru(bits, lv.ways, vw)
        if fill:
            cnt["bytes_from_below"] += self.line
        if fwd is not None:
            cnt["bytes_to_below"] += fwd[1]
        if wb_line is not None:
            self.request(li + 1, core, wb_line, "writeback", self.line)
        if fill:
            self.request(li + 1, core, line, "read", self.line)
        if fwd is not None:
            self.request(li + 1, core, line, fwd[0], fwd[1])
        if pf is not None and pf >= 0:
            self.request(li, core, pf, "prefetch", self.line)

    def run(self, addrs, sizes, writes, cores):
        for a, n, w, k in zip(addrs, sizes, writes, cores, strict=True):
            for ln in range(a // self.line, (a + n - 1) // self.line + 1):
                lo, hi = max(a, ln * self.line), min(a + n, (ln + 1) * self.line)
                self.request(0, k, ln, "write" if w else "read", hi - lo)

    def totals(self, li):
        lv = self.cfg.levels[li]
        out = dict.fromkeys(FIELDS, 0)
        for k in range(1 if lv.shared else self.cfg.n_cores):
            for f in FIELDS:
                out[f] += self.inst[(li, k)]["cnt"][f]
        return out


@st.composite
def hierarchies(draw):
    line = draw(st.sampled_from([16, 32, 64]))
    n_levels = draw(st.integers(1, 3))
    n_cores = draw(st.integers(1, 2))
    first_shared = draw(st.integers(0, n_levels))  # levels from here on are shared
    levels = []
    for i in range(n_levels):
        repl = draw(st.sampled_from(["lru", "plru", "fifo", "random"]))
        ways = draw(st.sampled_from([1, 2, 4]) if repl == "plru" else st.sampled_from([1, 2, 3, 4]))
        sets = draw(st.sampled_from([1, 2, 3, 4, 8]))
        wp = draw(st.sampled_from(["write-back", "write-through"]))
        levels.append(CacheLevelConfig(
            name=f"l{i + 1}", size_bytes=sets * ways * line, ways=ways, line_bytes=line,
            replacement=repl, write_policy=wp, write_allocate=draw(st.sampled_from([None, True, False])),
            inclusive=draw(st.booleans()) and i > 0, shared=i >= first_shared,
            prefetcher=draw(st.sampled_from(["none", "next-line", "stride"])),
            stride_table_entries=draw(st.sampled_from([1, 4])),
        ))
    return HierarchyConfig(tuple(levels), n_cores=n_cores, seed=draw(st.integers(1, 2**32)))


@st.composite
def traces(draw, n_cores):
    n = draw(st.integers(1, 120))
    span = draw(st.sampled_from([256, 2048, 65536]))
    addrs = draw(st.lists(st.integers(0, span), min_size=n, max_size=n))
    sizes = draw(st.lists(st.sampled_from([1, 4, 8, 24, 100]), min_size=n, max_size=n))
    writes = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    cores = draw(st.lists(st.integers(0, n_cores - 1), min_size=n, max_size=n))
    return addrs, sizes, writes, cores


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_simulator_matches_oracle(data):
    cfg = data.draw(hierarchies())
    addrs, sizes, writes, cores = data.draw(traces(cfg.n_cores))
    oracle = Oracle(cfg)
    oracle.run(addrs, sizes, writes, cores)
    sim = CacheSimulator(cfg)
    # Two chunks: the state must carry over between calls.
    half = len(addrs) // 2
    for sl in (slice(0, half), slice(half, None)):
        sim.run(np.array(addrs[sl], np.int64), np.array(sizes[sl]), np.array(writes[sl]), np.array(cores[sl]))
    stats = sim.stats()
    for li in range(len(cfg.levels)):
        got = {f: getattr(stats.levels[li], f) for f in FIELDS}
        assert got == oracle.totals(li), f"level {li}"


@settings(max_examples=50, deadline=None)
@given(data=st.data())
def test_conservation_of_requests(data):
    """Each level's reads are the fills and its writes the write-backs/write-throughs of the one above."""
    cfg = data.draw(hierarchies())
    addrs, sizes, writes, cores = data.draw(traces(cfg.n_cores))
    sim = CacheSimulator(cfg).run(np.array(addrs), np.array(sizes), np.array(writes), np.array(cores))
    stats = sim.stats()
    line = cfg.line_bytes
    for up, low in zip(stats.levels, stats.levels[1:], strict=False):
        assert low.reads * line == up.bytes_from_below
        assert up.hits + up.misses == up.accesses
        assert up.evictions >= up.writebacks
