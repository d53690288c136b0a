"""Cost of a host<->device transfer over a link: latency + bytes / (bandwidth x efficiency)."""

from __future__ import annotations

from typing import Any

import numpy as np

from archsim.cost.params import LinkParams
from archsim.cost.types import CostArrays
from archsim.energy import EnergyPrices, account

__all__ = ["cost"]


def cost(op: Any, p: LinkParams) -> CostArrays:
    """The cost of transfer ``op`` at every link of ``p`` (bound ``link``; static power is the endpoints')."""
    nbytes = np.full(p.n, float(op.min_bytes()))
    transfer = nbytes / (p.bandwidth_bytes_per_s * p.efficiency)
    latency = p.latency_s + transfer
    zero = np.zeros(p.n)
    prices = EnergyPrices(flop_j={}, read_j_per_byte={}, write_j_per_byte={}, activation_j=zero,
                          link_j_per_byte=p.energy_j_per_byte, static_power_w=zero)
    energy = account(prices, {}, {}, {}, zero, nbytes, latency)
    energy.setdefault("link", zero.copy())
    return CostArrays(kind=op.kind, device="link", flop=0.0, latency_s=latency,
                      time_by_unit_s={"link": transfer, "overhead": p.latency_s.copy()},
                      bytes_by_level={"link": nbytes}, flop_by_unit={}, read_bytes={}, write_bytes={},
                      dram_activations=zero, link_bytes=nbytes, overhead_s=p.latency_s.copy(), launches=zero,
                      energy_breakdown_j=energy, static_power_w=zero, extra={})
