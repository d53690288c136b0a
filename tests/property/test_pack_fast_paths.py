"""The GPU parameter pack's many-point paths against their one-point forms, to the bit: the power
values computed column-wise (archsim.cost.params._power_block, _chip_power_columns) against
_power_row / chip_power, the rows of fresh devices packed together against each device's own row,
the kept rows' stacking, and dispatch's host times and GPU fast path against the general path."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import archsim
from archsim.cost import dispatch, params
from archsim.cost.types import CostOptions
from archsim.energy.chip import chip_power
from archsim.errors import EngineError, SchemaError

GPU_PRESETS = [p for p in archsim.list_presets() if p.startswith("gpu/")]

_floats = st.floats(1e-3, 1e3, allow_nan=False, allow_infinity=False)


def _variant(g: Any, data: Any) -> Any:
    """``g`` with its per-point inputs of the power values drawn anew (SM count, DRAM bandwidth and
    background, die area, static power, clock, power limit); sub-objects it does not change shared."""
    dram = g.dram.model_copy(update={
        "bandwidth_bytes_per_s": g.dram.bandwidth_bytes_per_s * data.draw(st.sampled_from([0.25, 0.5, 1.0, 1.3])),
        "background_power_w": g.dram.background_power_w * data.draw(st.sampled_from([0.0, 1.0, 3.0]))})
    die_sms = g.die_sm_count or g.sm_count
    update = {"dram": dram, "sm_count": data.draw(st.integers(1, die_sms)),
              "clock_hz": g.clock_hz * data.draw(st.sampled_from([0.1, 0.5, 1.0, 1.2])),
              "static_power_w": g.static_power_w * data.draw(st.sampled_from([0.0, 0.5, 1.0, 1e3]))}
    if g.die_area_m2 is not None:
        update["die_area_m2"] = g.die_area_m2 * data.draw(st.sampled_from([0.5, 1.0, 2.0]))
    if data.draw(st.booleans()):
        update["power_limit_w"] = f"{data.draw(_floats)!r} W"
    try:
        return g.model_copy(update=update)
    except SchemaError:  # e.g. static power above the TDP
        return g.model_copy(update={"dram": dram, "sm_count": update["sm_count"]})


def _row(g: Any) -> np.ndarray:
    return np.asarray(params._gpu_row(g), dtype=np.float64)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(GPU_PRESETS), min_size=1, max_size=3), st.data())
def test_fresh_rows_are_each_device_row(presets: list[str], data: Any) -> None:
    bases = [archsim.load_preset(p) for p in presets]
    if data.draw(st.booleans()):
        bases.append(bases[0].model_copy(update={"power": None}))
    devices = [_variant(bases[data.draw(st.integers(0, len(bases) - 1))], data)
               for _ in range(data.draw(st.integers(1, 12)))]
    together = params._gpu_rows(devices, {})
    alone = np.stack([_row(g) for g in devices])
    assert together.dtype == alone.dtype and together.tobytes() == alone.tobytes()


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_chip_power_columns_are_chip_power(data: Any) -> None:
    pw = SimpleNamespace(
        sm_area_share=data.draw(st.floats(0.05, 0.95)), leakage_power_density_w_per_m2=data.draw(_floats) * 1e4,
        leakage_voltage_exponent=data.draw(st.floats(0.5, 5.0)), clock_energy_density_j_per_m2=data.draw(_floats),
        wire_energy_j_per_byte_m=data.draw(_floats) * 1e-9, v_max_v=data.draw(st.floats(0.6, 1.2)),
        v_min_v=data.draw(st.floats(0.3, 0.6)), max_voltage_clock_hz=data.draw(_floats) * 1e6,
        min_clock_hz=data.draw(_floats) * 1e6, phy_power_per_bandwidth_j_per_byte=data.draw(_floats) * 1e-14)
    k = data.draw(st.integers(1, 6))
    die_sms = data.draw(st.integers(1, 200))
    points = [(data.draw(st.floats(1e-5, 1e-3)), die_sms, data.draw(st.integers(1, die_sms)),
               data.draw(st.floats(0.0, 800.0)), data.draw(st.floats(0.0, 100.0)), data.draw(_floats) * 1e9)
              for _ in range(k)]
    columns = zip(*points, strict=True)
    area, dies, sms, static, background, bandwidth = (np.asarray(c, dtype=np.float64) for c in columns)
    got = params._chip_power_columns(pw, area, dies, sms, static, background,
                                     pw.phy_power_per_bandwidth_j_per_byte * bandwidth)
    for i, point in enumerate(points):
        c = chip_power(pw, *point)
        want = (c.board_w, c.core_leakage_w, c.uncore_leakage_w, c.core_clock_w, c.noc_j_per_byte)
        assert np.asarray([col[i] for col in got]).tobytes() == np.asarray(want, dtype=np.float64).tobytes()


def test_kept_rows_join_as_np_stack() -> None:
    g = archsim.load_preset("gpu/h100-sxm5-80gb")
    devices = [g.model_copy(update={"sm_count": s}) for s in range(60, 132, 7)]
    fresh = params._packed_table(devices, {})
    kept = params._packed_table(devices, {})
    mixed = params._packed_table([*devices, g.model_copy(update={"sm_count": 50})], {})
    want = np.stack([_row(d) for d in devices])
    assert fresh.tobytes() == kept.tobytes() == want.tobytes() == mixed[:-1].tobytes()
    assert kept.flags.c_contiguous and kept.flags.writeable and kept.shape == want.shape


@pytest.mark.parametrize("host_dispatch", [True, False])
@pytest.mark.parametrize("with_system", [True, False])
def test_role_params_host_times_are_each_points(host_dispatch: bool, with_system: bool) -> None:
    gpu = archsim.load_preset("gpu/v100-sxm2-16gb")
    hardware: list[Any] = [gpu, gpu.model_copy(update={"sm_count": 40})]
    if with_system:
        hardware.append(archsim.load_preset("system/dgx-a100"))
    options = CostOptions(host_dispatch=host_dispatch)
    targets = [dispatch.resolve_device(h, "gemm", options)[1] for h in hardware]
    packed = dispatch.role_params("gpu", hardware, targets, options)
    want = params.GPUParams.from_devices(targets, [dispatch.host_dispatch_s(h, options) for h in hardware],
                                         [dispatch.host_launch_s(h, options) for h in hardware])
    for name in ("host_dispatch_s", "host_launch_s", "sm_count", "board_power_w"):
        assert getattr(packed, name).tobytes() == getattr(want, name).tobytes()


def _general(hardware: Any, kind: str, options: CostOptions) -> Any:
    """resolve_device of a GPUDevice subclass instance: the checks after the fast path."""
    sub = type("GPUSub", (type(hardware),), {})
    clone = sub.model_construct(**dict(hardware))
    try:
        role, target = dispatch.resolve_device(clone, kind, options)
    except EngineError as e:
        return "error", str(e).replace("GPUSub", "GPUDevice")
    return role, target is clone


@pytest.mark.parametrize("kind", ["gemm", "conv2d", "h2d", "d2h"])
@pytest.mark.parametrize("device", [None, "gpu", "host"])
def test_resolve_device_fast_path_is_the_general_path(kind: str, device: str | None) -> None:
    gpu = archsim.load_preset("gpu/t4")
    options = CostOptions(device=device)
    try:
        role, target = dispatch.resolve_device(gpu, kind, options)
        got: Any = (role, target is gpu)
    except EngineError as e:
        got = ("error", str(e))
    assert got == _general(gpu, kind, options)
