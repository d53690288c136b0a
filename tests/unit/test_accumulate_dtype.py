"""Accumulator precision of matrix products (``accumulate_dtype``): the Tensor Core rate and MAC
energy keyed by the (input, accumulate) precision pair.

Hand-computed cases: the arithmetic is in the comments.
"""

from __future__ import annotations

import pytest

import archsim
import archsim.presets as presets
from archsim import ops
from archsim.cost import gpu as gpu_cost
from archsim.cost import gpu_batch
from archsim.cost.params import GPUParams
from archsim.errors import ArchsimError, WorkloadError

N = 8192
FLOP = 2 * N**3  # 1.0995e12


def _unlimited(name: str):
    # at the boost clock: the power limit (DVFS) is held off so the rate arithmetic below is exact
    return presets.load_preset(name).model_copy(update={"power_limit_w": "1 MW"})


def _gemm(gpu, acc):
    return archsim.estimate(ops.Gemm(N, N, N, dtype="fp16", accumulate_dtype=acc), gpu).ops[0]


def test_rtx_4090_fp16_accumulate_is_twice_as_fast_when_compute_bound():
    gpu = _unlimited("gpu/rtx-4090")
    wide, narrow = _gemm(gpu, None), _gemm(gpu, "fp16")
    # fp32 accumulate: 512 FLOP/cycle/SM x 128 SMs x 2.52 GHz x 0.85 = 140.4 TFLOP/s -> 1.0995e12 / 140.4e12
    # = 7.83 ms; fp16 accumulate: 1024 FLOP/cycle/SM (330.3 TFLOP/s peak, Ada whitepaper) -> 3.92 ms.
    assert wide.time_by_unit_s["compute:tensor"] == pytest.approx(FLOP / (512 * 128 * 2.52e9 * 0.85), rel=0.01)
    assert narrow.time_by_unit_s["compute:tensor"] == pytest.approx(FLOP / (1024 * 128 * 2.52e9 * 0.85), rel=0.01)
    assert wide.bound == narrow.bound == "compute:tensor"
    assert wide.latency_s / narrow.latency_s == pytest.approx(2.0, rel=0.01)
    # The bytes do not depend on the accumulator (C is stored in fp16 either way).
    assert narrow.bytes_by_level == wide.bytes_by_level


def test_a100_runs_both_accumulators_at_one_rate():
    gpu = _unlimited("gpu/a100-sxm4-80gb")
    wide, narrow = _gemm(gpu, None), _gemm(gpu, "fp16")
    # 2048 FLOP/cycle/SM for both (A100 whitepaper: 312 TFLOP/s fp16 with either accumulator).
    assert narrow.latency_s == wide.latency_s
    assert narrow.time_by_unit_s == wide.time_by_unit_s


@pytest.mark.parametrize("name", ["gpu/rtx-4090", "gpu/a100-sxm4-80gb"])
def test_fp16_accumulate_mac_energy_is_lower_by_the_horowitz_ratio(name):
    gpu = _unlimited(name)
    wide, narrow = _gemm(gpu, None), _gemm(gpu, "fp16")
    # Horowitz (ISSCC 2014, 45 nm): fp16 mult 1.1 pJ + fp32 add 0.9 pJ = 2.0 pJ vs + fp16 add 0.4 pJ
    # = 1.5 pJ: 0.75; the presets' tensor_flop fp16 0.86 pJ -> tensor_flop_fp16_accumulate 0.645 pJ.
    # No bias: the compute energy is the tensor MACs alone.
    ratio = narrow.energy_breakdown_j["compute"] / wide.energy_breakdown_j["compute"]
    assert ratio == pytest.approx(1.5 / 2.0, rel=1e-12)
    e = gpu.energy
    assert narrow.energy_breakdown_j["compute"] == pytest.approx(FLOP * 0.645e-12 * e.scale, rel=1e-12)
    units = gpu_cost.cost(ops.Gemm(N, N, N, dtype="fp16", accumulate_dtype="fp16"),
                          GPUParams.from_devices([gpu])).flop_by_unit
    assert {k: float(v[0]) for k, v in units.items()} == {"tensor:fp16:fp16": FLOP, "vector:fp16": 0.0}


