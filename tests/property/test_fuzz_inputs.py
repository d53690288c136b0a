"""Fuzz every input surface: only ArchsimError escapes, and accepted inputs give finite positive results.

The surfaces and their checkers are in ``fuzz_surfaces.py``. Example counts are modest so the suite
stays within a couple of minutes on two cores; ``benchmarks/fuzz_counts.py`` draws more and counts.
"""

from __future__ import annotations

import sys
from pathlib import Path

from hypothesis import HealthCheck, given, settings

sys.path.insert(0, str(Path(__file__).resolve().parent))

import fuzz_surfaces as fz  # noqa: E402

FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
MEDIUM = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
SLOW = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)


@FAST
@given(fz.UNIT_INPUTS)
def test_units(case):
    fz.check_units(*case)


@FAST
@given(fz.UNIT_MAGNITUDES)
def test_unit_magnitudes(case):
    fz.check_units(*case)


@MEDIUM
@given(fz.hardware_inputs())
def test_hardware_schema(case):
    fz.check_hardware(*case)


@MEDIUM
@given(fz.plausible_hardware_inputs())
def test_hardware_values_at_any_magnitude_give_finite_results(case):
    fz.check_hardware(*case)


@MEDIUM
@given(fz.op_inputs())
def test_ops(case):
    fz.check_op(*case)


@SLOW
@given(fz.zoo_inputs())
def test_zoo_arguments(case):
    fz.check_zoo(*case)


@MEDIUM
@given(fz.onnx_inputs())
def test_onnx_bytes(case):
    fz.check_onnx(*case)


@SLOW
@given(fz.spec_inputs())
def test_sweep_specs(text):
    fz.check_spec(text)


@SLOW
@given(fz.cli_inputs())
def test_cli_arguments(argv):
    fz.check_cli(argv)
