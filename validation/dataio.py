"""The measurement files: ``measurements.csv`` and the JSON files beside it.

Columns of ``measurements.csv`` (one row per case, times in seconds):
``name, family, target, params`` (JSON), ``median_s, q1_s, q3_s, repeats, bytes_moved, flop``.
Files beside it: ``provenance.json`` (machine, versions, commit, date, preset), ``ceilings.json``
(copy bandwidth and peak matmul rate, for a preset's calibration fields, separate from the kernels),
``diagnostics.json`` (per case: relative error, buffer sets, flushes, compiled registers),
``skipped.json`` (cases not measured, with the reason).
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["COLUMNS", "Measurement", "append_row", "read_measurements", "write_json", "read_json"]

COLUMNS = ("name", "family", "target", "params", "median_s", "q1_s", "q3_s", "repeats", "bytes_moved", "flop")


@dataclass(frozen=True)
class Measurement:
    name: str
    family: str
    target: str
    params: dict[str, Any]
    median_s: float
    q1_s: float
    q3_s: float
    repeats: int
    bytes_moved: int
    flop: int


def append_row(path: Path, m: Measurement) -> None:
    """Append one row (writing the header first if the file is new), flushed at once."""
    new = not path.exists()
    with path.open("a", newline="") as fh:
        w = csv.writer(fh)
        if new:
            w.writerow(COLUMNS)
        w.writerow(
            [
                m.name,
                m.family,
                m.target,
                json.dumps(m.params, sort_keys=True),
                repr(m.median_s),
                repr(m.q1_s),
                repr(m.q3_s),
                m.repeats,
                m.bytes_moved,
                m.flop,
            ]
        )


def read_measurements(path: Path) -> list[Measurement]:
    with path.open(newline="") as fh:
        reader = csv.DictReader(fh)
        missing = set(COLUMNS) - set(reader.fieldnames or ())
        if missing:
            raise ValueError(f"{path}: missing columns {sorted(missing)}")
        return [
            Measurement(
                name=r["name"],
                family=r["family"],
                target=r["target"],
                params=json.loads(r["params"]),
                median_s=float(r["median_s"]),
                q1_s=float(r["q1_s"]),
                q3_s=float(r["q3_s"]),
                repeats=int(r["repeats"]),
                bytes_moved=int(r["bytes_moved"]),
                flop=int(r["flop"]),
            )
            for r in reader
        ]


def write_json(path: Path, obj: Any) -> None:
    path.write_text(json.dumps(obj, indent=2, sort_keys=True, default=str) + "\n")


def read_json(path: Path) -> Any:
    return json.loads(path.read_text())
