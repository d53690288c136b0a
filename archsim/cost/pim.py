"""Cost of an op on a PIM device (vectorised over hardware points).

The op runs on the units next to the banks: compute at units x clock x ops/cycle x efficiency,
operands at the aggregate internal bank bandwidth (units x per-unit bank bandwidth x efficiency),
plus the host-side launch of a PIM kernel. Operands are assumed resident in the PIM memory; moving
them there is an explicit :class:`~archsim.ops.HostToDevice` op on the device's ``host_link``. Bank
bytes are priced at the internal read energy (no off-chip I/O); rows open once per row buffer.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from archsim.cost import kernels as kn
from archsim.cost.common import flop_classes, precision_of, sum_costs
from archsim.cost.params import PIMParams
from archsim.cost.types import CostArrays
from archsim.energy import EnergyPrices, account
from archsim.errors import EngineError

__all__ = ["cost"]


def cost(op: Any, p: PIMParams) -> CostArrays:
    """The cost of ``op`` at every PIM device of ``p``."""
    if op.kind in ("h2d", "d2h"):
        raise EngineError(f"{op.label}: a {op.kind} transfer runs on the host link")
    if op.kind == "attention" and not op.fused:
        return sum_costs([cost(sub, p) for sub in op.decompose()], op.kind, float(op.flop()))
    prec = precision_of(op)
    rate = kn.pim_compute_rate(p, prec)
    if np.any(rate <= 0):
        raise EngineError(f"{op.label}: the PIM units have no ops_per_cycle for {prec}")
    mm, vector, special = flop_classes(op)
    flop = mm + vector + special
    bank_bytes = np.full(p.n, float(op.min_bytes()))
    times = {"compute:pim": flop / rate, "memory:pim": bank_bytes / kn.pim_bank_bandwidth(p)}
    overhead = p.launch_overhead_s.copy()
    latency = np.maximum(times["compute:pim"], times["memory:pim"]) + overhead
    activations = bank_bytes / p.dram_row_buffer_bytes
    flop_units = {f"pim:{prec}": np.full(p.n, flop)}
    prices = EnergyPrices(flop_j={f"pim:{prec}": p.vector_flop_j[prec]},
                          read_j_per_byte={"pim": p.internal_read_j_per_byte, "dram": np.zeros(p.n)},
                          write_j_per_byte={"pim": p.internal_read_j_per_byte, "dram": np.zeros(p.n)},
                          activation_j=p.dram_activation_j, link_j_per_byte=np.zeros(p.n),
                          static_power_w=p.static_power_w)
    reads = {"pim": bank_bytes}
    energy = account(prices, flop_units, reads, {}, activations, np.zeros(p.n), latency)
    # Row activations belong to the banks the units read: fold them into the PIM component.
    energy["pim"] = energy["pim"] + activations * p.dram_activation_j
    times["overhead"] = overhead
    return CostArrays(kind=op.kind, device="pim", flop=float(op.flop()), latency_s=latency, time_by_unit_s=times,
                      bytes_by_level={"pim": bank_bytes}, flop_by_unit=flop_units, read_bytes=reads,
                      write_bytes={}, dram_activations=activations, link_bytes=np.zeros(p.n), overhead_s=overhead,
                      launches=np.ones(p.n), energy_breakdown_j=energy, static_power_w=p.static_power_w, extra={})
