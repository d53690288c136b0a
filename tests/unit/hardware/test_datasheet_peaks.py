"""Derived peaks against vendor datasheets, within 1%.

Each row: preset, what is derived, the datasheet figure, the citation. The presets' fields
(SM count, clock, lanes) are the inputs; these figures are the published outputs.
"""

from __future__ import annotations

import pytest

from archsim.presets import load_preset

T = 1e12
G = 1e9


def gpu(precision: str, unit: str = "vector"):
    return lambda hw: hw.peak_flop_per_s(precision, unit)


def dram(hw):
    return hw.dram.bandwidth_bytes_per_s


def cpu(precision: str, unit: str = "vector"):
    return lambda hw: hw.peak_flop_per_s(precision, unit)


PEAKS = [
    # id, label, derive, datasheet value, citation
    ("gpu/v100-sxm2-16gb", "fp32", gpu("fp32"), 15.7 * T, "V100 whitepaper Table 1"),
    ("gpu/v100-sxm2-16gb", "fp64", gpu("fp64"), 7.8 * T, "V100 whitepaper Table 1"),
    ("gpu/v100-sxm2-16gb", "fp16 tensor", gpu("fp16", "tensor"), 125 * T, "V100 whitepaper Table 1"),
    ("gpu/v100-sxm2-16gb", "dram", dram, 900 * G, "V100 whitepaper Table 1"),
    ("gpu/p100-16gb", "fp32", gpu("fp32"), 10.6 * T, "P100 whitepaper Table 1 (SXM2)"),
    ("gpu/p100-16gb", "fp64", gpu("fp64"), 5.3 * T, "P100 whitepaper Table 1"),
    ("gpu/p100-16gb", "fp16", gpu("fp16"), 21.2 * T, "P100 whitepaper Table 1"),
    ("gpu/p100-16gb", "dram", dram, 732 * G, "P100 whitepaper Table 1"),
    ("gpu/p100-pcie-16gb", "fp32", gpu("fp32"), 9.3 * T, "Tesla P100 PCIe datasheet: 56 x 1303 MHz x 64 x 2 = 9.34"),
    ("gpu/p100-pcie-16gb", "fp64", gpu("fp64"), 4.7 * T, "Tesla P100 PCIe datasheet"),
    ("gpu/p100-pcie-16gb", "fp16", gpu("fp16"), 18.7 * T, "Tesla P100 PCIe datasheet"),
    ("gpu/p100-pcie-16gb", "dram", dram, 732 * G, "Tesla P100 PCIe datasheet (16 GB)"),
    ("gpu/gtx-1080-ti", "fp32", gpu("fp32"), 11.34 * T, "GTX 1080 Ti spec: 3584 cores x 1582 MHz x 2"),
    ("gpu/gtx-1080-ti", "dram", dram, 484 * G, "GTX 1080 Ti spec page"),
    ("gpu/titan-xp", "fp32", gpu("fp32"), 12.15 * T, "TITAN Xp spec: 3840 cores x 1582 MHz x 2"),
    ("gpu/titan-xp", "dram", dram, 547.7 * G, "TITAN Xp spec page"),
    ("gpu/t4", "fp32", gpu("fp32"), 8.1 * T, "Turing whitepaper appendix (T4)"),
    ("gpu/t4", "fp16 tensor", gpu("fp16", "tensor"), 65 * T, "Turing whitepaper appendix (T4)"),
    ("gpu/t4", "int8 tensor", gpu("int8", "tensor"), 130 * T, "Turing whitepaper appendix (T4)"),
    ("gpu/t4", "int4 tensor", gpu("int4", "tensor"), 260 * T, "Turing whitepaper appendix (T4)"),
    ("gpu/t4", "dram", dram, 320 * G, "Turing whitepaper appendix (T4)"),
    ("gpu/a100-sxm4-40gb", "fp32", gpu("fp32"), 19.5 * T, "A100 whitepaper Table 1"),
    ("gpu/a100-sxm4-40gb", "fp64", gpu("fp64"), 9.7 * T, "A100 whitepaper Table 1"),
    ("gpu/a100-sxm4-40gb", "fp64 tensor", gpu("fp64", "tensor"), 19.5 * T, "A100 whitepaper Table 1"),
    ("gpu/a100-sxm4-40gb", "tf32 tensor", gpu("tf32", "tensor"), 156 * T, "A100 whitepaper Table 1"),
    ("gpu/a100-sxm4-40gb", "fp16 tensor", gpu("fp16", "tensor"), 312 * T, "A100 whitepaper Table 1"),
    ("gpu/a100-sxm4-40gb", "bf16 tensor", gpu("bf16", "tensor"), 312 * T, "A100 whitepaper Table 1"),
    ("gpu/a100-sxm4-40gb", "int8 tensor", gpu("int8", "tensor"), 624 * T, "A100 whitepaper Table 1"),
    ("gpu/a100-sxm4-40gb", "fp16 vector", gpu("fp16"), 78 * T, "A100 whitepaper Table 1"),
    ("gpu/a100-sxm4-40gb", "dram", dram, 1555 * G, "A100 datasheet"),
    ("gpu/a100-sxm4-80gb", "fp16 tensor", gpu("fp16", "tensor"), 312 * T, "A100 datasheet"),
    ("gpu/a100-sxm4-80gb", "dram", dram, 2039 * G, "A100 datasheet (80GB SXM)"),
    ("gpu/h100-sxm5-80gb", "fp16 tensor", gpu("fp16", "tensor"), 989.4 * T, "H100 whitepaper: 132 x 1.83 GHz x 4096"),
    ("gpu/h100-sxm5-80gb", "bf16 tensor", gpu("bf16", "tensor"), 989.4 * T, "H100 whitepaper"),
    ("gpu/h100-sxm5-80gb", "tf32 tensor", gpu("tf32", "tensor"), 494.7 * T, "H100 whitepaper"),
    ("gpu/h100-sxm5-80gb", "fp8 tensor", gpu("fp8", "tensor"), 1978.9 * T, "H100 whitepaper"),
    ("gpu/h100-sxm5-80gb", "int8 tensor", gpu("int8", "tensor"), 1978.9 * T, "H100 whitepaper"),
    ("gpu/h100-sxm5-80gb", "fp32", gpu("fp32"), 66.9 * T, "H100 whitepaper (at 1.98 GHz)"),
    ("gpu/h100-sxm5-80gb", "fp64", gpu("fp64"), 33.5 * T, "H100 whitepaper (at 1.98 GHz)"),
    ("gpu/h100-sxm5-80gb", "fp16 vector", gpu("fp16"), 133.8 * T, "H100 whitepaper"),
    ("gpu/h100-sxm5-80gb", "dram", dram, 3350 * G, "H100 datasheet"),
    ("gpu/h200-sxm-141gb", "fp16 tensor", gpu("fp16", "tensor"), 989.4 * T, "H200 datasheet"),
    ("gpu/h200-sxm-141gb", "dram", dram, 4800 * G, "H200 datasheet"),
    ("gpu/rtx-4090", "fp32", gpu("fp32"), 82.6 * T, "Ada whitepaper appendix A"),
    ("gpu/rtx-4090", "fp64", gpu("fp64"), 1.29 * T, "Ada whitepaper appendix A"),
    ("gpu/rtx-4090", "fp16 tensor", gpu("fp16", "tensor"), 165.2 * T, "Ada whitepaper (fp32 accumulate)"),
    ("gpu/rtx-4090", "fp8 tensor", gpu("fp8", "tensor"), 330.3 * T, "Ada whitepaper"),
    ("gpu/rtx-4090", "int8 tensor", gpu("int8", "tensor"), 660.6 * T, "Ada whitepaper"),
    ("gpu/rtx-4090", "dram", dram, 1008 * G, "Ada whitepaper"),
    ("gpu/gtx-580", "fp32", gpu("fp32"), 1.581 * T, "GTX 580 spec: 512 cores x 1544 MHz x 2"),
    ("gpu/gtx-580", "dram", dram, 192.4 * G, "GTX 580 spec page"),
    ("gpu/k80", "fp32", gpu("fp32"), 8.73 * T / 2, "K80 board spec 8.73 TFLOP/s for two GK210"),
    ("gpu/k80", "fp64", gpu("fp64"), 2.91 * T / 2, "K80 board spec 2.91 TFLOP/s for two GK210"),
    ("gpu/k80", "dram", dram, 480 * G / 2, "K80 board spec 480 GB/s for two GK210"),
    ("cpu/skylake-16vcpu", "fp32", cpu("fp32"), 8 * 3.0e9 * 64, "8 cores x 3.0 GHz x 2 AVX-512 FMA x 16 x 2"),
    ("cpu/i9-10980xe", "fp32", cpu("fp32"), 18 * 3.0e9 * 64, "Intel ARK: 18 cores, 3.0 GHz, 2 FMA units"),
    ("cpu/sapphire-rapids-8480", "bf16 amx", cpu("bf16", "matrix"), 56 * 2.0e9 * 1024, "AMX 1024 bf16 FLOP/cycle"),
    ("cpu/sapphire-rapids-8480", "dram", dram, 307.2 * G, "8 x DDR5-4800"),
    ("cpu/epyc-genoa-9654", "fp64", cpu("fp64"), 96 * 2.4e9 * 16, "96 cores x 2.4 GHz x 16 fp64 FLOP"),
    ("cpu/epyc-genoa-9654", "dram", dram, 460.8 * G, "12 x DDR5-4800"),
    ("cpu/epyc-milan-7763", "fp64", cpu("fp64"), 64 * 2.45e9 * 16, "64 cores x 2.45 GHz x 16 fp64 FLOP"),
    ("cpu/epyc-rome-7742", "fp64", cpu("fp64"), 64 * 2.25e9 * 16, "64 cores x 2.25 GHz x 16 fp64 FLOP"),
    ("cpu/xeon-phi-7250", "fp64", cpu("fp64"), 3.05 * T, "Intel: 3.05 TFLOP/s fp64 peak"),
    ("cpu/epyc-genoa-2vcpu", "fp32", cpu("fp32"), 2 * 3.35e9 * 32, "2 cores x 3.35 GHz measured x 32 FLOP"),
    ("pim/hbm2-pim", "fp16", lambda hw: hw.peak_flop_per_s("fp16"), 1.2 * T * 1.024, "ISSCC 2021: 1.2 TFLOPS"),
    ("pim/upmem-2560", "mram", lambda hw: hw.internal_bandwidth_bytes_per_s, 2560 * 628.23e6, "PrIM: 628 MB/s/DPU"),
    ("system/cloud-p100", "gpu fp32", lambda s: s.gpu.peak_flop_per_s("fp32"), 9.3 * T, "P100 PCIe datasheet"),
]


@pytest.mark.parametrize(("preset_id", "label", "derive", "expected", "citation"), PEAKS,
                         ids=[f"{p}:{lbl}" for p, lbl, *_ in PEAKS])
def test_peak_matches_datasheet(preset_id, label, derive, expected, citation) -> None:
    value = derive(load_preset(preset_id))
    message = f"{preset_id} {label}: {value:.4g} vs {expected:.4g} ({citation})"
    assert value == pytest.approx(expected, rel=0.01), message


def test_hbm2_pim_is_1p2_tflops_class() -> None:
    # 128 PCUs x 16 lanes x 2 FLOP x 300 MHz = 1.2288e12: Samsung rounds it to "1.2 TFLOPS".
    assert load_preset("pim/hbm2-pim").peak_flop_per_s("fp16") == pytest.approx(128 * 16 * 2 * 300e6)
