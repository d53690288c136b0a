"""The sweep's columnar paths against the general ones: chunks sent as PointTasks, the chunk's
points built from their columns, the table built from whole columns (from the store's frame and from
a run's own in-memory rows), and the workload's key kept on a frozen workload."""

from __future__ import annotations

import pickle

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sweep_toys import ToyEvaluator

import archsim
from archsim.presets import load_preset
from archsim.sweep import Sweep, _Chunks, _positions, _simple_column
from archsim.sweep.columns import ChunkBuilder
from archsim.sweep.evaluate import ChunkPayload, EngineEvaluator, PointTask, PointTasks, evaluate_chunk, work_key
from archsim.sweep.points import PointBuilder
from archsim.sweep.rows import ChunkRows, RowsBuilder, rows_frame
from archsim.sweep.store import MemoryStore

WORK = (1e12, 1e9)


@pytest.fixture(scope="module")
def v100():
    return load_preset("gpu/v100-sxm2-16gb")


def _same_table(a: pd.DataFrame, b: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(a, b, check_exact=True)
    assert list(a.dtypes) == list(b.dtypes) and [type(a[c].array) for c in a] == [type(b[c].array) for c in b]
    assert [type(v) for v in a["error"]] == [type(v) for v in b["error"]]


def test_point_tasks_read_as_their_tasks_and_pickle(v100):
    sweep = Sweep(v100, {"gpu.sm_count": [40, 60, 80], "gpu.dram.bandwidth": ["600 GB/s", "700 GB/s"],
                         "workload.batch": [1, 2]})
    keys = sweep._keys(archsim.zoo.resnet18, "k")
    chunk = _Chunks(sweep, keys, list(range(len(keys))), 5)[1]
    assert isinstance(chunk, PointTasks) and len(chunk) == 5
    tasks = [PointTask(keys[p], tuple((a.path, a.encode(v)) for a, v in zip(sweep.axes[:2], sweep._values[p][:2],
                                                                             strict=True)),
                       (("batch", sweep._values[p][2]),)) for p in range(5, 10)]
    assert list(chunk) == tasks and chunk == tasks and chunk[1:3] == tasks[1:3] and chunk[-1] == tasks[-1]
    assert pickle.loads(pickle.dumps(chunk)) == tasks
    with pytest.raises(IndexError):
        chunk[5]
    with pytest.raises(ValueError):
        PointTasks(["a"], ((("sm_count",),)), [[1, 2]], None)


def test_columns_build_the_models_of_the_overrides(v100):
    # Valid and invalid points (7 ways do not divide the L2), one repeated, a point alone.
    paths = [("sm_count",), ("l2", "ways")]
    columns = [[40, 80, 40, 0], [16, 16, 7, 16]]
    points = [tuple(zip(paths, values, strict=True)) for values in zip(*columns, strict=True)]
    got = ChunkBuilder(PointBuilder(v100.model_dump())).build_columns(paths, columns, 4)
    want = ChunkBuilder(PointBuilder(v100.model_dump())).build(points)
    assert [type(g) for g in got] == [type(w) for w in want]
    for g, w in zip(got, want, strict=True):
        assert str(g) == str(w) if isinstance(w, Exception) else g == w
    one = ChunkBuilder(PointBuilder(v100.model_dump())).build_columns(paths, [[40], [16]], 1)
    assert one == ChunkBuilder(PointBuilder(v100.model_dump())).build([points[0]])


def test_point_tasks_evaluate_as_their_list(v100):
    sweep = Sweep(v100, {"gpu.sm_count": [40, 0, 80], "gpu.l2.ways": [16, 7]})
    keys = sweep._keys(WORK, "toy-v1")
    chunk = _Chunks(sweep, keys, list(range(len(keys))), 6)[0]
    for evaluator in (ToyEvaluator(), ToyEvaluator(refuse_below=60)):
        payload = ChunkPayload(v100.model_dump(), WORK, evaluator)
        assert list(evaluate_chunk(payload, chunk)) == list(evaluate_chunk(payload, list(chunk)))
    gemm = archsim.ops.Gemm(256, 256, 256, dtype="fp16")
    payload = ChunkPayload(v100.model_dump(), gemm, EngineEvaluator("roofline", {}))
    fast, slow = evaluate_chunk(payload, chunk), evaluate_chunk(payload, list(chunk))
    assert isinstance(fast, ChunkRows) and fast == slow
    assert [r["status"] for r in fast] == ["ok", "invalid", "invalid", "invalid", "ok", "invalid"]


def test_joined_chunk_rows_frame_as_the_concatenated_frames():
    a = RowsBuilder(["a", "b"])
    a.ok([1], {"latency_s": [1.0], "energy_j": [2.0]})
    a.failed(0, "invalid", "bad")
    b = RowsBuilder(["c", "d"])
    b.ok([0, 1], {"latency_s": [3.0, 4.0], "energy_dram_j": [5.0, 6.0]})
    c = RowsBuilder(["e"])
    c.failed(0, "failed", "refused")
    parts = [a.result(), b.result(), c.result()]
    joined = ChunkRows.joined(parts)
    _same_table(joined.frame(), pd.concat([p.frame() for p in parts], ignore_index=True))
    store = MemoryStore()
    for p in parts:
        store.write(p)
    assert store.chunk_rows() == joined
    _same_table(store.finished(["e", "a", "c"]), pd.concat([p.frame() for p in parts], ignore_index=True)
                .iloc[[0, 2, 4]].reset_index(drop=True))
    store.write([{"key": "f", "status": "ok", "error": None, "latency_s": 7.0}])
    assert store.chunk_rows() is None and list(store.finished()["key"]) == ["a", "b", "c", "d", "e", "f"]


@pytest.mark.parametrize("executor", ["serial", "processes"])
@pytest.mark.parametrize("metrics", [None, ["energy_j", "latency_s"]])
def test_table_of_own_rows_is_the_table_of_the_store_frame(v100, executor, metrics, monkeypatch):
    axes = {"gpu.sm_count": [40, 0, 80], "gpu.l2.size": ["6 MiB", "5000000 B"], "gpu.dram.bandwidth": ["900 GB/s"]}
    got = Sweep(v100, axes).run(WORK, evaluator=ToyEvaluator(), executor=executor, workers=2, chunk_size=2,
                                metrics=metrics, progress=False)
    # The general path: the store's frame of the same rows.
    monkeypatch.setattr(MemoryStore, "chunk_rows", lambda self: None)
    want = Sweep(v100, axes).run(WORK, evaluator=ToyEvaluator(), executor=executor, workers=2, chunk_size=2,
                                 metrics=metrics, progress=False)
    _same_table(got, want)
    gemm = archsim.ops.Gemm(512, 512, 512, dtype="fp16")
    monkeypatch.undo()
    got = Sweep(v100, axes).run(gemm, executor=executor, workers=2, chunk_size=2, metrics=metrics, progress=False)
    monkeypatch.setattr(MemoryStore, "chunk_rows", lambda self: None)
    want = Sweep(v100, axes).run(gemm, executor=executor, workers=2, chunk_size=2, metrics=metrics, progress=False)
    _same_table(got, want)


@pytest.mark.parametrize("metrics", [None, ["latency_s"]])
def test_table_of_own_rows_without_reasons_is_the_table_of_the_store_frame(v100, metrics, monkeypatch):
    # Every point valid: the reasons column is made without reading them (all None).
    axes = {"gpu.sm_count": [40, 80], "gpu.dram.bandwidth": ["600 GB/s", "900 GB/s"]}
    got = Sweep(v100, axes).run(WORK, evaluator=ToyEvaluator(), executor="serial", metrics=metrics, progress=False)
    monkeypatch.setattr(MemoryStore, "chunk_rows", lambda self: None)
    want = Sweep(v100, axes).run(WORK, evaluator=ToyEvaluator(), executor="serial", metrics=metrics, progress=False)
    _same_table(got, want)
    assert got["error"].isna().all() and [b.dtype for b in got._mgr.blocks] == [b.dtype for b in want._mgr.blocks]


def test_positions_find_each_key_once():
    assert _positions(["a", "b"], ["a", "b"]).tolist() == [0, 1]
    assert _positions(["b", "a"], ["a", "b", "a"]).tolist() == [1, 0, 1]
    assert _positions(["a", "a"], ["a", "a"]) is None  # the rows repeat a key
    assert _positions(["a"], ["a", "b"]) is None  # a point without a row


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.floats(), st.integers(-2**70, 2**70), st.booleans(), st.text(max_size=2), st.none()),
                min_size=1, max_size=8), st.sampled_from(["float", "int", "bool", "mixed"]))