def test_rtx_4090_per_flop_energy_hand_value():
    gpu = _unlimited("gpu/rtx-4090")
    narrow = _gemm(gpu, "fp16")
    # 0.645 pJ at 45 nm / 0.9 V, scaled to 4 nm / 0.9 V: 0.645 x 4/45 = 0.05733 pJ/FLOP x 1.0995e12
    # = 0.06304 J.
    assert narrow.energy_breakdown_j["compute"] == pytest.approx(0.645e-12 * 4 / 45 * FLOP, rel=1e-12)


def test_explicit_wide_accumulator_is_the_default():
    gpu = presets.load_preset("gpu/rtx-4090")
    for dtype, wide in (("fp16", "fp32"), ("int8", "int32"), ("fp32", "fp32")):
        a = archsim.estimate(ops.Gemm(1024, 512, 256, dtype=dtype), gpu)
        b = archsim.estimate(ops.Gemm(1024, 512, 256, dtype=dtype, accumulate_dtype=wide), gpu)
        assert a.latency_s == b.latency_s and a.energy_breakdown_j == b.energy_breakdown_j
    assert ops.Gemm(8, 8, 8, dtype="fp16").accumulate_precision == "fp32"
    assert ops.Gemm(8, 8, 8, dtype="int8").accumulate_precision == "int32"
    assert ops.Gemm(8, 8, 8, dtype="fp8_e4m3", accumulate_dtype="FP16").accumulate_precision == "fp16"


@pytest.mark.parametrize("kw", [
    {"dtype": "fp16", "accumulate_dtype": "bf16"},
    {"dtype": "bf16", "accumulate_dtype": "fp16"},                    # bf16 accumulates in fp32 only
    {"dtype": "fp16", "compute_dtype": "fp32", "accumulate_dtype": "fp16"},  # fp32 math
    {"dtype": "int8", "accumulate_dtype": "fp16"},
    {"dtype": "fp16", "accumulate_dtype": 16},
])
def test_bad_accumulator_is_a_one_line_error(kw):
    with pytest.raises(WorkloadError, match=r"Gemm\.accumulate_dtype: .* allowed: None, ") as info:
        ops.Gemm(64, 64, 64, **kw)
    assert "\n" not in str(info.value)


def test_conv_and_attention_take_the_accumulator_and_carry_it():
    c = ops.Conv2d(8, 64, 64, 56, 56, kernel=(3, 3), padding=(1, 1), dtype="fp16", accumulate_dtype="fp16")
    assert c.as_gemm().accumulate_dtype == "fp16"
    assert all(b.accumulate_dtype == "fp16" for b in c.backward() if hasattr(b, "accumulate_dtype"))
    g = ops.Gemm(64, 32, 16, dtype="fp16", accumulate_dtype="fp16", weight=True)
    assert [b.accumulate_dtype for b in g.backward()] == ["fp16", "fp16"]
    a = ops.Attention(2, 8, 512, 512, 64, dtype="fp16", accumulate_dtype="fp16")
    assert all(s.accumulate_dtype == "fp16" for s in a.decompose() if isinstance(s, ops.Gemm))
    assert all(s.accumulate_dtype == "fp16" for s in a.backward() if isinstance(s, ops.Gemm))
    with pytest.raises(WorkloadError, match="Conv2d.accumulate_dtype"):
        ops.Conv2d(1, 8, 8, 8, 8, dtype="bf16", accumulate_dtype="fp16")
    with pytest.raises(WorkloadError, match="Attention.accumulate_dtype"):
        ops.Attention(1, 1, 8, 8, 8, dtype="fp32", accumulate_dtype="fp16")


