"""The per-unit (TDP-form) GPU power presets follow the shared voltage rules of their [[sources]]:
issue and NoC energies at the preset's core supply, v_max = vdd and v_min = 0.9 x v_max; and the T4's
0.85 V, read off its power-limited DeepBench GEMM rows, is what lowers its governed energy."""

from __future__ import annotations

import pytest

import archsim
from archsim.presets import list_presets, load_preset


def _per_unit_gpus():
    out = []
    for pid in list_presets():
        if not pid.startswith("gpu/"):
            continue
        gpu = load_preset(pid)
        if gpu.power is not None and gpu.power.core_clock_power_w is not None:
            out.append(pid)
    return out


PER_UNIT = _per_unit_gpus()


def test_the_per_unit_presets_are_found():
    assert {"gpu/t4", "gpu/v100-sxm2-16gb", "gpu/p100-16gb", "gpu/k80"} <= set(PER_UNIT)


@pytest.mark.parametrize("pid", PER_UNIT)
def test_issue_and_noc_energies_follow_the_core_supply(pid):
    # issue_energy = 61 pJ per nm of node x (vdd / 0.9 V)^2; noc_energy = 8 pJ/B x (vdd / 0.9 V)^2;
    # both stated at v_max, the supply at the boost clock, which is the energy table's vdd.
    gpu = load_preset(pid)
    pw, en = gpu.power, gpu.energy
    rel = (en.vdd_v / 0.9) ** 2
    assert pw.v_max_v == pytest.approx(en.vdd_v)
    assert pw.v_min_v == pytest.approx(0.9 * pw.v_max_v, rel=1e-3)
    assert pw.issue_energy_j == pytest.approx(61e-12 * en.node_nm * rel, rel=5e-3)
    assert pw.noc_energy_j_per_byte == pytest.approx(8e-12 * rel, rel=5e-3)


def test_t4_supply_values_hand_computed():
    # (0.85 / 0.9)^2 = 0.89198: issue 61 x 12 x 0.89198 = 652.9 pJ, NoC 8 x 0.89198 = 7.136 pJ/B,
    # an fp32 FLOP 2.3 pJ x (12 / 45) x 0.89198 = 0.5471 pJ.
    t4 = load_preset("gpu/t4")
    assert t4.energy.vdd_v == 0.85
    assert t4.power.issue_energy_j == pytest.approx(652.9e-12, rel=1e-3)
    assert t4.power.noc_energy_j_per_byte == pytest.approx(7.136e-12, rel=1e-3)
    assert t4.energy.flop_j("fp32") == pytest.approx(0.5471e-12, rel=1e-3)


def test_t4_lower_supply_raises_the_governed_clock_of_a_sustained_sgemm():
    # Same preset at the generic 0.9 V (energies x (0.9 / 0.85)^2): the governed clock of a 4096^3 fp32
    # GEMM is lower (~791 against ~870 MHz), the board at its 70 W limit in both.
    t4 = load_preset("gpu/t4")
    dump = t4.model_dump()
    dump["energy"] = dict(dump["energy"], vdd_v=0.9)
    dump["power"] = dict(dump["power"], v_max=0.9, v_min=0.81, issue_energy="732 pJ", noc_energy="8 pJ/B")
    generic = archsim.presets.validate_hardware(dump)
    op = archsim.ops.Gemm(4096, 4096, 4096, dtype="fp32")
    low, high = archsim.estimate(op, t4), archsim.estimate(op, generic)
    assert low.average_power_w == pytest.approx(70.0, rel=1e-4)
    assert high.average_power_w == pytest.approx(70.0, rel=1e-4)
    assert low.ops[0].extra["clock_hz"] > 1.1 * high.ops[0].extra["clock_hz"]
