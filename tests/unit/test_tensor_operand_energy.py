"""The Tensor Core operand-delivery energy (``energy.tensor_operand_flop``): the A100's calibration
against He's 8192^3 random-input GEMM at the 400 W limit, and what the same 45 nm value implies on
the H100 through the node rule."""

import pytest

import archsim
from archsim.presets import load_preset

N = 8192
FLOP = 2.0 * N**3


def _gemm(preset: str):
    gpu = load_preset(preset)
    return gpu, archsim.estimate(archsim.ops.Gemm(N, N, N, dtype="bf16"), gpu).ops[0]


def test_a100_gemm_meets_the_limit_at_the_calibrated_clock():
    gpu, op = _gemm("gpu/a100-sxm4-40gb")
    # He (thonking.ai 2024): 258 TFLOP/s with randn inputs, 295 unthrottled -> 258 / 295 x 1410 = 1233 MHz.
    assert op.extra["power_limited"] == 1.0
    assert op.extra["power_w"] == pytest.approx(400.0, rel=1e-6)
    assert op.extra["clock_hz"] / 1e6 == pytest.approx(1233.0, rel=0.005)
    # Tensor Core energy by hand at 1233 MHz: V = 0.72 + 0.08 x (1233 - 1043) / (1410 - 1043) = 0.7614 V,
    # (V / 0.8)^2 = 0.9058; node rule 7/45 x (0.8/0.9)^2 = 0.12291; (0.86 + 6.6) pJ x 0.12291 x 0.9058
    # = 0.8305 pJ/FLOP; x 2 x 8192^3 = 1.0995e12 FLOP -> 0.913 J; over 1.0995e12 / 256.3e12 s = 4.29 ms:
    # 213 W of the 400.
    assert gpu.energy.tensor_operand_flop_j == pytest.approx(6.6e-12)
    assert float(op.energy_breakdown_j["compute"]) == pytest.approx(0.8305e-12 * FLOP, rel=0.01)
    assert float(op.energy_breakdown_j["compute"]) / op.latency_s == pytest.approx(213.0, rel=0.01)
    # The other 187 W: issue, NoC, caches, DRAM and its interface, board, leakage and clock network.
    assert op.extra["power_w"] - float(op.energy_breakdown_j["compute"]) / op.latency_s == pytest.approx(187.0, abs=2.0)


def test_a100_80gb_inherits_the_field():
    assert load_preset("gpu/a100-sxm4-80gb").energy.tensor_operand_flop_j == pytest.approx(6.6e-12)
    assert load_preset("gpu/a100-sxm4-80gb").efficiency.tensor_efficiency == 0.945


def test_h100_gemm_is_what_the_field_implies():
    gpu, op = _gemm("gpu/h100-sxm5-80gb")
    # The A100's 45 nm value through the node rule: (0.86 + 6.6) pJ x 4/45 x (0.75/0.9)^2 = 7.46 x 0.061728
    # = 0.4605 pJ/FLOP at v_max. The GEMM stays under 700 W, so it runs at 1980 MHz and v_max: at the
    # time model's 714 TFLOP/s its Tensor Cores draw 0.4605 pJ x 714e12 = 329 W.
    assert op.extra["power_limited"] == 0.0
    assert op.extra["clock_hz"] == pytest.approx(1.98e9)
    per_flop = (0.86e-12 + 6.6e-12) * (4 / 45) * (0.75 / 0.9) ** 2
    assert per_flop == pytest.approx(0.4605e-12, rel=1e-3)
    assert float(op.energy_breakdown_j["compute"]) == pytest.approx(per_flop * FLOP, rel=1e-6)
    assert op.extra["power_w"] < 700.0


@pytest.mark.parametrize("preset", ["gpu/v100-sxm2-16gb", "gpu/t4", "gpu/p100-16gb", "gpu/a40-48gb", "gpu/l40-48gb"])
def test_other_presets_do_not_price_operand_delivery(preset):
    assert load_preset(preset).energy.tensor_operand_flop_j == 0.0
