"""A chunk's one-group path (every point with the workload parameters ``()``) against the general
grouping, and RowsBuilder's whole-column path against its row-by-row scatter."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from archsim.errors import ArchsimError, SchemaError, SweepError
from archsim.sweep.evaluate import _groups, _one_group
from archsim.sweep.rows import RowsBuilder


class _Factory:
    """A workload factory that fails its first ``fails`` calls, counting them."""

    def __init__(self, fails: int) -> None:
        self.fails, self.calls = fails, 0

    def __call__(self) -> str:
        self.calls += 1
        if self.calls <= self.fails:
            raise SweepError(f"no work yet ({self.calls})")
        return "work"


@settings(max_examples=200, deadline=None)
@given(st.lists(st.booleans(), max_size=30), st.integers(0, 5))
def test_one_group_is_the_general_grouping(invalid: list[bool], fails: int) -> None:
    built: list[Any] = [SchemaError(f"bad {i}") if bad else object() for i, bad in enumerate(invalid)]
    runs = []
    for group in (_groups, _one_group):
        factory, failed = _Factory(fails), []

        def fail(i: int, status: str, error: str, failed: list[Any] = failed) -> None:
            failed.append((i, status, error))

        args = (factory, built, [()] * len(built), fail) if group is _groups else (factory, built, fail)
        groups, works = group(*args)  # type: ignore[operator]
        runs.append((groups, works, sorted(failed), factory.calls))
    assert runs[0] == runs[1]


def test_one_group_reports_each_invalid_point() -> None:
    built: list[Any] = [object(), SchemaError("x"), object()]
    failed: list[Any] = []
    groups, works = _one_group(lambda: "w", built, lambda *f: failed.append(f))
    assert groups == {(): ([0, 2], [built[0], built[2]])} and works == {(): "w"}
    assert failed == [(1, "invalid", "x")] and isinstance(built[1], ArchsimError)


def _rows(builder: RowsBuilder) -> tuple[Any, ...]:
    out = builder.result()
    return (out.keys, out.status, out.errors, list(out.metrics), [a.tobytes() for a in out.metrics.values()],
            [a.tolist() for a in out.has.values()], [a.dtype for a in out.metrics.values()])


@settings(max_examples=200, deadline=None)
@given(st.integers(2, 12), st.lists(st.sampled_from(["a", "b", "c"]), unique=True, max_size=3), st.data())
def test_whole_columns_are_the_scattered_rows(n: int, names: list[str], data: Any) -> None:
    values = {k: data.draw(st.lists(st.floats(allow_nan=True) | st.integers(-5, 5), min_size=n, max_size=n))
              for k in names}
    whole = RowsBuilder([f"k{i}" for i in range(n)])
    whole.ok(list(range(n)), values)
    # the same rows in two calls (each a part of the rows): the scatter path
    scattered = RowsBuilder([f"k{i}" for i in range(n)])
    half = n // 2
    scattered.ok(list(range(half)), {k: v[:half] for k, v in values.items()})
    scattered.ok(list(range(half, n)), {k: v[half:] for k, v in values.items()})
    assert _rows(whole) == _rows(scattered)


def test_whole_columns_keep_the_caller_arrays_apart() -> None:
    values = np.array([1.0, 2.0])
    rows = RowsBuilder(["a", "b"])
    rows.ok([0, 1], {"x": values})
    values[0] = 5.0
    assert rows.result().metrics["x"].tolist() == [1.0, 2.0]
