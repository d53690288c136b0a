"""Test helper: several ops' costs as one cost that stacks them op-major (``power.apply``'s counts)."""

import numpy as np

from archsim.cost.types import CostArrays


def stacked(costs: list[CostArrays]) -> CostArrays:
    """The costs (of the same keys) as one cost stacking them op-major (power.apply's counts)."""
    first = costs[0]

    def cat(name):
        return {k: np.concatenate([getattr(c, name)[k] for c in costs]) for k in getattr(first, name)}

    extra = {k: np.concatenate([c.extra[k] for c in costs]) for k in first.extra
             if isinstance(first.extra[k], np.ndarray) and all(k in c.extra for c in costs)}
    return CostArrays.from_fields({**vars(first), "latency_s": np.concatenate([c.latency_s for c in costs]),
                                   "overhead_s": np.concatenate([c.overhead_s for c in costs]),
                                   "time_by_unit_s": cat("time_by_unit_s"),
                                   "energy_breakdown_j": cat("energy_breakdown_j"),
                                   "flop_by_unit": cat("flop_by_unit"), "bytes_by_level": cat("bytes_by_level"),
                                   "extra": extra})
