"""Count the outcomes of the bad-input fuzz surfaces: how many inputs each surface tried, how many were
rejected with an ArchsimError, accepted (with finite positive results) or escaped (any other error).

    python benchmarks/fuzz_counts.py [examples per surface, default 200]

The surfaces are those of ``tests/property/fuzz_surfaces.py``; the test suite runs fewer examples.
"""

from __future__ import annotations

import collections
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


class Hung(BaseException):
    """Raised by the alarm inside a check that ran too long (a BaseException: no handler swallows it)."""


def _alarm(_signum: int, _frame: object) -> None:
    raise Hung


def count(name: str, n: int) -> tuple[collections.Counter[str], list[str]]:
    strategy, check = SURFACES[name]
    outcomes: collections.Counter[str] = collections.Counter()
    escapes: list[str] = []

    @settings(max_examples=n, deadline=None, database=None, suppress_health_check=list(HealthCheck),
              phases=["generate"])
    @given(strategy)
    def run(case):
        signal.alarm(TIMEOUT_S)  # an input that runs without end counts as "hung"
        try:
            outcomes[check(*case) if isinstance(case, tuple) else check(case)] += 1
        except Hung:
            outcomes["hung"] += 1
            escapes.append(f"hung > {TIMEOUT_S} s <- {case!r:.200}")
        except Exception as exc:  # noqa: BLE001 - counting what escapes is the point
            outcomes["escaped"] += 1
            escapes.append(f"{type(exc).__name__}: {str(exc)[:160]} <- {case!r:.200}")
        finally:
            signal.alarm(0)

    run()
    return outcomes, escapes


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    signal.signal(signal.SIGALRM, _alarm)
    print("| surface | inputs | rejected (ArchsimError) | accepted (finite, positive) | escaped | hung | s |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    total: collections.Counter[str] = collections.Counter()
    for name in SURFACES:
        t0 = time.perf_counter()
        outcomes, escapes = count(name, n)
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
