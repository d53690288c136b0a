"""The power model's fast paths give the general path's floats to the last bit: one op at one point
in Python floats (power._point, dvfs.point_governed, ledger._account_point), the arithmetic written
into temporaries on large arrays (dvfs.writer, ledger.account), the governor's one-entry table
(dvfs._gather)."""


import numpy as np
import pytest
from bit_compare import assert_same
from hypothesis import given, settings
from hypothesis import strategies as st

import archsim
from archsim.cost import cpu as cpu_cost
from archsim.cost import gpu as gpu_cost
from archsim.cost import power
from archsim.cost.params import CPUParams, GPUParams
from archsim.cost.types import CostArrays
from archsim.energy import PowerTerms, VFCurve, clocked_power, dvfs, ledger, op_time
from archsim.workload.ops import Conv2d, Gemm, Softmax

GPUS = ("gpu/v100-sxm2-16gb", "gpu/t4", "gpu/a100-sxm4-40gb", "gpu/mi100", "gpu/titan-xp")


@pytest.fixture(scope="module")
def gpu_costs():
    """(cost, pack) of a few ops on single GPUs, priced at the nominal clock."""
    ops = (Gemm(4096, 4096, 4096, dtype="fp16"), Gemm(128, 768, 3072, dtype="fp32", batch=4),
           Conv2d(8, 64, 64, 56, 56, kernel=(3, 3), padding=(1, 1), dtype="fp16"), Softmax((64, 1024), dtype="fp16"))
    out = []
    for pid in GPUS:
        p = GPUParams.from_devices([archsim.load_preset(pid)])
        out += [(gpu_cost.cost(op, p), p) for op in ops]
    return out


def test_one_op_at_one_point_in_floats_is_the_array_path(gpu_costs):
    governed = 0
    for c, p in gpu_costs:
        point = power._point(c, p, True)
        assert point is not None
        assert_same(point, power._apply_arrays([c], p, True, None)[0])
        governed += bool(point.extra["power_limited"][0])
    assert governed  # the governor's branch is exercised (a 4096^3 GEMM is power-limited)


def _scaled(c: CostArrays, time: float, energy: float, blocks: float | None, fixed: float) -> CostArrays:
    """``c`` with its times, energies and occupancy changed (the governor's other branches)."""
    extra = {k: v for k, v in c.extra.items() if k != "blocks"}
    if blocks is not None:
        extra["blocks"] = np.array([blocks])
    return CostArrays.from_fields({**vars(c), "time_by_unit_s": {k: v * time for k, v in c.time_by_unit_s.items()},
                                   "energy_breakdown_j": {k: v * energy for k, v in c.energy_breakdown_j.items()},
                                   "latency_s": c.latency_s * time + fixed, "overhead_s": c.overhead_s * time + fixed,
                                   "extra": extra})


@settings(max_examples=60, deadline=None)
@given(which=st.integers(0, 4 * len(GPUS) - 1), time=st.sampled_from([0.0, 1e-3, 0.5, 1.0, 7.0, 1e3]),
       energy=st.sampled_from([0.0, 1e-3, 0.3, 1.0, 10.0, 1e4]),
       blocks=st.sampled_from([None, np.nan, 0.0, 1.0, 40.0, 1e6]), fixed=st.sampled_from([0.0, 1e-6, 1.0]))
def test_point_path_equals_array_path_whatever_the_numbers(gpu_costs, which, time, energy, blocks, fixed):
    c, p = gpu_costs[which]
    c = _scaled(c, time, energy, blocks, fixed)
    point = power._point(c, p, True)
    if point is not None:  # None: a division by zero the arrays take (inf, NaN)
        assert_same(point, power._apply_arrays([c], p, True, None)[0])


def test_cpu_op_in_floats_is_the_array_path():
    for pid in ("cpu/epyc-genoa-9654", "cpu/skylake-16vcpu"):
        p = CPUParams.from_devices([archsim.load_preset(pid)])
        for op in (Gemm(512, 512, 512, dtype="fp32"), Softmax((64, 1024), dtype="fp32")):
            c = cpu_cost.cost(op, p, None)
            point = power._point(c, p, False)
            assert point is not None
            assert_same(point, power._apply_arrays([c], p, False, None)[0])


