"""A convolution's channel-padding configurations (``gpu.precision_configs``: the one-configuration fast
path) and the timed algorithm pick (``gpu.pick_timed``: only the kept tile facts selected) equal their
general forms: same configurations in the same order, same masks; same arrays, dtypes and key orders."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from archsim import presets
from archsim.cost import gpu as gc
from archsim.cost.params import GPUParams
from archsim.cost.types import CostArrays


def _configs_by_set(p, prec: str):
    """The general form: the sorted set of every point's (multiple, transposes)."""
    use_tc = p.tensor_flop_per_cycle_per_sm[prec] > 0
    mult = np.where(use_tc, p.tensor_channel_multiple, 1.0)
    trans = np.where(use_tc, p.conv_nchw_transposes, 0.0)
    keys = sorted(set(zip(mult.tolist(), trans.tolist(), strict=True)))
    return [((mult == m) & (trans == t), int(m), bool(t)) for m, t in keys]


def _assert_configs_equal(got, want) -> None:
    assert len(got) == len(want)
    for (gm, gk, gt), (wm, wk, wt) in zip(got, want, strict=True):
        assert gm.dtype == wm.dtype and gm.shape == wm.shape and np.array_equal(gm, wm)
        assert (type(gk), gk, type(gt), gt) == (type(wk), wk, type(wt), wt)


@given(st.sampled_from([1, 3, 12, gc._SET_CONFIG_POINTS, gc._SET_CONFIG_POINTS + 1, 40]), st.data())
def test_configs_equal_the_set_of_every_point_s_configuration(n, data):
    uniform = data.draw(st.booleans())

    def column(values):
        if uniform:  # one value at every point (the fast path above _SET_CONFIG_POINTS points)
            return np.full(n, data.draw(st.sampled_from(values)))
        return np.asarray(data.draw(st.lists(st.sampled_from(values), min_size=n, max_size=n)), dtype=float)

    p = SimpleNamespace(tensor_flop_per_cycle_per_sm={"fp16": column([0.0, 512.0, 1024.0])},
                        tensor_channel_multiple=column([8.0, 16.0, 1.0]),
                        conv_nchw_transposes=column([0.0, 1.0, -0.0]))
    _assert_configs_equal(gc.precision_configs(p, "fp16"), _configs_by_set(p, "fp16"))


def test_configs_of_real_packs_one_and_two_configurations():
    v100 = presets.load_preset("gpu/v100-sxm2-16gb")
    p100 = presets.load_preset("gpu/p100-16gb")
    big = gc._SET_CONFIG_POINTS + 1
    for devices in ([v100] * 5, [v100, p100, v100], [p100, p100], [v100] * big, [p100] * big, [v100, p100] * big):
        p = GPUParams.from_devices(devices)
        for prec in ("fp16", "fp32"):
            got = gc.precision_configs(p, prec)
            _assert_configs_equal(got, _configs_by_set(p, prec))
    assert len(gc.precision_configs(GPUParams.from_devices([v100] * 5), "fp16")) == 1
    assert len(gc.precision_configs(GPUParams.from_devices([v100, p100]), "fp16")) == 2


def _pick_by_full_select(a, b, a_s, b_s, allowed=None, keep=()):
    """The general form: every field selected, the tile facts then dropped or kept."""
    use_b = b_s < a_s
    if allowed is not None:
        use_b = use_b & allowed
    out = gc.select(use_b, a, b)
    if use_b.all():
        nan = np.full(use_b.shape, np.nan)
        drop = {kk: nan for kk in a.extra if kk not in keep}
    else:
        drop = {kk: np.where(use_b, np.nan, v) for kk, v in a.extra.items() if kk not in keep}
    extra = {**drop, "winograd": use_b.astype(float), **{kk: out.extra[kk] for kk in keep if kk in out.extra}}
    return CostArrays.from_fields({**out.__dict__, "extra": extra})


def _cost(rng, n: int, extra_keys: list[str], dispatch: bool) -> CostArrays:
    def arr():
        return rng.random(n)

    def dct(keys):
        return {k: arr() for k in keys}

    return CostArrays(kind="conv2d", device="gpu", flop=1.0, latency_s=arr(),
                      time_by_unit_s=dct(["compute:tensor", "memory:dram"]), bytes_by_level=dct(["l2", "dram"]),
                      flop_by_unit=dct(["tensor:fp16"]), read_bytes=dct(["dram"]), write_bytes=dct(["dram"]),
                      dram_activations=arr(), link_bytes=arr(), overhead_s=arr(), launches=arr(),
                      energy_breakdown_j=dct(["compute", "dram"]), static_power_w=arr(), extra=dct(extra_keys),
                      dispatch_s=arr() if dispatch else None)


def _assert_same(got: CostArrays, want: CostArrays) -> None:
    for name, w in want.__dict__.items():
        g = getattr(got, name)
        if isinstance(w, dict):
            assert list(g) == list(w), name
            for k in w:
                assert g[k].dtype == w[k].dtype and np.array_equal(g[k], w[k], equal_nan=True), (name, k)
        elif isinstance(w, np.ndarray):
            assert g.dtype == w.dtype and np.array_equal(g, w, equal_nan=True), name
        else:
            assert g == w, name


@given(st.integers(1, 9), st.integers(0, 2**32 - 1), st.sampled_from(["mixed", "a", "b"]), st.booleans(),
       st.booleans(), st.sampled_from([(), ("clock_hz", "power_w", "power_limited"), ("power_w", "absent")]))
def test_pick_timed_equals_the_pick_by_a_full_select(n, seed, side, with_allowed, dispatch, keep):
    rng = np.random.default_rng(seed)
    a = _cost(rng, n, ["tile_m", "waves", "clock_hz", "power_w", "power_limited"], dispatch)
    b = _cost(rng, n, ["power_limited", "clock_hz", "power_w", "b_only"], dispatch and seed % 2 == 0)
    a_s, b_s = rng.random(n), rng.random(n)
    if side != "mixed":
        b_s = a_s + (1.0 if side == "a" else -1.0)
    allowed = rng.random(n) < 0.7 if with_allowed else None
    _assert_same(gc.pick_timed(a, b, a_s, b_s, allowed, keep), _pick_by_full_select(a, b, a_s, b_s, allowed, keep))
