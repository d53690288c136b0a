"""Trace-driven conditional-branch predictors: static, bimodal, gshare, perceptron, TAGE-like.

A trace is ``(pc, taken)`` per dynamic conditional branch (``pc`` any non-negative integer that
identifies the branch, e.g. its address), plus ``backward`` flags for the BTFN static rule. The
kernels are in :mod:`archsim.microarch._branch_engine`; a :class:`BranchSimulator` owns the tables
so a long trace can be fed in chunks. Counts exclude the first ``warmup`` branches of a run call
when asked (the tables still train on them).

Kinds:
  - ``taken``: predict taken always; ``btfn``: backward taken, forward not taken (loop branches).
  - ``bimodal``: 2-bit counters indexed by pc (Smith, ISCA 1981).
  - ``gshare``: 2-bit counters indexed by pc XOR the global history (McFarling, WRL TN-36, 1993).
  - ``perceptron``: one perceptron per pc slot over the global history (Jimenez & Lin, HPCA 2001),
    threshold theta = floor(1.93 h + 14) from that paper.
  - ``tage``: a bimodal base plus tagged tables over geometric history lengths (Seznec & Michaud,
    JILP 2006), simplified as documented in ``_branch_engine.run_tage``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from archsim.errors import SchemaError
from archsim.microarch import _branch_engine as eng

Kind = Literal["taken", "btfn", "bimodal", "gshare", "perceptron", "tage"]
KINDS = ("taken", "btfn", "bimodal", "gshare", "perceptron", "tage")


@dataclass(frozen=True)
class PredictorConfig:
    """A branch predictor's kind and table sizes.

    Attributes:
        kind: one of ``KINDS``.
        table_entries: counters (bimodal, gshare, TAGE base) or perceptrons; a power of two.
        history_bits: global history length (gshare <= 64; perceptron inputs; TAGE's longest).
        tage_tables: tagged tables of the TAGE-like predictor.
        tage_min_history: shortest tagged history (the lengths grow geometrically to history_bits).
        tage_log_entries: log2 entries of each tagged table.
        tage_tag_bits: tag width of the tagged tables.
        mispredict_penalty_cycles: carried for the core model (not used by the simulation).
    """

    kind: Kind
    table_entries: int = 4096
    history_bits: int = 12
    tage_tables: int = 4
    tage_min_history: int = 4
    tage_log_entries: int = 10
    tage_tag_bits: int = 9
    mispredict_penalty_cycles: int = 13

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise SchemaError(f"branch predictor: kind {self.kind!r}; allowed: {list(KINDS)}")
        n = self.table_entries
        if not isinstance(n, int) or n <= 0 or n & (n - 1):
            raise SchemaError(f"branch predictor: table_entries {n!r} is not a positive power of two")
        if not isinstance(self.history_bits, int) or self.history_bits < 0:
            raise SchemaError(f"branch predictor: history_bits {self.history_bits!r} must be an int >= 0")
        if self.kind == "gshare" and self.history_bits > 64:
            raise SchemaError(f"branch predictor: gshare history_bits {self.history_bits} > 64")
        if self.kind == "tage":
            ok = (self.tage_tables >= 1 and 2 <= self.tage_tag_bits <= 30
                  and 1 <= self.tage_log_entries <= 24)
            if not ok:
                raise SchemaError("branch predictor: tage_tables >= 1, tage_tag_bits 2..30, "
                                  "tage_log_entries 1..24")
            if not 1 <= self.tage_min_history <= self.history_bits:
                raise SchemaError(f"branch predictor: tage_min_history {self.tage_min_history} must lie "
                                  f"in 1..history_bits ({self.history_bits})")

    @property
    def perceptron_theta(self) -> int:
        """Training threshold floor(1.93 h + 14) (Jimenez & Lin 2001, section 3.3)."""
        return int(math.floor(1.93 * self.history_bits + 14))

    def tage_lengths(self) -> np.ndarray:
        """Geometric history lengths L_i = Lmin (Lmax / Lmin)^((i-1)/(T-1)), rounded (int64)."""
        t, lo, hi = self.tage_tables, self.tage_min_history, self.history_bits
        if t == 1:
            return np.array([hi], np.int64)
        return np.array([round(lo * (hi / lo) ** (i / (t - 1))) for i in range(t)], np.int64)

    @classmethod
    def from_predictor(cls, bp) -> PredictorConfig:
        """From a hardware :class:`archsim.hardware.cpu.BranchPredictor` (``static`` -> ``btfn``)."""
        kind = "btfn" if bp.kind == "static" else bp.kind
        return cls(kind=kind, table_entries=int(bp.table_entries), history_bits=int(bp.history_bits),
                   mispredict_penalty_cycles=int(bp.mispredict_penalty_cycles))


@dataclass(frozen=True)
class BranchStats:
    """Branches seen, branches counted (after warm-up), mispredictions among the counted ones."""

    branches: int
    counted: int
    mispredictions: int

    @property
    def mispredict_rate(self) -> float:
        return self.mispredictions / self.counted if self.counted else 0.0


@dataclass
class BranchSimulator:
    """A predictor with explicit state; :meth:`run` may be called on successive trace chunks."""

    config: PredictorConfig
    _state: dict[str, np.ndarray] = field(init=False, repr=False)
    _branches: int = field(init=False, default=0)
    _counted: int = field(init=False, default=0)
    _misses: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        c = self.config
        n = c.table_entries
        s: dict[str, np.ndarray] = {}
        if c.kind in ("bimodal", "gshare"):
            s["ctr"] = np.full(n, 2, np.int8)  # weakly taken
            s["hist"] = np.zeros(1, np.uint64)
        elif c.kind == "perceptron":
            s["weights"] = np.zeros((n, c.history_bits + 1), np.int32)
            s["ghist"] = -np.ones(c.history_bits, np.int32)
        elif c.kind == "tage":
            t, e = c.tage_tables, 1 << c.tage_log_entries
            lengths = c.tage_lengths()
            s.update(
                base=np.full(n, 2, np.int8), ctr=np.zeros((t, e), np.int8),
                tag=np.full((t, e), -1, np.int64), useful=np.zeros((t, e), np.int8),
                ghist=np.zeros(int(lengths.max()) + 1, np.uint8), gpos=np.zeros(1, np.int64),
                fold_i=np.zeros(t, np.int64), fold_t1=np.zeros(t, np.int64), fold_t2=np.zeros(t, np.int64),
                lengths=lengths, clock=np.zeros(1, np.int64),
            )
        self._state = s

    def run(self, pc, taken, backward=None, warmup: int = 0) -> BranchSimulator:
        """Feed a chunk: ``pc`` (non-negative ints), ``taken`` (bools), ``backward`` (BTFN only)."""
        pcs = np.ascontiguousarray(pc, dtype=np.int64)
        tk = np.ascontiguousarray(taken, dtype=np.bool_)
        if pcs.ndim != 1 or pcs.shape != tk.shape:
            raise SchemaError(f"branch trace: pc {pcs.shape} and taken {tk.shape} must be 1-D, equal length")
        if pcs.size and pcs.min() < 0:
            raise SchemaError("branch trace: pc must be non-negative")
        if not isinstance(warmup, int) or warmup < 0:
            raise SchemaError(f"branch trace: warmup {warmup!r} must be an int >= 0")
        c, s = self.config, self._state
        if c.kind in ("taken", "btfn"):
            if c.kind == "btfn":
                if backward is None:
                    raise SchemaError("branch trace: the btfn predictor needs the backward flags")
                bw = np.ascontiguousarray(backward, dtype=np.bool_)
                if bw.shape != tk.shape:
                    raise SchemaError("branch trace: backward must have one flag per branch")
            else:
                bw = tk[:0]
            lo = min(warmup, tk.shape[0])
            miss = eng.run_static(tk[lo:], bw[lo:] if c.kind == "btfn" else bw, c.kind == "btfn")
        elif c.kind == "bimodal":
            miss = eng.run_bimodal(pcs, tk, s["ctr"], warmup)
        elif c.kind == "gshare":
            miss = eng.run_gshare(pcs, tk, s["ctr"], s["hist"], c.history_bits, warmup)
        elif c.kind == "perceptron":
            miss = eng.run_perceptron(pcs, tk, s["weights"], s["ghist"], c.perceptron_theta, warmup)
        else:
            miss = eng.run_tage(pcs, tk, s["base"], s["ctr"], s["tag"], s["useful"], s["ghist"], s["gpos"],
                                s["fold_i"], s["fold_t1"], s["fold_t2"], s["lengths"], c.tage_log_entries,
                                c.tage_tag_bits, s["clock"], warmup)
        self._branches += int(tk.shape[0])
        self._counted += max(0, int(tk.shape[0]) - warmup)
        self._misses += int(miss)
        return self

    def stats(self) -> BranchStats:
        return BranchStats(self._branches, self._counted, self._misses)


def simulate_branches(config: PredictorConfig, pc, taken, backward=None, warmup: int = 0) -> BranchStats:
    """Run one branch trace through a fresh predictor."""
    return BranchSimulator(config).run(pc, taken, backward, warmup).stats()
