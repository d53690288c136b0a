"""numba kernels of the branch predictors (see :mod:`archsim.microarch.branch`).

Each kernel takes the trace chunk and the predictor's state arrays (owned by the caller), updates the
state in place and returns the number of mispredictions among branches ``t >= warmup``.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def run_static(taken, backward, use_backward):  # pragma: no cover - numba
    """Always-taken, or backward-taken/forward-not-taken when ``use_backward``."""
    miss = 0
    for t in range(taken.shape[0]):
        pred = backward[t] if use_backward else True
        if pred != taken[t]:
            miss += 1
    return miss


@njit(cache=True, inline="always")
def _counter_step(ctr, i, tk: bool) -> int:
    # Branch-free 2-bit update (the host mispredicts random outcomes, so branches cost ~2x here);
    # returns 1 on a misprediction.
    c = np.int64(ctr[i])
    up = np.int64(tk)
    ctr[i] = min(3, max(0, c + 2 * up - 1))
    return np.int64(c >= 2) ^ up


@njit(cache=True)
def run_bimodal(pc, taken, ctr, warmup):  # pragma: no cover - numba
    """Smith's 2-bit saturating counters indexed by the branch address (Smith, ISCA 1981)."""
    mask = np.uint64(ctr.shape[0] - 1)
    miss = 0
    for t in range(pc.shape[0]):
        m = _counter_step(ctr, np.uint64(pc[t]) & mask, taken[t])
        if t >= warmup:
            miss += m
    return miss


@njit(cache=True)
def run_gshare(pc, taken, ctr, hist, history_bits, warmup):  # pragma: no cover - numba
    """2-bit counters indexed by address XOR global history (McFarling, DEC WRL TN-36, 1993).

    ``hist`` is a 1-element uint64 array holding the global history (newest outcome in bit 0).
    """
    mask = np.uint64(ctr.shape[0] - 1)
    hmask = np.uint64((1 << history_bits) - 1) if history_bits < 64 else ~np.uint64(0)
    h = hist[0]
    miss = 0
    for t in range(pc.shape[0]):
        tk = taken[t]
        m = _counter_step(ctr, (np.uint64(pc[t]) ^ h) & mask, tk)
        if t >= warmup:
            miss += m
        h = ((h << np.uint64(1)) | np.uint64(tk)) & hmask
    hist[0] = h
    return miss


@njit(cache=True)
def run_perceptron(pc, taken, weights, ghist, theta, warmup):  # pragma: no cover - numba
    """Perceptron predictor (Jimenez & Lin, HPCA 2001).

    ``weights``: int32 [entries, h + 1] (column 0 is the bias), saturating at +-127 (8-bit weights);
    ``ghist``: int32 [h] of +-1, newest first. Trains on a misprediction or when |y| <= theta.
    """
    n = weights.shape[0]
    h = ghist.shape[0]
    miss = 0
    for t in range(pc.shape[0]):
        i = np.uint64(pc[t]) % np.uint64(n)
        y = weights[i, 0]
        for j in range(h):
            y += weights[i, j + 1] * ghist[j]
        pred = y >= 0
        tk = taken[t]
        if pred != tk and t >= warmup:
            miss += 1
        if pred != tk or abs(y) <= theta:
            s = 1 if tk else -1
            w = weights[i, 0] + s
            weights[i, 0] = min(127, max(-128, w))
            for j in range(h):
                w = weights[i, j + 1] + s * ghist[j]
                weights[i, j + 1] = min(127, max(-128, w))
        for j in range(h - 1, 0, -1):
            ghist[j] = ghist[j - 1]
        if h > 0:
            ghist[0] = 1 if tk else -1
    return miss


@njit(cache=True, inline="always")
def _fold_update(fold, k, newbit, outbit, length, bits):
    # A circular-shift-register fold of the last ``length`` history bits into ``bits`` bits
    # (Seznec & Michaud, JILP 2006; Michaud's PPM-like predictor, JILP 2005).
    f = (fold[k] << 1) | newbit
    f ^= outbit << (length % bits)
    f ^= f >> bits
    fold[k] = f & ((1 << bits) - 1)


