"""``archsim.engines.many_columns`` gives ``estimate_many``'s frame columns to the bit, with its errors."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

import archsim
from archsim import engines
from archsim.engines import estimate_many, many_columns
from archsim.errors import EngineError
from archsim.workload import zoo


def _points(n: int) -> list:
    hw = archsim.load_preset("gpu/h100-sxm5-80gb")
    return [hw.model_copy(update={"sm_count": hw.sm_count - i}) for i in range(n)]


def _same_columns(columns: dict[str, np.ndarray], frame: pd.DataFrame) -> None:
    assert list(columns) == [str(c) for c in frame.columns]
    for name, values in columns.items():
        assert values.dtype == np.float64
        assert values.tobytes() == frame[name].to_numpy(dtype=float).tobytes()


@pytest.mark.parametrize("overlap", [False, True])
def test_columns_equal_the_frame(overlap):
    g = zoo.resnet18(batch=2, dtype="fp16")
    points = _points(5)
    frame = estimate_many(g, points, overlap=overlap)
    assert frame.index.name == "point" and list(frame.index) == list(range(5))
    _same_columns(many_columns(g, points, overlap=overlap), frame)


def test_columns_with_a_software_profile_equal_the_frame():
    g = zoo.resnet18(batch=1, dtype="fp16")
    system = archsim.load_preset("system/h100-node")
    frame = estimate_many(g, [system], software="pytorch-eager")
    _same_columns(many_columns(g, [system], software="pytorch-eager"),
                  frame.select_dtypes("number"))


def test_columns_refuse_what_the_frame_refuses():
    g = zoo.resnet18(batch=1, dtype="fp16")
    points = _points(2)
    for kwargs in ({"streams": 2}, {"overlap": 1}, {"device": "tpu"}, {"threads": 0}):
        with pytest.raises(EngineError) as want:
            estimate_many(g, points, **kwargs)
        with pytest.raises(EngineError) as got:
            many_columns(g, points, **kwargs)
        assert str(got.value) == str(want.value)
    with pytest.raises(EngineError) as want:
        estimate_many(g, [])
    with pytest.raises(EngineError) as got:
        many_columns(g, [])
    assert str(got.value) == str(want.value)


_VALUES = st.floats(allow_nan=True, allow_infinity=True, width=64)


@given(st.lists(st.tuples(_VALUES, _VALUES), min_size=1, max_size=6))
def test_column_checks_equal_the_frame_checks(rows):
    # A negative, infinite or NaN latency or energy: the same error text, naming the same point.
    columns = {"latency_s": np.array([r[0] for r in rows]), "energy_j": np.array([r[1] for r in rows])}
    frame = pd.DataFrame(columns)
    frame.index.name = "point"
    try:
        engines._checked_frame(frame)
    except EngineError as exc:
        with pytest.raises(EngineError) as got:
            engines._checked_columns(columns)
        assert str(got.value) == str(exc)
    else:
        assert engines._checked_columns(columns) is columns


@pytest.mark.parametrize("overlap", [False, True])
def test_points_beyond_a_chunk_are_costed_in_chunks_with_the_same_columns(monkeypatch, overlap):
    # 7 points in chunks of 3 (3 + 3 + 1): each column is the one pass's, to the bit.
    from archsim.engines import roofline

    g = zoo.resnet18(batch=2, dtype="fp16")
    points = _points(7)
    whole = many_columns(g, points, overlap=overlap)
    seen = []
    one_pass = roofline._point_columns
    monkeypatch.setattr(roofline, "_point_columns", lambda w, hw, *a: seen.append(len(hw)) or one_pass(w, hw, *a))
    monkeypatch.setattr(roofline, "MANY_CHUNK_POINTS", 3)
    chunked = many_columns(g, points, overlap=overlap)
    assert seen == [3, 3, 1]
    assert list(chunked) == list(whole)
    for name, values in whole.items():
        assert chunked[name].tobytes() == values.tobytes()


def test_chunks_with_other_components_fall_back_to_one_pass(monkeypatch):
    # A point without a power model has no leakage or clock energy of its own: chunks of such points
    # name fewer components than chunks with a power model, so the columns come from one pass.
    from archsim.engines import roofline

    g = zoo.resnet18(batch=1, dtype="fp16")
    hw = archsim.load_preset("gpu/h100-sxm5-80gb")
    bare = hw.model_copy(update={"power": None})
    points = [hw, hw, bare, bare]
    whole = many_columns(g, points)
    monkeypatch.setattr(roofline, "MANY_CHUNK_POINTS", 2)
    chunked = many_columns(g, points)
    assert list(chunked) == list(whole)
    for name, values in whole.items():
        assert chunked[name].tobytes() == values.tobytes()
