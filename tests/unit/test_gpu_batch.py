"""The stacked GPU path equals the one-op path to the last bit (brute-force oracle)."""

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import archsim.presets as presets
from archsim import ops
from archsim.cost import gpu as gpu_cost
from archsim.cost import gpu_batch
from archsim.cost import traffic as tr
from archsim.cost.params import GPUParams
from archsim.workload import zoo


def _points():
    # Three V100 variants (SMs, clock, L2 size differ) and an A100: every distinct-capacity path runs.
    base = presets.load_preset("gpu/v100-sxm2-16gb")
    dump = base.model_dump()
    pts = [base, presets.validate_hardware({**dump, "sm_count": 40, "clock": "1.1 GHz"}),
           presets.validate_hardware({**dump, "l2": {**dump["l2"], "size": "12 MiB"}})]
    return GPUParams.from_devices(pts)


OPS = [
    ops.Gemm(4096, 1024, 768, dtype="fp16", bias=True),
    ops.Gemm(128, 64, 4096, dtype="fp32", batch=12),
    ops.Gemm(512, 3072, 768, dtype="fp16", weight=True, batch=4),
    ops.Conv2d(8, 64, 64, 56, 56, kernel=(3, 3), padding=(1, 1), dtype="fp16"),
    ops.Conv2d(8, 3, 64, 224, 224, kernel=(7, 7), stride=(2, 2), padding=(3, 3), dtype="fp32"),
    ops.Conv2d(16, 512, 48, 14, 14, kernel=(5, 5), padding=(2, 2), dtype="fp32"),  # Winograd F(2x2, 5x5)
    ops.Conv2d(4, 32, 32, 28, 28, kernel=(3, 3), padding=(1, 1), groups=32, dtype="fp16"),
    ops.Gemv(4096, 4096, dtype="fp16"),
    ops.Elementwise((32, 64, 56, 56), fn="relu", dtype="fp16"),
]


def test_stacked_ops_equal_one_op_path(assert_costs_equal):
    p = _points()
    graph_ops = list(OPS) + list(zoo.bert_base(batch=1, seq_len=64, dtype="fp16").ops[:12])
    for op, got in zip(graph_ops, gpu_batch.cost_many(graph_ops, p), strict=True):
        assert_costs_equal(got, gpu_cost.cost(op, p))


def test_stacked_ops_equal_one_op_path_with_per_operator_dispatch(assert_costs_equal):
    # A host dispatch per operator (50 us) and a launch API time per further kernel (4 us): the
    # stacked path prices each operator's first kernel (a transpose, Winograd's input transform or
    # the GEMM) with the dispatch and the rest with the launch call, as the one-op path does.
    base = _points()
    p = GPUParams.from_devices([presets.load_preset("gpu/v100-sxm2-16gb")] * base.n, [50e-6] * base.n,
                               [4e-6] * base.n)
    graph_ops = list(OPS) + list(dict.fromkeys(zoo.resnet18(batch=2, dtype="fp16", training=True).ops))[:40]
    got = gpu_batch.cost_many(graph_ops, p)
    for op, c in zip(graph_ops, got, strict=True):
        assert_costs_equal(c, gpu_cost.cost(op, p))
    assert max(float(c.launches.max()) for c in got) > 1  # multi-launch operators were priced


def test_training_graph_stacked_equals_one_op_path(assert_costs_equal):
    # Backward-data and backward-weight convolutions, batchnorm and optimizer steps.
    p = _points()
    graph_ops = list(dict.fromkeys(zoo.resnet18(batch=2, dtype="fp32", training=True).ops))[:60]
    for op, got in zip(graph_ops, gpu_batch.cost_many(graph_ops, p), strict=True):
        assert_costs_equal(got, gpu_cost.cost(op, p))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 70000), st.integers(1, 3000), st.integers(1, 3000), st.integers(1, 3),
                          st.sampled_from([2.0, 4.0]), st.sampled_from([1e3, 64e3, 6e6, 4e7])),
                min_size=1, max_size=6))
def test_gemm_bytes_rows_equals_gemm_bytes(rows):
    m, n, k, b, e, cap = (np.asarray(c, dtype=np.float64) for c in zip(*rows, strict=True))
    got = tr.gemm_bytes_rows(m, n, k, b, e, e, e, e * m * k, cap)
    for i, (mi, ni, ki, bi, ei, ci) in enumerate(rows):
        want = tr.gemm_bytes(tr.GemmShape(mi, ni, ki, bi, ei, ei, ei), np.array([ci]))[0]
        assert got[i] == want


