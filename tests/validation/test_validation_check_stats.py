"""Correctness checks and timing statistics of the validation driver (pure functions)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from validation.check import CorrectnessError, check, poison_value, relative_error, rtol_for
from validation.stats import repetitions, rotation_sets, summarize


def test_relative_error_hand_computed():
    # max|a - e| = |2.5 - 2| = 0.5; max|e| = 4  ->  0.125
    assert relative_error(np.array([1.0, 2.5, -4.0]), np.array([1.0, 2.0, -4.0])) == pytest.approx(0.125)


def test_poisoned_output_fails_and_names_case():
    out = np.full(4, poison_value(np.float32), np.float32)
    out[:3] = 1.0
    with pytest.raises(CorrectnessError, match="triad/n=4"):
        check("triad/n=4", out, np.ones(4), rtol=1e-3)
    assert poison_value(np.int32) == np.iinfo(np.int32).min


def test_shape_mismatch_and_zero_reference():
    assert relative_error(np.zeros(3), np.zeros(4)) == math.inf
    assert relative_error(np.zeros(3), np.zeros(3)) == 0.0
    assert relative_error(np.ones(3), np.zeros(3)) == math.inf


def test_rtol_table():
    assert rtol_for("float32") == 1e-4
    assert rtol_for(np.float64) == 1e-10
    with pytest.raises(ValueError, match="dtype"):
        rtol_for("complex64")


@given(st.lists(st.floats(-1e3, 1e3), min_size=1, max_size=20), st.floats(1e-3, 1e3))
def test_relative_error_is_scale_free(values, scale):
    e = np.array(values)
    a = e + 0.01
    r1, r2 = relative_error(a, e), relative_error(a * scale, e * scale)
    assert (math.isinf(r1) and math.isinf(r2)) or r1 == pytest.approx(r2, rel=1e-9)


def test_summarize_hand_computed():
    # numpy linear percentiles of [1, 2, 3, 4]: q1 = 1 + 0.75 * 1 = 1.75, median 2.5, q3 = 3.25
    st_ = summarize([4.0, 1.0, 3.0, 2.0])
    assert (st_.q1_s, st_.median_s, st_.q3_s, st_.repeats) == (1.75, 2.5, 3.25, 4)
    assert st_.iqr_s == pytest.approx(1.5)
    with pytest.raises(ValueError):
        summarize([])
    with pytest.raises(ValueError):
        summarize([1.0, -1.0])


@given(st.lists(st.floats(0, 1e3), min_size=1, max_size=50))
def test_summary_is_ordered(times):
    s = summarize(times)
    assert min(times) <= s.q1_s <= s.median_s <= s.q3_s <= max(times)


def test_repetitions():
    assert repetitions(1e-3, 0.1, 10, 500) == 100  # 0.1 s / 1 ms
    assert repetitions(1.0, 0.1, 10, 500) == 10  # clamped up
    assert repetitions(1e-9, 0.1, 10, 500) == 500  # clamped down
    with pytest.raises(ValueError):
        repetitions(1e-3, 0.1, 0, 5)


def test_rotation_sets_hand_computed():
    # 60 MiB working set > 2 x 25 MiB cache: one set, no flush.
    assert rotation_sets(60 << 20, 25 << 20, 64, 1 << 34) == (1, False)
    # 12 MiB vs 50 MiB cache: ceil(100 / 12) + 1 = 10 sets (120 MiB > 100 MiB), no flush.
    assert rotation_sets(12 << 20, 50 << 20, 64, 1 << 34) == (10, False)
    # 12 KiB vs 50 MiB: would need 8535 sets; capped at 64 (768 KiB < 100 MiB): flush.
    assert rotation_sets(12 << 10, 50 << 20, 64, 1 << 34) == (64, True)


@given(st.integers(1, 1 << 32), st.integers(1, 1 << 28), st.integers(1, 128), st.integers(1, 1 << 36))
def test_rotation_covers_cache_or_flushes(ws, cache, max_sets, budget):
    k, flush = rotation_sets(ws, cache, max_sets, budget)
    assert 1 <= k <= max(1, max_sets)
    assert flush or k * ws > 2 * cache
