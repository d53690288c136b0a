"""``measure --target cpu`` end to end on a one-kernel fixture package (numba CPU triad)."""

from __future__ import annotations

import json

from validation import dataio
from validation.discover import discover
from validation.measure import measure

PKG = ["tests.validation.fixtures.cpu_kernels"]


def test_cpu_measure_writes_rows_and_provenance(tmp_path):
    res = measure("cpu", "quick", tmp_path, packages=PKG, preset="cpu/test-preset", ceilings=False)
    assert res.measured == ["cpu-triad/n=1000", "cpu-triad/n=100000"] and not res.failed
    rows = dataio.read_measurements(tmp_path / "measurements.csv")
    for r in rows:
        assert 0 < r.q1_s <= r.median_s <= r.q3_s
        assert 10 <= r.repeats <= 100
        assert r.bytes_moved == 24 * r.params["n"]  # 3 float64 arrays
    prov = json.loads((tmp_path / "provenance.json").read_text())
    assert prov["preset"] == "cpu/test-preset" and prov["target"] == "cpu"
    assert prov["device"]["name"] and len(prov["device"]["loadavg_1_5_15"]) == 3
    assert "date_utc" in prov and "commit" in prov
    diag = json.loads((tmp_path / "diagnostics.json").read_text())["cases"]
    assert diag["cpu-triad/n=1000"]["relative_error"] == 0.0


def test_gpu_cases_declare_what_the_report_needs():
    """Every GPU case: unique name, a budget family or an explained one, FLOP/bytes, a launch or cuBLAS."""
    from validation.report import BUDGETS_PCT, UNBUDGETED

    for sizes in ("tiny", "quick", "full"):
        for c in discover("gpu", sizes):
            assert c.family in BUDGETS_PCT or c.family in UNBUDGETED, c.name
            assert c.bytes_moved > 0, c.name
            assert c.launch is not None or c.backend == "cupy", c.name
            assert c.outputs and c.rtol >= 0


def test_full_sizes_span_regimes():
    # a few KB (launch-bound) to a few GB (DRAM-bound) in the bandwidth family
    sizes = [c.bytes_moved for c in discover("gpu", "full") if c.family == "bandwidth"]
    assert min(sizes) <= 16 << 10 and max(sizes) >= 2 << 30
