"""governed_many beyond ``STACKED_SUM_POINTS`` (the ops that are one kernel of a class kept stacked
through the power model, the convolutions summed from row views and governed op by op) gives the
governor's floats on the one-op costs; ``_split`` cuts a stacked cost into its ops' row views."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from archsim import presets
from archsim.cost import gpu_batch, power
from archsim.cost.params import GPUParams
from archsim.workload import zoo


def _pack(points: int) -> GPUParams:
    v100 = presets.load_preset("gpu/v100-sxm2-16gb")
    capped = presets.validate_hardware({**v100.model_dump(), "power_limit": "150 W"})
    return GPUParams.from_devices([(v100, capped)[i % 2] for i in range(points)])


# 1,100 points: 14 rows per class chunk, a run of sums cut by a chunk's end; 150: one chunk per class
@pytest.mark.parametrize("points", [150, 1100])
def test_many_points_equal_the_governor_on_the_one_op_costs(assert_costs_equal, points):
    p = _pack(points)
    assert p.n > gpu_batch.STACKED_SUM_POINTS
    graph_ops = [*dict.fromkeys(zoo.resnet50(batch=2, dtype="fp16").ops),
                 *dict.fromkeys(zoo.resnet18(batch=2, dtype="fp32", training=True).ops)]
    want = power.apply(gpu_batch.cost_many(graph_ops, p), p, gpu=True)
    got = gpu_batch.governed_many(graph_ops, p)
    # the whole-op kernels went through the power model as their classes' stacked rows
    planner, built = gpu_batch._build(graph_ops, p, keep_finals=True)
    kept = [q for _, reqs in planner.stacked for q in reqs]
    assert kept and all(isinstance(q, (gpu_batch._Gemm, gpu_batch._Stream)) for q in kept)
    assert {id(q) for q in kept} == {id(c) for c in built if isinstance(c, (gpu_batch._Gemm, gpu_batch._Stream))}
    assert any(np.any(c.extra["power_limited"] == 1.0) for c in got)
    for g, w in zip(got, want, strict=True):
        assert_costs_equal(g, w)
        assert list(g.extra) == list(w.extra) and list(g.energy_breakdown_j) == list(w.energy_breakdown_j)


def _stack(g: int, h: int, keys: list[str]):
    from archsim.cost.types import CostArrays

    rng = np.random.default_rng(g * 10 + h)

    def arr():
        return rng.standard_normal(g * h)

    return CostArrays.from_fields(dict(
        kind="gemm", device="gpu", flop=0.0, latency_s=arr(), time_by_unit_s={k: arr() for k in keys},
        bytes_by_level={"dram": arr()}, flop_by_unit={}, read_bytes={"dram": arr()}, write_bytes={"dram": arr()},
        dram_activations=arr(), link_bytes=arr(), overhead_s=arr(), launches=arr(),
        energy_breakdown_j={k: arr() for k in reversed(keys)}, static_power_w=arr(), extra={"blocks": arr()},
        dispatch_s=None))


@given(st.integers(1, 5), st.integers(1, 4), st.lists(st.sampled_from(["compute", "l2", "dram", "overhead"]),
                                                      unique=True), st.data())
def test_split_gives_each_op_s_rows_as_views_in_field_order(g, h, keys, data):
    from archsim.cost.types import CostArrays

    c = _stack(g, h, keys)
    # the ops cut: all, or some in row order (as the planner asks for them), or in any order
    some = st.lists(st.integers(0, g - 1), min_size=1, max_size=g, unique=True)
    rows = data.draw(st.none() | some.map(sorted) | some)
    chosen = list(range(g)) if rows is None else rows
    per_op = data.draw(st.none() | st.just({"kind": [f"op{i}" for i in chosen], "flop": [float(i) for i in chosen]}))
    got = gpu_batch._split(c, g, h, rows, per_op)
    assert len(got) == len(chosen)
    for i, op in zip(chosen, got, strict=True):
        want = {}
        for name, v in vars(c).items():
            if isinstance(v, np.ndarray):
                want[name] = v[i * h:(i + 1) * h]
            elif isinstance(v, dict):
                want[name] = {k: x[i * h:(i + 1) * h] for k, x in v.items()}
            else:
                want[name] = v
        if per_op:
            want["kind"], want["flop"] = f"op{i}", float(i)
        assert type(op) is CostArrays and list(vars(op)) == list(want)
        for name, v in want.items():
            if isinstance(v, dict):
                assert list(vars(op)[name]) == list(v)
                assert all(np.array_equal(vars(op)[name][k], x) for k, x in v.items())
            elif isinstance(v, np.ndarray):
                assert np.array_equal(vars(op)[name], v) and np.shares_memory(vars(op)[name], vars(c)[name])
            else:
                assert vars(op)[name] == v
