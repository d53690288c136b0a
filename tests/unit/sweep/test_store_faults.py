"""Faults of the sweep store: damaged chunks are reported and recomputed, never reused; one writer per
store and output folder; a killed sweep leaves no workers and no temporary files behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
import warnings
from pathlib import Path

import pandas as pd
import pandas.testing as pdt
import pytest
from sweep_toys import ToyEvaluator

from archsim.errors import SweepError
from archsim.sweep import Sweep
from archsim.sweep.spec import load_spec, run_spec
from archsim.sweep.store import ParquetStore, StoreWarning, store_lock

ROOT = Path(__file__).resolve().parents[3]
HERE = Path(__file__).resolve().parent
BASE = "gpu/v100-sxm2-16gb"
AXES = {"gpu.dram.bandwidth": ["300 GB/s", "600 GB/s", "900 GB/s"], "gpu.sm_count": [40, 80]}
WORK = (2e12, 4e9)


def _logged(log: Path) -> list[tuple[float, int]]:
    if not log.exists():
        return []
    return [(float(b), int(s)) for b, s in (line.split(",") for line in log.read_text().splitlines())]


def _run(store: Path, log: Path | None = None, chunk_size: int = 2):
    return Sweep(BASE, AXES).run(WORK, evaluator=ToyEvaluator(log=str(log) if log else None), executor="serial",
                                 chunk_size=chunk_size, store=store)


def _damage(path: Path, how: str) -> None:
    data = path.read_bytes()
    if how == "truncate":
        path.write_bytes(data[: len(data) // 2])
    elif how == "zero":
        path.write_bytes(b"")
    elif how == "garbage":
        path.write_bytes(os.urandom(len(data)))
    elif how == "flip":
        i = len(data) // 3
        path.write_bytes(data[:i] + bytes([data[i] ^ 0x01]) + data[i + 1:])
    elif how == "delete":
        path.unlink()


@pytest.mark.parametrize("how", ["truncate", "zero", "garbage", "flip", "delete", "unlisted"])
def test_a_damaged_chunk_is_reported_and_recomputed(tmp_path, how):
    store = tmp_path / "store"
    first = _run(store)
    chunk = ParquetStore(store).files()[0]
    stored, rows = ParquetStore(store).finished(), pd.read_parquet(chunk)
    lost = {(float(b), int(s)) for b, s in zip(stored["echo_bandwidth"], stored["echo_sm_count"], strict=True)}
    damaged_points = {(float(b), int(s)) for b, s in zip(rows["echo_bandwidth"], rows["echo_sm_count"], strict=True)}
    assert len(lost) == 6 and len(damaged_points) == 2
    if how == "unlisted":
        (store / "manifest.jsonl").write_text("")  # a store without its manifest: nothing can be verified
        damaged_points = lost
    else:
        _damage(chunk, how)
    log = tmp_path / "rerun.txt"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        again = _run(store, log)
    reports = [str(w.message) for w in caught if issubclass(w.category, StoreWarning)]
    if how == "delete":
        assert not reports  # nothing left to distrust: its points are simply missing
    else:
        assert reports and all("will be recomputed" in r for r in reports)
    assert set(_logged(log)) == damaged_points  # exactly the damaged points ran again
    pdt.assert_frame_equal(again, first)
    # The recomputed chunk replaced the damaged one: a third run computes nothing and reports nothing.
    log3 = tmp_path / "third.txt"
    with warnings.catch_warnings():
        warnings.simplefilter("error", StoreWarning)
        pdt.assert_frame_equal(_run(store, log3), first)
    assert _logged(log3) == []


def test_every_single_byte_flip_of_a_chunk_is_caught(tmp_path):
    # Parquet has no checksum of its own: before the manifest, some flips changed a stored metric
    # and were reused. Now no flip of any byte lets the chunk's rows through.
    store = tmp_path / "store"
    _run(store, chunk_size=6)  # one chunk: each check reads only the flipped file
    chunk = ParquetStore(store).files()[0]
    good = chunk.read_bytes()
    keys = set(pd.read_parquet(chunk)["key"])
    reused = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StoreWarning)
        for i in range(len(good)):
            chunk.write_bytes(good[:i] + bytes([good[i] ^ 0xFF]) + good[i + 1:])
            if keys & set(ParquetStore(store).finished()["key"]):
                reused.append(i)
    chunk.write_bytes(good)
    assert len(good) > 500 and reused == []


def test_a_torn_manifest_line_is_skipped_and_closed(tmp_path):
    store = tmp_path / "store"
    first = _run(store)
    with (store / "manifest.jsonl").open("a") as fh:
        fh.write('{"file": "x.parq')  # a kill in the middle of an append
    pdt.assert_frame_equal(_run(store), first)
    assert (store / "manifest.jsonl").read_text().endswith("\n")


def test_a_second_writer_of_a_store_is_refused(tmp_path):
    store = tmp_path / "store"
    with store_lock(store):
        with pytest.raises(SweepError, match=r"in use by another sweep \(pid \d+\)"):
            _run(store)
    _run(store)  # the lock is gone with its holder


def _spec(tmp_path: Path, name: str, sm_counts: list[int]) -> Path:
    spec = tmp_path / f"{name}.toml"
    spec.write_text(textwrap.dedent(f"""
        [base]
        preset = "{BASE}"
        [work]
        model = "mlp"
        batch = 4
        [sweep]
        executor = "serial"
        [axes]
        "gpu.sm_count" = {sm_counts}
    """))
    return spec


def test_two_sweeps_into_one_out_folder_cannot_interleave(tmp_path):
    out = tmp_path / "out"
    spec_a, spec_b = _spec(tmp_path, "a", [40, 80]), _spec(tmp_path, "b", [20, 60])
    with store_lock(out, "output folder"):  # sweep A is running
        with pytest.raises(SweepError, match="output folder .* is in use"):
            run_spec(load_spec(spec_b), out, progress=False)
    table = run_spec(load_spec(spec_a), out, progress=False)
    assert sorted(set(table["gpu.sm_count"])) == [40, 80]


KILL_SCRIPT = textwrap.dedent("""
    import sys
    from sweep_toys import PidEvaluator
    from archsim.sweep import Sweep
    store, log = sys.argv[1], sys.argv[2]
    Sweep("gpu/v100-sxm2-16gb", {"gpu.sm_count": list(range(1, 81))}).run(
        (1.0, 1.0), evaluator=PidEvaluator(log=log, sleep_s=0.05), executor="processes", workers=2,
        chunk_size=2, store=store)
