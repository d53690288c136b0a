"""Fuzz every input surface: only ArchsimError escapes, and accepted inputs give finite positive results.

The surfaces and their checkers are in ``fuzz_surfaces.py``. Example counts are modest so the suite
stays within a couple of minutes on two cores; ``benchmarks/fuzz_counts.py`` draws more and counts.
"""

from __future__ import annotations

import sys
from pathlib import Path

from hypothesis import HealthCheck, given, settings

import archsim

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


def test_the_coercion_oracle_flags_what_an_accepted_input_must_never_get():
    # The oracle behind the hardware and op surfaces: an accepted value is held as it was written.
    assert fz._taken_as_given("3.35 TB/s", "3350000000000.0 B/s")  # the same quantity in SI
    assert fz._taken_as_given(80, 80) and fz._taken_as_given(2, 2.0) and fz._taken_as_given("lru", "lru")
    assert not fz._taken_as_given(True, 1)  # `sm_count = true` read as 1 SM
    assert not fz._taken_as_given("80", 80)  # a string read as a number
    assert not fz._taken_as_given(2.7, 2)  # truncated
    assert not fz._taken_as_given(1e12, "1000000000000.0 B/s")  # a bare number taken for a bandwidth
    assert not fz._taken_as_given("900 GB/s", "800000000000.0 B/s")  # a different quantity
    assert not fz._taken_as_given(None, 4)  # a None replaced by a default
    # Ops: the documented normalisations pass, coercions do not.
    assert fz._op_value_as_given(3, (3, 3)) and fz._op_value_as_given(91, (91, 1, 1))
    assert fz._op_value_as_given((2, 3), (2, 3, 1)) and fz._op_value_as_given("fp16", archsim.DType.fp16)
    assert not fz._op_value_as_given((2.7, 3), (2, 3)) and not fz._op_value_as_given("33", (3, 3))
    assert not fz._op_value_as_given((1.9, 1.9), (1, 1)) and not fz._op_value_as_given(2.5, (2,))
