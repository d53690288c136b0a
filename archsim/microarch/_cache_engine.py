"""The numba kernel of the cache-hierarchy simulator (see :mod:`archsim.microarch.cache`).

All state lives in flat numpy arrays owned by the caller; the kernel keeps none between calls.
A request is ``(level, core, line, kind, nbytes)``. Processing one request at a level may create
child requests (a victim's write-back, a fill from the next level, a write-through, a prefetch);
they are handled depth-first, in that order, through an explicit stack, which is exactly the order
of the recursive pure-Python oracle in ``tests/property/test_cache_oracle.py``.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

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
K_SET_CONFLICTS = 10  # demand misses to a set among the instance's previous MISS_HISTORY misses
N_COUNTERS = 11
# Misses remembered per instance for K_SET_CONFLICTS: about the misses in flight when they come a
# few cycles apart within one L2 latency.
MISS_HISTORY = 4

# Trace entries ahead of the current one whose large-level sets are prefetched into the host cache.
PREFETCH_AHEAD = 8
# Levels whose tag array (one instance) has more entries than this get those host prefetches.
PREFETCH_MIN_ENTRIES = 1 << 16

# Slots of the scalar ``state`` array.
S_RNG = 1  # slot 0 is reserved


@intrinsic
def _host_prefetch(typingctx, arr, idx):
    """Emit ``llvm.prefetch`` (read, high locality) for ``&arr[idx]``: the simulated sets of a large
    level miss the host's caches, and the trace says which set comes next."""
    sig = types.void(arr, idx)

    def codegen(context, builder, signature, args):
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [args[1]], wraparound=False)
        i8p = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0i8")
        builder.call(fn, [builder.bitcast(ptr, i8p), ir.Constant(i32, 0), ir.Constant(i32, 3), ir.Constant(i32, 1)])
        return context.get_dummy_value()

    return sig, codegen


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


@njit(cache=True, inline="always")
def _at(arr: np.ndarray, i: int, j: int) -> int:
    # 2-D read with unsigned indices: no wrap-around check (see the note on the way loops below).
    return arr[np.uint64(i), np.uint64(j)]


