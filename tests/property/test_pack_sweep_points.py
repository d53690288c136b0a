"""The GPU pack of sweep points (devices sharing their base's untouched sub-tables, a few values
repeated) against each device's own row, to the bit: the shared-column and shared-object shortcuts
of archsim.cost.params._gpu_rows, the identity numbering (_distinct_objects, _distinct_keys) against
the general _distinct, and the kept rows of a pack read back by the next one."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import archsim
from archsim.cost import params
from archsim.sweep.columns import ChunkBuilder
from archsim.sweep.points import PointBuilder

GPU_PRESETS = [p for p in archsim.list_presets() if p.startswith("gpu/")]


def _row(g: Any) -> np.ndarray:
    return np.asarray(params._gpu_row(g), dtype=np.float64)


def _sweep_points(base: Any, data: Any) -> list[Any]:
    """Points of a sweep chunk of ``base``: each axis drawn on or off, a few levels each."""
    paths: list[tuple[tuple[str, ...], list[Any]]] = []
    if data.draw(st.booleans()):
        bw = base.dram.bandwidth_bytes_per_s
        paths.append((("dram", "bandwidth"), [f"{bw * f!r} B/s" for f in data.draw(
            st.lists(st.sampled_from([0.25, 0.5, 0.75, 1.0]), min_size=1, max_size=4, unique=True))]))
    if data.draw(st.booleans()):
        paths.append((("sm_count",), data.draw(st.lists(st.integers(1, base.sm_count), min_size=1, max_size=4,
                                                          unique=True))))
    if data.draw(st.booleans()):
        paths.append((("clock",), [f"{base.clock_hz * f!r} Hz" for f in data.draw(
            st.lists(st.sampled_from([0.5, 0.9, 1.0]), min_size=1, max_size=3, unique=True))]))
    if data.draw(st.booleans()):
        paths.append((("l2", "size"), [f"{base.l2.size_bytes * f!r} B" for f in data.draw(
            st.lists(st.sampled_from([1.0, 2.0]), min_size=1, max_size=2, unique=True))]))
    n = data.draw(st.integers(1, 24))
    columns = [[data.draw(st.sampled_from(levels)) for _ in range(n)] for _, levels in paths]
    built = ChunkBuilder(PointBuilder(base.model_dump())).build_columns([p for p, _ in paths], columns, n)
    return [hw for hw in built if not isinstance(hw, Exception)]


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(GPU_PRESETS), st.data())
def test_sweep_points_pack_as_each_device_row(preset: str, data: Any) -> None:
    devices = _sweep_points(archsim.load_preset(preset), data)
    if not devices:
        return
    together = params._gpu_rows(devices, {})
    alone = np.stack([_row(g) for g in devices])
    assert together.dtype == alone.dtype and together.tobytes() == alone.tobytes()
    # The rows kept on the devices are read back by the next pack (and its subset with a new point).
    again = params._packed_table(devices, {})
    assert params._packed_table(devices, {}).tobytes() == again.tobytes() == alone.tobytes()


def test_models_of_other_classes_are_read_by_attribute() -> None:
    g = archsim.load_preset("gpu/v100-sxm2-16gb")
    sub = type("GPUSub", (type(g),), {})
    devices = [g, sub.model_validate(g.model_dump()), g.model_copy(update={"sm_count": 40})]
    assert params._gpu_rows(devices, {}).tobytes() == np.stack([_row(d) for d in devices]).tobytes()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 5), min_size=1, max_size=40), st.lists(st.integers(0, 2), min_size=40, max_size=40),
       st.lists(st.sampled_from([1.0, 2.0, 0.5]), min_size=40, max_size=40))
def test_identity_numbering_is_distinct_of_the_ids(picks: list[int], other: list[int], values: list[float]) -> None:
    pool = [object() for _ in range(6)]
    objects = [pool[i] for i in picks]
    n = len(objects)
    first, code = params._distinct_objects(objects)
    want_first, want_code = params._distinct(map(id, objects))
    assert first == want_first and code.tolist() == want_code.tolist()
    same = [pool[0]] * n
    second = [pool[i] for i in other[:n]]
    floats = values[:n]
    for columns in ([(same, True)], [(objects, True), (same, True)], [(objects, True), (second, True)],
                    [(same, True), (floats, False)], [(objects, True), (floats, False), (same, True)]):
        got_first, got_code = params._distinct_keys(n, columns, {id(objects): (first, code)})
        want_first, want_code = params._distinct(
            zip(*[map(id, c) if by_id else iter(c) for c, by_id in columns], strict=True))
        assert got_first == want_first and got_code.tolist() == want_code.tolist()
