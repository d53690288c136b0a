"""The ceiling fit on the committed H200 ceilings: the fitted efficiency reproduces the measured GEMM time
through the model, and a ceiling the field cannot reach is reported as such (no value)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from validation.ceiling_fit import FIELDS, fit_ceilings

H200 = Path(__file__).resolve().parents[2] / "validation" / "data" / "h200"


def test_h200_ceilings():
    fits = {f.precision: f for f in fit_ceilings(H200, "gpu/h200-sxm-141gb")}
    assert set(fits) == set(FIELDS)
    sgemm = fits["float32"]
    # cuBLAS SGEMM 8192^3 in 21.81 ms = 50.4 TFLOP/s; the preset's 0.90 gives 18.30 ms (60.1 TFLOP/s).
    assert sgemm.field == "vector_efficiency" and sgemm.before == 0.90
    assert sgemm.predicted_before_s < sgemm.measured_s
    assert 0.5 < sgemm.fitted < sgemm.before
    assert sgemm.predicted_after_s == pytest.approx(sgemm.measured_s, rel=1e-4)
    # fp16: 789 TFLOP/s measured; the model's GEMM is bound by its shared-memory (L1) traffic at 739
    # TFLOP/s before the Tensor Cores at any tensor_efficiency from 0.8 up, so there is no value to fit.
    hgemm = fits["float16"]
    assert math.isnan(hgemm.fitted) and hgemm.predicted_after_s > hgemm.measured_s