def test_fused_attention_and_conv_run_faster_on_geforce():
    gpu = _unlimited("gpu/rtx-4090")
    att = [archsim.estimate(ops.Attention(8, 16, 2048, 2048, 128, fused=True, dtype="fp16", accumulate_dtype=a),
                            gpu).ops[0] for a in (None, "fp16")]
    # The QK^T and PV products take half the Tensor Core time at 1024 vs 512 FLOP/cycle/SM.
    assert att[1].time_by_unit_s["compute:tensor"] == pytest.approx(att[0].time_by_unit_s["compute:tensor"] / 2,
                                                                    rel=1e-12)
    conv = [archsim.estimate(ops.Conv2d(64, 256, 256, 56, 56, kernel=(3, 3), padding=(1, 1), dtype="fp16",
                                        accumulate_dtype=a), gpu) for a in (None, "fp16")]
    assert conv[1].latency_s < conv[0].latency_s


def test_stacked_path_equals_one_op_path_with_accumulators(assert_costs_equal):
    p = GPUParams.from_devices([presets.load_preset("gpu/rtx-4090"), presets.load_preset("gpu/a100-sxm4-80gb"),
                                presets.load_preset("gpu/mi210")])
    work = [ops.Gemm(4096, 1024, 768, dtype="fp16", bias=True),
            ops.Gemm(4096, 1024, 768, dtype="fp16", bias=True, accumulate_dtype="fp16"),
            ops.Gemm(512, 3072, 768, dtype="fp16", weight=True, batch=4, accumulate_dtype="fp16"),
            ops.Conv2d(8, 64, 64, 56, 56, kernel=(3, 3), padding=(1, 1), dtype="fp16", accumulate_dtype="fp16"),
            ops.Conv2d(8, 64, 64, 56, 56, kernel=(3, 3), padding=(1, 1), dtype="fp16")]
    for op, got in zip(work, gpu_batch.cost_many(work, p), strict=True):
        assert_costs_equal(got, gpu_cost.cost(op, p))


def test_fp16_accumulate_table_only_for_fp16_and_fp8_inputs():
    dump = presets.load_preset("gpu/rtx-4090").model_dump(by_alias=True)
    tc = dump["tensor_core"]
    with pytest.raises(ArchsimError, match="fp16_accumulate_flop_per_cycle_per_sm"):
        presets.validate_hardware({**dump, "tensor_core": {**tc, "fp16_accumulate_flop_per_cycle_per_sm":
                                                           {"bf16": 1024}}})
    # Absent: the fp32-accumulate rate (the AMD MI210 lists no fp16 accumulation).
    p = GPUParams.from_devices([presets.load_preset("gpu/mi210")])
    assert p.tensor_fp16_accumulate_flop_per_cycle_per_sm["fp16"] == p.tensor_flop_per_cycle_per_sm["fp16"]
    assert p.tensor_fp16_accumulate_flop_j["fp16"] == p.tensor_flop_j["fp16"]


def test_graph_mixing_accumulators_runs_through_both_engines():
    from archsim.workload.graph import OpGraph

    g = ops.Gemm(4096, 4096, 4096, dtype="fp16", weight=True, accumulate_dtype="fp16")
    graph = OpGraph("mix", (g, ops.Gemm(4096, 4096, 4096, dtype="fp16"), *g.backward()))
    gpu = _unlimited("gpu/rtx-4090")
    for engine in ("roofline", "des"):
        r = archsim.estimate(graph, gpu, engine=engine)
        narrow, wide, d_a, d_b = (o.latency_s for o in r.ops)
        # Compute-bound 4096^3 GEMMs: the fp16-accumulate ones (forward and both gradients) take about half.
        assert wide / narrow == pytest.approx(2.0, rel=0.02)
        assert d_a == pytest.approx(narrow, rel=0.02) and d_b == pytest.approx(narrow, rel=0.02)
        assert r.energy_j == pytest.approx(sum(o.energy_j for o in r.ops), rel=1e-9)
