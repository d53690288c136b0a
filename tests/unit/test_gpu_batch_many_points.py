"""governed_many beyond ``STACKED_SUM_POINTS``: the ops are cut into ops before the power model, the
convolutions summed from their kernels' rows placed part by part (``_Planner.order_parts``, row ranges
read as views); the same floats as the governor on the one-op costs."""

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
    assert any(np.any(c.extra["power_limited"] == 1.0) for c in got)
    for g, w in zip(got, want, strict=True):
        assert_costs_equal(g, w)
        assert list(g.extra) == list(w.extra) and list(g.energy_breakdown_j) == list(w.energy_breakdown_j)


def test_order_parts_places_each_sum_s_parts_on_consecutive_rows(monkeypatch):
    # ResNet-50's convolutions with transposes (and Winograd candidates) at 1,000 points: every
    # batch of sums reads each of its parts as one range of rows.
    p = _pack(1000)
    ops = list(dict.fromkeys(zoo.resnet50(batch=32, dtype="fp16").ops))
    planner, _ = gpu_batch._build(ops, p, stack_finals=False, stack_sums=True)
    assert planner.jobs
    read = []
    original = gpu_batch._sum_rows

    def spy(jobs, h):
        read.append([[job.parts[j].ref[1] for job in jobs] for j in range(len(jobs[0].parts))])
        return original(jobs, h)

    monkeypatch.setattr(gpu_batch, "_sum_rows", spy)
    planner.run_jobs()
    assert read and all(r == list(range(r[0], r[0] + len(r))) for rows in read for r in rows)


@given(st.integers(1, 5), st.integers(1, 6), st.data())
def test_a_range_of_rows_is_the_rows_gathered(h, g, data):
    x = np.arange(float(g * h))
    start = data.draw(st.integers(0, g - 1))
    stop = data.draw(st.integers(start + 1, g))
    rows = np.arange(start, stop)
    view = gpu_batch._rows_at(x, slice(start * h, stop * h))
    assert np.array_equal(view, gpu_batch._rows_at(x, gpu_batch._row_index(rows, h)))
    assert np.shares_memory(view, x)
