"""The governor's term table gathered by one compiled copy (dvfs._gather_compiled,
archsim.energy.governor.gather) is numpy's gather (each term broadcast to the block and taken at the
over-limit entries) to the bit: over block shapes, mixes of per-point and per-(op, point) terms,
special values and entry sets; terms it does not take (other dtypes, scalars, other shapes, small
blocks) leave the numpy path to do it."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from archsim.energy import dvfs

SPECIAL = (0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324)


def _numpy_gather(terms, shape, flat):
    """The table as the definition gives it: row i is ``broadcast_to(terms[i], shape).ravel()[flat]``."""
    return np.stack([np.broadcast_to(np.asarray(t, dtype=np.float64), shape).reshape(-1)[flat] for t in terms])


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), ops=st.integers(1, 9), points=st.integers(1, 40),
       kinds=st.lists(st.booleans(), min_size=17, max_size=17), special=st.sampled_from(SPECIAL),
       share=st.floats(0.0, 1.0))
def test_compiled_gather_is_numpys(seed, ops, points, kinds, special, share):
    rng = np.random.default_rng(seed)
    shape = (ops, points)
    terms = []
    for full in kinds:
        t = rng.uniform(-1.0, 2.0, shape if full else (points,))
        t[rng.random(t.shape) < 0.1] = special
        terms.append(t)
    flat = np.flatnonzero(rng.random(shape) < share)
    table = np.full((len(terms), flat.size), 7.0)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(dvfs, "INPLACE_MIN", 1)
        done = dvfs._gather_compiled(tuple(terms), shape, flat, table)
        got = dvfs._gather(tuple(terms), shape, flat)
    assert done == (any(kinds) and not all(kinds))
    if done:
        assert table.tobytes() == _numpy_gather(terms, shape, flat).tobytes()
    assert got.flags.c_contiguous and got.dtype == np.float64
    assert got.tobytes() == _numpy_gather(terms, shape, flat).tobytes()


@pytest.mark.parametrize("odd", ["scalar", "float32", "column", "strided", "lone", "small"])
def test_other_terms_take_the_numpy_gather(monkeypatch, odd):
    rng = np.random.default_rng(1)
    shape = (6, 50)
    terms = [rng.uniform(size=shape), rng.uniform(size=shape[-1:])] * 3
    if odd == "scalar":
        terms.append(np.float64(2.0))
    elif odd == "float32":
        terms.append(rng.uniform(size=shape).astype(np.float32))
    elif odd == "column":
        terms.append(rng.uniform(size=(shape[0], 1)))
    elif odd == "strided":
        terms.append(rng.uniform(size=(shape[0], 2 * shape[1]))[:, ::2])
    elif odd == "lone":
        shape = (shape[-1],)
        terms = [t if t.ndim == 1 else t[0] for t in terms]
    if odd != "small":
        monkeypatch.setattr(dvfs, "INPLACE_MIN", 1)
    flat = np.flatnonzero(rng.random(shape) < 0.4)
    assert not dvfs._gather_compiled(tuple(terms), shape, flat, np.empty((len(terms), flat.size)))
    assert dvfs._gather(tuple(terms), shape, flat).tobytes() == _numpy_gather(terms, shape, flat).tobytes()


@pytest.mark.parametrize("frozen", ["points", "block"])
def test_read_only_terms(monkeypatch, frozen):
    rng = np.random.default_rng(2)
    shape = (5, 40)
    terms = [rng.uniform(size=shape), rng.uniform(size=shape[-1:]), rng.uniform(size=shape[-1:])]
    terms[1 if frozen == "points" else 0].flags.writeable = False
    monkeypatch.setattr(dvfs, "INPLACE_MIN", 1)
    flat = np.flatnonzero(rng.random(shape) < 0.5)
    table = np.empty((len(terms), flat.size))
    assert dvfs._gather_compiled(tuple(terms), shape, flat, table) == (frozen == "points")
    assert dvfs._gather(tuple(terms), shape, flat).tobytes() == _numpy_gather(terms, shape, flat).tobytes()