def test_tile_params_repeats_points():
    p = _points()
    t = gpu_batch.tile_params(p, 3)
    assert t.n == 9
    np.testing.assert_array_equal(t.sm_count, np.tile(p.sm_count, 3))
    assert t.tensor_flop_per_cycle_per_sm.keys() == p.tensor_flop_per_cycle_per_sm.keys()
    # Every field, read lazily, is the pack's array tiled (per-precision tables entry by entry).
    for f in dataclasses.fields(p):
        v = getattr(p, f.name)
        if isinstance(v, dict):
            assert dict(getattr(t, f.name)).keys() == v.keys()
            for key, x in v.items():
                np.testing.assert_array_equal(getattr(t, f.name)[key], np.tile(x, 3))
        elif isinstance(v, np.ndarray):
            np.testing.assert_array_equal(getattr(t, f.name), np.tile(v, 3))
    assert t.sm_count is t.sm_count  # tiled once, then kept
    with pytest.raises(AttributeError):
        t.sm_count = p.sm_count


def test_stream_blocks_per_point_equal_the_stacked_rows_occupancy():
    # The planner computes a streaming kernel's blocks per SM once per point and repeats it for a
    # stacked group: the same values as the occupancy computed on every stacked row.
    from archsim.cost import kernels

    p = _points()
    planner = gpu_batch._Planner(p)
    for g in (1, 4, 1):
        got = planner.stream_bps(g)
        assert np.array_equal(got, kernels.stream_blocks_per_sm(gpu_batch.tile_params(p, g)))
        assert got is planner.stream_bps(g)  # kept per group size
    rows = gpu_batch.tile_params(p, 3)
    dram = np.linspace(1e6, 3e8, rows.n)
    given = kernels.gpu_stream(rows, 1e6, 0.0, dram, dram, rows.vector_flop_per_cycle_per_sm["fp32"], 1e6,
                               blocks_per_sm=planner.stream_bps(3))
    computed = kernels.gpu_stream(rows, 1e6, 0.0, dram, dram, rows.vector_flop_per_cycle_per_sm["fp32"], 1e6)
    for field in dataclasses.fields(computed):
        assert np.array_equal(getattr(given, field.name), getattr(computed, field.name)), field.name


def test_derived_ops_are_built_once_per_op_and_equal_cold_ones(assert_costs_equal):
    # A channel-padded convolution and a Winograd GEMM are kept on the op they derive from: the same
    # object on every pricing, equal to one built afresh, the op's equality, hash and pickle
    # unchanged, and a convolution priced with its kept derived ops costs what a fresh copy costs.
    import pickle

    conv = ops.Conv2d(8, 3, 64, 56, 56, kernel=(3, 3), padding=(1, 1), dtype="fp16")
    fresh = dataclasses.replace(conv)
    padded = gpu_cost.pad_channels(conv, 8)
    assert padded is gpu_cost.pad_channels(conv, 8)
    assert padded == dataclasses.replace(conv, in_channels=8)
    assert gpu_cost.pad_channels(padded, 8) is padded  # nothing to pad: the op itself
    wino = gpu_cost.winograd_gemm(padded)
    assert wino is gpu_cost.winograd_gemm(padded)
    t, _, tiles = gpu_cost.winograd_plan(padded)
    assert wino == ops.Gemm(tiles, 64, 8, dtype="fp16", batch=t * t, name=f"{padded.label}.winograd_gemm")
    assert conv == fresh and hash(conv) == hash(fresh) and repr(conv) == repr(fresh)
    assert pickle.loads(pickle.dumps(conv)) == fresh
    p = _points()
    for op in (conv, *conv.backward()):  # forward (padded, Winograd), backward data and weight
        copy = dataclasses.replace(op)
        warm = gpu_batch.governed_many([op], p)[0]  # builds and keeps the op's derived values
        assert gpu_cost.DERIVED_KEY in op.__dict__ and gpu_cost.DERIVED_KEY not in copy.__dict__
        assert_costs_equal(gpu_batch.governed_many([op], p)[0], warm)  # reads them
        assert_costs_equal(warm, gpu_batch.governed_many([copy], p)[0])
        assert_costs_equal(gpu_batch.cost_many([op], p)[0], gpu_cost.cost(dataclasses.replace(op), p))


def test_derived_values_of_an_op_without_instance_dict_are_built_each_time():
    class Slotted:
        __slots__ = ("calls",)

    op = Slotted()
    op.calls = 0

    def build():
        op.calls += 1
        return op.calls

    assert gpu_cost.derived(op, ("x",), build) == 1 and gpu_cost.derived(op, ("x",), build) == 2


