"""Hand-computed checks of the hardware models' derived quantities."""

from __future__ import annotations

import pytest

from archsim.hardware import Cache, EnergyTable
from archsim.presets import load_preset, validate_hardware


def test_cache_sets() -> None:
    # 32 KiB / (8 ways x 64 B) = 64 sets
    c = Cache(name="l1d", size="32 KiB", ways=8, line_size=64, latency_cycles=4, bandwidth="200 GB/s",
              read_energy="2.5 pJ/B", write_energy="2.5 pJ/B", shared=False)
    assert c.sets == 64
    assert c.size_bytes == 32768.0


def test_dram_wire_bandwidth() -> None:
    # H100: 80 channels x 64 bit / 8 x 5234 MT/s = 3349.76 GB/s
    h100 = load_preset("gpu/h100-sxm5-80gb")
    assert h100.dram.wire_bandwidth_bytes_per_s == pytest.approx(80 * 8 * 5234e6)


def test_gpu_tensor_clock_defaults_to_clock() -> None:
    v100 = load_preset("gpu/v100-sxm2-16gb")
    assert v100.tensor_clock_hz is None and v100.tensor_clock == v100.clock_hz
    # 80 SMs x 1.53 GHz x 1024 FLOP = 125.34 TFLOP/s
    assert v100.peak_flop_per_s("fp16", "tensor") == pytest.approx(80 * 1.53e9 * 1024)


def test_gpu_tensor_clock_is_used_for_tensor_peaks_only() -> None:
    h100 = load_preset("gpu/h100-sxm5-80gb")
    assert h100.peak_flop_per_s("fp16", "tensor") == pytest.approx(132 * 1.83e9 * 4096)
    assert h100.peak_flop_per_s("fp32") == pytest.approx(132 * 1.98e9 * 128 * 2)


def test_best_peak_and_ridge_point() -> None:
    a100 = load_preset("gpu/a100-sxm4-40gb")
    # fp16: tensor 312 TFLOP/s beats 78 on the CUDA cores; ridge = 311.9e12 / 1555e9 = 200.6 FLOP/B
    assert a100.best_peak_flop_per_s("fp16") == pytest.approx(108 * 1.41e9 * 2048)
    assert a100.ridge_point("fp16") == pytest.approx(108 * 1.41e9 * 2048 / 1555e9)


def test_no_tensor_cores_means_zero_tensor_peak() -> None:
    assert load_preset("gpu/k80").peak_flop_per_s("fp16", "tensor") == 0.0


def test_separate_shared_memory_on_pascal() -> None:
    p100 = load_preset("gpu/p100-16gb")
    assert not p100.sm.unified_l1_shared
    assert p100.sm.shared_memory_bytes > p100.sm.l1.size_bytes  # 64 KiB shared vs 24 KiB L1
    bad = p100.model_dump(mode="json")
    bad["sm"]["unified_l1_shared"] = True
    with pytest.raises(Exception, match="shared_memory exceeds"):
        validate_hardware(bad)


def test_cpu_peaks() -> None:
    genoa = load_preset("cpu/epyc-genoa-2vcpu")
    # 256-bit datapath: 8 fp32 lanes x 2 FMA pipes x 2 FLOP = 32 FLOP/cycle = one 512-bit FMA/cycle
    assert genoa.core.vector_flop_per_cycle("fp32") == 32
    assert genoa.core.vector_flop_per_cycle("fp64") == 16
    assert genoa.peak_flop_per_s("fp32") == pytest.approx(2 * 3.35e9 * 32)
    spr = load_preset("cpu/sapphire-rapids-8480")
    assert spr.peak_flop_per_s("bf16", "matrix") == pytest.approx(56 * 2.0e9 * 1024)
    assert spr.peak_flop_per_s("bf16", "vector") == 0.0


def test_cpu_cache_lookup() -> None:
    genoa = load_preset("cpu/epyc-genoa-2vcpu")
    assert genoa.cache("l2").size_bytes == 2**20
    with pytest.raises(KeyError, match="no cache 'l4'"):
        genoa.cache("l4")


def test_energy_node_scaling() -> None:
    # E = E_ref x (node / 45) x (V / 0.9)^2: 7 nm at 0.8 V -> 7/45 x (0.8/0.9)^2 = 0.12291
    table = EnergyTable(node_nm=7, vdd_v=0.8, vector_flop={"fp32": "2.3 pJ/FLOP"}, special_flop="10 pJ/FLOP",
                        register="0.25 pJ/B")
    scale = 7 / 45 * (0.8 / 0.9) ** 2
    assert table.scale == pytest.approx(scale)
    assert table.flop_j("fp32") == pytest.approx(2.3e-12 * scale)
    assert table.sram_j_per_byte(2.5e-12) == pytest.approx(2.5e-12 * scale)
    with pytest.raises(KeyError, match="no tensor FLOP energy"):
        table.flop_j("fp16", "tensor")


def test_pim_peaks() -> None:
    upmem = load_preset("pim/upmem-2560")
    # 2560 DPUs x 350 MHz x 0.167 ops/cycle = 149.6 GOP/s
    assert upmem.peak_flop_per_s("int8") == pytest.approx(2560 * 350e6 * 0.167)
    assert upmem.peak_flop_per_s("fp16") == 0.0


def test_every_preset_memory_is_physical() -> None:
    # The models let a sweep ask for more bandwidth than the pins carry; shipped presets may not:
    # peak bandwidth <= channels x bus width x data rate (1% for datasheet rounding).
    from archsim.hardware import DRAM
    from archsim.presets import list_presets

    for pid in list_presets():
        hw = load_preset(pid)
        drams = [hw] if isinstance(hw, DRAM) else [
            d.dram for d in (hw, getattr(hw, "host", None), getattr(hw, "gpu", None), getattr(hw, "pim", None))
            if d is not None and hasattr(d, "dram")
        ]
        for dram in drams:
            assert dram.bandwidth_bytes_per_s <= dram.wire_bandwidth_bytes_per_s * 1.01, pid
