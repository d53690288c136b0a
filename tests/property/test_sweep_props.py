"""Invariants of the sweep machinery against brute-force oracles."""

from __future__ import annotations

import copy
import functools

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from archsim.presets import load_preset
from archsim.sweep import Sweep
from archsim.sweep.analysis import pareto_front
from archsim.sweep.evaluate import apply_overrides


@functools.cache
def _v100():
    return load_preset("gpu/v100-sxm2-16gb")


coords = st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6), st.integers(0, 6)), min_size=1, max_size=40)


def _table(points, k):
    rows = {"point": range(len(points)), "status": "ok", "error": None}
    for j in range(k):
        rows[f"m{j}"] = [float(p[j]) for p in points]
    return pd.DataFrame(rows)


def _oracle(points, k):
    # p is dominated if some q is <= in every objective and < in one.
    keep = []
    for i, p in enumerate(points):
        dominated = any(all(q[j] <= p[j] for j in range(k)) and any(q[j] < p[j] for j in range(k)) for q in points)
        if not dominated:
            keep.append(i)
    return sorted(keep)


@settings(max_examples=150, deadline=None)
@given(coords)
def test_pareto_2d_matches_brute_force(points):
    front = pareto_front(_table(points, 2), ["m0", "m1"])
    assert sorted(front["point"]) == _oracle(points, 2)


@settings(max_examples=100, deadline=None)
@given(coords)
def test_pareto_3d_matches_brute_force(points):
    front = pareto_front(_table(points, 3), ["m0", "m1", "m2"])
    assert sorted(front["point"]) == _oracle(points, 3)


nested = st.recursive(st.integers() | st.text(max_size=3),
                      lambda kids: st.dictionaries(st.sampled_from("abcd"), kids, max_size=3), max_leaves=12)


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(st.sampled_from("abcd"), nested, min_size=1, max_size=4), st.data())
def test_overrides_never_touch_the_input(dump, data):
    # Pick a path that exists (following dicts), set it, and check only the copy changed.
    path, node = [], dump
    while True:
        key = data.draw(st.sampled_from(sorted(node)))
        path.append(key)
        if not isinstance(node[key], dict) or not node[key] or data.draw(st.booleans()):
            break
        node = node[key]
    before = copy.deepcopy(dump)
    out = apply_overrides(dump, [(tuple(path), "NEW")])
    assert dump == before
    cur = out
    for key in path:
        cur = cur[key]
    assert cur == "NEW"
    # Everything off the path is unchanged in the copy.
    restored = copy.deepcopy(out)
    node_b, node_o = before, restored
    for key in path[:-1]:
        node_b, node_o = node_b[key], node_o[key]
    node_o[path[-1]] = node_b[path[-1]]
    assert restored == before


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(["random", "lhs", "sobol"]), st.integers(0, 2**31), st.integers(1, 6))
def test_samplers_stay_in_range_and_repeat(sampler, seed, log2n):
    hw = _v100()
    axes = {"gpu.dram.bandwidth": {"from": "100 GB/s", "to": "800 GB/s", "scale": "log"},
            "gpu.sm_count": {"from": 8, "to": 80}, "gpu.l2.size": ["2 MiB", "4 MiB", "6 MiB"]}
    a = Sweep(hw, axes, sampler=sampler, n=2**log2n, seed=seed).points()
    b = Sweep(hw, axes, sampler=sampler, n=2**log2n, seed=seed).points()
    pd.testing.assert_frame_equal(a, b)
    assert a["gpu.dram.bandwidth_bytes_per_s"].between(1e11, 8e11).all()
    assert a["gpu.sm_count"].between(8, 80).all()
    assert set(a["gpu.l2.size_bytes"]) <= {2 * 2**20, 4 * 2**20, 6 * 2**20}
    assert np.isfinite(a.drop(columns="point").to_numpy(dtype=float)).all()

