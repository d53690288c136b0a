"""Command line: ``python -m validation {measure,report,selftest}`` (see README.md)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m validation", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)

    m = sub.add_parser("measure", help="check and time the kernels on this machine")
    m.add_argument("--target", choices=("gpu", "cpu"), default="gpu")
    m.add_argument("--sizes", choices=("quick", "full"), default="quick")
    m.add_argument("--out", type=Path, required=True, help="folder, e.g. validation/data/h200")
    m.add_argument("--preset", help="archsim preset the report predicts with (default: from the device name)")
    m.add_argument("--only", help="measure only cases whose name contains this text")
    m.add_argument("--package", action="append", help="kernel package (default validation.kernels.<target>)")
    m.add_argument("--deadline-s", type=float, help="start no new case after this many seconds")
    m.add_argument(
        "--no-ceilings", action="store_true", help="skip the copy-bandwidth and peak-matmul ceilings"
    )

    r = sub.add_parser("report", help="archsim's predictions vs the committed measurements")
    r.add_argument(
        "--data",
        type=Path,
        default=Path(__file__).resolve().parent / "data",
        help="folder of <device>/ measurement folders",
    )
    r.add_argument("--device", action="append", help="device folder name(s) (default: all)")
    r.add_argument("--out", type=Path, default=Path("results/validation"), help="where plots and tables go")
    r.add_argument("--preset", help="override the preset recorded in provenance.json")

    s = sub.add_parser("selftest", help="correctness of every kernel at tiny sizes (CUDA simulator on CPU)")
    s.add_argument("--target", choices=("gpu", "cpu"), default="gpu")
    s.add_argument("--tiny", action="store_true", help="tiny sizes (the default; kept for clarity)")
    s.add_argument(
        "--simulator", action="store_true", help="set NUMBA_ENABLE_CUDASIM=1 before importing numba"
    )
    s.add_argument("--only", action="append", help="only cases whose name contains this text (repeatable)")
    s.add_argument(
        "--package",
        action="append",
        help="kernel package to search (repeatable; default validation.kernels.<target>)",
    )
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "selftest":
        if args.simulator:
            os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
        from validation.selftest import selftest

        res = selftest(args.target, "tiny", packages=args.package, only=args.only, log=_log)
        _log(f"selftest: {len(res.passed)} passed, {len(res.failed)} failed, {len(res.skipped)} skipped")
        for line in res.skipped:
            _log(f"  skipped: {line}")
        return 1 if res.failed or not res.passed else 0
    if args.command == "measure":
        from validation.measure import measure

        try:
            res = measure(
                args.target,
                args.sizes,
                args.out,
                preset=args.preset,
                packages=args.package,
                only=args.only,
                deadline_s=args.deadline_s,
                ceilings=not args.no_ceilings,
                log=_log,
            )
        except (ValueError, RuntimeError) as exc:
            _log(f"measure: {exc}")
            return 2
        _log(
            f"measure: {len(res.measured)} measured, {len(res.failed)} failed, {len(res.skipped)} skipped "
            f"-> {args.out}"
        )
        return 1 if res.failed else 0
    from validation.report import run_report

    return run_report(args.data, args.out, devices=args.device, preset=args.preset, log=_log, software=not args.device)


if __name__ == "__main__":
    sys.exit(main())
