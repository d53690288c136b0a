"""The GPU cost assembly's shortcuts equal the general formulas to the bit."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import archsim.presets as presets
from archsim.cost import gpu as gpu_cost
from archsim.cost import kernels as kn
from archsim.cost.params import GPUParams

_VALUES = st.floats(min_value=0.0, max_value=1e12, width=64) | st.sampled_from([np.nan, np.inf, -0.0])


def _bits(a) -> bytes:
    """Shape, dtype and bits (the sign of zero included), NaNs as NaN (the payload of NaN x NaN is
    either operand's, as the machine code of the operation picks)."""
    a = np.asarray(a)
    nan = np.isnan(a)
    return repr((a.shape, a.dtype.str)).encode() + nan.tobytes() + np.where(nan, 0.0, a).tobytes()


@given(st.integers(1, 5).flatmap(lambda h: st.tuples(
    hnp.arrays(np.float64, h, elements=_VALUES), hnp.arrays(np.float64, h, elements=st.floats(0.0, 1.0)),
    hnp.arrays(np.float64, h, elements=_VALUES), st.sampled_from(["shared", "distinct", "scalar", "missing"]))))
def test_split_reads_equal_the_per_level_products(case):
    l2, wf, dram, kind = case
    # A streaming kernel's levels share their bytes and write share; a GEMM's have their own.
    levels = {"register": l2 * 2.0, "l1": l2, "l2": l2, "dram": dram}
    shares = {"shared": {"register": 1.0 / 3.0, "l1": wf, "l2": wf, "dram": wf},
              "distinct": {"register": 1.0 / 3.0, "l1": wf, "l2": wf.copy(), "dram": wf * 0.5},
              "scalar": {"register": 1.0 / 3.0, "l1": 0.25, "l2": 0.25, "dram": 0.0},
              "missing": {"l1": wf}}[kind]
    with np.errstate(all="ignore"):  # inf x 0: the same NaN either way
        reads, writes = gpu_cost._split_reads(levels, shares)
        want = {lv: (v * (1.0 - shares.get(lv, 0.0)), v * shares.get(lv, 0.0)) for lv, v in levels.items()}
    assert list(reads) == list(writes) == list(levels)
    for lv, (r, w) in want.items():
        assert _bits(reads[lv]) == _bits(r) and _bits(writes[lv]) == _bits(w)


@given(st.integers(1, 5).flatmap(lambda h: st.tuples(*[hnp.arrays(np.float64, h, elements=_VALUES)] * 3)))
def test_host_bound_equals_the_where_of_dispatch_and_device_time(case):
    dispatch, kernel_s, overhead = case
    device_s = kernel_s + overhead
    host_bound = dispatch > device_s
    with np.errstate(invalid="ignore"):
        want = (np.where(host_bound, dispatch, device_s), np.where(host_bound, dispatch - kernel_s, overhead))
        got = gpu_cost._host_bound(host_bound, dispatch, device_s, kernel_s, overhead)
    assert [_bits(x) for x in got] == [_bits(x) for x in want]


def test_host_bound_with_a_scalar_overhead_broadcasts_as_where_does():
    dispatch, kernel_s = np.zeros(3), np.array([1.0, 2.0, 3.0])
    latency, overhead = gpu_cost._host_bound(dispatch > kernel_s + 0.5, dispatch, kernel_s + 0.5, kernel_s, 0.5)
    assert overhead.shape == (3,) and _bits(latency) == _bits(kernel_s + 0.5)


def test_gemm_parts_with_the_unit_given_equal_those_it_finds():
    pts = [presets.load_preset("gpu/v100-sxm2-16gb"), presets.load_preset("gpu/a100-sxm4-40gb")]
    p = GPUParams.from_devices(pts)
    dram, a_stream = np.full(p.n, 3e8), np.ones(p.n)
    for prec, acc, library in (("fp16", None, kn.GEMM_LIBRARY), ("fp16", "fp16", kn.CONV_LIBRARY),
                               ("fp32", None, kn.GEMM_LIBRARY)):
        args = (p, prec, "g", 4096.0, 1024.0, 768.0, 1.0, 2.0, 2.0, 2.0, dram, a_stream, 1e6, 2 * 4096.0 ** 2 * 768)
        unit = gpu_cost.gemm_unit(p, prec, "g", acc, library)
        want = gpu_cost.gemm_parts(*args, library=library, accumulate=acc)
        got = gpu_cost.gemm_parts(*args, library=library, accumulate=acc, unit=unit)
        for x, y in zip(got, want, strict=True):
            if isinstance(x, dict):
                assert list(x) == list(y)
                assert all(_bits(x[k]) == _bits(y[k]) for k in x)
            else:
                assert _bits(x) == _bits(y)


_TIMES = st.floats(min_value=0.0, max_value=1.0, width=64) | st.sampled_from([np.nan, 0.0, 0.5])


@given(st.lists(_TIMES, min_size=2, max_size=5), _TIMES, st.one_of(st.none(), _TIMES))
def test_one_point_bound_equals_the_array_rule(values, latency, dispatch):
    # The bound a Winograd pick at one point takes when a time is NaN: CostArrays.bounds of the
    # picked cost there (the first NaN or largest resource; overhead when larger or host-bound).
    from archsim.cost import gpu_batch
    from archsim.cost.types import CostArrays

    keys = ["compute:tensor", "memory:dram", "memory:l2", "compute:vector"][:len(values) - 1] + ["overhead"]
    times = {k: np.array([v]) for k, v in zip(keys, values, strict=True)}
    got = gpu_batch._one_point_bound(times, latency, dispatch)
    one = np.array([latency])
    want = CostArrays.from_fields(dict(
        kind="conv2d", device="gpu", flop=1.0, latency_s=one, time_by_unit_s=times, bytes_by_level={"dram": one},
        flop_by_unit={}, read_bytes={}, write_bytes={}, dram_activations=one, link_bytes=one, overhead_s=one,
        launches=one, energy_breakdown_j={}, static_power_w=one, extra={},
        dispatch_s=None if dispatch is None else np.array([dispatch]))).bounds()[0]
    assert got == want