def test_simple_columns_are_what_pandas_infers(values, kind):
    if kind == "float":
        values = [float(v) if isinstance(v, int | float) and not isinstance(v, bool) else 0.5 for v in values]
    elif kind == "int":
        values = [v if isinstance(v, int) and not isinstance(v, bool) else 3 for v in values]
    elif kind == "bool":
        values = [bool(v) for v in values]
    got = _simple_column(values)
    want = pd.DataFrame([(v, 0) for v in values], columns=["a", "b"])["a"]
    if got is not None:
        assert got.dtype == want.dtype and got.tobytes() == want.to_numpy().tobytes()
        assert isinstance(want.array, pd.arrays.NumpyExtensionArray)


def test_work_key_is_kept_on_a_frozen_workload_and_the_same():
    graph = archsim.zoo.resnet18(batch=1)
    fresh = archsim.zoo.resnet18(batch=1)
    first = work_key(graph, {})
    assert work_key(graph, {}) == first == work_key(fresh, {})
    assert graph == fresh and hash(graph) == hash(fresh) and repr(graph) == repr(fresh)
    gemm = archsim.ops.Gemm(64, 64, 64)
    other = archsim.ops.Gemm(64, 64, 65)
    assert work_key(gemm, {}) == work_key(archsim.ops.Gemm(64, 64, 64), {}) != work_key(other, {})
    assert work_key((1.0, 2.0), {}) == work_key((1.0, 2.0), {})  # not a dataclass: computed each time