def test_stream_requests_from_kept_values_equal_cold_ones(assert_costs_equal):
    # A streaming op's request values (FLOP classes, bytes, precision) and its FLOP are kept on it:
    # pricing it again, or a graph that shares its ops, gives what a fresh copy gives.
    p = _points()
    for op in (ops.BatchNorm(8, 64, 56, 56, dtype="fp16"), ops.Elementwise((32, 64, 56, 56), fn="relu", dtype="fp16"),
               ops.Gemv(4096, 4096, dtype="fp16")):
        warm = gpu_batch.governed_many([op], p)[0]
        assert gpu_cost.DERIVED_KEY in op.__dict__
        assert_costs_equal(gpu_batch.governed_many([op], p)[0], warm)
        assert_costs_equal(warm, gpu_batch.governed_many([dataclasses.replace(op)], p)[0])


def test_transfer_on_gpu_is_an_error():
    from archsim.errors import EngineError
    with pytest.raises(EngineError):
        gpu_batch.cost_many([ops.HostToDevice(1 << 20)], _points())


def test_softmax_long_rows_are_read_twice():
    # V100: 96 KiB shared memory per block, 6 MiB L2 / 80 SMs = 78.6 KB per SM.
    # Rows of 1024 fp32 (4 KiB) fit: DRAM and L2 bytes are the compulsory 2 x 4096 x 4 KiB = 32 MiB.
    # Rows of 2^20 fp32 (4 MiB) fit neither: the input (4 x 4 MiB) is read again from DRAM:
    # 2 x 16 MiB + 16 MiB = 48 MiB at both levels.
    v100 = presets.load_preset("gpu/v100-sxm2-16gb")
    p = GPUParams.from_devices([v100])
    short = ops.Softmax((4096, 1024), dtype="fp32")
    long = ops.Softmax((4, 1 << 20), dtype="fp32")
    for op, want in ((short, 2 * 4096 * 4096), (long, 3 * 4 * 4 * (1 << 20))):
        for c in (gpu_cost.cost(op, p), gpu_batch.cost_many([op], p)[0]):
            assert c.bytes_by_level["dram"][0] == want
            assert c.bytes_by_level["l2"][0] == want


def test_pointer_chase_kernel_is_latency_bound():
    # One thread, 1000 dependent loads over a 1 GiB working set: 1000 x (L2 + DRAM latency).
    v100 = presets.load_preset("gpu/v100-sxm2-16gb")
    k = ops.Kernel(name="chase", dtype="fp32", dram_read_bytes=128_000, dram_write_bytes=4, grid=(1, 1, 1),
                   block=(1, 1, 1), dependent_accesses=1000, working_set_bytes=1 << 30)
    p = GPUParams.from_devices([v100])
    c = gpu_cost.cost(k, p)
    assert c.time_by_unit_s["latency"][0] == pytest.approx(1000 * (p.l2_latency_s[0] + p.dram_latency_s[0]))
    assert c.bounds() == ["latency"]
    # No working set declared: the chain is taken to miss to DRAM.
    c2 = gpu_cost.cost(dataclasses.replace(k, working_set_bytes=None), p)
    assert c2.time_by_unit_s["latency"][0] == c.time_by_unit_s["latency"][0]


@pytest.mark.parametrize("autotune", [(0.0, 0.0, 0.0), (1.0, 0.0, 1.0)], ids=["heuristic", "mixed"])
def test_algorithm_selection_stacked_equals_one_op_path(assert_costs_equal, autotune):
    # software.algorithm_selection = "heuristic" (conv_autotune 0): both paths run implicit GEMM only;
    # a pack mixing autotuned and heuristic points picks per point in both.
    p = dataclasses.replace(_points(), conv_autotune=np.asarray(autotune))
    for op, got in zip(OPS, gpu_batch.cost_many(OPS, p), strict=True):
        assert_costs_equal(got, gpu_cost.cost(op, p))