@njit(cache=True)
def run_tage(pc, taken, base, ctr, tag, useful, ghist, gpos, fold_i, fold_t1, fold_t2, lengths,
             log_entries, tag_bits, clock, warmup):  # pragma: no cover - numba
    """A TAGE-like predictor: a bimodal base and tagged tables with geometric history lengths.

    Simplified from Seznec & Michaud (JILP 2006): the provider is the longest matching table and
    the alternate prediction the next one (or the base); 3-bit signed counters, 2-bit useful bits,
    one allocation in a longer table with ``useful == 0`` on a misprediction (else the useful bits
    of the longer tables decay), and all useful bits halve every 2^18 branches. No use-alt-on-new
    heuristic, no loop predictor.

    ``ghist``: uint8 circular buffer of outcomes, ``gpos``/``clock``: int64 [1].
    """
    n_tab = ctr.shape[0]
    entries = 1 << log_entries
    bmask = base.shape[0] - 1
    tmask = (1 << tag_bits) - 1
    glen = ghist.shape[0]
    idx = np.empty(n_tab, np.int64)
    tg = np.empty(n_tab, np.int64)
    miss = 0
    pos = gpos[0]
    for t in range(pc.shape[0]):
        p = np.int64(pc[t])
        for k in range(n_tab):
            idx[k] = (p ^ (p >> log_entries) ^ fold_i[k]) & (entries - 1)
            tg[k] = (p ^ fold_t1[k] ^ (fold_t2[k] << 1)) & tmask
        provider = -1
        alt = -1
        for k in range(n_tab - 1, -1, -1):
            if tag[k, idx[k]] == tg[k]:
                if provider < 0:
                    provider = k
                else:
                    alt = k
                    break
        bi = p & bmask
        base_pred = base[bi] >= 2
        alt_pred = (ctr[alt, idx[alt]] >= 0) if alt >= 0 else base_pred
        pred = (ctr[provider, idx[provider]] >= 0) if provider >= 0 else base_pred
        tk = taken[t]
        if pred != tk and t >= warmup:
            miss += 1
        # Update the provider (or the base).
        if provider >= 0:
            c = ctr[provider, idx[provider]]
            if tk:
                if c < 3:
                    ctr[provider, idx[provider]] = c + 1
            elif c > -4:
                ctr[provider, idx[provider]] = c - 1
            if pred != alt_pred:
                u = useful[provider, idx[provider]]
                if pred == tk:
                    if u < 3:
                        useful[provider, idx[provider]] = u + 1
                elif u > 0:
                    useful[provider, idx[provider]] = u - 1
        else:
            c = base[bi]
            if tk:
                if c < 3:
                    base[bi] = c + 1
            elif c > 0:
                base[bi] = c - 1
        # Allocate on a misprediction in a longer table.
        if pred != tk and provider < n_tab - 1:
            done = False
            for k in range(provider + 1, n_tab):
                if useful[k, idx[k]] == 0:
                    tag[k, idx[k]] = tg[k]
                    ctr[k, idx[k]] = 0 if tk else -1
                    done = True
                    break
            if not done:
                for k in range(provider + 1, n_tab):
                    if useful[k, idx[k]] > 0:
                        useful[k, idx[k]] -= 1
        clock[0] += 1
        if (clock[0] & ((1 << 18) - 1)) == 0:
            for k in range(n_tab):
                for e in range(entries):
                    useful[k, e] >>= 1
        # Push the outcome into the global history and the folded registers.
        newbit = 1 if tk else 0
        pos = (pos + 1) % glen
        ghist[pos] = newbit
        for k in range(n_tab):
            length = lengths[k]
            outbit = np.int64(ghist[(pos - length + glen) % glen])
            _fold_update(fold_i, k, newbit, outbit, length, log_entries)
            _fold_update(fold_t1, k, newbit, outbit, length, tag_bits)
            _fold_update(fold_t2, k, newbit, outbit, length, tag_bits - 1)
    gpos[0] = pos
    return miss
