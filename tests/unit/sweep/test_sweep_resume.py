"""A sweep killed by SIGKILL mid-way loses no finished point and recomputes none on the re-run."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pandas.testing as pdt
import pytest
from sweep_toys import ToyEvaluator

from archsim.sweep import Sweep
from archsim.sweep.store import ParquetStore

ROOT = Path(__file__).resolve().parents[3]
HERE = Path(__file__).resolve().parent
AXES = {"gpu.dram.bandwidth": {"from": "100 GB/s", "to": "900 GB/s", "num": 8}, "gpu.sm_count": [20, 40, 60, 80]}
WORK = (2e12, 4e9)

SCRIPT = textwrap.dedent("""
    import sys
    from sweep_toys import ToyEvaluator
    from archsim.sweep import Sweep
    axes, work, store, log = eval(sys.argv[1]), eval(sys.argv[2]), sys.argv[3], sys.argv[4]
    Sweep("gpu/v100-sxm2-16gb", axes).run(work, evaluator=ToyEvaluator(sleep_s=0.02, log=log),
                                          executor="serial", chunk_size=2, store=store)
""")


def _evaluated(log: Path) -> list[tuple[float, int]]:
    if not log.exists():
        return []
    out = []
    for line in log.read_text().splitlines():
        bw, sm = line.split(",")
        out.append((float(bw), int(sm)))
    return out


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="SIGKILL is POSIX-only")
def test_resume_after_sigkill(tmp_path):
    store_dir, log1, log2 = tmp_path / "store", tmp_path / "run1.txt", tmp_path / "run2.txt"
    script = tmp_path / "run_sweep.py"
    script.write_text(SCRIPT)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(HERE)])}
    proc = subprocess.Popen([sys.executable, str(script), repr(AXES), repr(WORK), str(store_dir), str(log1)], env=env)
    store = ParquetStore(store_dir)
    deadline = time.monotonic() + 60
    # 32 points in chunks of 2 at 20 ms a point: kill once 3 chunks are stored, well before the end.
    while len(store.files()) < 3 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.005)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL, "the sweep finished before it could be killed"

    stored = store.finished()
    finished = set(zip(stored["echo_bandwidth"], stored["echo_sm_count"].astype(int), strict=True))
    assert 3 * 2 <= len(finished) < 32

    sweep = Sweep("gpu/v100-sxm2-16gb", AXES)
    resumed = sweep.run(WORK, evaluator=ToyEvaluator(log=str(log2)), executor="serial", store=store_dir)
    recomputed = _evaluated(log2)
    assert not finished & set(recomputed), "a stored point was computed again"
    assert len(recomputed) == len(set(recomputed)) == 32 - len(finished)
    # Points evaluated before the kill but not yet stored are recomputed: they were never finished.
    assert set(_evaluated(log1)) >= finished
    fresh = sweep.run(WORK, evaluator=ToyEvaluator(), executor="serial")
    pdt.assert_frame_equal(resumed, fresh)
