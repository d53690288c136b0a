"""The sweep's fast paths: point building from the base, chunk sizes, the collector pause."""

from __future__ import annotations

import gc
import hashlib
import json

import pandas as pd
import pytest
from sweep_toys import ToyEvaluator

from archsim.errors import SchemaError
from archsim.presets import load_preset, validate_hardware
from archsim.sweep import Sweep, _Chunks
from archsim.sweep.evaluate import ChunkPayload, evaluate_chunk
from archsim.sweep.executors import execute
from archsim.sweep.points import PointBuilder, apply_overrides
from archsim.sweep.store import ParquetStore, key_prefix, key_suffix, override_text, point_key, point_key_of_text


@pytest.fixture(scope="module")
def v100():
    return load_preset("gpu/v100-sxm2-16gb")


def test_point_shares_untouched_tables_with_the_base(v100):
    builder = PointBuilder(v100.model_dump())
    hw = builder.build([(("dram", "bandwidth"), "600000000000.0 B/s")])
    assert hw.dram.bandwidth_bytes_per_s == 6e11
    assert hw.l2 is builder.base.l2 and hw.sm is builder.base.sm  # not validated again
    assert hw == validate_hardware(apply_overrides(builder.base_dump, [(("dram", "bandwidth"), "6e11 B/s")]))


def test_invalid_point_fails_with_the_whole_dump_message(v100):
    # 6 MiB L2 with 16 ways x 128 B lines: 5,000,000 B is not a multiple of 2,048 B.
    builder = PointBuilder(v100.model_dump())
    overrides = [(("l2", "size"), "5000000.0 B")]
    with pytest.raises(SchemaError) as slow:
        validate_hardware(apply_overrides(builder.base_dump, overrides), "point")
    with pytest.raises(SchemaError) as fast:
        builder.build(overrides)
    assert str(fast.value) == str(slow.value)


def test_whole_table_and_kind_overrides_take_the_whole_dump_path(v100):
    builder = PointBuilder(v100.model_dump())
    dram = {**builder.base_dump["dram"], "bandwidth": "700000000000.0 B/s"}
    assert builder._build([(("dram",), dram)]) == validate_hardware({**builder.base_dump, "dram": dram})
    assert builder._build([(("kind",), "cpu")]) is None
    with pytest.raises(SchemaError):
        builder.build([(("kind",), "cpu")])


def test_sub_tables_are_reused_between_points(v100):
    builder = PointBuilder(v100.model_dump())
    a = builder.build([(("dram", "bandwidth"), "600000000000.0 B/s"), (("sm_count",), 40)])
    b = builder.build([(("dram", "bandwidth"), "600000000000.0 B/s"), (("sm_count",), 80)])
    assert a.dram is b.dram and a.sm_count == 40 and b.sm_count == 80


def test_chunk_leaves_the_collector_as_it_found_it(v100):
    payload = ChunkPayload(v100.model_dump(), (1e12, 1e9), ToyEvaluator())
    tasks = Sweep(v100, {"gpu.sm_count": [40, 80]})._tasks((1e12, 1e9), "toy-v1")
    # 0 on most interpreters; CPython 3.12.1 starts with a few hundred objects in its permanent
    # generation (where a chunk then leaves the collector alone, as for a caller's frozen objects)
    before = gc.get_freeze_count()
    rows = evaluate_chunk(payload, tasks)
    assert [r["status"] for r in rows] == ["ok", "ok"]
    assert gc.get_freeze_count() == before
    gc.freeze()  # a caller that froze objects itself keeps them frozen
    try:
        frozen = gc.get_freeze_count()
        evaluate_chunk(payload, tasks)
        # Not unfrozen (the count would drop to 0) and nothing frozen again (it would grow); a
        # frozen object that dies meanwhile (another thread's frame, a replaced cache entry)
        # leaves the permanent generation, so the count may fall by a few.
        assert 0.99 * frozen <= gc.get_freeze_count() <= frozen
    finally:
        gc.unfreeze()


def test_serial_chunks_are_the_engine_maximum():
    assert Sweep._chunk_size(10_000, 1, "roofline") == 1024
    assert Sweep._chunk_size(300, 1, "roofline") == 300
    assert Sweep._chunk_size(10_000, 2, "roofline") == 1024
    assert Sweep._chunk_size(1_000, 2, "roofline") == 125  # four chunks per worker
    assert Sweep._chunk_size(100, 1, "des") == 16


