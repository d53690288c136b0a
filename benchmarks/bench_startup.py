"""Start-up costs: a first estimate in a fresh process, and ``archsim presets list``.

Each figure is the median wall and CPU time (user + system, from ``getrusage`` of the child) of
``--repeats`` fresh Python processes (so nothing is
imported or cached in memory; numba's on-disk cache is warm after the first run, as for a user),
beside the same for a bare ``python -c pass``, for ``import numpy, pydantic, pint`` (the
floor the library's own dependencies set) and for the first call of a compiled kernel loaded from
numba's cache (numba's import, its CPU target's first set-up and one cache load: the floor numba
sets under every estimate), run interleaved so a change of machine load hits them alike; also the
first estimate of a System under a software profile (host work priced on its CPU). Targets: first
estimate < 1 s; ``presets list`` < 0.3 s.

Python compiles archsim's sources afresh in every process when it writes no bytecode
(``PYTHONDONTWRITEBYTECODE``, or a read-only checkout): the header says which is measured.

Run: ``python benchmarks/bench_startup.py [--repeats 5]``. Prints the load average.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

FIRST_ESTIMATE = (
    "import archsim\n"
    "hw = archsim.load_preset('gpu/v100-sxm2-16gb')\n"
    "archsim.estimate(archsim.zoo.resnet50(batch=32, dtype='fp16'), hw)\n"
)

FIRST_WITH_SOFTWARE = (
    "import archsim\n"
    "hw = archsim.load_preset('system/dgx-a100')\n"
    "archsim.estimate(archsim.zoo.resnet50(batch=32, dtype='fp16'), hw, software='pytorch-eager')\n"
)

NUMBA_FLOOR = (
    "import numpy as np\n"
    "from archsim.cost import gemm_search\n"
    "one = np.ones(1)\n"
    "gemm_search.mapper_rows(one, one, one, one, one, one, one, one, one, 1, 1, np.empty(1))\n"
)

CASES = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "import numpy, pydantic, pint": [sys.executable, "-c", "import numpy, pydantic, pint"],
    "numba: a first cached kernel": [sys.executable, "-c", NUMBA_FLOOR],
    "first ResNet-50 estimate": [sys.executable, "-c", FIRST_ESTIMATE],
    "the same, DGX + pytorch-eager": [sys.executable, "-c", FIRST_WITH_SOFTWARE],
    "archsim presets list": [sys.executable, "-c", "import sys; from archsim.cli import main; "
                             "sys.exit(main(['presets', 'list']))"],
}
TARGETS = {"first ResNet-50 estimate": "< 1 s", "archsim presets list": "< 0.3 s"}


def _wall(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds of one run of ``cmd`` in a fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; bytecode "
          f"{'not written (sources compiled in every process)' if env.get('PYTHONDONTWRITEBYTECODE') else 'cached'}")
    for cmd in CASES.values():  # warm the disk caches (and numba's) once
        _wall(cmd, env)
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in CASES}
    for _ in range(args.repeats):
        for name, cmd in CASES.items():
            times[name].append(_wall(cmd, env))
    for name, ts in times.items():
        wall, cpu = [t[0] for t in ts], [t[1] for t in ts]
        print(f"{name:32s} median {statistics.median(wall):6.3f} s wall (min {min(wall):.3f}), "
              f"{statistics.median(cpu):6.3f} s CPU  {TARGETS.get(name, '')}")
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
