"""Energy: action counts x energy per action, plus static power x time (the ledger)."""

from archsim.energy.ledger import COMPONENTS, EnergyPrices, account

__all__ = ["COMPONENTS", "EnergyPrices", "account"]