@pytest.mark.parametrize("threshold", [1, 10**9])
def test_arithmetic_into_temporaries_gives_the_same_bits(monkeypatch, threshold):
    # Every array written into (threshold 1) or none (10^9): the floats of the default.
    devices = [archsim.load_preset(pid) for pid in GPUS]
    p = GPUParams.from_devices(devices)
    ops = [Gemm(4096, 4096, 4096, dtype="fp16"), Gemm(64, 64, 64, dtype="fp32"),
           Softmax((64, 1024), dtype="fp16"), Conv2d(8, 64, 64, 56, 56, kernel=(3, 3), padding=(1, 1), dtype="fp16")]
    costs = [gpu_cost.cost(op, p) for op in ops]
    want = power.apply(costs, p, gpu=True)
    monkeypatch.setattr(dvfs, "INPLACE_MIN", threshold)
    monkeypatch.setattr(power, "INPLACE_MIN", threshold)
    again = [gpu_cost.cost(op, p) for op in ops]
    for a, b in zip(power.apply(again, p, gpu=True), want, strict=True):
        assert_same(a, b)
    for a, b in zip(again, costs, strict=True):  # the inputs are left as they were
        assert_same(a, b)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 40))
def test_ledger_into_temporaries_gives_the_same_bits(seed, n):
    rng = np.random.default_rng(seed)

    def arr(zero_share=0.3):
        a = rng.uniform(0, 1e9, n)
        a[rng.uniform(size=n) < zero_share] = 0.0
        return a

    flop_j = {"tensor:fp16": rng.uniform(0, 1e-12, n), "vector:fp32": rng.uniform(0, 1e-12, n)}
    prices = ledger.EnergyPrices(flop_j=flop_j,
                                 read_j_per_byte={k: rng.uniform(0, 1e-11, n) for k in ("l1", "l2", "dram")},
                                 write_j_per_byte={k: rng.uniform(0, 1e-11, n) for k in ("l1", "l2", "dram")},
                                 activation_j=rng.uniform(0, 1e-9, n), link_j_per_byte=rng.uniform(0, 1e-11, n),
                                 static_power_w=rng.uniform(0, 100, n))
    args = (prices, {"tensor:fp16": arr(), "vector:fp32": arr()}, {k: arr() for k in ("l1", "l2", "dram")},
            {k: arr() for k in ("l2", "dram")}, arr(), arr(0.5), rng.uniform(1e-6, 1.0, n))
    want = ledger.account(*args)
    old = dvfs.INPLACE_MIN
    try:
        dvfs.INPLACE_MIN = 1
        assert_same(ledger.account(*args), want)
    finally:
        dvfs.INPLACE_MIN = old


def _float_terms(draw):
    f = st.floats(0.0, 1e3, allow_nan=False, allow_infinity=False)
    v = st.floats(0.5, 1.2)
    hz = st.floats(2e8, 2e9)
    knee, vmax_hz = sorted((draw(hz), draw(hz)))
    v_min, v_max = sorted((draw(v), draw(v)))
    curve = VFCurve(v_min, v_max, knee, vmax_hz + draw(st.sampled_from([0.0, 1e8])))  # + 0: a division by 0
    return PowerTerms(nominal_hz=draw(hz), fixed_s=draw(f) * 1e-6, clock_s=draw(f) * 1e-3, memory_s=draw(f) * 1e-3,
                      excess_s=draw(f) * 1e-5, onchip_j=draw(f) * 1e-3, offchip_j=draw(f) * 1e-3, board_w=draw(f),
                      leakage_w=draw(f), clock_w=draw(f), curve=curve,
                      leakage_exponent=np.array([draw(st.sampled_from([3.0, 2.5]))]))


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_float_governor_is_the_array_governor(data):
    t = _float_terms(data.draw)
    limit, floor = data.draw(st.floats(10.0, 2e3)), data.draw(st.floats(0.05, 0.5))
    arrays = PowerTerms(**{k: np.atleast_1d(np.asarray(v, dtype=np.float64)) for k, v in vars(t).items()
                           if k != "curve"}, curve=VFCurve(*(np.array([x]) for x in vars(t.curve).values())))
    try:
        ratio, time = dvfs.point_governed(t, limit, floor)
    except ZeroDivisionError:  # numpy's inf and NaN: power.apply takes the arrays there
        return
    want_ratio, want_time = dvfs.governed(arrays, np.array([limit]), np.array([floor]))
    assert np.float64(ratio).tobytes() == want_ratio.tobytes()
    assert np.float64(time).tobytes() == want_time.tobytes()
    assert np.float64(dvfs.point_time(t, ratio)).tobytes() == op_time(arrays, want_ratio).tobytes()
    got, want = dvfs.point_clocked_power(t, ratio), clocked_power(arrays, want_ratio)
    for name in ("clock_hz", "v2", "board_w", "leakage_w", "clock_w"):
        assert np.float64(getattr(got, name)).tobytes() == getattr(want, name).tobytes(), name


SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, 2.0, np.nan, np.inf, -np.inf, 1e-300]


def test_float_maximum_and_clip_are_numpys():
    for a in SPECIAL:
        for b in SPECIAL:
            want = np.maximum(np.array([a]), np.array([b]))
            assert np.float64(dvfs.float_maximum(a, b)).tobytes() == want.tobytes(), (a, b)
        x = 0.0 if a < 0.0 else (1.0 if a > 1.0 else a)  # power._point_cost's clip
        assert np.float64(x).tobytes() == np.clip(np.array([a]), 0.0, 1.0).tobytes(), a


def test_one_entry_gather_is_the_general_gather():
    rng = np.random.default_rng(3)
    terms = tuple(rng.uniform(size=s) for s in [(1,), (1, 1), (), (1,), (1, 1)] * 3) + (np.float64(3.0), 2.0)
    flat = np.array([0])
    want = np.stack([np.broadcast_to(t, (1, 1)).reshape(-1)[flat] for t in terms])
    got = dvfs._gather(terms, (1, 1), flat)
    assert got.flags.c_contiguous and got.dtype == np.float64
    assert got.tobytes() == want.tobytes()


VALUES = st.sampled_from([0.0, -0.0, 1.0, 3.5e9, -2.0, 1e-300, np.nan])
PRICES = st.sampled_from([0.0, 1e-12, 3.7e-11, 2.0, np.nan, np.inf])


@settings(max_examples=150, deadline=None)
@given(counts=st.lists(VALUES, min_size=9, max_size=9), prices=st.lists(PRICES, min_size=10, max_size=10),
       time=st.sampled_from([0.0, 1e-6, 2.5]))
def test_ledger_at_one_point_is_the_arrays(counts, prices, time):
    # One point in floats (ledger._account_point) against the same numbers at two points (the arrays).
    def build(n):
        a = lambda x: np.full(n, x)  # noqa: E731
        p = ledger.EnergyPrices(flop_j={"tensor:fp16": a(prices[0]), "vector:fp32": a(prices[1])},
                                read_j_per_byte={"l2": a(prices[2]), "dram": a(prices[3]), "l1": a(prices[9])},
                                write_j_per_byte={"l2": a(prices[4]), "dram": a(prices[5]), "l1": a(prices[9])},
                                activation_j=a(prices[6]), link_j_per_byte=a(prices[7]),
                                static_power_w=a(prices[8]))
        return (p, {"tensor:fp16": a(counts[0]), "vector:fp32": counts[1]}, {"l2": a(counts[2]), "dram": a(counts[3])},
                {"dram": a(counts[4]), "l1": a(counts[5])}, a(counts[6]), a(counts[7]), a(time))

    def run(n):
        try:
            with np.errstate(all="ignore"):  # inf and NaN prices on purpose
                return ledger.account(*build(n))
        except archsim.errors.EngineError as e:
            return str(e)

    one, two = run(1), run(2)
    if isinstance(two, str):
        assert one == two
        return
    assert list(one) == list(two)
    for k in one:
        assert one[k].shape == (1,) and one[k].tobytes() == two[k][:1].tobytes(), k
