"""Energy: action counts x energy per action, plus static power x time (the ledger); power limits
and DVFS (:mod:`archsim.energy.dvfs`)."""

from archsim.energy.dvfs import (
    ClockedPower,
    PowerTerms,
    VFCurve,
    clocked_power,
    op_power,
    op_time,
    solve_clock,
    total_power,
    voltage,
)
from archsim.energy.ledger import COMPONENTS, EnergyPrices, account

__all__ = ["COMPONENTS", "EnergyPrices", "account", "ClockedPower", "PowerTerms", "VFCurve", "clocked_power",
           "op_power", "op_time", "solve_clock", "total_power", "voltage"]
