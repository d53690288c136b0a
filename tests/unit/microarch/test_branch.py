"""Branch predictors on synthetic patterns with known answers."""

from __future__ import annotations

import numpy as np
import pytest

from archsim.errors import SchemaError
from archsim.microarch.branch import BranchSimulator, PredictorConfig, simulate_branches

ALL = ("taken", "bimodal", "gshare", "perceptron", "tage")


def cfg(kind, **kw):
    return PredictorConfig(kind=kind, **kw)


@pytest.mark.parametrize("kind", ALL)
def test_always_taken_loop_branch(kind):
    # One branch, always taken. Counters start weakly taken and the perceptron's zero output counts
    # as taken, so no predictor ever mispredicts; TAGE allocates only on mispredictions.
    s = simulate_branches(cfg(kind), np.full(10_000, 64), np.ones(10_000, bool))
    assert s.mispredictions == 0


def test_btfn_on_a_loop_of_four():
    # for i in range(4) x 1000: the backward branch goes T T T N; BTFN predicts taken: 1 miss / 4.
    taken = np.tile([True, True, True, False], 1000)
    s = simulate_branches(cfg("btfn"), np.zeros(4000, np.int64), taken, backward=np.ones(4000, bool))
    assert s.mispredictions == 1000
    # A forward branch with the same outcomes is predicted not taken: 3 misses / 4.
    fwd = simulate_branches(cfg("btfn"), np.zeros(4000, np.int64), taken, backward=np.zeros(4000, bool))
    assert fwd.mispredictions == 3000


def test_alternating_pattern_bimodal_wrong_gshare_learns():
    # T N T N ...: the bimodal counter goes 2 -> 3 (T, hit) -> 2 (N, miss) -> 3 ...: every N is
    # mispredicted, 5000 of 10000. gshare with history sees ...0101 vs ...1010 and learns both.
    n = 10_000
    taken = np.arange(n) % 2 == 0
    pc = np.full(n, 0x40)
    assert simulate_branches(cfg("bimodal"), pc, taken).mispredictions == n // 2
    for kind in ("gshare", "perceptron", "tage"):
        s = simulate_branches(cfg(kind), pc, taken, warmup=200)
        assert s.mispredictions == 0, kind


@pytest.mark.parametrize("kind", ALL)
def test_random_branches_are_near_half(kind):
    # Data-dependent branches on i.i.d. fair coin flips: no predictor beats 50% by more than noise
    # (std of the rate over 40000 branches is 0.0025; 0.02 is 8 sigma).
    rng = np.random.default_rng(1)
    n = 40_000
    s = simulate_branches(cfg(kind), rng.integers(0, 16, n) * 4, rng.random(n) < 0.5)
    assert s.mispredict_rate == pytest.approx(0.5, abs=0.02)


def test_long_period_loop_tage_learns_gshare_cannot():
    # 19 taken then 1 not taken: a 12-bit gshare history is all ones before both the 13th..19th T
    # and the N, so it mispredicts about once per period (1/20 = 5%); TAGE's 64-bit table sees the
    # N coming after warm-up.
    taken = np.tile(np.r_[np.ones(19, bool), False], 2000)
    pc = np.full(taken.size, 0x80)
    g = simulate_branches(cfg("gshare", history_bits=12), pc, taken, warmup=4000)
    t = simulate_branches(cfg("tage", history_bits=64), pc, taken, warmup=4000)
    assert g.mispredict_rate == pytest.approx(0.05, abs=0.005)
    assert t.mispredictions <= 5


def test_perceptron_learns_a_correlation_bimodal_cannot():
    # Branch B (pc 1) copies the outcome of random branch A (pc 0) ten branches earlier, with nine
    # random branches in between. B is linearly separable in the history (weight on x_10), so
    # the perceptron predicts it; bimodal gets B right half the time: about 0.5 x 1000 extra misses.
    rng = np.random.default_rng(2)
    blocks = 1000
    pcs, outs = [], []
    for _ in range(blocks):
        r = rng.random(10) < 0.5
        pcs += [0] + list(range(2, 11)) + [1]
        outs += list(r) + [r[0]]
    pc, taken = np.array(pcs), np.array(outs)
    p = simulate_branches(cfg("perceptron", history_bits=16, table_entries=64), pc, taken, warmup=2000)
    b = simulate_branches(cfg("bimodal", table_entries=64), pc, taken, warmup=2000)
    # Random part: ~0.5 x 10/11 of the counted branches for both; B adds ~0.5/11 only for bimodal.
    assert b.mispredict_rate - p.mispredict_rate > 0.03


def test_chunks_equal_one_run():
    rng = np.random.default_rng(3)
    pc = rng.integers(0, 64, 5000)
    taken = (pc % 3 == 0) ^ (rng.random(5000) < 0.1)
    for kind in ALL:
        sim = BranchSimulator(cfg(kind))
        for a, b in zip(np.array_split(pc, 5), np.array_split(taken, 5), strict=True):
            sim.run(a, b)
        assert sim.stats() == simulate_branches(cfg(kind), pc, taken), kind


def test_gshare_matches_a_plain_python_loop():
    rng = np.random.default_rng(4)
    pc = rng.integers(0, 256, 3000)
    taken = rng.random(3000) < 0.7
    ctr, h, miss = [2] * 256, 0, 0
    for p, t in zip(pc.tolist(), taken.tolist(), strict=True):
        i = (p ^ h) & 255
        miss += (ctr[i] >= 2) != t
        ctr[i] = min(3, ctr[i] + 1) if t else max(0, ctr[i] - 1)
        h = ((h << 1) | t) & 0xFF
    s = simulate_branches(cfg("gshare", table_entries=256, history_bits=8), pc, taken)
    assert s.mispredictions == miss


def test_bad_configs():
    with pytest.raises(SchemaError, match="kind"):
        PredictorConfig(kind="oracle")
    with pytest.raises(SchemaError, match="power of two"):
        PredictorConfig(kind="gshare", table_entries=1000)
    with pytest.raises(SchemaError, match="backward"):
        simulate_branches(cfg("btfn"), np.zeros(3, np.int64), np.ones(3, bool))
    with pytest.raises(SchemaError, match="equal length"):
        simulate_branches(cfg("gshare"), np.zeros(3, np.int64), np.ones(4, bool))