def test_chunks_are_built_when_read_and_match_the_tasks(v100):
    # 3 SM counts x 2 bandwidths = 6 points; chunks of 4 -> [4 points, 2 points].
    sweep = Sweep(v100, {"gpu.sm_count": [40, 60, 80], "gpu.dram.bandwidth": ["600 GB/s", "700 GB/s"]})
    tasks = sweep._tasks((1e12, 1e9), "toy-v1")
    chunks = _Chunks(sweep, [t.key for t in tasks], list(range(6)), 4)
    assert len(chunks) == 2 and list(chunks) == [tasks[:4], tasks[4:]] and chunks[-1] == tasks[4:]
    with pytest.raises(IndexError):
        chunks[2]


def test_process_pool_keeps_a_window_and_still_runs_every_chunk(v100):
    # 9 chunks of 1 point, 2 workers: 4 in flight at first (2 per worker), every row comes back once.
    sweep = Sweep(v100, {"gpu.sm_count": list(range(40, 49))})
    payload = ChunkPayload(v100.model_dump(), (1e12, 1e9), ToyEvaluator())
    tasks = sweep._tasks((1e12, 1e9), "toy-v1")
    rows: list = []
    execute(payload, _Chunks(sweep, [t.key for t in tasks], list(range(9)), 1), rows.extend,
            executor="processes", workers=2)
    assert sorted(r["key"] for r in rows) == sorted(t.key for t in tasks)


@pytest.mark.parametrize("store", ["memory", "parquet"])
def test_table_of_chosen_metrics_reads_only_their_columns_and_equals_the_full_read(v100, tmp_path, store):
    # 2 SM counts x 2 L2 sizes (5,000,000 B is no multiple of 16 ways x 128 B: invalid points, no metrics).
    axes = {"gpu.sm_count": [40, 80], "gpu.l2.size": ["6 MiB", "5000000 B"]}
    where = None if store == "memory" else tmp_path / "s"
    full = Sweep(v100, axes).run((1e12, 1e9), executor="serial", evaluator=ToyEvaluator(), progress=False)
    chosen = Sweep(v100, axes).run((1e12, 1e9), executor="serial", evaluator=ToyEvaluator(), progress=False,
                                   metrics=["latency_s"], store=where)
    expected = full[full["metric"] == "latency_s"].reset_index(drop=True)
    pd.testing.assert_frame_equal(chosen, expected, check_exact=True)
    assert set(chosen["status"]) == {"ok", "invalid"}
    if where is not None:
        assert list(ParquetStore(where).finished(columns=["key", "latency_s", "nope"]).columns) == ["key", "latency_s"]


@pytest.mark.parametrize("overrides", [(), ((("dram", "bandwidth"), "6e+11 B/s"), (("sm_count",), 80)),
                                       ((("l2",), {"size": "6 MiB", "ways": 16}), (("x", 0), float("nan")))])
def test_point_key_text_is_the_json_dumps_one(overrides):
    # The encoder made once must write what json.dumps wrote (stores keep these keys across versions).
    text = json.dumps(["h" * 64, [[list(p), v] for p, v in overrides], "w", "roofline", "0"],
                      sort_keys=True, separators=(",", ":"), default=repr)
    assert point_key("h" * 64, overrides, "w", "roofline", "0") == hashlib.sha256(text.encode()).hexdigest()

    # The key from its text parts (how a sweep builds its keys) is the same key.
    parts = [override_text(p, v) for p, v in overrides]
    assert point_key_of_text(key_prefix("h" * 64), parts, key_suffix("w", "roofline", "0")) == point_key(
        "h" * 64, overrides, "w", "roofline", "0")


def test_sweep_keys_and_tasks_equal_the_per_point_encoding(v100):
    # The memoised encodings (by value object) give every point the key and overrides it would get
    # encoded on its own: a grid (shared level objects), a random sampler (distinct objects, 0/1 ints).
    from archsim._version import __version__

    for sweep in (Sweep(v100, {"gpu.dram.bandwidth": ["600 GB/s", "900 GB/s"], "gpu.sm_count": [40, 80],
                               "gpu.l2.size": ["6 MiB", "5000000 B"]}),
                  Sweep(v100, {"gpu.dram.bandwidth": {"from": "300 GB/s", "to": "900 GB/s"},
                               "gpu.sm_count": {"from": 1, "to": 2}}, sampler="random", n=20)):
        keys = sweep._keys((1e12, 1e9), "toy-v1")
        tasks = _Chunks(sweep, keys, list(range(len(keys))), 3)
        base_hash = v100.content_hash()
        flat = [t for i in range(len(tasks)) for t in tasks[i]]
        for values, key, task in zip(sweep._values, keys, flat, strict=True):
            overrides = tuple((a.path, a.encode(v)) for a, v in zip(sweep.axes, values, strict=True))
            assert task.overrides == overrides and task.work_params == ()
            work = "repr:" + hashlib.sha256(repr((1e12, 1e9)).encode()).hexdigest()
            assert key == point_key(base_hash, overrides, work, "toy-v1", __version__)


