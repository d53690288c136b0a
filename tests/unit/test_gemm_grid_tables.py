"""The GEMM grid's per-call tables built by their short paths: the occupancy of points that share one
SM description (no stacking of the points' fields), the convolution libraries' point table derived
from the GEMM library's, and the rows' occupancy index of a one-row table. Each gives the values of
the general construction, and a grid over such points the figures of one GEMM at a time."""

import numpy as np
import pytest

import archsim.presets as presets
from archsim.cost import gemm_search as engine
from archsim.cost import kernels as kn
from archsim.cost.params import GPUParams


def _pack(clocks_ghz, sm_counts, extra=()):
    base = presets.load_preset("gpu/v100-sxm2-16gb")
    dump = base.model_dump()
    devices = [presets.validate_hardware({**dump, "sm_count": s, "clock": f"{c} GHz"})
               for c, s in zip(clocks_ghz, sm_counts, strict=True)]
    return GPUParams.from_devices([*devices, *extra])


@pytest.fixture()
def uniform():
    """Points that differ in clock and SM count only: one SM description."""
    return _pack([1.53, 0.9, 1.2, 1.53], [80, 7, 40, 80])


@pytest.fixture()
def mixed():
    """Points of two SM descriptions (a V100 and an H100)."""
    return _pack([1.53, 0.9], [80, 7], [presets.load_preset("gpu/h100-sxm5-80gb")])


@pytest.mark.parametrize("a, b", [(2.0, 2.0), (4.0, 4.0), (1.0, 2.0)])
def test_uniform_occupancy_is_the_general_table(uniform, a, b):
    got = kn._uniform_occupancy(uniform, a, b)
    assert got is not None
    want = kn._occupancy_table(uniform, np.full(uniform.n, a), np.full(uniform.n, b))
    for x, y in zip(got, want, strict=True):
        assert x.dtype == y.dtype and x.shape == y.shape and x.flags.c_contiguous
        np.testing.assert_array_equal(x, y)


def test_uniform_occupancy_declines_several_sm_descriptions(mixed):
    assert kn._uniform_occupancy(mixed, 2.0, 2.0) is None
    table, rows = kn._pair_occupancy(mixed, 2.0, 2.0, kn.GEMM_LIBRARY)
    want_table, want_rows = kn._occupancy_table(mixed, np.full(mixed.n, 2.0), np.full(mixed.n, 2.0))
    np.testing.assert_array_equal(table, want_table)
    np.testing.assert_array_equal(rows, want_rows)


@pytest.mark.parametrize("library", kn.LIBRARIES)
def test_search_points_are_the_general_table(mixed, library):
    per_point = [getattr(mixed, f) for f in engine.POINT_FIELDS]
    if library != kn.GEMM_LIBRARY:
        per_point[engine.POINT_FIELDS.index("gemm_max_split_k")] = float(max(kn.SPLIT_K))
    want = kn._point_table(per_point, mixed.n)
    got = kn._search_points(mixed, library)
    assert got.dtype == want.dtype and got.shape == want.shape and got.flags.c_contiguous
    assert not got.flags.writeable
    np.testing.assert_array_equal(got, want)


SHAPES = [[4096, 1024, 768, 1], [35, 8192, 500, 2], [128, 64, 4096, 12], [1000, 1000, 1000, 1]]


@pytest.mark.parametrize("pack", ["uniform", "mixed"])
@pytest.mark.parametrize("library", kn.LIBRARIES)
def test_grid_equals_one_gemm_at_a_time(request, pack, library):
    p = request.getfixturevalue(pack)
    g, h = len(SHAPES), p.n
    rate, eff = p.tensor_flop_per_cycle_per_sm["fp16"], p.tensor_efficiency
    dram = np.arange(1, g * h + 1, dtype=np.float64) * 3e6
    m, n, k, b = np.asarray(SHAPES, dtype=np.float64).T
    grid = kn.gpu_gemm_grid(p, m, n, k, b, np.full(g, 2.0), np.full(g, 2.0), np.full(g, 2.0), rate, eff, dram,
                            np.full(g * h, 0.75), library=library)
    for i, shape in enumerate(SHAPES):
        alone = kn.gpu_gemm(p, *shape, 2.0, 2.0, 2.0, rate, eff, dram[i * h:(i + 1) * h], np.full(h, 0.75),
                            library=library)
        for name in engine.OUT_FIELDS:
            np.testing.assert_array_equal(getattr(grid, name)[i * h:(i + 1) * h], getattr(alone, name))


@pytest.mark.parametrize("order", [(4, 2, 7, 1), (1, 3, 3, 2)])
def test_grid_rows_are_repeat_and_tile(uniform, order):
    # A pack keeps the rows of its largest grid so far; each grid reads its own rows whatever came before.
    h = uniform.n
    for g in order:
        op_row, points = kn._grid_rows(uniform, g)
        for got, want in ((op_row, np.repeat(np.arange(g, dtype=np.int64), h)),
                          (points, np.tile(np.arange(h, dtype=np.int64), g))):
            assert got.dtype == want.dtype and got.flags.c_contiguous and got.flags.writeable
            np.testing.assert_array_equal(got, want)
