"""The op's time at the ratio 1 without its divisions (dvfs._unit_ratio_time) is op_time's at a ratio
of ones to the bit: over the terms' shapes (scalars, per point, per (op, point)), large arrays
written into and small ones not, zeros of either sign, infinities and NaN."""

import numpy as np
import pytest
from bit_compare import assert_same
from hypothesis import given, settings
from hypothesis import strategies as st

from archsim.energy import dvfs, op_time

SPECIAL = (0.0, -0.0, np.inf, -np.inf, np.nan, 1e-300, 5e-324)


def _terms(rng: np.random.Generator, shapes: dict[str, tuple[int, ...]], special: float) -> dvfs.PowerTerms:
    """Power terms whose times have the given shapes (others per point), a few entries ``special``."""

    def time(name: str) -> np.ndarray:
        shape = shapes[name]
        a = np.asarray(rng.uniform(0.0, 1e-3, shape) * rng.choice([1.0, -1.0], shape))
        a[np.asarray(rng.random(shape) < 0.2)] = special
        return a

    points = (shapes["points"][0],)
    curve = dvfs.VFCurve(np.full(points, 0.65), np.full(points, 1.0), np.full(points, 6e8), np.full(points, 1.4e9))
    return dvfs.PowerTerms(nominal_hz=np.full(points, 1.5e9), fixed_s=time("fixed_s"), clock_s=time("clock_s"),
                           memory_s=time("memory_s"), excess_s=time("excess_s"), onchip_j=np.ones(points),
                           offchip_j=np.ones(points), board_w=np.ones(points), leakage_w=np.ones(points),
                           clock_w=np.ones(points), leakage_exponent=np.full(points, 3.0), curve=curve)


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), ops=st.integers(1, 5), points=st.integers(1, 6),
       kinds=st.lists(st.sampled_from(["full", "points", "scalar"]), min_size=4, max_size=4),
       special=st.sampled_from(SPECIAL), inplace=st.booleans())
def test_unit_ratio_time_is_op_time_at_ones(seed, ops, points, kinds, special, inplace):
    rng = np.random.default_rng(seed)
    by_kind = {"full": (ops, points), "points": (points,), "scalar": ()}
    names = ("fixed_s", "clock_s", "memory_s", "excess_s")
    shapes = {**{n: by_kind[k] for n, k in zip(names, kinds, strict=True)}, "points": (points,)}
    t = _terms(rng, shapes, special)
    ratio = np.ones(points)
    want = op_time(t, ratio)
    with pytest.MonkeyPatch.context() as m:
        if inplace:
            m.setattr(dvfs, "INPLACE_MIN", 1)
        got = dvfs._unit_ratio_time(t, ratio)
    assert_same(np.asarray(got), np.asarray(want))
    assert type(got) is type(want)


def test_unit_ratio_time_of_the_ratio_shape_where_the_terms_are_smaller():
    # Scalar terms at several points: the ratio broadcasts them to the points (op_time's shape).
    rng = np.random.default_rng(3)
    t = _terms(rng, {"fixed_s": (), "clock_s": (), "memory_s": (), "excess_s": (), "points": (4,)}, 0.0)
    ratio = np.ones(4)
    assert_same(dvfs._unit_ratio_time(t, ratio), op_time(t, ratio))
