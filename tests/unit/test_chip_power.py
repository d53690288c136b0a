"""The area form of the GPU power model (archsim.energy.chip): hand-computed terms, monotonicity,
the breakdown summing to the total, and the schema's either-or rule."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import archsim
from archsim.energy.chip import REFERENCE_VDD_V, chip_power
from archsim.errors import SchemaError
from archsim.presets import load_preset

MM2 = 1e-6  # m^2


def _pw(**kw):
    base = dict(sm_area_share=0.7, leakage_power_density_w_per_m2=0.04 / MM2, leakage_voltage_exponent=3.0,
                clock_energy_density_j_per_m2=56e-12 / MM2, wire_energy_j_per_byte_m=0.121e-12 * 8 / 1e-3,
                v_max_v=0.8, v_min_v=0.72, max_voltage_clock_hz=1.41e9, min_clock_hz=0.282e9,
                phy_power_per_bandwidth_j_per_byte=5e-12)
    base.update(kw)
    return SimpleNamespace(**base)


def test_hand_computed_a100_like_die():
    # GA100: 826 mm^2, 128 SMs on the die, 108 enabled, v_max 0.8 V, 1410 MHz; idle 50 W, 1.5 W DRAM
    # background, 1555 GB/s of HBM at 5 pJ/B of PHY power (7.775 W).
    c = chip_power(_pw(), 826 * MM2, 128, 108, 50.0, 1.5, 1555e9)
    # powered area = 826 x (0.7 x 108/128 + 0.3) = 826 x 0.890625 = 735.656 mm^2
    assert c.powered_area_m2 == pytest.approx(735.65625 * MM2)
    # leakage at 0.8 V: 0.04 W/mm^2 x (0.8/0.9)^3 = 0.028093 W/mm^2; per SM 826 x 0.7 / 128 = 4.5172 mm^2
    # -> 0.126901 W; uncore 826 x 0.3 = 247.8 mm^2 -> 6.96150 W; total 108 x 0.1269 + 6.9615 = 20.667 W
    assert c.core_leakage_w == pytest.approx(0.126901, rel=1e-4)
    assert c.uncore_leakage_w == pytest.approx(6.96150, rel=1e-4)
    # clock: 56 pJ/mm^2 x 735.656 mm^2 x (0.8/0.9)^2 x 1.41 GHz = 41.196 nJ x 0.790123 x 1.41e9 = 45.894 W
    assert c.core_clock_w * 108 == pytest.approx(45.894, rel=1e-4)
    # NoC: 0.121 pJ/bit/mm = 0.968 pJ/B/mm x sqrt(826) = 28.740 mm x 0.790123 = 21.982 pJ/B
    assert c.noc_j_per_byte == pytest.approx(21.982e-12, rel=1e-4)
    # board: 50 - 1.5 - 7.775 - leakage 20.667 x 0.9^3 (15.066) - clock 45.894 x 0.2 x 0.9^2 (7.4348) = 18.224 W
    assert c.board_w == pytest.approx(18.224, rel=1e-3)


def test_board_floored_at_zero():
    assert chip_power(_pw(), 826 * MM2, 128, 108, 5.0, 1.5, 1555e9).board_w == 0.0


@settings(max_examples=60, deadline=None)
@given(area=st.floats(100, 900), grow=st.floats(1.01, 2.0), v=st.floats(0.6, 1.1), dv=st.floats(1.01, 1.3),
       f=st.floats(0.5e9, 2.5e9), df=st.floats(1.01, 2.0))
def test_leakage_and_clock_monotone_in_area_voltage_clock(area, grow, v, dv, f, df):
    def total(a, vmax, fmax):
        c = chip_power(_pw(v_max_v=vmax, v_min_v=0.9 * vmax, max_voltage_clock_hz=fmax, min_clock_hz=0.2 * fmax),
                       a * MM2, 100, 80, 1000.0, 0.0, 0.0)
        return c.core_leakage_w * 80 + c.uncore_leakage_w, c.core_clock_w * 80
    leak0, clk0 = total(area, v, f)
    for leak1, clk1 in (total(area * grow, v, f), total(area, v * dv, f)):
        assert leak1 > leak0 and clk1 > clk0
    leak2, clk2 = total(area, v, f * df)
    assert math.isclose(leak2, leak0) and clk2 > clk0


def test_static_power_scales_with_sm_count():
    c1 = chip_power(_pw(), 826 * MM2, 128, 64, 50.0, 1.5, 1555e9)
    c2 = chip_power(_pw(), 826 * MM2, 128, 128, 50.0, 1.5, 1555e9)
    assert c2.core_leakage_w * 128 + c2.uncore_leakage_w > c1.core_leakage_w * 64 + c1.uncore_leakage_w
    assert c2.core_clock_w * 128 > c1.core_clock_w * 64


def test_reference_voltage_is_the_energy_tables():
    assert REFERENCE_VDD_V == 0.9


AREA_TERMS = {"leakage_power_density": "0.04 W/mm^2", "clock_energy_density": "56 pJ/mm^2", "sm_area_share": 0.7,
              "wire_energy": "0.121 pJ/bit/mm"}
PER_UNIT = ("board_power", "core_leakage_power", "uncore_leakage_power", "core_clock_power", "noc_energy")


def area_form(preset: str):
    """``preset`` with its power model's per-unit terms replaced by the area terms."""
    g = load_preset(preset)
    d = g.model_dump()
    d["power"] = {**{k: v for k, v in d["power"].items() if k not in PER_UNIT}, **AREA_TERMS}
    return type(g).model_validate(d)


