"""governed_many at a few dozen points, where the ops stay row-stacked through the power model
(``STACKED_SUM_POINTS``): the same floats as cutting them into ops first."""

from __future__ import annotations

import numpy as np
import pytest

from archsim import presets
from archsim.cost import gpu_batch
from archsim.cost.params import GPUParams
from archsim.workload import zoo


@pytest.mark.parametrize("points", [33, 64, gpu_batch.STACKED_SUM_POINTS])
def test_stacked_rows_at_dozens_of_points_equal_the_cut_path(assert_costs_equal, monkeypatch, points):
    # A V100 at its own limit and held to 150 W (rows over the limit, governed), alternating over
    # the points: both paths must give every op's cost to the last bit.
    assert points <= gpu_batch.STACKED_SUM_POINTS
    v100 = presets.load_preset("gpu/v100-sxm2-16gb")
    capped = presets.validate_hardware({**v100.model_dump(), "power_limit": "150 W"})
    p = GPUParams.from_devices([(v100, capped)[i % 2] for i in range(points)])
    graph_ops = list(dict.fromkeys(zoo.resnet18(batch=2, dtype="fp16", training=True).ops))
    stacked = gpu_batch.governed_many(graph_ops, p)
    monkeypatch.setattr(gpu_batch, "STACKED_SUM_POINTS", 0)
    cut = gpu_batch.governed_many(graph_ops, p)
    assert any(np.any(c.extra["power_limited"] == 1.0) for c in cut)
    for s, c in zip(stacked, cut, strict=True):
        assert_costs_equal(s, c)
        assert list(s.extra) == list(c.extra) and list(s.energy_breakdown_j) == list(c.energy_breakdown_j)
