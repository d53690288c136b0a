"""Shared pytest options: ``--update-golden`` rewrites golden files instead of comparing.

Property tests draw new examples on every local run (to keep finding cases). ``.ci/run`` sets
``HYPOTHESIS_PROFILE=ci``: the same examples on every run, so a CI result is reproducible and a
failure there is the code's, not the draw's.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import settings

settings.register_profile("ci", derandomize=True, database=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true", default=False,
                     help="rewrite golden files from the current results instead of comparing")


@pytest.fixture
def update_golden(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-golden"))


def _assert_costs_equal(a, b) -> None:
    """Two CostArrays (or any dataclasses of arrays, dicts of arrays and scalars) equal to the bit."""
    import dataclasses

    import numpy as np

    for f in dataclasses.fields(a):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, dict):
            assert x.keys() == y.keys(), f.name
            for k in x:
                np.testing.assert_array_equal(x[k], y[k], err_msg=f"{f.name}[{k}]")
        elif isinstance(x, np.ndarray):
            np.testing.assert_array_equal(x, y, err_msg=f.name)
        else:
            assert x == y, f.name


@pytest.fixture
def assert_costs_equal():
    """:func:`_assert_costs_equal`: the stacked cost path against the one-op path, field by field."""
    return _assert_costs_equal


@pytest.fixture(autouse=True)
def allocator_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The test runner's process keeps glibc's default allocator settings: a command that would set
    them (``archsim sweep``, :mod:`archsim.allocator`) records the call here instead."""
    import archsim.allocator

    calls: list[str] = []
    monkeypatch.setattr(archsim.allocator, "keep_freed_memory", lambda: calls.append("keep_freed_memory") or True)
    return calls