def _nan_free(row):
    return {k: "nan" if isinstance(v, float) and v != v else v for k, v in row.items()}


class _Rows:
    """A per-point evaluator whose rows are given per SM count (the metrics of each point)."""

    key = "rows-v1"

    def __init__(self, rows):
        self.rows = rows

    def __call__(self, work, hardware):
        return [dict(self.rows(hw.sm_count, work)) for hw in hardware]


@pytest.mark.parametrize("rows", [
    lambda sms, work: {"latency_s": 1.0 / sms, "energy_j": float(sms)},
    lambda sms, work: {"energy_j": float(sms), "latency_s": 1.0 / sms} if work[0] > 1 else {"latency_s": 2.0},
    lambda sms, work: {"latency_s": 1.0 / sms, "count": sms},  # an int: the dicts' frame
    lambda sms, work: {"latency_s": 1.0 / sms} if sms > 50 else {"latency_s": 1.0, "energy_j": 2.0},
    lambda sms, work: {},
    lambda sms, work: {"latency_s": float("nan"), "status": 1.0},  # a row's own field: the dicts' frame
    lambda sms, work: {"latency_s": float("nan"), "energy_j": -0.0},
])
def test_float_rows_are_the_dict_rows(v100, rows, monkeypatch):
    import archsim.sweep.evaluate as evaluate

    def factory(scale=1.0):
        return (scale, 1.0)

    sweep = Sweep(v100, {"gpu.sm_count": [40, 0, 80, 60], "workload.scale": [1.0, 2.0]})
    keys = sweep._keys(factory, "rows-v1")
    chunk = _Chunks(sweep, keys, list(range(len(keys))), 8)[0]
    payload = ChunkPayload(v100.model_dump(), factory, _Rows(rows))
    got = evaluate_chunk(payload, chunk)
    monkeypatch.setattr(evaluate, "_float_rows", lambda *args: None)
    want = evaluate_chunk(payload, chunk)
    assert isinstance(want, list) and [_nan_free(r) for r in got] == [_nan_free(r) for r in want]
    _same_table(rows_frame(got), rows_frame(want))
    monkeypatch.undo()
    table = sweep.run(factory, evaluator=_Rows(rows), executor="serial", progress=False)
    monkeypatch.setattr(evaluate, "_float_rows", lambda *args: None)
    _same_table(table, sweep.run(factory, evaluator=_Rows(rows), executor="serial", progress=False))


_NUMBERS = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-10**40, 10**40),
                     st.sampled_from([0.0, -0.0, 1e30, 1e30 * (1 + 2**-52), 5e-324, 1e-300]))


def _texts(symbol: str) -> st.SearchStrategy:
    return st.one_of(
        _NUMBERS.map(lambda x: f"{x!r} {symbol}"),
        _NUMBERS.map(lambda x: f" {x!r} {symbol} "),
        _NUMBERS.map(lambda x: f"{x!r} k{symbol}"),
        _NUMBERS.map(lambda x: f"{x!r}{symbol}"),
        _NUMBERS.map(lambda x: f"{'9' * 210} {symbol}"),
        st.sampled_from(["1 TB/s", "3.35 TB/s", "nan B/s", "1e999 B/s", "1.5 Hz", "2.0 GHz", "5 W", "6 MiB", "-1 B"]),
        _NUMBERS,
        st.none(),
    )


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_canonical_texts_validate_as_their_fields(v100, data):
    # Each dimensioned leaf or count a sweep axis may set: canonical texts and ints read in bulk,
    # every value as the field's own validation gives it (the same number, or a failure).
    import archsim.sweep.columns as columns

    cases = [(type(v100.dram), "bandwidth", "B/s"), (type(v100), "clock", "Hz"), (type(v100), "static_power", "W"),
             (type(v100.l2), "size", "B"), (type(v100), "sm_count", "B"), (type(v100.l2), "ways", ""),
             (type(v100), "die_sm_count", "")]
    cls, key, symbol = data.draw(st.sampled_from(cases))
    counts = st.one_of(st.integers(-5, 200), st.integers(-2**70, 2**70), st.booleans(), st.floats(-3, 3),
                       st.text(max_size=3))
    values = data.draw(st.lists(_texts(symbol) if symbol else counts, min_size=1, max_size=6))
    builder = ChunkBuilder(PointBuilder(v100.model_dump()))
    got = builder._fields(cls, key, values)
    want = [ChunkBuilder(PointBuilder(v100.model_dump()))._field(cls, key, v) for v in values]
    assert [g is columns._FAILED for g in got] == [w is columns._FAILED for w in want]
    assert [repr(g) for g in got if g is not columns._FAILED] == [repr(w) for w in want if w is not columns._FAILED]
    assert [type(g) for g in got] == [type(w) for w in want]