def test_keep_freed_memory_is_a_no_op_or_takes_effect():
    # Linux/glibc: both mallopt calls succeed (True); elsewhere a no-op (False). Run in a child
    # process, through the public name: the setting is process-wide and this is the test runner's
    # process (whose calls tests/conftest.py records instead).
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", "import archsim; print(archsim.keep_freed_memory())"],
                         capture_output=True, text=True, check=True).stdout.strip()
    assert out == str(sys.platform.startswith("linux"))


def test_point_overrides_validate_only_the_changed_fields_and_equal_the_whole_dump(v100, monkeypatch):
    # A root leaf (sm_count) and a DRAM leaf: each table is the base's fields with the changed one
    # validated alone and its cross-field rule run; no table is validated from its dump, and the
    # point equals (fields, dump, content hash) validating the whole dump. The base's cached
    # content hash is not carried over to the point.
    from archsim.hardware.base import HardwareModel

    builder = PointBuilder(v100.model_dump())
    builder.base.content_hash()
    overrides = [(("dram", "bandwidth"), "600000000000.0 B/s"), (("sm_count",), 40)]
    whole = validate_hardware(apply_overrides(v100.model_dump(), overrides), "point")
    calls = []
    real = HardwareModel.model_validate.__func__
    monkeypatch.setattr(HardwareModel, "model_validate",
                        classmethod(lambda cls, obj, **kw: calls.append(cls) or real(cls, obj, **kw)))
    fast = builder.build(overrides)
    assert calls == []
    assert fast == whole and fast.model_dump() == whole.model_dump()
    assert fast.content_hash() == whole.content_hash() != builder.base.content_hash()
    assert fast.sm_count == 40 and fast.dram.bandwidth_bytes_per_s == 6e11


def test_point_override_breaking_a_cross_field_rule_reports_the_whole_dump_error(v100):
    # static_power above tdp breaks GPUDevice's rule: the per-field path gives up, the whole-dump
    # validation names the problem as it always has.
    builder = PointBuilder(v100.model_dump())
    overrides = [(("static_power",), "100000.0 W")]
    with pytest.raises(SchemaError) as whole:
        validate_hardware(apply_overrides(v100.model_dump(), overrides), "point")
    with pytest.raises(SchemaError) as fast:
        builder.build(overrides)
    assert str(fast.value) == str(whole.value) and "static_power exceeds tdp" in str(fast.value)


def test_roofline_chunk_pauses_the_collector_and_restores_it(v100, monkeypatch):
    # A vectorised chunk runs without collections; the collector is enabled again afterwards, and
    # one the caller disabled stays disabled. A per-point evaluator's chunk keeps collecting.
    from archsim.sweep.evaluate import EngineEvaluator

    seen = []
    real = EngineEvaluator.columns
    monkeypatch.setattr(EngineEvaluator, "columns", lambda self, w, h: seen.append(gc.isenabled()) or real(self, w, h))
    payload = ChunkPayload(v100.model_dump(), __import__("archsim").ops.Gemm(256, 256, 256, dtype="fp16"),
                           EngineEvaluator("roofline", {}))
    tasks = Sweep(v100, {"gpu.sm_count": [40, 80]})._tasks(payload.work, "roofline:{}")
    assert [r["status"] for r in evaluate_chunk(payload, tasks)] == ["ok", "ok"]
    assert seen == [False] and gc.isenabled()
    gc.disable()
    try:
        evaluate_chunk(payload, tasks)
        assert not gc.isenabled()
    finally:
        gc.enable()
    toy = ChunkPayload(v100.model_dump(), (1e12, 1e9), ToyEvaluator())
    monkeypatch.setattr(ToyEvaluator, "__call__", lambda self, w, h: seen.append(gc.isenabled()) or [
        {"latency_s": 1.0} for _ in h])
    evaluate_chunk(toy, tasks)
    assert seen[-1] is True
