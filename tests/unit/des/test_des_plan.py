"""Tasks: wave segments on thread-block slots and stream assignment."""

import math

import pytest

from archsim.engines.desim.build import assign_lanes
from archsim.engines.desim.plan import Task, gpu_segments


def test_multi_wave_kernel_has_full_waves_and_a_tail():
    # 108 SMs x 2 blocks/SM = 216 blocks per wave; 500 blocks -> 3 waves, tail 500 - 432 = 68 blocks.
    # max_blocks 32 / 2 = 16 slots per block: tail holds 68 x 16 = 1088 of 108 x 32 = 3456 slots.
    segs = gpu_segments(3e-3, {"blocks": 500.0, "blocks_per_sm": 2.0}, 108, 32)
    assert segs[0] == (pytest.approx(2e-3), 3456)
    assert segs[1] == (pytest.approx(1e-3), 1088)


def test_single_wave_kernel_holds_only_its_blocks():
    # 100 blocks at 8 per SM: 32 / 8 = 4 slots per block -> 400 slots.
    assert gpu_segments(1e-5, {"blocks": 100.0, "blocks_per_sm": 8.0}, 108, 32) == ((1e-5, 400),)


def test_kernel_without_block_count_holds_the_gpu():
    assert gpu_segments(1e-5, {"blocks": math.nan}, 108, 32) == ((1e-5, 3456),)
    assert gpu_segments(0.0, {}, 108, 32) == ()


def _task(i):
    return Task(i, None, "gpu", None, 0.0, 1.0, 0.0, 0.0, {}, label=f"t{i}")  # type: ignore[arg-type]


def test_independent_chains_get_their_own_streams():
    # a0 -> a1 and b0 -> b1, interleaved in graph order a0 b0 a1 b1.
    tasks = [_task(i) for i in range(4)]
    preds = [(), (), (0,), (1,)]
    lanes = assign_lanes(tasks, preds, "gpu", 2, True, None)
    got = {k: [t.index for t in ts] for _, k, ts in lanes}
    assert got == {0: [0, 2], 1: [1, 3]}
    one = assign_lanes(tasks, preds, "gpu", 1, True, None)
    assert [[t.index for t in ts] for _, _, ts in one] == [[0, 1, 2, 3]]
