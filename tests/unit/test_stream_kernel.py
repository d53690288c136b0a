"""The streaming-kernel model's array arithmetic: the loaded-latency bandwidth of an array of points
equals its documented expression to the last bit (mixed memories included), and a stacked
``gpu_stream`` leaves its inputs unchanged."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import archsim.presets as presets
from archsim.cost import kernels as kn
from archsim.cost.params import GPUParams

_POSITIVE = st.floats(1e-9, 1e13, allow_nan=False)


@settings(max_examples=60, deadline=None)
@given(rows=st.lists(st.tuples(_POSITIVE, _POSITIVE, st.floats(1e-8, 1e-5), st.sampled_from([0.0, 0.111, 0.5, 1.0])),
                     min_size=1, max_size=12),
       one_latency=st.booleans())
def test_loaded_bandwidth_of_arrays_is_the_expression(rows, one_latency):
    peak, inflight, latency, c = (np.asarray(v, dtype=np.float64) for v in zip(*rows, strict=True))
    if one_latency:
        latency = float(latency[0])
    knee = np.minimum(peak, inflight / latency)
    x = inflight / peak
    rho = 2.0 * x / (latency + x + np.sqrt((latency - x) ** 2 + 4.0 * c * latency * x))
    want = np.where(c > 0.0, peak * rho, knee)
    got = kn.loaded_little_bandwidth(peak, inflight, latency, c)
    assert got.shape == want.shape
    assert np.array_equal(got.view(np.int64), want.view(np.int64))


def test_stacked_stream_leaves_its_inputs_unchanged():
    p = GPUParams.from_devices([presets.load_preset("gpu/v100-sxm2-16gb"), presets.load_preset("gpu/t4")])
    tiled = p.tiled(3)
    n = tiled.n
    inputs = [np.linspace(0.0, 1e9, n), np.linspace(1e3, 1e8, n), np.linspace(1e3, 1e9, n),
              np.linspace(1e3, 1e9, n), tiled.vector_flop_per_cycle_per_sm["fp32"], np.linspace(1.0, 1e7, n)]
    bps = np.tile(kn.stream_blocks_per_sm(p), 3)
    bps.flags.writeable = False
    before = [v.copy() for v in inputs]
    got = kn.gpu_stream(tiled, *inputs, blocks_per_sm=bps)
    for value, kept in zip(inputs, before, strict=True):
        np.testing.assert_array_equal(value, kept)
    assert got.blocks.shape == (n,) and got.achieved_occupancy.max() <= 1.0
