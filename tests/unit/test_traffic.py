"""Hand-computed traffic of the tiling mapper."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from archsim.cost import traffic as tr
from archsim.errors import EngineError


def test_gemm_square_tile_traffic():
    # 1024^3 fp32 GEMM below a 64 KiB level. Output-stationary 64x64 tile: 64*64*4 + 128*4 = 16896 B
    # fits; 128x64 needs 33536 B (fits), 128x128 needs 66560 B > 65536 (does not).
    # Best candidate is 128x64 (or 64x128): A read ceil(1024/64) = 16 times, B ceil(1024/128) = 8:
    # Q = 4 MiB*16 + 4 MiB*8 + 4 MiB = 100 MiB. The A-panel dataflow needs tm*4 KiB + 4 KiB + 4 tm
    # <= 64 KiB, so tm = 8 at most: 4 + 4*128 + 4 = 520 MiB, worse.
    mib = 2.0**20
    q = tr.gemm_bytes(tr.GemmShape(1024, 1024, 1024), 64 * 1024.0)
    assert float(q) == pytest.approx(100 * mib)


def test_gemv_reads_matrix_once_when_vector_fits():
    # 4096x4096 fp16 matrix times a vector (n = 1): A 32 MiB read once, x 8 KiB, y 8 KiB.
    shape = tr.GemmShape(4096, 1, 4096, 1, 2.0, 2.0, 2.0)
    q = tr.gemm_bytes(shape, 64 * 1024.0)
    assert float(q) == pytest.approx(4096 * 4096 * 2 + 4096 * 2 + 4096 * 2)


def test_conv_window_rule():
    # 3x3 conv, 1 image, 64 ch, 56x56 fp16: window = 3 * 56 * 64 * 2 B = 21504 B.
    a = tr.conv_a_pass_bytes(1, 64, 56, 56, 3, 3, 54, 54, 2.0, np.array([20000.0, 30000.0]))
    # Below the window: im2col 54*54*64*9*2 B; above it: the input once, 56*56*64*2 B.
    assert np.allclose(a, [54 * 54 * 64 * 9 * 2, 56 * 56 * 64 * 2])


def test_bad_shape_names_the_field():
    with pytest.raises(EngineError, match="GemmShape.k"):
        tr.GemmShape(4, 4, 0)


def test_strided_narrow_rows_fetch_whole_sectors():
    # Conv2d(64, 256, 8, 1024, 8, kernel=1, stride=4, int8) on V100: a plane is 1024 rows of 8 bytes; the
    # convolution reads rows 0, 4, 8, ... (256 of them) and in each row columns 0 and 4. A 32-byte sector
    # holds 4 rows, one of them touched, so every sector is fetched: 64 x 256 x 8 KiB = 134,217,728 B,
    # four times the 33,554,432 B of its im2col matrix. In fp16 a sector holds 2 rows: half the input.
    import archsim
    from archsim import ops

    v100 = archsim.load_preset("gpu/v100-sxm2-16gb")
    assert tr.conv_touched_bytes(64, 256, 1024, 8, (1, 1), (4, 4), (0, 0), (1, 1), 256, 2, 1.0, 32.0) == 134217728
    assert tr.conv_touched_bytes(64, 256, 1024, 8, (1, 1), (4, 4), (0, 0), (1, 1), 256, 2, 2.0, 32.0) == 134217728
    # A dense 3x3 stride-1 convolution touches every element: the input rounded up to sectors.
    assert tr.conv_touched_bytes(1, 3, 5, 5, (3, 3), (1, 1), (1, 1), (1, 1), 5, 5, 4.0, 32.0) == 320
    op = ops.Conv2d(64, 256, 8, 1024, 8, kernel=1, stride=4, dtype="int8")
    r = archsim.estimate(op, v100).ops[0]
    assert r.bytes_by_level["dram"] >= 134217728
    # DRAM floor: 134.2 MB at 900 GB/s x 0.962 (read-only efficiency) = 155 us; mixed 0.90: 166 us.
    assert r.latency_s >= 134217728 / 900e9
    assert r.bound == "memory:dram"


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 1 << 20), st.integers(1, 1 << 16), st.integers(1, 1 << 16),
                          st.integers(1, 8), st.sampled_from([0.5, 1.0, 2.0, 4.0]),
                          st.sampled_from([0.0, 1.0, 0.3, 2.5]),
                          st.sampled_from([0.0, 100.0, 4e3, 1e5, 6e6, 4e7, 1e12, np.inf])),
                min_size=1, max_size=8))
def test_gemm_bytes_rows_equals_gemm_bytes_per_row(rows):
    # The compiled rows give each row's one-GEMM mapper result, with distinct element sizes, an A pass
    # other than a m k (implicit-GEMM convolution), zero and infinite capacities.
    m, n, k, b, e, a_scale, cap = (np.asarray(c, dtype=np.float64) for c in zip(*rows, strict=True))
    a_pass = e * m * k * a_scale
    got = tr.gemm_bytes_rows(m, n, k, b, e, 2.0 * e, 4.0 * e, a_pass, cap)
    for i, (mi, ni, ki, bi, ei, _, ci) in enumerate(rows):
        shape = tr.GemmShape(mi, ni, ki, bi, ei, 2.0 * ei, 4.0 * ei, a_pass_bytes=float(a_pass[i]))
        assert got[i] == tr.gemm_bytes(shape, np.array([ci]))[0]
