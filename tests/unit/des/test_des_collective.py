"""The ring all-reduce model (Patarasuk & Yuan 2009) against hand arithmetic."""

import pytest

from archsim.engines.desim.collective import ring_allreduce_bytes_per_rank, ring_allreduce_s
from archsim.errors import EngineError


def test_eight_ranks_hand_computed():
    # 2 (N-1)/N x B / bw + 2 (N-1) x latency = 1.75 x 1e8 / 2.55e11 + 14 x 1e-6 = 6.8627e-4 + 1.4e-5 s.
    t = ring_allreduce_s(1e8, 8, 2.55e11, 1e-6)
    assert t == pytest.approx(1.75e8 / 2.55e11 + 14e-6, rel=1e-12)
    assert ring_allreduce_bytes_per_rank(1e8, 8) == pytest.approx(1.75e8)


def test_two_ranks_send_the_whole_buffer_once():
    # N = 2: 2 x 1/2 = 1 x B per rank, two latency steps.
    assert ring_allreduce_s(1e6, 2, 1e9, 2e-6) == pytest.approx(1e-3 + 4e-6)


def test_one_rank_is_free_and_bad_input_is_named():
    assert ring_allreduce_s(1e9, 1, 1e9, 1e-6) == 0.0
    with pytest.raises(EngineError, match="bandwidth"):
        ring_allreduce_s(1.0, 4, 0.0, 0.0)
    with pytest.raises(EngineError, match="ranks"):
        ring_allreduce_bytes_per_rank(1.0, 0)


def test_time_grows_toward_twice_the_buffer():
    times = [ring_allreduce_s(1e9, n, 1e9, 0.0) for n in (2, 4, 8, 64)]
    assert times == sorted(times) and times[-1] < 2.0
