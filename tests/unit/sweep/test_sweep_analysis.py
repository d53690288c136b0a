"""Pareto fronts, best point under constraints, sensitivity indices."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from archsim.errors import SweepError
from archsim.sweep.analysis import best, pareto_front, sensitivity, to_wide


def frame(points):
    rows = [{"point": i, "x.axis": i, "status": "ok", "error": None, "latency_s": lat, "energy_j": en}
            for i, (lat, en) in enumerate(points)]
    return pd.DataFrame(rows)


def test_pareto_hand_case():
    # (1,5) (2,3) (3,4) (4,1) (2,3): (3,4) is dominated by (2,3); the tie (2,3) x2 is kept.
    front = pareto_front(frame([(1, 5), (2, 3), (3, 4), (4, 1), (2, 3)]))
    assert list(front["point"]) == [0, 1, 4, 3]


def test_pareto_with_max_objective_and_tidy_input():
    tidy = frame([(1, 5), (2, 3), (3, 4)]).melt(id_vars=["point", "x.axis", "status", "error"],
                                                value_vars=["latency_s", "energy_j"], var_name="metric")
    # minimise latency, maximise energy: (1,5) dominates both others
    front = pareto_front(tidy, {"latency_s": "min", "energy_j": "max"})
    assert list(front["point"]) == [0]


def test_pareto_skips_invalid_points():
    table = frame([(1, 5), (0.5, 0.5)])
    table.loc[1, "status"] = "invalid"
    assert list(pareto_front(table)["point"]) == [0]


def test_pareto_objective_errors():
    with pytest.raises(SweepError, match=">= 2 columns"):
        pareto_front(frame([(1, 1)]), ["latency_s"])
    with pytest.raises(SweepError, match="not in the table"):
        pareto_front(frame([(1, 1)]), ["latency_s", "power_w"])


def test_best_under_constraints():
    table = frame([(1, 5), (2, 3), (3, 4), (4, 1)])
    assert best(table)["point"] == 0
    assert best(table, constraints=["energy_j <= 3.5"])["point"] == 1
    assert best(table, "energy_j", constraints=["latency_s >= 2", "x.axis != 3"])["point"] == 1
    assert best(table, "latency_s", minimize=False)["point"] == 3
    with pytest.raises(SweepError, match="no point"):
        best(table, constraints=["energy_j < 0"])
    with pytest.raises(SweepError, match="not of the form"):
        best(table, constraints=["energy_j about 3"])


def test_to_wide_round_trip():
    wide = frame([(1, 5), (2, 3)])
    tidy = wide.melt(id_vars=["point", "x.axis", "status", "error"], value_vars=["latency_s", "energy_j"],
                     var_name="metric")
    back = to_wide(tidy)
    assert list(back.columns) == list(wide.columns)
    assert back["energy_j"].tolist() == [5, 3]


def test_sensitivity_finds_the_input_that_matters():
    rng = np.random.default_rng(0)
    n = 256
    a, b, c = rng.random(n), rng.random(n), rng.random(n)
    # y depends strongly on a, weakly on b, not at all on c: S1(a) ~ 16/17, S1(b) ~ 1/17, S1(c) ~ 0
    y = 4 * a + b
    table = pd.DataFrame({"point": range(n), "a": a, "b": b, "c": c, "status": "ok", "error": None, "latency_s": y})
    s = sensitivity(table).set_index("input")
    assert s.loc["a", "S1"] > 0.8 and s.loc["b", "S1"] < 0.2 and abs(s.loc["c", "S1"]) < 0.1
    # few resamples: the confidence intervals are not under test, and each costs a density estimate
    d = sensitivity(table, method="delta", resamples=4).set_index("input")
    # delta's estimator is biased upwards by ~0.1 at n = 256, so only the dominant input is clear-cut.
    assert d.loc["a", "delta"] > 2 * max(d.loc["b", "delta"], d.loc["c", "delta"])
    assert d.loc["a", "S1"] > 0.8
    with pytest.raises(SweepError, match="not known"):
        sensitivity(table, method="morris")
    with pytest.raises(SweepError, match="do not vary"):
        sensitivity(table.assign(c=1.0))
