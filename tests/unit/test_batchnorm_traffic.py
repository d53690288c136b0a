"""Batch norm with batch statistics is a two-pass kernel: the input is read again when a channel does
not fit on chip (archsim.workload.ops.norm.BatchNorm.rows, archsim.cost.gpu.rowwise_traffic)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import archsim
from archsim.workload.ops.norm import BatchNorm


def _bytes(op, preset="gpu/v100-sxm2-16gb"):
    frame = archsim.estimate(op, archsim.load_preset(preset)).to_frame()
    return float(frame["dram_bytes"].sum()), float(frame["l2_bytes"].sum())


def test_training_forward_reads_a_large_channel_twice():
    # x: 256 x 64 x 56 x 56 fp16 = 102,760,448 B; gamma, beta: 2 x 64 x 2 B = 256 B; y = x's size.
    # Compulsory: 102,760,448 + 256 + 102,760,448 = 205,521,152 B. One channel: 102,760,704 / 64 =
    # 1,605,636 B > one SM's L2 share (6 MiB / 80 = 78,643 B): the normalising pass reads x (and the two
    # vectors) again from DRAM: 205,521,152 + 102,760,704 = 308,281,856 B.
    op = BatchNorm(256, 64, 56, 56, "fp16", batch_stats=True)
    assert op.rows == 64
    dram, _ = _bytes(op)
    assert dram == pytest.approx(308_281_856)


def test_backward_reads_x_and_dy_twice():
    # Inputs x, dy (102,760,448 B each) and gamma (128 B); outputs dx (102,760,448 B), dgamma/dbeta (256 B).
    # Compulsory 308,281,728 B; the dx pass reads x, dy and gamma again: + 205,521,024 = 513,802,752 B.
    op = BatchNorm(256, 64, 56, 56, "fp16", batch_stats=True, pass_="backward")
    dram, _ = _bytes(op)
    assert dram == pytest.approx(513_802_752)


def test_inference_batch_norm_is_one_pass():
    # Running statistics: y = a*x + b, x read once. x = 102,760,448 B, 4 vectors of 64 fp16 = 512 B, y.
    op = BatchNorm(256, 64, 56, 56, "fp16", batch_stats=False)
    assert op.rows is None
    dram, _ = _bytes(op)
    assert dram == pytest.approx(2 * 102_760_448 + 512)


def test_a_channel_that_fits_in_shared_memory_is_read_once():
    # Batch 1, 7 x 7 fp16: one channel is 98 B (+ its share of gamma/beta), far below the 96 KiB a block
    # may use: both passes read it on chip, so L2 and DRAM see the compulsory bytes only:
    # x 2048 x 49 x 2 = 200,704 B, vectors 2 x 2048 x 2 = 8,192 B, y 200,704 B = 409,600 B.
    op = BatchNorm(1, 2048, 7, 7, "fp16", batch_stats=True)
    dram, l2 = _bytes(op)
    assert dram == pytest.approx(409_600)
    assert l2 == pytest.approx(409_600)


@settings(max_examples=15, deadline=None)
@given(batch=st.integers(1, 64), channels=st.integers(1, 512), hw=st.sampled_from([1, 7, 14, 28, 56]),
       backward=st.booleans())
def test_training_traffic_is_between_one_and_two_passes(batch, channels, hw, backward):
    # DRAM bytes of a training batch norm lie between the compulsory bytes (a channel that fits on chip)
    # and the compulsory bytes plus one more read of every input (the second pass from DRAM)
    from archsim.cost.common import io_bytes

    op = BatchNorm(batch, channels, hw, hw, "fp16", batch_stats=True, pass_="backward" if backward else "forward")
    dram, l2 = _bytes(op)
    in_b, _ = io_bytes(op)
    compulsory = float(op.min_bytes())
    assert compulsory * (1 - 1e-9) <= dram <= (compulsory + in_b) * (1 + 1e-9)
    assert l2 >= dram * (1 - 1e-9)