def test_pack_equals_packs_of_one_point():
    # The pack memoises row parts by sub-object and by content: points that share sub-objects
    # (model_copy copies), equal ones from separate loads and different presets give the same
    # columns as packing each point alone.
    v100, h100 = presets.load_preset("gpu/v100-sxm2-16gb"), presets.load_preset("gpu/h100-sxm5-80gb")
    points = [v100, v100.model_copy(update={"clock": "900 MHz"}), h100, presets.load_preset("gpu/v100-sxm2-16gb"),
              h100.model_copy(update={"sm_count": 66, "tensor_clock": "1.5 GHz"}), v100.model_copy(update={
                  "dram": {**v100.dram.model_dump(by_alias=True), "bandwidth": "1 TB/s"}})]
    pack = GPUParams.from_devices(points)
    alone = [GPUParams.from_devices([d]) for d in points]
    for f in dataclasses.fields(pack):
        if f.name == "n":
            continue
        v = getattr(pack, f.name)
        rows = dict(v) if isinstance(v, dict) else {None: v}
        for key, x in rows.items():
            want = np.concatenate([(getattr(a, f.name)[key] if key is not None else getattr(a, f.name))
                                   for a in alone])
            assert x.tobytes() == want.tobytes(), (f.name, key)


def test_packed_params_equal_the_dataclass_constructor():
    """from_devices fills the frozen pack directly: every field is set and equals what the
    dataclass __init__ gives for the same values (dataclasses.replace calls __init__)."""
    devices = [presets.load_preset(name) for name in ("gpu/v100-sxm2-16gb", "gpu/h100-sxm5-80gb")]
    packed = GPUParams.from_devices(devices, host_dispatch_s=[1e-6, 2e-6])
    rebuilt = dataclasses.replace(packed)
    for field in dataclasses.fields(GPUParams):
        a, b = getattr(packed, field.name), getattr(rebuilt, field.name)
        assert type(a) is type(b), field.name
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b, err_msg=field.name)
        else:
            assert a == b, field.name
    assert list(vars(packed)) == [f.name for f in dataclasses.fields(GPUParams)]


@pytest.mark.parametrize("stacked_points", [gpu_batch.STACKED_SUM_POINTS, 0])
def test_governed_many_equals_the_governor_on_the_stacked_costs(assert_costs_equal, monkeypatch, stacked_points):
    # The engines price GPU ops with governed_many, which governs every autotuned convolution's
    # candidates in the op pass: it must give power.apply(cost_many(...)) to the last bit, picks,
    # clocks and extras included. A T4 (70 W) and a V100 held to 150 W: many rows over the limit,
    # and the T4's fp32 3x3 convolutions pick Winograd only at the governed clock; a V100 with a
    # P100 (no fp16 Tensor Cores): two channel configurations per convolution. At few points the
    # ops stay row-stacked through the power model (convolutions summed row-stacked), at many (here
    # a limit of 0) they are cut into ops first: both give the same floats.
    from archsim.cost import power

    monkeypatch.setattr(gpu_batch, "STACKED_SUM_POINTS", stacked_points)
    v100 = presets.load_preset("gpu/v100-sxm2-16gb")
    capped = presets.validate_hardware({**v100.model_dump(), "power_limit": "150 W"})
    for p in (GPUParams.from_devices([presets.load_preset("gpu/t4")]), GPUParams.from_devices([v100, capped]),
              GPUParams.from_devices([v100, presets.load_preset("gpu/p100-16gb")])):
        graph_ops = [*OPS, ops.Conv2d(2, 64, 64, 56, 56, kernel=(3, 3), padding=(1, 1), dtype="fp32"),
                     *dict.fromkeys(zoo.resnet18(batch=2, dtype="fp32", training=True).ops)]
        want = power.apply(gpu_batch.cost_many(graph_ops, p), p, gpu=True)
        got = gpu_batch.governed_many(graph_ops, p)
        assert any(np.any(c.extra.get("winograd", 0.0) == 1.0) for c in got)
        assert any(np.any(c.extra["power_limited"] == 1.0) for c in got)
        for g, w in zip(got, want, strict=True):
            assert_costs_equal(g, w)
            assert list(g.extra) == list(w.extra) and list(g.energy_breakdown_j) == list(w.energy_breakdown_j)


