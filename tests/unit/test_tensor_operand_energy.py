"""The Tensor Core operand-delivery energy (``energy.tensor_operand_flop``): the A100's calibration
against He's 8192^3 random-input GEMM at the 400 W limit, what the same 45 nm value implies on the
H100 through the node rule, its scaling with the MMA operand bytes per FLOP, and its category."""

import pytest

import archsim
from archsim.hardware.gpu import MMA_OPERAND_BYTES_PER_FLOP
from archsim.presets import load_preset
from archsim.results import ENERGY_ARITHMETIC

N = 8192
FLOP = 2.0 * N**3


def _gemm(preset: str, dtype: str = "bf16"):
    gpu = load_preset(preset)
    return gpu, archsim.estimate(archsim.ops.Gemm(N, N, N, dtype=dtype), gpu).ops[0]


def test_a100_gemm_meets_the_limit_at_the_calibrated_clock():
    gpu, op = _gemm("gpu/a100-sxm4-40gb")
    # He (thonking.ai 2024): 258 TFLOP/s with randn inputs, 295 unthrottled -> 258 / 295 x 1410 = 1233 MHz.
    assert op.extra["power_limited"] == 1.0
    assert op.extra["power_w"] == pytest.approx(400.0, rel=1e-6)
    assert op.extra["clock_hz"] / 1e6 == pytest.approx(1233.0, rel=0.005)
    # By hand at 1233 MHz: V = 0.72 + 0.08 x (1233 - 1043) / (1410 - 1043) = 0.7614 V, (V / 0.8)^2 = 0.9058;
    # node rule 7/45 x (0.8/0.9)^2 = 0.12291. MACs: 0.86 pJ x 0.12291 x 0.9058 = 0.09574 pJ/FLOP; operand
    # delivery: 6.6 pJ x 0.12291 x 0.9058 = 0.7348 pJ/FLOP. At 256.3 TFLOP/s: 24.5 W + 188.3 W = 213 W
    # of the 400; the other 187 W are issue, NoC, caches, DRAM and its interface, board, leakage, clock.
    assert gpu.energy.tensor_operand_flop_j == pytest.approx(6.6e-12)
    e = op.energy_breakdown_j
    assert float(e["compute"]) == pytest.approx(0.09574e-12 * FLOP, rel=0.01)
    assert float(e["tensor_operand"]) == pytest.approx(0.7348e-12 * FLOP, rel=0.01)
    assert float(e["tensor_operand"]) / op.latency_s == pytest.approx(188.3, rel=0.01)
    tc_w = float(e["compute"] + e["tensor_operand"]) / op.latency_s
    assert op.extra["power_w"] - tc_w == pytest.approx(187.0, abs=2.0)


def test_a100_80gb_inherits_the_field():
    assert load_preset("gpu/a100-sxm4-80gb").energy.tensor_operand_flop_j == pytest.approx(6.6e-12)
    assert load_preset("gpu/a100-sxm4-80gb").efficiency.tensor_efficiency == 0.945


def test_h100_gemm_is_what_the_field_implies():
    gpu, op = _gemm("gpu/h100-sxm5-80gb")
    # The A100's 45 nm value through the node rule: 6.6 pJ x 4/45 x (0.75/0.9)^2 = 6.6 x 0.061728
    # = 0.4074 pJ/FLOP at v_max, the MACs 0.86 x 0.061728 = 0.0531. The GEMM stays under 700 W, so
    # it runs at 1980 MHz and v_max: at the time model's 714 TFLOP/s the operands take 291 W.
    assert op.extra["power_limited"] == 0.0
    assert op.extra["clock_hz"] == pytest.approx(1.98e9)
    scale = (4 / 45) * (0.75 / 0.9) ** 2
    assert float(op.energy_breakdown_j["tensor_operand"]) == pytest.approx(6.6e-12 * scale * FLOP, rel=1e-6)
    assert float(op.energy_breakdown_j["compute"]) == pytest.approx(0.86e-12 * scale * FLOP, rel=1e-6)
    assert op.extra["power_w"] < 700.0


def test_operand_energy_scales_with_the_mma_operand_bytes():
    # PTX mma shapes: 768 B of A and B per 4096 FLOP at 16 bits, per 8192 at 8 bits, per 2048 for tf32.
    assert MMA_OPERAND_BYTES_PER_FLOP["int8"] == MMA_OPERAND_BYTES_PER_FLOP["fp16"] / 2
    assert MMA_OPERAND_BYTES_PER_FLOP["tf32"] == MMA_OPERAND_BYTES_PER_FLOP["fp16"] * 2
    gpu = load_preset("gpu/h100-sxm5-80gb").model_copy(update={"power_limit_w": "1 MW"})  # all at v_max
    per_flop = {}
    for dtype in ("fp16", "int8", "tf32"):
        op = archsim.estimate(archsim.ops.Gemm(4096, 4096, 4096, dtype=dtype), gpu).ops[0]
        per_flop[dtype] = float(op.energy_breakdown_j["tensor_operand"]) / op.flop
    assert per_flop["int8"] == pytest.approx(per_flop["fp16"] / 2, rel=1e-12)
    assert per_flop["tf32"] == pytest.approx(per_flop["fp16"] * 2, rel=1e-12)


def test_operand_delivery_is_data_movement():
    res = archsim.estimate(archsim.ops.Gemm(N, N, N, dtype="bf16"), load_preset("gpu/a100-sxm4-40gb"))
    assert "tensor_operand" not in ENERGY_ARITHMETIC
    assert sum(res.energy_breakdown_j.values()) == pytest.approx(res.energy_j, rel=1e-12)
    moved = res.data_movement_fraction * res.energy_j
    assert moved >= res.energy_breakdown_j["tensor_operand"]


@pytest.mark.parametrize("preset", ["gpu/v100-sxm2-16gb", "gpu/t4", "gpu/p100-16gb", "gpu/a40-48gb", "gpu/l40-48gb"])
def test_other_presets_do_not_price_operand_delivery(preset):
    gpu = load_preset(preset)
    assert gpu.energy.tensor_operand_flop_j == 0.0
    op = archsim.estimate(archsim.ops.Gemm(1024, 1024, 1024, dtype="fp16"), gpu).ops[0]
    assert "tensor_operand" not in op.energy_breakdown_j
