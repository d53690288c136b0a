"""Loaded DRAM latency of streaming kernels (``dram.loaded_latency_coefficient``, kernels.loaded_little_bandwidth)."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from archsim import ops
from archsim.cost import kernels as kn
from archsim.engines import estimate, estimate_many
from archsim.errors import ArchsimError, SchemaError
from archsim.presets import load_preset, validate_hardware


def _bw(peak: float, inflight: float, latency: float, c: float) -> float:
    return float(kn.loaded_little_bandwidth(np.array([peak]), np.array([inflight]), np.array([latency]),
                                            np.array([c]))[0])


def test_hand_computed_root() -> None:
    # peak 1 TB/s, 1 MB in flight, L0 = 500 ns, c = 0.5: x = N / peak = 1000 ns,
    # rho = 2x / (L0 + x + sqrt((L0 - x)^2 + 4 c L0 x)) = 2000 / (1500 + sqrt(250000 + 1000000))
    #     = 2000 / (1500 + 1118.034) = 0.763932 (= 1 / golden ratio);
    # check: L = 500 (1 + 0.5 x 0.763932 / 0.236068) = 1309.017 ns and N / L = 0.763932 TB/s.
    b = _bw(1e12, 1e6, 500e-9, 0.5)
    assert b == pytest.approx(0.763932e12, rel=1e-6)
    latency = 500e-9 * (1 + 0.5 * (b / 1e12) / (1 - b / 1e12))
    assert 1e6 / latency == pytest.approx(b, rel=1e-12)


def test_zero_coefficient_is_the_sharp_knee_exactly() -> None:
    # c = 0: min(peak, N / L0), bit for bit (GDDR presets and every non-GPU memory do not move).
    peak, lat = np.array([1e12, 1e12]), np.array([500e-9, 500e-9])
    n = np.array([2e5, 9e5])
    got = kn.loaded_little_bandwidth(peak, n, lat, np.zeros(2))
    assert np.array_equal(got, np.minimum(peak, n / lat))


@settings(max_examples=60, deadline=None)
@given(peak=st.floats(1e10, 1e13), inflight=st.floats(1e3, 1e8), latency=st.floats(1e-7, 2e-6),
       c=st.one_of(st.just(0.0), st.floats(1e-3, 0.99)))
def test_root_is_the_fixed_point_and_below_the_knee(peak: float, inflight: float, latency: float, c: float) -> None:
    b = _bw(peak, inflight, latency, c)
    rho = b / peak
    assert 0.0 < rho < 1.0 or (c == 0.0 and rho == 1.0)
    assert b <= min(peak, inflight / latency) * (1 + 1e-12)
    if c > 0.0:
        loaded = latency * (1 + c * rho / (1 - rho))
        # (1 - rho) loses digits when x / L0 is huge: 1e-6 relative is what float64 keeps there.
        assert inflight / loaded == pytest.approx(b, rel=1e-6)
    # More queueing never makes the memory faster.
    assert _bw(peak, inflight, latency, min(0.99, c + 0.1)) <= b * (1 + 1e-12)


def test_coefficient_one_is_the_harmonic_form() -> None:
    # c = 1 is M/M/1 with service time L0: 1 / (1 / peak + L0 / N), kernels.achievable_bandwidth.
    b = _bw(1e12, 1e6, 500e-9, 1.0 - 1e-12)
    assert b == pytest.approx(float(kn.achievable_bandwidth(np.array(1e12), np.array(1e6 / 500e-9))), rel=1e-9)


def _read_kernel(block: int) -> ops.Kernel:
    # gpu-stream's read kernel (validation/gpu_stream.py): 8 B per thread, 2 blocks per SM.
    n = 128 * 1024 * 1024
    return ops.Kernel(name=f"read/b{block}", dtype="fp64", dram_read_bytes=8 * n, grid=n // block, block=block,
                      bytes_in_flight_per_thread=8.0, max_blocks_per_sm=2)


def _with_coefficient(hw, c: float):
    return hw.model_copy(update={"dram": hw.dram.model_copy(update={"loaded_latency_coefficient": c})})


def test_hbm_preset_reads_slower_mid_occupancy_and_gddr_unchanged() -> None:
    h200 = load_preset("gpu/h200-sxm-141gb")
    assert h200.dram.loaded_latency_coefficient == pytest.approx(0.111)
    loaded = estimate(_read_kernel(512), h200).latency_s
    knee = estimate(_read_kernel(512), _with_coefficient(h200, 0.0)).latency_s
    assert loaded > knee * 1.05
    a40 = load_preset("gpu/a40-48gb")
    assert a40.dram.loaded_latency_coefficient == 0.0


def test_stacked_path_equals_one_op_path() -> None:
    base = load_preset("gpu/h100-pcie-80gb")
    points = [_with_coefficient(base, c) for c in (0.0, 0.111, 0.3)]
    for block in (256, 1024):
        many = estimate_many(_read_kernel(block), points)
        for i, hw in enumerate(points):
            assert many.latency_s[i] == estimate(_read_kernel(block), hw).latency_s


def test_coefficient_out_of_range_is_a_one_line_error() -> None:
    data = copy.deepcopy(load_preset("memory/hbm2").model_dump(mode="json"))
    data["loaded_latency_coefficient"] = 1.0
    with pytest.raises(SchemaError) as info:
        validate_hardware(data, "test")
    assert "loaded_latency_coefficient" in str(info.value)
    assert isinstance(info.value, ArchsimError)
    assert "less than 1" in str(info.value)
