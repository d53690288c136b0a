"""A grid's keys and chunks made from its levels (the product order) against the per-point path
(each axis's values encoded per distinct value object) and the per-point encoding itself."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from archsim._version import __version__
from archsim.presets import load_preset
from archsim.sweep import Sweep, _Chunks
from archsim.sweep.store import point_key

_V100 = load_preset("gpu/v100-sxm2-16gb")
_LEVELS: dict[str, Any] = {
    "gpu.dram.bandwidth": st.sampled_from(["600 GB/s", "900 GB/s", "1.1 TB/s", "750000000000.0 B/s"]),
    "gpu.sm_count": st.sampled_from([1, 40, 80, 2]),
    "gpu.l2.size": st.sampled_from(["6 MiB", "5000000 B", "3 MiB"]),
    "gpu.clock": st.sampled_from(["1.2 GHz", "1530 MHz"]),
}


def _general(sweep: Sweep) -> Sweep:
    """``sweep`` with its grid forgotten: keys and chunks from the points' values one by one."""
    sweep._grid = None
    return sweep


@st.composite
def _grids(draw: Any) -> dict[str, list[Any]]:
    names = draw(st.lists(st.sampled_from(sorted(_LEVELS)), min_size=1, max_size=3, unique=True))
    return {name: draw(st.lists(_LEVELS[name], min_size=1, max_size=4, unique=True)) for name in names}


@settings(max_examples=60, deadline=None)
@given(_grids(), st.integers(1, 7), st.integers(1, 3))
def test_grid_keys_and_chunks_are_the_per_point_ones(axes: dict[str, list[Any]], size: int, step: int) -> None:
    grid, general = Sweep(_V100, axes), _general(Sweep(_V100, axes))
    assert grid._grid is not None
    keys = grid._keys((1e12, 1e9), "toy-v1")
    assert keys == general._keys((1e12, 1e9), "toy-v1")
    pending = list(range(0, len(keys), step))  # a resumed run: some points finished already
    got, want = _Chunks(grid, keys, pending, size), _Chunks(general, keys, pending, size)
    assert got._levels is not None and want._levels is None
    assert len(got) == len(want) and all(list(got[i]) == list(want[i]) for i in range(len(got)))
    work = "repr:" + hashlib.sha256(repr((1e12, 1e9)).encode()).hexdigest()
    for p, task in zip(pending, [t for i in range(len(got)) for t in got[i]], strict=True):
        overrides = tuple((a.path, a.encode(v)) for a, v in zip(grid.axes, grid._values[p], strict=True))
        assert task.overrides == overrides and task.key == keys[p]
        assert keys[p] == point_key(_V100.content_hash(), overrides, work, "toy-v1", __version__)


@pytest.mark.parametrize("axes", [{"gpu.sm_count": [40, 80], "workload.batch": [1, 2]},
                                  {"gpu.sm_count": [40, 80]}])
def test_grids_with_workload_axes_and_random_samplers_keep_the_per_point_path(axes: dict[str, Any]) -> None:
    sweep = Sweep(_V100, axes)
    keys = sweep._keys("resnet18", "toy-v1")
    chunks = _Chunks(sweep, keys, list(range(len(keys))), 8)
    assert (chunks._levels is None) == ("workload.batch" in axes)
    assert keys == _general(Sweep(_V100, axes))._keys("resnet18", "toy-v1")
    assert Sweep(_V100, {"gpu.sm_count": [40, 80]}, sampler="random", n=4)._grid is None
