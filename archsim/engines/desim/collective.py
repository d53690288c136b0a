"""Collectives: the ring all-reduce of data-parallel training.

A ring all-reduce of ``B`` bytes over ``N`` ranks is a reduce-scatter then an all-gather, each of
``N - 1`` steps in which every rank sends one ``B / N`` chunk to its neighbour. Each rank therefore
sends ``2 (N - 1) / N x B`` bytes, and with per-step latency ``alpha`` and per-direction link
bandwidth ``beta`` (B/s):

    t = 2 (N - 1) alpha + 2 (N - 1) / N x B / beta

This is bandwidth-optimal (Patarasuk & Yuan, "Bandwidth optimal all-reduce algorithms for
clusters of workstations", J. Parallel Distrib. Comput. 69(2), 2009) and is the "bus bandwidth"
factor ``2 (n - 1) / n`` of NCCL's performance notes (nccl-tests, doc/PERFORMANCE.md).
"""

from __future__ import annotations

from archsim.errors import EngineError

__all__ = ["ring_allreduce_s", "ring_allreduce_bytes_per_rank"]


def ring_allreduce_bytes_per_rank(nbytes: float, ranks: int) -> float:
    """Bytes each rank sends in a ring all-reduce of ``nbytes``: ``2 (N - 1) / N x nbytes``."""
    if ranks < 1:
        raise EngineError(f"ranks must be >= 1, got {ranks}")
    return 2.0 * (ranks - 1) / ranks * float(nbytes)


def ring_allreduce_s(nbytes: float, ranks: int, bandwidth_bytes_per_s: float, latency_s: float) -> float:
    """Time of a ring all-reduce of ``nbytes`` over ``ranks`` ranks, in s (0 for one rank).

    ``bandwidth_bytes_per_s`` is the achievable per-direction bandwidth of one rank's link
    (peak x efficiency); ``latency_s`` the latency of one step.
    """
    if bandwidth_bytes_per_s <= 0:
        raise EngineError(f"bandwidth_bytes_per_s must be > 0, got {bandwidth_bytes_per_s}")
    if nbytes < 0:
        raise EngineError(f"nbytes must be >= 0, got {nbytes}")
    if ranks == 1:
        return 0.0
    return 2.0 * (ranks - 1) * latency_s + ring_allreduce_bytes_per_rank(nbytes, ranks) / bandwidth_bytes_per_s
