"""Every CUDA kernel under numba's CUDA simulator, at tiny sizes, for correctness.

``NUMBA_ENABLE_CUDASIM=1`` must be set before ``numba.cuda`` is imported, so the kernels run in child
processes and the rest of the test session keeps the real (absent) CUDA target. The simulator runs one
Python thread per CUDA thread: the kernels are split over two processes that run concurrently.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# Two groups of roughly equal simulator time (~10 s each on 2 cores).
GROUPS = (
    ("matmul", "softmax", "fma-chain"),
    ("copy", "scale", "triad", "relu", "gelu", "sum", "conv2d", "layernorm", "pointer-chase", "gemm-cublas"),
)


def _spawn(args: list[str]) -> subprocess.Popen:
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "1", "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, "-m", "validation", "selftest", "--tiny", *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def _counts(text: str) -> tuple[int, int, int]:
    m = re.search(r"selftest: (\d+) passed, (\d+) failed, (\d+) skipped", text)
    assert m, text
    return int(m[1]), int(m[2]), int(m[3])


def test_every_gpu_kernel_is_correct_in_the_simulator():
    procs = [_spawn([a for g in group for a in ("--only", g)]) for group in GROUPS]
    outs = [p.communicate(timeout=240)[0] for p in procs]
    for p, out in zip(procs, outs, strict=True):
        assert p.returncode == 0, out
    passed = sum(_counts(o)[0] for o in outs)
    failed = sum(_counts(o)[1] for o in outs)
    skipped_lines = [line for o in outs for line in o.splitlines() if line.strip().startswith("skipped:")]
    from validation.discover import discover  # imports numba.cuda here: no simulator needed to list

    names = {c.name for c in discover("gpu", "tiny")}
    # every tiny case ran: passed, or skipped because CuPy (cuBLAS) is absent from this machine
    assert failed == 0
    assert passed + len(skipped_lines) == len(names)
    assert all("gemm-cublas" in line and "cupy" in line for line in skipped_lines)


def test_unwritten_output_is_caught_by_poisoning():
    p = _spawn(["--package", "tests.validation.fixtures.broken_gpu"])
    out = p.communicate(timeout=120)[0]
    assert p.returncode == 1, out
    assert "FAIL broken-copy/n=64: relative error inf" in out