@pytest.mark.parametrize("preset", ["gpu/a100-sxm4-40gb", "gpu/h200-sxm-141gb", "gpu/a40-48gb", "gpu/t4"])
def test_breakdown_sums_to_total_and_idle_reproduced(preset):
    g = area_form(preset)
    for op in (archsim.ops.Gemm(4096, 4096, 4096, dtype="fp16"), archsim.ops.Gemm(64, 64, 65536, dtype="fp32")):
        r = archsim.estimate(op, g)
        assert sum(r.energy_breakdown_j.values()) == pytest.approx(r.energy_j, rel=1e-9)
    pw = g.power
    c = chip_power(pw, g.die_area_m2, g.die_sm_count, g.sm_count, g.static_power_w, g.dram.background_power_w,
                   g.dram.bandwidth_bytes_per_s)
    idle_v = pw.v_min_v / pw.v_max_v
    idle = (c.board_w + g.dram.background_power_w + pw.phy_power_per_bandwidth_j_per_byte * g.dram.bandwidth_bytes_per_s
            + (c.core_leakage_w * g.sm_count + c.uncore_leakage_w) * idle_v ** 3
            + c.core_clock_w * g.sm_count * pw.min_clock_hz / pw.max_voltage_clock_hz * idle_v ** 2)
    if c.board_w > 0:  # the idle power is reproduced, unless the die alone already exceeds it (board floored)
        assert idle == pytest.approx(g.static_power_w, rel=1e-9)
    else:
        assert idle >= g.static_power_w


def test_either_form_not_both():
    g = area_form("gpu/a100-sxm4-40gb")
    pw = g.power.model_dump()
    with pytest.raises(SchemaError):
        type(g.power).model_validate({**pw, "board_power": "50 W"})
    with pytest.raises(SchemaError):  # neither form complete
        type(g.power).model_validate({k: v for k, v in pw.items() if k != "wire_energy"})
    gpu = g.model_dump()
    gpu.pop("die_area")
    with pytest.raises(SchemaError):
        type(g).model_validate(gpu)
    cpu = load_preset("cpu/epyc-genoa-9654").model_dump()
    cpu["power"] = {**{k: v for k, v in cpu["power"].items() if k not in PER_UNIT}, **AREA_TERMS}
    with pytest.raises(SchemaError):
        type(load_preset("cpu/epyc-genoa-9654")).model_validate(cpu)


def test_area_form_changes_only_the_constant_terms_and_noc():
    # The per-unit presets are untouched; the area form of the same chip prices the same actions.
    # Both at the boost clock (the power limit held off): the two forms' constant terms differ, so a
    # Tensor Core GEMM near the 400 W limit would run at different clocks and V^2 scales.
    g0, g1 = (g.model_copy(update={"power_limit_w": "1 MW"})
              for g in (load_preset("gpu/a100-sxm4-40gb"), area_form("gpu/a100-sxm4-40gb")))
    op = archsim.ops.Gemm(2048, 2048, 2048, dtype="fp16")
    e0, e1 = archsim.estimate(op, g0).energy_breakdown_j, archsim.estimate(op, g1).energy_breakdown_j
    for k in ("compute", "register", "l1", "l2", "dram", "issue"):
        if k in e0:
            assert e1[k] == pytest.approx(e0[k], rel=1e-6)


def test_units_of_the_new_fields():
    from archsim.units import parse
    assert parse("826 mm^2", "area") == pytest.approx(826e-6)
    assert parse("0.04 W/mm^2", "power_per_area") == pytest.approx(4e4)
    assert parse("56 pJ/mm^2", "energy_per_area") == pytest.approx(56e-6)
    assert parse("0.121 pJ/bit/mm", "energy_per_byte_length") == pytest.approx(0.121e-12 * 8 / 1e-3)


@pytest.mark.parametrize("preset", [p for p in archsim.presets.list_presets() if p.startswith("gpu/")])
def test_every_gpu_preset_has_a_power_model_and_limit(preset):
    # Without a power model a GPU's estimate has no clock, no governor and no component energies
    # beyond the arithmetic and caches (an MI210 8192^3 fp16 GEMM averaged 63 W at 300 W TDP).
    g = load_preset(preset)
    assert g.power is not None
    r = archsim.estimate(archsim.ops.Gemm(2048, 2048, 2048, dtype="fp32"), g)
    assert 0.0 < r.ops[0].extra["clock_hz"] <= g.clock_hz
    assert r.average_power_w <= g.effective_power_limit_w * (1 + 1e-9)


def test_mi100_area_form_by_hand():
    # MI100: 750 mm^2, 120 of 128 CUs, v_max 0.85 V, 1502 MHz, 67.3 pJ/mm^2, 0.01 W/mm^2, share 0.7.
    # powered = 750 x (0.7 x 120 / 128 + 0.3) = 717.19 mm^2; (0.85 / 0.9)^2 = 0.89198
    # clock = 67.3e-12 x 717.19 x 0.89198 x 1.502e9 = 64.66 W over 120 CUs = 0.5389 W each
    # uncore leakage = 0.01 x 225 x (0.85 / 0.9)^3 = 2.25 x 0.84243 = 1.8955 W
    # NoC = 0.121e-12 x 8 J/B/mm x sqrt(750) mm x 0.89198 = 23.65 pJ/B
    g = load_preset("gpu/mi100")
    c = chip_power(g.power, g.die_area_m2, g.die_sm_count, g.sm_count, g.static_power_w,
                   g.dram.background_power_w, g.dram.bandwidth_bytes_per_s)
    assert c.powered_area_m2 == pytest.approx(717.19 * MM2, rel=1e-4)
    assert c.core_clock_w * 120 == pytest.approx(64.66, rel=1e-3)
    assert c.uncore_leakage_w == pytest.approx(1.8955, rel=1e-3)
    assert c.noc_j_per_byte == pytest.approx(23.65e-12, rel=1e-3)
