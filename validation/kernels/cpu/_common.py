"""Shared helpers of the CPU validation cases."""

from __future__ import annotations

SIZES = ("quick", "full")


def check_sizes(sizes: str) -> str:
    if sizes not in SIZES:
        raise ValueError(f"sizes: {sizes!r} not one of {list(SIZES)}")
    return sizes