@njit(cache=True, inline="always")
def _inc(counters: np.ndarray, i: int, k: int, v: int) -> None:
    counters[np.uint64(i), np.uint64(k)] += v


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
             tags, plru, pf_tab, state, counters, miss_ring):  # pragma: no cover - numba
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
        state: int64 [2] (unused, RNG); counters: int64 [instances, N_COUNTERS];
        miss_ring: int64 [instances, MISS_HISTORY + 1]: the sets of the last demand misses
            (-1: none) and, in the last column, the next slot.
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
    l1_repl = _at(lvl_cfg, 0, C_REPL)
    l1_fast = (_at(lvl_cfg, 0, C_WRITE_BACK) == 1 and _at(lvl_cfg, 0, C_PREFETCH) != PF_STRIDE
               and (l1_repl == REPL_LRU or l1_repl == REPL_FIFO))
    # Length-1 columns stand for a value shared by every access.
    size_step = 1 if size.shape[0] > 1 else 0
    write_step = 1 if is_write.shape[0] > 1 else 0
    core_step = 1 if core.shape[0] > 1 else 0
    # The first level's geometry per core, and its fast-path hit counts (added to counters at the end).
    f_mask = np.empty(n_cores, np.int64)
    f_bits = np.empty(n_cores, np.int64)
    f_sets = np.empty(n_cores, np.int64)
    f_ways = np.empty(n_cores, np.int64)
    f_base = np.empty(n_cores, np.int64)
    f_reads = np.zeros(n_cores, np.int64)
    f_writes = np.zeros(n_cores, np.int64)
    for k in range(n_cores):
        i = _at(inst_of, 0, k)
        f_mask[k] = _at(inst_cfg, i, I_MASK)
        f_bits[k] = _at(inst_cfg, i, I_SETBITS)
        f_sets[k] = _at(inst_cfg, i, I_SETS)
        f_ways[k] = _at(inst_cfg, i, I_WAYS)
        f_base[k] = _at(inst_cfg, i, I_BASE)
    # Levels large enough to miss the host's caches, for the look-ahead prefetch.
    n_big = 0
    big = np.empty(n_levels, np.int64)
    for lv in range(n_levels):
        i = _at(inst_of, lv, 0)
        if _at(inst_cfg, i, I_SETS) * _at(inst_cfg, i, I_WAYS) > PREFETCH_MIN_ENTRIES:
            big[n_big] = lv
            n_big += 1
    n_trace = addr.shape[0]
    prev_fl = -1
    for t in range(n_trace):
        if n_big > 0 and t + PREFETCH_AHEAD < n_trace:
            ta = t + PREFETCH_AHEAD
            fl = np.int64(addr[ta]) >> line_shift
            fc = np.int64(core[ta * core_step])
            # Only a new line can miss the first level and reach the large ones.
            for q in range(n_big if fl != prev_fl else 0):
                fi = _at(inst_of, big[q], fc)
                fm = _at(inst_cfg, fi, I_MASK)
                fs = (fl & fm) if fm >= 0 else (fl % _at(inst_cfg, fi, I_SETS))
                _host_prefetch(tags, np.uint64(_at(inst_cfg, fi, I_BASE) + fs * _at(inst_cfg, fi, I_WAYS)))
            prev_fl = fl
        a = np.int64(addr[t])
        nbytes = np.int64(size[t * size_step])
        c0 = np.int64(core[t * core_step])
        first = a >> line_shift
        last = (a + nbytes - 1) >> line_shift
        kind0 = WRITE if is_write[t * write_step] else READ
        uc0 = np.uint64(c0)
        for ln in range(first, last + 1):
            if l1_fast:
                m0 = f_mask[uc0]
                if m0 >= 0:
                    s0 = ln & m0
                    g0 = ln >> f_bits[uc0]
                else:
                    s0 = ln % f_sets[uc0]
                    g0 = ln // f_sets[uc0]
                w0 = f_ways[uc0]
                b0 = f_base[uc0] + s0 * w0
                k = _find(tags, b0, w0, g0, True)
                if k >= 0:
                    if kind0 == READ:
                        f_reads[uc0] += 1
                    else:
                        f_writes[uc0] += 1
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
                inst = _at(inst_of, lv, c0)
                sets = _at(inst_cfg, inst, I_SETS)
                ways = _at(inst_cfg, inst, I_WAYS)
                mask = _at(inst_cfg, inst, I_MASK)
                if mask >= 0:
                    s = line & mask
                    tag = line >> _at(inst_cfg, inst, I_SETBITS)
                else:
                    s = line % sets
                    tag = line // sets
                base = _at(inst_cfg, inst, I_BASE) + s * ways
                pbase = _at(inst_cfg, inst, I_PBASE) + s * (ways - 1)
                repl = _at(lvl_cfg, lv, C_REPL)
                ordered = repl == REPL_LRU or repl == REPL_FIFO
                wback = _at(lvl_cfg, lv, C_WRITE_BACK) == 1
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
                        _inc(counters, inst, K_PREFETCHES, 1)
                        install = True
                        ch_fill = True
                else:
                    demand = kind != WRITEBACK
                    if kind == READ:
                        _inc(counters, inst, K_READS, 1)
                    else:
                        _inc(counters, inst, K_WRITES, 1)
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
                            _inc(counters, inst, K_READ_MISSES, 1)
                        else:
                            _inc(counters, inst, K_WRITE_MISSES, 1)
                        if demand:
                            for q in range(MISS_HISTORY):
                                if miss_ring[inst, q] == s:
                                    _inc(counters, inst, K_SET_CONFLICTS, 1)
                                    break
                            slot = miss_ring[inst, MISS_HISTORY]
                            miss_ring[inst, slot] = s
                            miss_ring[inst, MISS_HISTORY] = (slot + 1) % MISS_HISTORY
                        if kind == READ or _at(lvl_cfg, lv, C_WRITE_ALLOCATE) == 1:
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
                        if demand and _at(lvl_cfg, lv, C_PREFETCH) == PF_NEXT_LINE:
                            ch_pf = line + 1
                    if demand and _at(lvl_cfg, lv, C_PREFETCH) == PF_STRIDE:
                        n_ent = _at(lvl_cfg, lv, C_PF_ENTRIES)
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
                                vway = _plru_victim(plru, pbase, ways, _at(inst_cfg, inst, I_LOG2WAYS))
                            else:
                                vway = np.int64(_xorshift(state) % np.uint64(ways))
                    ventry = tags[base + vway]
                    if ventry != -1:
                        victim = (np.int64(ventry >> 1)) * sets + s
                        vdirty = (ventry & 1) == 1
                        _inc(counters, inst, K_EVICTIONS, 1)
                        if _at(lvl_cfg, lv, C_INCLUSIVE) == 1:
                            # Back-invalidate the victim above; a dirty copy makes it dirty here.
                            for u in range(lv):
                                uordered = (_at(lvl_cfg, u, C_REPL) == REPL_LRU
                                            or _at(lvl_cfg, u, C_REPL) == REPL_FIFO)
                                for k in range(n_cores):
                                    if _at(lvl_cfg, lv, C_SHARED) == 0 and _at(inst_of, lv, k) != inst:
                                        continue
                                    ui = _at(inst_of, u, k)
                                    if k > 0 and _at(inst_of, u, k - 1) == ui:
                                        continue
                                    umask = _at(inst_cfg, ui, I_MASK)
                                    if umask >= 0:
                                        us = victim & umask
                                        utag = victim >> _at(inst_cfg, ui, I_SETBITS)
                                    else:
                                        us = victim % _at(inst_cfg, ui, I_SETS)
                                        utag = victim // _at(inst_cfg, ui, I_SETS)
                                    uways = _at(inst_cfg, ui, I_WAYS)
                                    ubase = _at(inst_cfg, ui, I_BASE) + us * uways
                                    uw = _find(tags, ubase, uways, utag, uordered)
                                    if uw >= 0:
                                        if (tags[ubase + uw] & 1) == 1:
                                            vdirty = True
                                        _inc(counters, ui, K_BACK_INVALIDATIONS, 1)
                                        if uordered:
                                            for j in range(uw, uways - 1):
                                                tags[ubase + j] = tags[ubase + j + 1]
                                            tags[ubase + uways - 1] = -1
                                        else:
                                            tags[ubase + uw] = -1
                        if vdirty:
                            _inc(counters, inst, K_WRITEBACKS, 1)
                            _inc(counters, inst, K_BYTES_TO_BELOW, line_bytes)
                            ch_wb = victim
                    if ordered:
                        _shift_down(tags, base, ways - 1)
                        vway = 0
                    tags[base + vway] = np.int32((tag << 1) | install_dirty)
                    if repl == REPL_PLRU:
                        _plru_touch(plru, pbase, ways, vway)
                if ch_fill:
                    _inc(counters, inst, K_BYTES_FROM_BELOW, line_bytes)
                if ch_fwd_kind >= 0:
                    _inc(counters, inst, K_BYTES_TO_BELOW, ch_fwd_nb)
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
    for k in range(n_cores):  # per core, into its (possibly shared) instance
        i = _at(inst_of, 0, k)
        counters[i, K_READS] += f_reads[k]
        counters[i, K_WRITES] += f_writes[k]
