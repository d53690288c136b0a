"""Published A100 dense-GEMM references in the power section: reported without a budget, predicted
from the stock preset alone."""

import csv
import dataclasses
from pathlib import Path

import pytest

from validation import power_refs


def test_prediction_never_reads_the_published_figure():
    for ref in power_refs.REFERENCES:
        other = dataclasses.replace(ref, published=2.0 * ref.published)
        assert power_refs.predict(other) == power_refs.predict(ref)


def test_references_are_unbudgeted_and_error_is_relative():
    fams = {name: (n, err, budget) for name, n, err, budget in power_refs.families()}
    assert set(fams) == {r.family for r in power_refs.REFERENCES}
    for ref in power_refs.REFERENCES:
        n, err, budget = fams[ref.family]
        got = power_refs.predict(ref)[ref.quantity]
        # |predicted - published| / published, in percent (e.g. 1410 vs 1305 MHz: 105 / 1305 = 8.0 %)
        assert n == 1 and budget is None
        assert abs(err - 100.0 * abs(got - ref.published) / ref.published) < 1e-9


def test_predicted_gemm_is_at_or_under_the_a100_limit():
    # The governor never lets an op's average power exceed the preset's 400 W limit.
    for ref in power_refs.REFERENCES:
        assert power_refs.predict(ref)["power_w"] <= 400.0 * (1 + 1e-6)


DATA = Path(__file__).resolve().parents[2] / "validation" / "data" / "power"


def test_held_out_roofline_prediction_never_reads_the_measurements(tmp_path):
    # The same file with every measured power and clock doubled predicts the same points.
    src = DATA / power_refs.ROOFLINE_FILE
    with src.open(newline="") as fh:
        recs = list(csv.DictReader(fh))
    for rec in recs:
        rec["power_W"] = str(2.0 * float(rec["power_W"]))
        rec["clock_MHz"] = str(2.0 * float(rec["clock_MHz"]))
    with (tmp_path / power_refs.ROOFLINE_FILE).open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(recs[0]))
        w.writeheader()
        w.writerows(recs)
    real, doubled = power_refs.roofline_rows(DATA), power_refs.roofline_rows(tmp_path)
    assert [(r.predicted_w, r.predicted_mhz) for r in real] == [(r.predicted_w, r.predicted_mhz) for r in doubled]
    assert [2.0 * r.measured_w for r in real] == pytest.approx([r.measured_w for r in doubled])


def test_held_out_roofline_families_are_unbudgeted():
    # gpu-roofline on 8 A100 SXM4 40GB boards (43 intensities) and one H200 (55 intensities).
    rows = power_refs.roofline_rows(DATA)
    fams = {name: (n, err, budget) for name, n, err, budget in power_refs.roofline_families(rows)}
    assert set(fams) == {"power_a100_roofline", "clock_a100_roofline", "power_h200_roofline", "clock_h200_roofline"}
    assert fams["power_a100_roofline"][0] == 8 * 43 and fams["power_h200_roofline"][0] == 55
    assert all(budget is None for _n, _err, budget in fams.values())
    a100 = [r for r in rows if r.gpu == "NVIDIA A100-SXM4-40GB"]
    assert fams["power_a100_roofline"][1] == pytest.approx(sum(abs(r.power_error_pct) for r in a100) / len(a100))


def test_decomposition_recovers_a_linear_power_law():
    # Points built from P = 80 W + 300 pJ per warp instruction + 100 pJ per DRAM byte are split back exactly;
    # the measured and the predicted power are split with their own byte rates.
    from validation.power import PowerRow

    rows = []
    for fpb, bps in ((0.25, 1.3e12), (1.25, 1.3e12), (6.25, 1.2e12), (30.25, 6e11), (100.25, 1.9e11)):
        watts = 80.0 + 300e-12 * (fpb * bps / 64.0 + bps / 128.0) + 100e-12 * bps
        rows.append(PowerRow("g", 0, fpb, watts, 1410.0, 2.0 * watts, 1410.0, "compute",
                             measured_bytes_per_s=bps, predicted_bytes_per_s=bps))
    got = power_refs.decompose(rows)
    assert (got.constant_w, got.instruction_j, got.dram_j_per_byte) == pytest.approx((80.0, 300e-12, 100e-12))
    assert got.rms_w < 1e-9
    doubled = power_refs.decompose(rows, predicted=True)
    assert doubled.constant_w == pytest.approx(160.0) and doubled.dram_j_per_byte == pytest.approx(200e-12)


def test_model_decomposes_exactly_on_the_held_out_launches():
    # The power model is linear in these two rates at a fixed clock (none of these points is power-limited).
    rows = power_refs.roofline_rows(DATA)
    for gpu in power_refs.ROOFLINE_PRESETS:
        xs = [r for r in rows if r.gpu == gpu]
        assert all(r.bound != "power" for r in xs)
        assert power_refs.decompose(xs, predicted=True).rms_w < 1e-6
