"""Floors of every estimate on every GPU preset: executed FLOP / peak and compulsory traffic.

For random GEMMs, convolutions (strided, narrow rows, every precision), attention and elementwise
ops on every GPU preset: the latency is never below the op's executed FLOP (the sum of the units'
FLOP: a Winograd convolution's transformed products, a Tensor-Core convolution's padded channels)
at the device's highest peak, nor below its DRAM traffic at the peak DRAM bandwidth; and the DRAM
traffic is never below the compulsory bytes, counted for a convolution's input in whole sectors of
the elements it touches. A math precision no unit of the device runs is an error, never an estimate.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import archsim.presets as presets
from archsim import ops
from archsim.cost import traffic as tr
from archsim.engines import estimate
from archsim.errors import EngineError
from archsim.hardware import PRECISIONS

GPUS = [presets.load_preset(p) for p in presets.list_presets() if p.startswith("gpu/")]
DTYPES = ["fp32", "fp16", "bf16", "int8"]


def _conv(n, c, k, h, w, r, stride, dt):
    r = min(r, h, w)
    return ops.Conv2d(n, c, k, h, w, kernel=(r, r), stride=(stride, stride), padding=(r // 2, r // 2), dtype=dt,
                      compute_dtype="fp32" if dt != "int8" and n % 2 else None)


op_strategy = st.one_of(
    st.builds(lambda m, n, k, dt, mixed: ops.Gemm(m, n, k, dtype=dt, compute_dtype="fp32" if mixed else None),
              st.integers(1, 4096), st.integers(1, 4096), st.integers(1, 4096), st.sampled_from(DTYPES),
              st.booleans()),
    st.builds(_conv, st.integers(1, 8), st.integers(1, 128), st.integers(1, 128), st.integers(1, 96),
              st.integers(1, 96), st.sampled_from([1, 3, 5]), st.sampled_from([1, 2, 4]), st.sampled_from(DTYPES)),
    st.builds(lambda b, s, d, dt, fused: ops.Attention(b, 4, s, s, d, dtype=dt, fused=fused), st.integers(1, 4),
              st.integers(1, 1024), st.sampled_from([32, 64, 128]), st.sampled_from(["fp32", "fp16", "bf16"]),
              st.booleans()),
    st.builds(lambda n, dt: ops.Elementwise((n,), "gelu", dtype=dt), st.integers(1, 1 << 24),
              st.sampled_from(DTYPES)),
)


def _runs(gpu, prec: str) -> bool:
    return gpu.peak_flop_per_s(prec, "tensor") > 0 or gpu.peak_flop_per_s(prec, "vector") > 0


def _compulsory_dram(op, gpu) -> float:
    if op.kind != "conv2d":
        return float(op.min_bytes())
    touched = tr.conv_touched_bytes(op.batch, op.in_channels, op.height, op.width, op.kernel, op.stride, op.padding,
                                    op.dilation, op.out_height, op.out_width, float(op.dtype.bytes),
                                    float(gpu.sector_bytes))
    return touched + op.w_spec().bytes + op.y_spec().bytes


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(op=op_strategy)
def test_no_estimate_below_executed_flop_or_compulsory_traffic(op):
    prec = op.math_dtype.precision
    matrix = op.kind in ("gemm", "conv2d", "attention") and not getattr(op, "is_depthwise_like", False)
    for gpu in GPUS:
        if matrix and not _runs(gpu, prec):
            try:
                estimate(op, gpu)
            except EngineError as err:
                assert "compute_dtype" in str(err)
                continue
            raise AssertionError(f"{gpu.name}: {op} has no math unit but was estimated")
        r = estimate(op, gpu).ops[0]
        peak = max(gpu.best_peak_flop_per_s(q) for q in PRECISIONS)
        assert r.flop_nominal == float(op.flop())
        assert r.latency_s >= r.flop / peak * (1 - 1e-9), (gpu.name, op)
        dram = r.bytes_by_level["dram"]
        assert dram >= _compulsory_dram(op, gpu) * (1 - 1e-9), (gpu.name, op, dram)
        assert r.latency_s >= dram / gpu.dram_bandwidth_bytes_per_s * (1 - 1e-9), (gpu.name, op)
        if op.kind != "conv2d":  # only convolutions run other arithmetic than they define
            assert r.flop == r.flop_nominal, (gpu.name, op)
