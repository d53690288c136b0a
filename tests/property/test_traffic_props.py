"""Invariants of the tiling mapper: bounded by compulsory and untiled traffic, monotone in capacity."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from archsim.cost import traffic as tr

dims = st.integers(1, 3000)
elem = st.sampled_from([1.0, 2.0, 4.0, 8.0])


@settings(max_examples=150, deadline=None)
@given(m=dims, n=dims, k=dims, batch=st.integers(1, 4), a=elem, c=elem,
       caps=st.lists(st.floats(1.0, 1e9), min_size=2, max_size=6))
def test_gemm_bounds_and_monotone(m, n, k, batch, a, c, caps):
    shape = tr.GemmShape(m, n, k, batch, a, a, c)
    caps = np.sort(np.array(caps))
    q = tr.gemm_bytes(shape, caps)
    lo, hi = tr.gemm_min_bytes(shape), tr.gemm_untiled_bytes(shape)
    assert np.all(q >= lo * (1 - 1e-12))
    assert np.all(q <= hi * (1 + 1e-12))
    assert np.all(np.diff(q) <= 1e-9 * hi)


@settings(max_examples=100, deadline=None)
@given(m=dims, n=dims, k=dims, a=elem)
def test_gemm_fits_whole_problem_is_compulsory(m, n, k, a):
    shape = tr.GemmShape(m, n, k, 1, a, a, a)
    total = a * (m * k + k * n + m * n) + 1.0
    assert np.isclose(tr.gemm_bytes(shape, total), tr.gemm_min_bytes(shape), rtol=1e-12)


def _oracle(m, n, k, e, cap):
    """Brute force over every integer tile size of the three dataflows (the mapper's superset)."""
    best = np.inf
    for tm in range(1, m + 1):
        for tn in range(1, n + 1):
            if tm * tn * e + (tm + tn) * e <= cap:
                best = min(best, e * (m * k * np.ceil(n / tn) + k * n * np.ceil(m / tm) + m * n))
        if tm * k * e + k * e + tm * e <= cap:
            best = min(best, e * (m * k + k * n * np.ceil(m / tm) + m * n))
    for tn in range(1, n + 1):
        if tn * k * e + k * e + tn * e <= cap:
            best = min(best, e * (m * k * np.ceil(n / tn) + k * n + m * n))
    return best


@settings(max_examples=40, deadline=None)
@given(m=st.integers(1, 40), n=st.integers(1, 40), k=st.integers(1, 40), cap=st.floats(16.0, 2e4))
def test_gemm_brute_force_oracle(m, n, k, cap):
    # The mapper searches a subset (powers of two and the full dimension) of the oracle's tiles, so it
    # is never better than the oracle, and rounding a tile down to a power of two at most doubles each
    # ceil(), so it is within 2x of it.
    got = float(tr.gemm_bytes(tr.GemmShape(m, n, k, 1, 4.0, 4.0, 4.0), cap))
    best = _oracle(m, n, k, 4.0, cap)
    assert got >= best * (1 - 1e-12)
    assert got <= 2 * best * (1 + 1e-12)


@settings(max_examples=100, deadline=None)
@given(n=st.integers(1, 8), c=st.integers(1, 256), hw=st.integers(5, 64), r=st.sampled_from([1, 3, 5]),
       kout=st.integers(1, 256), caps=st.lists(st.floats(1.0, 1e8), min_size=2, max_size=5))
def test_conv_bounds_and_monotone(n, c, hw, r, kout, caps):
    p = hw - r + 1
    shape = tr.GemmShape(n * p * p, kout, c * r * r, 1, 2.0, 2.0, 2.0)
    caps = np.sort(np.array(caps))
    a_pass = tr.conv_a_pass_bytes(n, c, hw, hw, r, r, p, p, 2.0, caps)
    q = tr.conv_bytes(shape, a_pass, caps)
    input_b, im2col = 2.0 * n * c * hw * hw, 2.0 * n * p * p * c * r * r
    lo = min(input_b, im2col) + 2.0 * (kout * c * r * r + n * p * p * kout)
    hi = tr.gemm_untiled_bytes(shape)
    assert np.all(q >= lo * (1 - 1e-12)) and np.all(q <= hi * (1 + 1e-12))
    assert np.all(np.diff(q) <= 1e-9 * hi)


@settings(max_examples=100, deadline=None)
@given(bh=st.integers(1, 64), lq=st.integers(1, 4096), lk=st.integers(1, 4096), d=st.sampled_from([32, 64, 128]),
       caps=st.lists(st.floats(1.0, 1e8), min_size=2, max_size=5))
def test_flash_bounds_and_monotone(bh, lq, lk, d, caps):
    caps = np.sort(np.array(caps))
    q = tr.flash_attention_bytes(bh, lq, lk, d, 2.0, caps)
    lo = bh * 2.0 * d * (2 * lq + 2 * lk)
    hi = bh * 2.0 * d * (2 * lq + 2 * lk * lq)
    assert np.all(q >= lo * (1 - 1e-12)) and np.all(q <= hi * (1 + 1e-12))
    assert np.all(np.diff(q) <= 1e-9 * hi)


def test_rowwise_rereads_when_row_does_not_fit():
    # 1 MiB input, 1 MiB output, 4 KiB rows: 2 MiB if a row fits, 3 MiB otherwise.
    mib = 2.0**20
    q = tr.rowwise_bytes(2 * mib, mib, 4096.0, np.array([1024.0, 8192.0]))
    assert np.allclose(q, [3 * mib, 2 * mib])