def test_packed_rows_are_kept_per_model_without_changing_equality_or_packs() -> None:
    # A GPU's packed row is computed once per model object and kept outside its fields: equal models
    # stay equal (pydantic compares whole __dict__s first), a changed copy packs its own values, and
    # a pack of kept rows equals a pack of fresh ones field by field.
    hw, fresh = presets.load_preset("gpu/v100-sxm2-16gb"), presets.load_preset("gpu/v100-sxm2-16gb")
    first = GPUParams.from_devices([hw])
    GPUParams.from_devices([fresh])
    # A lone device's pack is kept too (per host dispatch time), its arrays read-only.
    assert GPUParams.from_devices([hw]) is first and GPUParams.from_devices([hw], [0.0]) is first
    assert GPUParams.from_devices([hw], [1e-5]).host_dispatch_s.tolist() == [1e-5]
    assert not first.sm_count.flags.writeable
    with pytest.raises(Exception, match="host_dispatch_s"):
        GPUParams.from_devices([hw], [-1.0])
    assert hw == fresh and fresh == hw and repr(hw) == repr(fresh) and hw.model_dump() == fresh.model_dump()
    again = GPUParams.from_devices([hw, fresh])
    changed = hw.model_copy(update={"sm_count": 40})
    mixed = GPUParams.from_devices([changed, hw])
    assert mixed.sm_count.tolist() == [40.0, 80.0]
    unseen = presets.load_preset("gpu/v100-sxm2-16gb")
    for f in dataclasses.fields(GPUParams):
        a, b = getattr(first, f.name), getattr(GPUParams.from_devices([unseen]), f.name)
        if isinstance(a, dict):
            assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k], equal_nan=True) for k in a)
        elif isinstance(a, np.ndarray):
            assert np.array_equal(a, b, equal_nan=True) and np.array_equal(getattr(again, f.name)[:1], a,
                                                                          equal_nan=True)
        else:
            assert a == b


@pytest.mark.parametrize("stacked_points", [gpu_batch.STACKED_SUM_POINTS, 0])
def test_governed_many_at_a_point_equals_the_one_point_views(monkeypatch, stacked_points):
    # governed_many(ops, p, point=i) reads the ops that are one kernel of a class, and the
    # convolutions without a Winograd candidate, from their classes' governed rows: each OpCost
    # must be CostArrays.at(i) of governed_many's cost to the last bit (repr: floats, key order,
    # bounds, kinds). Packs: one V100 (ResNet-50's plain convolutions), a T4 (Winograd picks), a
    # V100 with a capped copy (governed rows), and a host dispatch per operator (dispatch bounds).
    monkeypatch.setattr(gpu_batch, "STACKED_SUM_POINTS", stacked_points)
    v100 = presets.load_preset("gpu/v100-sxm2-16gb")
    capped = presets.validate_hardware({**v100.model_dump(), "power_limit": "150 W"})
    packs = [GPUParams.from_devices([v100]), GPUParams.from_devices([presets.load_preset("gpu/t4")]),
             GPUParams.from_devices([v100, capped]), GPUParams.from_devices([v100, v100], [50e-6, 1e-7], [4e-6, 0.0])]
    graph_ops = [*OPS, *dict.fromkeys(zoo.resnet50(batch=2, dtype="fp16").ops),
                 *dict.fromkeys(zoo.resnet18(batch=2, dtype="fp32", training=True).ops)]
    for p in packs:
        arrays = gpu_batch.governed_many(graph_ops, p)
        for i in range(p.n):
            got = gpu_batch.governed_many(graph_ops, p, point=i)
            assert len(got) == len(graph_ops)
            for a, g in zip(arrays, got, strict=True):
                assert repr(g) == repr(a.at(i, "", ""))


