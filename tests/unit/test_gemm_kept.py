"""The GEMM kernel model's values kept on a parameter pack (occupancy tables, the search's point
table) and its fast assembly: a kept value gives the figures of a fresh build, a pack view with a
field replaced builds its own, and GEMMs of several element-size pairs match one GEMM at a time."""

import numpy as np
import pytest

import archsim.presets as presets
from archsim.cost import gemm_search as engine
from archsim.cost import kernels as kn
from archsim.cost.params import GPUParams


@pytest.fixture()
def params():
    base = presets.load_preset("gpu/v100-sxm2-16gb")
    dump = base.model_dump()
    small = presets.validate_hardware({**dump, "sm_count": 7, "clock": "0.9 GHz"})
    return GPUParams.from_devices([base, small, presets.load_preset("gpu/h100-sxm5-80gb")])


def _figures(kernel):
    return np.stack([getattr(kernel, name) for name in engine.OUT_FIELDS])


def _grid(p, shapes, elems, library=kn.GEMM_LIBRARY):
    g = len(shapes)
    rate, eff = p.tensor_flop_per_cycle_per_sm["fp16"], p.tensor_efficiency
    dram = np.arange(1, g * p.n + 1, dtype=np.float64) * 3e6
    m, n, k, b = np.asarray(shapes, dtype=np.float64).T
    a_b, b_b = np.asarray(elems, dtype=np.float64).T
    return kn.gpu_gemm_grid(p, m, n, k, b, a_b, b_b, np.full(g, 2.0), rate, eff, dram, np.full(g * p.n, 0.75),
                            library=library)


SHAPES = [[4096, 1024, 768, 1], [35, 8192, 500, 2], [128, 64, 4096, 12], [1000, 1000, 1000, 1]]


@pytest.mark.parametrize("library", kn.LIBRARIES)
def test_kept_tables_give_the_figures_of_a_fresh_pack(params, library):
    elems = [[2.0, 2.0], [4.0, 4.0], [2.0, 2.0], [1.0, 2.0]]
    first = _figures(_grid(params, SHAPES, elems, library))
    assert kn._KEPT_KEY in params.__dict__  # occupancy and point tables kept on the pack
    again = _figures(_grid(params, SHAPES, elems, library))
    np.testing.assert_array_equal(again, first)
    params.__dict__.pop(kn._KEPT_KEY)
    np.testing.assert_array_equal(_figures(_grid(params, SHAPES, elems, library)), first)


def test_several_element_pairs_equal_one_gemm_at_a_time(params):
    # Each GEMM's rows read the occupancy of its own element sizes, in a grid of mixed pairs as alone.
    elems = [[2.0, 2.0], [4.0, 4.0], [1.0, 2.0], [4.0, 4.0]]
    grid = _figures(_grid(params, SHAPES, elems))
    h = params.n
    for g, (shape, elem) in enumerate(zip(SHAPES, elems, strict=True)):
        params.__dict__.pop(kn._KEPT_KEY, None)
        rate, eff = params.tensor_flop_per_cycle_per_sm["fp16"], params.tensor_efficiency
        dram = np.arange(1, len(SHAPES) * h + 1, dtype=np.float64)[g * h:(g + 1) * h] * 3e6
        alone = kn.gpu_gemm(params, *shape, elem[0], elem[1], 2.0, rate, eff, dram, np.full(h, 0.75))
        np.testing.assert_array_equal(grid[:, g * h:(g + 1) * h], _figures(alone))


def test_per_point_element_sizes_in_gpu_gemm(params):
    # gpu_gemm with a different GEMM (and element-size pair) at each point equals each GEMM alone there.
    h = params.n
    rate, eff = params.tensor_flop_per_cycle_per_sm["fp16"], params.tensor_efficiency
    m, n, k = np.array([512.0, 77.0, 4096.0]), np.array([256.0, 4096.0, 64.0]), np.array([128.0, 900.0, 2048.0])
    a_b, b_b = np.array([2.0, 4.0, 1.0]), np.array([2.0, 4.0, 2.0])
    dram = np.array([1e6, 2e7, 3e5])
    mixed = _figures(kn.gpu_gemm(params, m, n, k, 1, a_b, b_b, 2.0, rate, eff, dram))
    for i in range(h):
        alone = _figures(kn.gpu_gemm(params, m[i], n[i], k[i], 1, a_b[i], b_b[i], 2.0, rate, eff, dram))
        np.testing.assert_array_equal(mixed[:, i], alone[:, i])


def test_a_view_with_an_sm_field_replaced_builds_its_own(params):
    before = _figures(_grid(params, SHAPES[:2], [[2.0, 2.0]] * 2))
    view = object.__new__(GPUParams)
    view.__dict__.update({**params.__dict__, "max_blocks": np.full(params.n, 1.0)})  # the kept values copied too
    limited = _figures(_grid(view, SHAPES[:2], [[2.0, 2.0]] * 2))
    view.__dict__.pop(kn._KEPT_KEY)
    np.testing.assert_array_equal(_figures(_grid(view, SHAPES[:2], [[2.0, 2.0]] * 2)), limited)
    assert not np.array_equal(limited, before)
    np.testing.assert_array_equal(_figures(_grid(params, SHAPES[:2], [[2.0, 2.0]] * 2)), before)


def test_unknown_library_is_refused(params):
    with pytest.raises(ValueError, match="unknown GEMM kernel library"):
        _grid(params, SHAPES[:1], [[2.0, 2.0]], library="cublaslt")


def test_stream_blocks_per_sm_kept_per_block_shape(params):
    first = kn.stream_blocks_per_sm(params)
    assert kn.stream_blocks_per_sm(params) is first and not first.flags.writeable
    big = kn.stream_blocks_per_sm(params, threads_per_block=1024, registers_per_thread=64.0, shared_per_block=4096.0,
                                  max_blocks_per_sm=3.0)
    params.__dict__.pop(kn._KEPT_KEY)
    np.testing.assert_array_equal(kn.stream_blocks_per_sm(params), first)
    np.testing.assert_array_equal(kn.stream_blocks_per_sm(params, 1024, 64.0, 4096.0, 3.0), big)
    assert not np.array_equal(big, first)


@pytest.mark.parametrize("rows", [[[2.0, 2.0]] * 5, [[2.0, 4.0], [2.0, 4.0], [1.0, 2.0], [2.0, 4.0]],
                                  [[np.nan, 2.0], [np.nan, 2.0]], [[4.0, 4.0]]])
def test_unique_rows_is_numpy_unique(rows):
    table = np.asarray(rows, dtype=np.float64)
    keys, inverse = kn._unique_rows(table)
    want_keys, want_inverse = np.unique(table, axis=0, return_inverse=True)
    np.testing.assert_array_equal(keys, want_keys)
    np.testing.assert_array_equal(np.ravel(inverse), np.ravel(want_inverse))
