"""The numba kernel of the cache-hierarchy simulator (see :mod:`archsim.microarch.cache`).

All state lives in flat numpy arrays owned by the caller; the kernel keeps none between calls.
A request is ``(level, core, line, kind, nbytes)``. Processing one request at a level may create
child requests (a victim's write-back, a fill from the next level, a write-through, a prefetch);
they are handled depth-first, in that order, through an explicit stack, which is exactly the order
of the recursive pure-Python oracle in ``tests/property/test_cache_oracle.py``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

# Request kinds.
READ = 0
WRITE = 1  # a partial-line store (from the trace or a write-through)
WRITEBACK = 2  # a full dirty line from the level above
PREFETCH = 3

# Replacement policies, write-policy flags and prefetchers (codes stored in ``lvl_cfg``).
REPL_LRU, REPL_PLRU, REPL_FIFO, REPL_RANDOM = 0, 1, 2, 3
PF_NONE, PF_NEXT_LINE, PF_STRIDE = 0, 1, 2

# Columns of ``lvl_cfg`` (one row per level).
C_REPL, C_WRITE_BACK, C_WRITE_ALLOCATE, C_INCLUSIVE, C_PREFETCH, C_PF_ENTRIES, C_SHARED = range(7)
N_LVL_CFG = 7

# Columns of ``inst_cfg`` (one row per cache instance: a private level has one per core).
I_SETS, I_WAYS, I_MASK, I_BASE, I_PBASE, I_LOG2WAYS, I_SETBITS = range(7)
N_INST_CFG = 7

# Counter columns (one row per instance).
K_READS, K_READ_MISSES, K_WRITES, K_WRITE_MISSES, K_EVICTIONS, K_WRITEBACKS = range(6)
K_PREFETCHES, K_BACK_INVALIDATIONS, K_BYTES_FROM_BELOW, K_BYTES_TO_BELOW = range(6, 10)
N_COUNTERS = 10

# Slots of the scalar ``state`` array.
S_RNG = 1  # slot 0 is reserved


@njit(cache=True, inline="always")
def _xorshift(state: np.ndarray) -> np.uint64:
    # Marsaglia's xorshift64 (13, 7, 17): deterministic for a seed, cheap, good enough for victims.
    x = np.uint64(state[S_RNG])
    x ^= x << np.uint64(13)
    x ^= x >> np.uint64(7)
    x ^= x << np.uint64(17)
    state[S_RNG] = np.int64(x)
    return x


@njit(cache=True, inline="always")
def _plru_touch(plru: np.ndarray, pbase: int, ways: int, way: int) -> None:
    # Point every node on the leaf's path away from it (bit 1 = victim lies in the right subtree).
    node = way + ways - 1
    while node > 0:
        parent = (node - 1) >> 1
        plru[pbase + parent] = 1 if node == 2 * parent + 1 else 0
        node = parent


@njit(cache=True, inline="always")
def _plru_victim(plru: np.ndarray, pbase: int, ways: int, log2ways: int) -> int:
    node = 0
    for _ in range(log2ways):
        node = 2 * node + 1 + plru[pbase + node]
    return node - (ways - 1)


# The way loops index with uint64: numba adds a negative-index wrap-around check to every signed
# index, which doubles the cost of these loops (measured: 24 -> 50 M lookups/s on a 16-way set).
@njit(cache=True, inline="always")
def _find(tags: np.ndarray, base: int, ways: int, tag: int, ordered: bool) -> int:
    # Entries are ``tag << 1 | dirty`` (int32); -1 is invalid. Ordered sets keep valid entries first.
    ub = np.uint64(base)
    for w in range(np.uint64(ways)):
        e = tags[ub + w]
        if (e >> 1) == tag:
            return np.int64(w)
        if ordered and e == -1:
            return -1
    return -1


@njit(cache=True, inline="always")
def _shift_down(tags: np.ndarray, base: int, way: int) -> None:
    # tags[base + 1 .. base + way] = tags[base .. base + way - 1]
    ub = np.uint64(base)
    j = np.uint64(way)
    one = np.uint64(1)
    while j > np.uint64(0):
        tags[ub + j] = tags[ub + j - one]
        j -= one


@njit(cache=True, inline="always")
def _move_to_front(tags: np.ndarray, base: int, way: int) -> None:
    e = tags[base + way]
    _shift_down(tags, base, way)
    tags[base] = e


@njit(cache=True)
def simulate(addr, size, is_write, core, line_shift, n_levels, lvl_cfg, inst_of, inst_cfg,
             tags, plru, pf_tab, state, counters):  # pragma: no cover - numba
    """Run a trace through the hierarchy, updating the state and counter arrays in place.

    Args:
        addr, size, is_write, core: the trace (byte address, bytes, store flag, issuing core).
        line_shift: log2 of the line size in bytes (one line size for the whole hierarchy).
        lvl_cfg: int64 [levels, N_LVL_CFG]; inst_of: int64 [levels, cores] -> instance id;
        inst_cfg: int64 [instances, N_INST_CFG];
        tags: int32 per way, ``tag << 1 | dirty`` or -1 (invalid), tag = line // sets. LRU and
            FIFO sets are kept in recency / insertion order (way 0 newest, invalid ways last), so
            LRU needs no time stamps and the victim is the last way; PLRU and random sets keep
            fixed positions.
        plru: tree bits; pf_tab: int64 [instances, entries, 4] (page, last line, stride, confidence);
        state: int64 [2] (unused, RNG); counters: int64 [instances, N_COUNTERS].
    """
    line_bytes = 1 << line_shift
    cap = 8 * (n_levels + 2)
    st_l = np.empty(cap, np.int64)
    st_line = np.empty(cap, np.int64)
    st_kind = np.empty(cap, np.int64)
    st_nb = np.empty(cap, np.int64)
    n_cores = inst_of.shape[1]
    page_shift = 12 - line_shift if line_shift < 12 else 0
    # Fast path for the first level: a hit of a write-back LRU/FIFO level without a stride
    # prefetcher changes nothing but the order of its set, so it skips the request stack.
    l1_repl = lvl_cfg[0, C_REPL]
    l1_fast = (lvl_cfg[0, C_WRITE_BACK] == 1 and lvl_cfg[0, C_PREFETCH] != PF_STRIDE
               and (l1_repl == REPL_LRU or l1_repl == REPL_FIFO))
    # Length-1 columns stand for a value shared by every access.
    size_step = 1 if size.shape[0] > 1 else 0
    write_step = 1 if is_write.shape[0] > 1 else 0
    core_step = 1 if core.shape[0] > 1 else 0
    for t in range(addr.shape[0]):
        a = np.int64(addr[t])
        nbytes = np.int64(size[t * size_step])
        c0 = np.int64(core[t * core_step])
        first = a >> line_shift
        last = (a + nbytes - 1) >> line_shift
        kind0 = WRITE if is_write[t * write_step] else READ
        for ln in range(first, last + 1):
            if l1_fast:
                i0 = inst_of[0, c0]
                m0 = inst_cfg[i0, I_MASK]
                if m0 >= 0:
                    s0 = ln & m0
                    g0 = ln >> inst_cfg[i0, I_SETBITS]
                else:
                    s0 = ln % inst_cfg[i0, I_SETS]
                    g0 = ln // inst_cfg[i0, I_SETS]
                w0 = inst_cfg[i0, I_WAYS]
                b0 = inst_cfg[i0, I_BASE] + s0 * w0
                k = _find(tags, b0, w0, g0, True)
                if k >= 0:
                    if kind0 == READ:
                        counters[i0, K_READS] += 1
                    else:
                        counters[i0, K_WRITES] += 1
                        tags[b0 + k] |= 1
                    if l1_repl == REPL_LRU and k > 0:
                        _move_to_front(tags, b0, k)
                    continue
            lo = max(a, ln << line_shift)
            hi = min(a + nbytes, (ln + 1) << line_shift)
            st_l[0] = 0
            st_line[0] = ln
            st_kind[0] = kind0
            st_nb[0] = hi - lo
            sp = 1
            # The fast path already looked this line up in the first level and missed.
            skip_find = l1_fast
            while sp > 0:
                sp -= 1
                lv = st_l[sp]
                line = st_line[sp]
                kind = st_kind[sp]
                nb = st_nb[sp]
                inst = inst_of[lv, c0]
                sets = inst_cfg[inst, I_SETS]
                ways = inst_cfg[inst, I_WAYS]
                mask = inst_cfg[inst, I_MASK]
                if mask >= 0:
                    s = line & mask
                    tag = line >> inst_cfg[inst, I_SETBITS]
                else:
                    s = line % sets
                    tag = line // sets
                base = inst_cfg[inst, I_BASE] + s * ways
                pbase = inst_cfg[inst, I_PBASE] + s * (ways - 1)
                repl = lvl_cfg[lv, C_REPL]
                ordered = repl == REPL_LRU or repl == REPL_FIFO
                wback = lvl_cfg[lv, C_WRITE_BACK] == 1
                if skip_find:
                    way = -1
                    skip_find = False
                else:
                    way = _find(tags, base, ways, tag, ordered)
                # Children, in processing order: victim write-back, fill, write-through, prefetch.
                ch_wb = -1
                ch_fill = False
                ch_fwd_kind = -1
                ch_fwd_nb = 0
                ch_pf = -1
                install = False
                install_dirty = 0
                if kind == PREFETCH:
                    if way < 0:
                        counters[inst, K_PREFETCHES] += 1
                        install = True
                        ch_fill = True
                else:
                    demand = kind != WRITEBACK
                    if kind == READ:
                        counters[inst, K_READS] += 1
                    else:
                        counters[inst, K_WRITES] += 1
                    if way >= 0:
                        if kind != READ:
                            if wback:
                                tags[base + way] |= 1
                            else:
                                ch_fwd_kind = kind
                                ch_fwd_nb = nb
                        if repl == REPL_LRU:
                            _move_to_front(tags, base, way)
                        elif repl == REPL_PLRU:
                            _plru_touch(plru, pbase, ways, way)
                    else:
                        if kind == READ:
                            counters[inst, K_READ_MISSES] += 1
                        else:
                            counters[inst, K_WRITE_MISSES] += 1
                        if kind == READ or lvl_cfg[lv, C_WRITE_ALLOCATE] == 1:
                            install = True
                            # A full-line write-back needs no fill; a partial store does (RFO).
                            ch_fill = kind != WRITEBACK
                            if kind != READ:
                                if wback:
                                    install_dirty = 1
                                else:
                                    ch_fwd_kind = kind
                                    ch_fwd_nb = nb
                        else:
                            ch_fwd_kind = kind
                            ch_fwd_nb = nb
                        if demand and lvl_cfg[lv, C_PREFETCH] == PF_NEXT_LINE:
                            ch_pf = line + 1
                    if demand and lvl_cfg[lv, C_PREFETCH] == PF_STRIDE:
                        n_ent = lvl_cfg[lv, C_PF_ENTRIES]
                        page = line >> page_shift
                        e = page % n_ent
                        if pf_tab[inst, e, 0] == page:
                            stride = line - pf_tab[inst, e, 1]
                            if stride != 0:
                                if stride == pf_tab[inst, e, 2]:
                                    pf_tab[inst, e, 3] = min(pf_tab[inst, e, 3] + 1, 3)
                                else:
                                    pf_tab[inst, e, 3] = 0
                                    pf_tab[inst, e, 2] = stride
                                pf_tab[inst, e, 1] = line
                                if pf_tab[inst, e, 3] >= 1:
                                    ch_pf = line + stride
                        else:
                            pf_tab[inst, e, 0] = page
                            pf_tab[inst, e, 1] = line
                            pf_tab[inst, e, 2] = 0
                            pf_tab[inst, e, 3] = 0
                if install:
                    if ordered:
                        vway = ways - 1
                    else:
                        vway = -1
                        for w in range(ways):
                            if tags[base + w] == -1:
                                vway = w
                                break
                        if vway < 0:
                            if repl == REPL_PLRU:
                                vway = _plru_victim(plru, pbase, ways, inst_cfg[inst, I_LOG2WAYS])
                            else:
                                vway = np.int64(_xorshift(state) % np.uint64(ways))
                    ventry = tags[base + vway]
                    if ventry != -1:
                        victim = (np.int64(ventry >> 1)) * sets + s
                        vdirty = (ventry & 1) == 1
                        counters[inst, K_EVICTIONS] += 1
                        if lvl_cfg[lv, C_INCLUSIVE] == 1:
                            # Back-invalidate the victim above; a dirty copy makes it dirty here.
                            for u in range(lv):
                                uordered = (lvl_cfg[u, C_REPL] == REPL_LRU
                                            or lvl_cfg[u, C_REPL] == REPL_FIFO)
                                for k in range(n_cores):
                                    if lvl_cfg[lv, C_SHARED] == 0 and inst_of[lv, k] != inst:
                                        continue
                                    ui = inst_of[u, k]
                                    if k > 0 and inst_of[u, k - 1] == ui:
                                        continue
                                    umask = inst_cfg[ui, I_MASK]
                                    if umask >= 0:
                                        us = victim & umask
                                        utag = victim >> inst_cfg[ui, I_SETBITS]
                                    else:
                                        us = victim % inst_cfg[ui, I_SETS]
                                        utag = victim // inst_cfg[ui, I_SETS]
                                    uways = inst_cfg[ui, I_WAYS]
                                    ubase = inst_cfg[ui, I_BASE] + us * uways
                                    uw = _find(tags, ubase, uways, utag, uordered)
                                    if uw >= 0:
                                        if (tags[ubase + uw] & 1) == 1:
                                            vdirty = True
                                        counters[ui, K_BACK_INVALIDATIONS] += 1
                                        if uordered:
                                            for j in range(uw, uways - 1):
                                                tags[ubase + j] = tags[ubase + j + 1]
                                            tags[ubase + uways - 1] = -1
                                        else:
                                            tags[ubase + uw] = -1
                        if vdirty:
                            counters[inst, K_WRITEBACKS] += 1
                            counters[inst, K_BYTES_TO_BELOW] += line_bytes
                            ch_wb = victim
                    if ordered:
                        _shift_down(tags, base, ways - 1)
                        vway = 0
                    tags[base + vway] = np.int32((tag << 1) | install_dirty)
                    if repl == REPL_PLRU:
                        _plru_touch(plru, pbase, ways, vway)
                if ch_fill:
                    counters[inst, K_BYTES_FROM_BELOW] += line_bytes
                if ch_fwd_kind >= 0:
                    counters[inst, K_BYTES_TO_BELOW] += ch_fwd_nb
                # Push in reverse processing order; the next level is memory for the last level.
                if ch_pf >= 0:
                    st_l[sp] = lv
                    st_line[sp] = ch_pf
                    st_kind[sp] = PREFETCH
                    st_nb[sp] = line_bytes
                    sp += 1
                if lv < n_levels - 1:
                    if ch_fwd_kind >= 0:
                        st_l[sp] = lv + 1
                        st_line[sp] = line
                        st_kind[sp] = ch_fwd_kind
                        st_nb[sp] = ch_fwd_nb
                        sp += 1
                    if ch_fill:
                        st_l[sp] = lv + 1
                        st_line[sp] = line
                        st_kind[sp] = READ
                        st_nb[sp] = line_bytes
                        sp += 1
                    if ch_wb >= 0:
                        st_l[sp] = lv + 1
                        st_line[sp] = ch_wb
                        st_kind[sp] = WRITEBACK
                        st_nb[sp] = line_bytes
                        sp += 1
