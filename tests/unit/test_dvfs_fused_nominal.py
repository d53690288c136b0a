"""The power and time at the nominal clock of a large block in one compiled pass
(dvfs._fused_nominal_power, archsim.energy.nominal) are the numpy passes' to the bit: over block
shapes, voltage curves and leakage exponents, zero, negative, infinite and NaN times and energies,
written into the caller's temporary or not; other shapes take the numpy passes."""

import dataclasses

import numpy as np
import pytest
from bit_compare import assert_same
from hypothesis import given, settings
from hypothesis import strategies as st

from archsim.energy import dvfs

SPECIAL = (0.0, -0.0, np.inf, -np.inf, np.nan, -1e-6, 5e-324)


def _terms(rng: np.random.Generator, ops: int, points: int, special: float) -> dvfs.PowerTerms:
    """Power terms of an (ops, points) block, a few per-(op, point) entries ``special``."""
    full, pts = (ops, points), (points,)

    def a(shape, lo, hi, specials=False):
        x = rng.uniform(lo, hi, shape)
        if specials:
            x[rng.random(shape) < 0.1] = special
        return x

    curve = dvfs.VFCurve(a(pts, 0.6, 0.7), a(pts, 0.9, 1.1), a(pts, 5e8, 8e8), a(pts, 1.2e9, 2.2e9))
    return dvfs.PowerTerms(nominal_hz=a(pts, 1.3e9, 2e9), fixed_s=a(full, 0, 1e-6, True),
                           clock_s=a(full, 0, 1e-3, True), memory_s=a(full, 0, 1e-3, True),
                           excess_s=a(full, 0, 1e-4, True), onchip_j=a(full, 0, 0.5, True),
                           offchip_j=a(full, 0, 0.2, True), board_w=a(pts, 30, 60), leakage_w=a(full, 10, 80, True),
                           clock_w=a(pts, 10, 50), leakage_exponent=rng.choice([2.0, 3.0, 0.5], pts), curve=curve)


# The numpy passes warn on the special values drawn on purpose (inf x 0, inf - inf); the kernels
# give the same values without a warning.
_QUIET = {"invalid": "ignore", "over": "ignore", "divide": "ignore"}


def _numpy_passes(t: dvfs.PowerTerms) -> tuple[np.ndarray, np.ndarray]:
    with pytest.MonkeyPatch.context() as m, np.errstate(**_QUIET):
        m.setattr(dvfs, "_fused_nominal_power", lambda *a: None)
        return dvfs._nominal_power(t)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), ops=st.integers(1, 7), points=st.integers(1, 9),
       special=st.sampled_from(SPECIAL), scratch=st.booleans())
def test_fused_nominal_power_is_the_numpy_passes(seed, ops, points, special, scratch):
    t = _terms(np.random.default_rng(seed), ops, points, special)
    want_power, want_time = _numpy_passes(t)
    out = np.full((ops, points), 7.0) if scratch else None
    with pytest.MonkeyPatch.context() as m:
        m.setattr(dvfs, "INPLACE_MIN", 1)
        got = dvfs._fused_nominal_power(t, np.ones(points), out)
        assert got is not None
        power_w, time = got
        assert (power_w is out) == scratch
        again_power, again_time = dvfs._nominal_power(t, [out] if scratch else [])
        assert_same(again_power, power_w)
        assert_same(again_time, time)
    assert_same(power_w, want_power)
    assert_same(time, want_time)


def test_fused_nominal_power_takes_only_float64_blocks_of_the_points():
    rng = np.random.default_rng(7)
    t = _terms(rng, 3, 4, 0.0)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(dvfs, "INPLACE_MIN", 1)
        ones = np.ones(4)
        assert dvfs._fused_nominal_power(t, ones) is not None
        # a term per point only, of another dtype, not C-contiguous, or an exponent per (op, point)
        for changed in (dataclasses.replace(t, clock_s=t.clock_s[0]),
                        dataclasses.replace(t, fixed_s=t.fixed_s.astype(np.float32)),
                        dataclasses.replace(t, memory_s=np.asfortranarray(t.memory_s)),
                        dataclasses.replace(t, leakage_exponent=np.full((3, 4), 3.0))):
            assert dvfs._fused_nominal_power(changed, ones) is None
            for got, want in zip(dvfs._nominal_power(changed), _numpy_passes(changed), strict=True):
                assert_same(got, want)
    # small blocks take the numpy passes
    assert dvfs._fused_nominal_power(t, np.ones(4)) is None


def _clocked_numpy(t: dvfs.PowerTerms, ratio: np.ndarray) -> dvfs.ClockedPower:
    with pytest.MonkeyPatch.context() as m, np.errstate(**_QUIET):
        m.setattr(dvfs, "_fused_clock_factors", lambda *a: None)
        return dvfs.clocked_power(t, ratio)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), ops=st.integers(1, 7), points=st.integers(1, 9),
       special=st.sampled_from((*SPECIAL, 1.0, 0.25)), top=st.sampled_from([0.8, 1.0, 1.05, 1.37]))
def test_fused_clock_factors_are_the_numpy_passes(seed, ops, points, special, top):
    # Clock ratios of a block (the governor's, a few special), curves whose top is near the nominal clock.
    rng = np.random.default_rng(seed)
    t = _terms(rng, ops, points, special)
    t = dataclasses.replace(t, curve=dataclasses.replace(t.curve, vmax_hz=t.nominal_hz * top))
    ratio = rng.uniform(0.3, 1.0, (ops, points))
    ratio[rng.random((ops, points)) < 0.2] = special
    want = _clocked_numpy(t, ratio)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(dvfs, "INPLACE_MIN", 1)
        assert dvfs._fused_clock_factors(t, ratio) is not None
        got = dvfs.clocked_power(t, ratio)
    assert_same(got, want)


def test_fused_clock_factors_take_only_float64_ratios_and_terms_of_the_points():
    t = _terms(np.random.default_rng(11), 3, 4, 0.0)
    ratio = np.full((3, 4), 0.75)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(dvfs, "INPLACE_MIN", 1)
        for changed, r in ((t, ratio.astype(np.float32)), (t, np.asfortranarray(ratio)),
                           (dataclasses.replace(t, clock_w=np.float64(20.0)), ratio),
                           (dataclasses.replace(t, nominal_hz=np.full((3, 4), 1.5e9)), ratio)):
            assert dvfs._fused_clock_factors(changed, r) is None
            assert_same(dvfs.clocked_power(changed, r), _clocked_numpy(changed, r))
    assert dvfs._fused_clock_factors(t, ratio) is None  # small blocks: numpy's passes
