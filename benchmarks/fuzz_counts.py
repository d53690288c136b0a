"""Count the outcomes of the bad-input fuzz surfaces: how many inputs each surface tried, how many were
rejected with an ArchsimError, accepted (with finite positive results) or escaped (any other error).

    python benchmarks/fuzz_counts.py [examples per surface, default 200] [--fork] [surface ...]

``--fork`` runs each input in a forked child killed after 10 s (slow, but counts inputs that hang
in C code, such as pint's exact ``9**9**9``); without it a check runs in this process. Naming
surfaces runs only those.

The surfaces are those of ``tests/property/fuzz_surfaces.py``; the test suite runs fewer examples.
"""

from __future__ import annotations

import collections
import os
import select
import signal
import sys
import time
from pathlib import Path

from hypothesis import HealthCheck, given, settings

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "property"))

import fuzz_surfaces as fz  # noqa: E402

SURFACES = {
    "units": (fz.UNIT_INPUTS, fz.check_units),
    "unit magnitudes": (fz.UNIT_MAGNITUDES, fz.check_units),
    "hardware schema": (fz.hardware_inputs(), fz.check_hardware),
    "hardware values (any magnitude)": (fz.plausible_hardware_inputs(), fz.check_hardware),
    "ops": (fz.op_inputs(), fz.check_op),
    "zoo arguments": (fz.zoo_inputs(), fz.check_zoo),
    "ONNX bytes": (fz.onnx_inputs(), fz.check_onnx),
    "sweep specs": (fz.spec_inputs(), lambda text: fz.check_spec(text)),
    "CLI arguments": (fz.cli_inputs(), lambda argv: fz.check_cli(argv)),
}


TIMEOUT_S = 10


def _in_child(check, case) -> str:
    """Run one check in a forked child (a hang in C code, like pint's exact 9**9**9, cannot be
    interrupted in-process): returns the outcome, ``escaped: ...`` or ``hung``."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report and exit without running any cleanup of the parent's
        os.close(r)
        try:
            msg = check(*case) if isinstance(case, tuple) else check(case)
        except Exception as exc:  # noqa: BLE001 - counting what escapes is the point
            msg = f"escaped: {type(exc).__name__}: {' '.join(str(exc).split())[:160]}"
        os.write(w, msg.encode()[:4000])
        os._exit(0)
    os.close(w)
    ready, _, _ = select.select([r], [], [], TIMEOUT_S)
    if not ready:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(r)
        return "hung"
    msg = os.read(r, 4000).decode(errors="replace")
    os.close(r)
    os.waitpid(pid, 0)
    return msg or "escaped: the child died without a word"


def _in_process(check, case) -> str:
    try:
        return check(*case) if isinstance(case, tuple) else check(case)
    except Exception as exc:  # noqa: BLE001 - counting what escapes is the point
        return f"escaped: {type(exc).__name__}: {' '.join(str(exc).split())[:160]}"


def count(name: str, n: int, fork: bool = False) -> tuple[collections.Counter[str], list[str]]:
    strategy, check = SURFACES[name]
    outcomes: collections.Counter[str] = collections.Counter()
    escapes: list[str] = []

    @settings(max_examples=n, deadline=None, database=None, suppress_health_check=list(HealthCheck),
              phases=["generate"], derandomize=True)
    @given(strategy)
    def run(case):
        outcome = _in_child(check, case) if fork else _in_process(check, case)
        kind = outcome.split(":")[0]
        outcomes[kind] += 1
        if kind in ("escaped", "hung"):
            escapes.append(f"{outcome} <- {case!r:.200}")

    run()
    return outcomes, escapes


def main() -> None:
    args = sys.argv[1:]
    fork = "--fork" in args
    args = [a for a in args if a != "--fork"]
    n = int(args[0]) if args else 200
    chosen = args[1:] or list(SURFACES)
    print("| surface | inputs | rejected (ArchsimError) | accepted (finite, positive) | escaped | hung | s |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    total: collections.Counter[str] = collections.Counter()
    for name in chosen:
        t0 = time.perf_counter()
        outcomes, escapes = count(name, n, fork)
        total.update(outcomes)
        tried = sum(outcomes.values())
        print(f"| {name} | {tried} | {outcomes['rejected']} | {outcomes['accepted']} | {outcomes['escaped']} | "
              f"{outcomes['hung']} | {time.perf_counter() - t0:.1f} |", flush=True)
        for line in escapes[:5]:
            print(f"    escaped: {line}", file=sys.stderr)
    print(f"| all | {sum(total.values())} | {total['rejected']} | {total['accepted']} | {total['escaped']} | "
          f"{total['hung']} | |")


if __name__ == "__main__":
    main()
