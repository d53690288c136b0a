"""Convolutions summed from their kernels' stacked rows beyond ``STACKED_SUM_POINTS``
(``_Planner.run_sums``, ``gpu_batch._sum_views``): the sums equal ``common.sum_costs`` of the cut
kernels to the bit, the rows they write over are rows of their own kernels that nothing else
reads, and the costs equal the one-op path's."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from archsim import presets
from archsim.cost import gpu as gpu_cost
from archsim.cost import gpu_batch
from archsim.cost.common import sum_costs
from archsim.cost.params import GPUParams
from archsim.cost.types import CostArrays
from archsim.workload import zoo

_DICTS = ("time_by_unit_s", "bytes_by_level", "flop_by_unit", "read_bytes", "write_bytes", "energy_breakdown_j")
_ARRAYS = ("latency_s", "dram_activations", "link_bytes", "overhead_s", "launches")


def _pack(points: int, **update: Any) -> GPUParams:
    v100 = presets.load_preset("gpu/v100-sxm2-16gb")
    capped = presets.validate_hardware({**v100.model_dump(), "power_limit": "150 W", **update})
    return GPUParams.from_devices([(v100, capped)[i % 2] for i in range(points)])


@pytest.mark.parametrize("points", [150, 300])
def test_many_point_costs_equal_the_one_op_path(assert_costs_equal, points):
    # ResNet-50 in fp16: convolutions with layout transposes and Winograd candidates (their kernels
    # summed from rows, over the rows of the kernels), next to whole ops in the same class chunks.
    p = _pack(points)
    assert p.n > gpu_batch.STACKED_SUM_POINTS
    graph_ops = [*dict.fromkeys(zoo.resnet50(batch=2, dtype="fp16").ops)]
    got = gpu_batch.cost_many(graph_ops, p)
    assert any(isinstance(c, CostArrays) and "winograd" in c.extra for c in got)
    for op, c in zip(graph_ops, got, strict=True):
        want = gpu_cost.cost(op, p)
        assert_costs_equal(c, want)
        for name in _DICTS:
            assert list(getattr(c, name)) == list(getattr(want, name))
        assert list(c.extra) == list(want.extra)


def test_row_sums_leave_what_later_calls_read_as_it_was(assert_costs_equal):
    # The sums write over their kernels' rows: nothing a later call reads (the parameter pack and
    # what is kept on it and on the ops) may change.
    p = _pack(150)
    graph_ops = [*dict.fromkeys(zoo.resnet50(batch=2, dtype="fp16").ops)]
    first = gpu_batch.governed_many(graph_ops, p)
    for a, b in zip(first, gpu_batch.governed_many(graph_ops, p), strict=True):
        assert_costs_equal(a, b)
    for a, b in zip(gpu_batch.cost_many(graph_ops, p), gpu_batch.cost_many(graph_ops, _pack(150)), strict=True):
        assert_costs_equal(a, b)


def test_many_point_training_costs_equal_the_one_op_path(assert_costs_equal):
    # fp32 training: backward convolutions, no Tensor-Core transposes
    p = _pack(140)
    graph_ops = [*dict.fromkeys(zoo.resnet18(batch=2, dtype="fp32", training=True).ops)][:60]
    for op, c in zip(graph_ops, gpu_batch.cost_many(graph_ops, p), strict=True):
        assert_costs_equal(c, gpu_cost.cost(op, p))


@dataclasses.dataclass(eq=False)
class _Part:
    ref: tuple[CostArrays, int]


def _stack(rng: np.random.Generator, g: int, h: int, keys: dict[str, list[str]], dispatch: bool) -> CostArrays:
    def arr() -> np.ndarray:
        return rng.standard_normal(g * h) * 10.0 ** rng.integers(-3, 4)

    return CostArrays.from_fields(dict(
        kind="stream", device="gpu", flop=1.0, latency_s=arr(), **{name: {k: arr() for k in keys[name]}
                                                                   for name in _DICTS[:5]},
        dram_activations=arr(), link_bytes=arr(), overhead_s=arr(), launches=arr(),
        energy_breakdown_j={k: arr() for k in keys["energy_breakdown_j"]}, static_power_w=arr(),
        extra={"tile": arr()}, dispatch_s=arr() if dispatch else None))


_KEYS = st.lists(st.sampled_from(["dram", "l2", "l1", "overhead", "vector"]), unique=True)


@given(st.integers(1, 3), st.integers(1, 4), st.integers(1, 5), st.data())
def test_sums_of_row_views_equal_sum_costs_of_the_cut_parts(h, parts, jobs, data):
    # Random stacks; each part of a job a distinct row of its stack (evenly spaced or not), some
    # parts read by two jobs (their rows kept); a key of one part passed on as that part's rows; a
    # sum with no rows to write over one new array per job; one part: its rows retagged.
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    n_stacks = data.draw(st.integers(1, parts))
    sources = [data.draw(st.integers(0, n_stacks - 1)) for _ in range(parts)]
    rows_needed = [sources.count(s) * jobs for s in range(n_stacks)]
    stacks = []
    for s in range(n_stacks):
        keys = {name: data.draw(_KEYS) for name in _DICTS}
        stacks.append(_stack(rng, rows_needed[s] + data.draw(st.integers(0, 2)), h, keys, data.draw(st.booleans())))
    if data.draw(st.booleans()):  # two fields hold one array: written by neither
        c = stacks[0]
        c.__dict__["overhead_s"] = c.time_by_unit_s.setdefault("overhead", c.overhead_s)
    free_rows = {s: list(data.draw(st.permutations(range(len(stacks[s].latency_s) // h)))) for s in range(n_stacks)}
    main = data.draw(st.none() | st.integers(0, parts - 1))
    built = [gpu_batch._SumJob([_Part((stacks[s], free_rows[s].pop())) for s in sources], "conv2d", 2.0, main)
             for _ in range(jobs)]
    shared = data.draw(st.sets(st.integers(0, parts - 1)))
    uses = {id(q): 2 if j in shared else 1 for job in built for j, q in enumerate(job.parts)}
    before = copy.deepcopy(stacks)
    kept = {(s, r) for s in range(n_stacks) for r in range(len(stacks[s].latency_s) // h)} - {
        (sources[j], q.ref[1]) for job in built for j, q in enumerate(job.parts) if j not in shared}

    def cut(c: CostArrays, r: int) -> CostArrays:
        return gpu_batch._split(c, len(c.latency_s) // h, h, [r])[0]

    want = []
    for job in built:
        cut_parts = [cut(before[s], q.ref[1]) for s, q in zip(sources, job.parts, strict=True)]
        total = sum_costs(cut_parts, "conv2d", 2.0)
        if parts > 1:  # gpu.with_transfers: the main kernel's extras
            extra = {} if main is None else cut_parts[main].extra
            total = CostArrays.from_fields({**total.__dict__, "extra": extra})
        want.append(total)

    # a second sum reads each job's sum (as a convolution's Winograd sum is read with its transposes)
    outer_stack = _stack(rng, jobs, h, {name: data.draw(_KEYS) for name in _DICTS}, data.draw(st.booleans()))
    outer_before = copy.deepcopy(outer_stack)
    outer = [gpu_batch._SumJob([_Part((outer_stack, r)), job], "conv2d", 2.0)
             for r, job in zip(data.draw(st.permutations(range(jobs))), built, strict=True)]
    uses.update({id(q): 1 for job in outer for q in job.parts})
    free = gpu_batch._Writable(uses)

    out, g, rows = gpu_batch._sum_views(built, h, free)
    got = gpu_batch._split(out, g, h, rows, {"kind": ["conv2d"] * jobs, "flop": [2.0] * jobs})
    _assert_same(want, got)
    for job, r in zip(built, rows, strict=True):
        job.ref = (out, r)
    out, g, rows = gpu_batch._sum_views(outer, h, free)
    got = gpu_batch._split(out, g, h, rows, {"kind": ["conv2d"] * jobs, "flop": [2.0] * jobs})
    want = [CostArrays.from_fields({**sum_costs([cut(outer_before, job.parts[0].ref[1]), w], "conv2d", 2.0).__dict__,
                                    "extra": {}}) for job, w in zip(outer, want, strict=True)]
    _assert_same(want, got)
    for s, r in kept:  # rows of other ops, and of parts another job reads, as they were
        assert cut(stacks[s], r).latency_s.tobytes() == cut(before[s], r).latency_s.tobytes()
        for name in _DICTS:
            for k, v in getattr(cut(before[s], r), name).items():
                assert getattr(cut(stacks[s], r), name)[k].tobytes() == v.tobytes()


def test_a_sum_of_one_part_read_by_another_sum_keeps_its_shared_part_s_rows():
    # A one-kernel job is its kernel's rows: a sum that reads it may not write over them when
    # another job reads that kernel too.
    rng = np.random.default_rng(3)
    keys = {name: ["dram"] for name in _DICTS}
    stack, other = _stack(rng, 2, 3, keys, False), _stack(rng, 2, 3, keys, False)
    before = copy.deepcopy(stack)
    kernel = _Part((stack, 1))
    alone = gpu_batch._SumJob([kernel], "conv2d", 2.0)
    outer = gpu_batch._SumJob([_Part((other, 0)), alone], "conv2d", 2.0)
    free = gpu_batch._Writable({id(kernel): 2, id(alone): 1, id(outer.parts[0]): 1})
    out, g, rows = gpu_batch._sum_views([alone], 3, free)
    alone.ref = (out, rows[0])
    gpu_batch._sum_views([outer], 3, free)
    for name, v in before.__dict__.items():
        if isinstance(v, np.ndarray):
            assert v.tobytes() == getattr(stack, name).tobytes(), name
        elif isinstance(v, dict):
            for k, x in v.items():
                assert x.tobytes() == getattr(stack, name)[k].tobytes(), (name, k)


def _assert_same(want: list[CostArrays], got: list[CostArrays]) -> None:
    for w, c in zip(want, got, strict=True):
        assert list(w.__dict__) == list(c.__dict__)
        for name, v in w.__dict__.items():
            x = c.__dict__[name]
            if isinstance(v, dict):
                assert list(v) == list(x)
                for k in v:
                    assert v[k].tobytes() == x[k].tobytes(), (name, k)
            elif isinstance(v, np.ndarray):
                assert v.tobytes() == x.tobytes(), name
            else:
                assert v == x


def test_sole_arrays_leave_shared_read_only_and_foreign_memory_out():
    block = np.arange(12.0).reshape(3, 4)
    own = np.ones(4)
    ro = np.ones(4)
    ro.flags.writeable = False
    buffer = np.frombuffer(bytearray(32), dtype=np.float64)
    c = CostArrays.from_fields(dict(
        kind="gemm", device="gpu", flop=0.0, latency_s=own, time_by_unit_s={"a": block[0], "b": block[1],
                                                                            "overhead": block[2]},
        bytes_by_level={"dram": block[1]}, flop_by_unit={}, read_bytes={"x": block[0, 1:3]},
        write_bytes={"y": ro}, dram_activations=block[2], link_bytes=buffer, overhead_s=np.zeros(4),
        launches=np.broadcast_to(np.ones(1), (4,)), energy_breakdown_j={}, static_power_w=np.zeros(4), extra={},
        dispatch_s=None))
    sole = gpu_batch._sole_arrays(c)
    assert id(c.latency_s) in sole and id(c.overhead_s) in sole and id(c.static_power_w) in sole
    for x in (block[0], c.time_by_unit_s["a"], c.time_by_unit_s["b"], c.bytes_by_level["dram"],
              c.read_bytes["x"], c.time_by_unit_s["overhead"], ro, buffer, c.launches):
        assert id(x) not in sole


@given(st.lists(st.integers(0, 11), min_size=1, max_size=6, unique=True))
def test_row_pick_reads_the_rows_as_a_view_where_evenly_spaced(rows):
    table = np.arange(24.0).reshape(12, 2)
    pick = gpu_batch._row_pick(rows)
    got = table[pick] if type(pick) is slice else table.take(pick, axis=0)
    assert got.tolist() == table[rows].tolist()
    steps = {b - a for a, b in zip(rows, rows[1:], strict=False)}
    assert (type(pick) is slice) == (len(steps) <= 1 and all(s > 0 for s in steps))