""")


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state not in ("Z", "X")  # a zombie has exited; only its parent's bookkeeping remains


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="worker death with the parent is Linux prctl")
def test_kill_9_of_the_parent_leaves_no_workers_and_no_part_files(tmp_path):
    store, log = tmp_path / "store", tmp_path / "pids.txt"
    script = tmp_path / "kill_me.py"
    script.write_text(KILL_SCRIPT)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(HERE)])}
    proc = subprocess.Popen([sys.executable, str(script), str(store), str(log)], env=env)
    deadline = time.monotonic() + 60
    workers: set[int] = set()
    while time.monotonic() < deadline and proc.poll() is None:
        if log.exists():
            workers = {int(x) for x in log.read_text().split()}
        if len(workers) >= 2 and len(ParquetStore(store).files()) >= 2:
            break
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL and len(workers) >= 2 and proc.pid not in workers
    deadline = time.monotonic() + 10
    while any(_alive(p) for p in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(p) for p in workers), "pool workers outlived their parent"
    (store / "chunks" / ".tmp-stale.part").write_bytes(b"half a chunk")  # as a kill mid-write leaves
    table = Sweep(BASE, {"gpu.sm_count": list(range(1, 81))}).run(
        (1.0, 1.0), evaluator=ToyEvaluator(), executor="serial", store=store, chunk_size=40)
    assert len(table.drop_duplicates("point")) == 80 and set(table["status"]) == {"ok"}
    assert list((store / "chunks").glob("*.part")) == []
