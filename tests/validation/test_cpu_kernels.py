"""The CPU validation cases: each quick case computes its reference, and describes a traced kernel."""

from __future__ import annotations

import numpy as np
import pytest

from archsim.microarch.traces import TracedKernel
from validation.cpu_measure import _cases, time_case


@pytest.mark.parametrize("case", _cases("quick"), ids=lambda c: c.name)
def test_quick_case_is_correct_and_described(case):
    out = case.run(case.make_inputs(0))
    np.testing.assert_allclose(out, case.reference(case.make_inputs(0)), rtol=case.rtol)
    assert case.target == "cpu"
    assert isinstance(case.describe(), TracedKernel)


def test_full_cases_have_unique_names():
    names = [c.name for c in _cases("full")]
    assert len(names) == len(set(names))
    assert {"cpu/matmul-ijk/n=1024", "cpu/matmul-ikj/n=1024", "cpu/branchy-store/unsorted/n=16777216"} <= set(names)


def test_time_case_records_the_statistics():
    case = next(c for c in _cases("quick") if c.name.startswith("cpu/triad"))
    row = time_case(case, warmup=1, min_repeats=3, max_repeats=5, min_time_s=0.0)
    assert row["correct"] is True and 3 <= row["repeats"] <= 5
    assert float(row["min_s"]) <= float(row["median_s"])