def test_stacked_at_equals_at_of_each_cut_op():
    # stacked_at on a hand-made stack of 2 ops x 3 points: integer and boolean arrays are read as
    # floats, a NaN time takes the array rule for the bound, a host dispatch at least the latency
    # binds, and given kinds and FLOP replace the stack's (as a retagged cut would carry them).
    from archsim.cost.types import CostArrays, stacked_at

    g, h = 2, 3
    rows = np.arange(g * h, dtype=np.float64)
    fields = dict(
        kind="stream", device="gpu", flop=7.0, latency_s=rows + 1.0,
        time_by_unit_s={"vector": np.array([1.0, np.nan, 3.0, 4.0, 5.0, 6.0]), "dram": rows + 0.5,
                        "overhead": np.full(g * h, 0.25)},
        bytes_by_level={"dram": np.arange(g * h, dtype=np.int64)}, flop_by_unit={"vector:fp16": rows * 2.0},
        read_bytes={"dram": rows}, write_bytes={}, dram_activations=np.ones(g * h, dtype=bool),
        link_bytes=np.zeros(g * h), overhead_s=np.full(g * h, 0.25), launches=np.ones(g * h),
        energy_breakdown_j={"dram": rows * 1e-3, "static": rows * 3e-3}, static_power_w=np.full(g * h, 40.0),
        extra={"waves": rows / 3.0}, dispatch_s=np.array([0.0, 0.0, 4.0, 4.0, 0.0, 1.0]))
    stack = CostArrays.from_fields(fields)

    def cut(j, kind, flop):
        one = {k: (v[j * h:(j + 1) * h] if isinstance(v, np.ndarray)
                   else {n: x[j * h:(j + 1) * h] for n, x in v.items()} if isinstance(v, dict) else v)
               for k, v in fields.items()}
        return CostArrays.from_fields({**one, "kind": kind, "flop": flop})

    for i in range(h):
        got = stacked_at(stack, g, h, i, ["relu", "add"], [3.0, 5.0])
        assert [repr(x) for x in got] == [repr(cut(j, k, f).at(i, "", ""))
                                          for j, (k, f) in enumerate([("relu", 3.0), ("add", 5.0)])]
        assert [repr(x) for x in stacked_at(stack, g, h, i)] == [repr(cut(j, "stream", 7.0).at(i, "", ""))
                                                                 for j in range(g)]
        one = cut(1, "stream", 7.0)  # a stack of one op (read with at())
        assert repr(stacked_at(one, 1, h, i, ["add"], [5.0])) == repr([cut(1, "add", 5.0).at(i, "", "")])
        assert repr(stacked_at(one, 1, h, i)) == repr([one.at(i, "", "")])
    assert stacked_at(stack, g, h, 2)[0].bound == "overhead"  # dispatch 4 s >= latency 3 s
    assert stacked_at(stack, g, h, 1)[0].bound == stack.bounds()[1] == "vector"  # NaN: the array rule


@pytest.mark.parametrize("stacked_points", [gpu_batch.STACKED_SUM_POINTS, 0])
def test_governed_many_totals_are_the_costs_fields(monkeypatch, stacked_points):
    # governed_many(..., totals=True) (what estimate_many's columns read) cuts the ops that are one
    # kernel of a class into the CostTotals fields alone and picks each autotuned convolution over
    # them: every op's kind, FLOP, latency, energy by component and FLOP by unit must be those of
    # governed_many's CostArrays, to the bit and in the same key order. Packs: a T4 (Winograd picked
    # at the governed clock), a T4 beside a V100 held to 150 W (picks that differ by point), a V100
    # with a P100 (two channel configurations per convolution), and 150 such points (the power
    # model's compiled pass after the governor, writing the latency and energies alone).
    from archsim.cost.types import CostTotals, PowerInputs

    monkeypatch.setattr(gpu_batch, "STACKED_SUM_POINTS", stacked_points)
    v100, t4 = presets.load_preset("gpu/v100-sxm2-16gb"), presets.load_preset("gpu/t4")
    capped = presets.validate_hardware({**v100.model_dump(), "power_limit": "150 W"})
    graph_ops = [*OPS, ops.Conv2d(2, 64, 64, 56, 56, kernel=(3, 3), padding=(1, 1), dtype="fp32"),
                 *dict.fromkeys(zoo.resnet18(batch=2, dtype="fp32", training=True).ops)]
    mixed = False
    for p in (GPUParams.from_devices([t4]), GPUParams.from_devices([t4, capped, t4]),
              GPUParams.from_devices([v100, presets.load_preset("gpu/p100-16gb")]),
              GPUParams.from_devices([t4, capped, v100] * 50)):
        full = gpu_batch.governed_many(graph_ops, p)
        totals = gpu_batch.governed_many(graph_ops, p, totals=True)
        for c, t in zip(full, totals, strict=True):
            assert type(t) is CostTotals and (t.kind, t.flop) == (c.kind, c.flop)
            assert t.latency_s.tobytes() == c.latency_s.tobytes()
            for name in ("energy_breakdown_j", "flop_by_unit"):
                want, got = getattr(c, name), getattr(t, name)
                assert list(got) == list(want) and all(got[k].tobytes() == want[k].tobytes() for k in want)
            assert t.flop_executed().tobytes() == c.flop_executed().tobytes()
            picks = c.extra.get("winograd")
            mixed = mixed or (picks is not None and 0.0 < picks.mean() < 1.0)
    assert mixed
    # beyond a few points (the last pack: 150) the convolutions' sums of row views entered the power
    # model as PowerInputs
    planner, built = gpu_batch._build(graph_ops, p, keep_finals=True, inputs=True)
    sums = [job.result for job in planner.jobs if job.result is not None]
    assert sums and all(type(r) is PowerInputs for r in sums)
    with pytest.raises(ValueError, match="totals"):
        gpu_batch.governed_many(graph_ops, p, point=0, totals=True)
