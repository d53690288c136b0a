"""Hand-computed traffic of the tiling mapper."""

import numpy as np
import pytest

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
