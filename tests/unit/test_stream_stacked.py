"""The compiled streaming-kernel model of a stacked pass (``kernels.gpu_stream_stacked``) gives the
floats of the array model (``kernels.gpu_stream`` on the tiled pack, each kernel's values repeated)
to the bit: loaded and unloaded DRAM latency, odd point values (zero, negative, infinite, NaN)
and kernels without vector FLOP or bytes included."""

import dataclasses

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import archsim.presets as presets
from archsim.cost import kernels as kn
from archsim.cost.params import GPUParams

_ODD = st.sampled_from([0.0, -0.0, 1.0, -1.0, np.inf, np.nan])
_FIELDS = ("sm_count", "clock_hz", "vector_efficiency", "sfu_per_sm", "l2_bandwidth_bytes_per_s",
           "l2_bandwidth_efficiency", "dram_bandwidth_bytes_per_s", "dram_bandwidth_efficiency", "l2_latency_s",
           "dram_latency_s", "dram_loaded_latency_coefficient")


def _pack(seed: int, odd: list[tuple[int, int, float]]) -> GPUParams:
    """V100, T4 and H100 points with their fields scaled at random and a few odd values set."""
    base = GPUParams.from_devices([presets.load_preset("gpu/v100-sxm2-16gb"), presets.load_preset("gpu/t4"),
                                   presets.load_preset("gpu/h100-sxm5-80gb")])
    rng = np.random.default_rng(seed)
    changed = {f: getattr(base, f) * rng.choice([0.5, 1.0, 2.0], base.n) for f in _FIELDS}
    for field, point, value in odd:
        changed[_FIELDS[field % len(_FIELDS)]][point % base.n] = value
    return dataclasses.replace(base, **changed)


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and np.array_equal(np.asarray(a, dtype=np.float64).view(np.int64),
                                                 np.asarray(b, dtype=np.float64).view(np.int64))


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), g=st.integers(1, 5),
       odd=st.lists(st.tuples(st.integers(0, 100), st.integers(0, 2), _ODD), max_size=3),
       zeros=st.booleans())
def test_stacked_stream_equals_the_array_model(seed, g, odd, zeros):
    p = _pack(seed, odd)
    rng = np.random.default_rng(seed)
    h = p.n
    vector = rng.random(g) * 1e9 * (rng.random(g) > 0.3 if zeros else 1.0)
    special = rng.random(g) * 1e6 * (rng.random(g) > 0.5 if zeros else 1.0)
    threads = np.fmax(1.0, rng.random(g) * 1e7)
    dram = rng.random(g * h) * 1e9 * (rng.random(g * h) > 0.3 if zeros else 1.0)
    l2 = np.maximum(rng.random(g * h) * 1e9, dram)
    with np.errstate(all="ignore"):
        _assert_stacked_is_the_array_model(p, "fp32", vector, special, threads, l2, dram)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), small=st.integers(0, 3))
def test_filled_and_partly_filled_point_blocks_equal_the_array_model(seed, small):
    # 70 points (two blocks of points): kernels from one thread to millions, so that a kernel fills
    # every point of a block, some of them or none (each block its own path), SM counts from 8 to 160.
    devices = [presets.load_preset(name) for name in ("gpu/v100-sxm2-16gb", "gpu/t4", "gpu/h100-sxm5-80gb")]
    base = GPUParams.from_devices([devices[i % 3] for i in range(70)])
    rng = np.random.default_rng(seed)
    p = dataclasses.replace(base, sm_count=rng.choice([8.0, 40.0, 80.0, 160.0], base.n))
    h, g = p.n, 4
    threads = np.asarray([1.0, 10.0 ** (2 + small), 3e5, 5e7])
    vector, special = rng.random(g) * 1e9, rng.random(g) * 1e6
    dram = rng.random(g * h) * 1e9
    l2 = np.maximum(rng.random(g * h) * 1e9, dram)
    _assert_stacked_is_the_array_model(p, "fp16", vector, special, threads, l2, dram)


def _assert_stacked_is_the_array_model(p, dtype, vector, special, threads, l2, dram):
    """``gpu_stream_stacked`` over pack ``p`` equals ``gpu_stream`` over the tiled pack, field by field
    to the bit (``vector``, ``special``, ``threads``: per kernel; ``l2``, ``dram``: per row)."""
    g, h = len(vector), p.n
    bps = np.tile(kn.stream_blocks_per_sm(p), g)
    bps.flags.writeable = False
    tiled = p.tiled(g)
    want = kn.gpu_stream(tiled, np.repeat(vector, h), np.repeat(special, h), l2, dram,
                         tiled.vector_flop_per_cycle_per_sm[dtype], np.repeat(threads, h), blocks_per_sm=bps)
    got = kn.gpu_stream_stacked(p, dtype, vector, special, threads, l2, dram, bps)
    for f in dataclasses.fields(kn.StreamKernel):
        assert _same(getattr(got, f.name), getattr(want, f.name)), f.name


def _same_tree(a, b) -> bool:
    """Two stream_parts results (tuples of arrays, numbers and dicts of them) equal to the bit."""
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same_tree(a[k], b[k]) for k in a)
    if isinstance(a, tuple):
        return len(a) == len(b) and all(_same_tree(x, y) for x, y in zip(a, b, strict=True))
    return _same(np.broadcast_to(np.asarray(a, dtype=np.float64), np.shape(b)), np.asarray(b, dtype=np.float64))


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), g=st.integers(1, 4), l2_rows=st.booleans())
def test_stacked_stream_parts_equal_the_repeated_values(seed, g, l2_rows):
    # stream_parts of G kernels from their values once (stacked) equals it from the values repeated
    # over the points (the array model), zero input and output bytes (no write share) included.
    from archsim.cost import gpu as gc

    p = _pack(seed, [])
    rng = np.random.default_rng(seed)
    h = p.n
    values = np.column_stack([rng.choice([1.0, 2.0, 4.0], g), rng.random(g) * 1e9, rng.random(g) * 1e6,
                              rng.random(g) * 1e8 * (rng.random(g) > 0.3), rng.random(g) * 1e8 * (rng.random(g) > 0.3)])
    threads = np.fmax(1.0, rng.random(g) * 1e7)
    dram = rng.random(g * h) * 1e9
    l2 = rng.random(g * h) * 2e9 if l2_rows else None
    bps = np.tile(kn.stream_blocks_per_sm(p), g)
    bps.flags.writeable = False
    tiled = p.tiled(g)
    e, vector, special, in_b, out_b = values.repeat(h, axis=0).T
    want = gc.stream_parts(tiled, "fp16", e, vector, special, in_b, out_b, dram, threads.repeat(h), l2_bytes=l2,
                           blocks_per_sm=bps)
    got = gc.stream_parts(tiled, "fp16", None, None, None, None, None, dram, l2_bytes=l2, blocks_per_sm=bps,
                          stacked=(p, values, threads))
    assert _same_tree(got, want)
