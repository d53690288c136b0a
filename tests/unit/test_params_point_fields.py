"""The GPU pack's per-point fields read from plain GPUDevices' ``__dict__`` equal their attributes."""

from hypothesis import assume, given, settings
from hypothesis import strategies as st

import archsim
from archsim.cost import params
from archsim.errors import SchemaError

_GPU = archsim.load_preset("gpu/h100-sxm5-80gb")

_CLOCKS = st.one_of(st.none(), st.floats(min_value=1e8, max_value=3e9))
_LIMITS = st.one_of(st.none(), st.floats(min_value=100.0, max_value=700.0))


@settings(max_examples=40)
@given(st.lists(st.tuples(_CLOCKS, _LIMITS), min_size=1, max_size=5))
def test_point_fields_equal_the_attribute_walk(updates):
    try:
        devices = [_GPU.model_copy(update={"tensor_clock_hz": c, "power_limit_w": p}) for c, p in updates]
    except SchemaError:  # a value the GPU's rules refuse
        assume(False)
    got = params._point_fields(devices)
    want = tuple(zip(*map(params._GPU_POINT_FIELDS, devices), strict=True))
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert tuple(g) == w
        assert all(a is b or (type(a) is type(b) and a == b) for a, b in zip(g, w, strict=True))
