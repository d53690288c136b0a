"""The energy ledger: ``E = sum_actions count x energy_per_action + static_power x time``.

This is Accelergy's separation (Wu, Emer, Sze, ICCAD 2019): the engines count *actions* (FLOP per
unit and precision, bytes read and written at each memory level, DRAM row activations, link bytes,
PIM bank bytes) and the device's tables price them. Two tables, never mixed: the counts come from
:mod:`archsim.cost`, the prices from the hardware model (on-chip energies scaled to the
device's node by :class:`~archsim.hardware.EnergyTable`). The ledger is linear in every count, and
its breakdown sums to the total by construction: the total *is* the sum of the components.

Components: ``compute`` (all FLOP), one per memory level (``register``, ``l1``, ``l2``, ``l3``,
``dram``, ``pim``, ``link``), and ``static`` (static power x time, including DRAM background
power). Everything except ``compute`` and ``static`` is data movement.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from archsim.energy import dvfs
from archsim.errors import EngineError

__all__ = ["COMPONENTS", "EnergyPrices", "account"]

COMPONENTS: tuple[str, ...] = ("compute", "issue", "register", "l1", "l2", "l3", "noc", "dram",
                               "dram_interface", "pim", "link", "static", "leakage", "clock")
"""Known component names, in reporting order (CPU cache names are reported as they are named)."""


@dataclass(frozen=True)
class EnergyPrices:
    """Energy per action over hardware points (arrays of shape (H,)), in J.

    Attributes:
        flop_j: per FLOP, keyed like the action counts (``"tensor:fp16"``, ``"vector:fp32"``, ``"special"``).
        read_j_per_byte / write_j_per_byte: per byte at each level (``"dram"``, ``"l2"``...).
        activation_j: per DRAM row activation.
        link_j_per_byte: per byte over the link.
        static_power_w: static power of the device while the op runs.
    """

    flop_j: Mapping[str, np.ndarray]
    read_j_per_byte: Mapping[str, np.ndarray]
    write_j_per_byte: Mapping[str, np.ndarray]
    activation_j: np.ndarray
    link_j_per_byte: np.ndarray
    static_power_w: np.ndarray


def account(prices: EnergyPrices, flop: Mapping[str, np.ndarray | float], read_bytes: Mapping[str, np.ndarray],
            write_bytes: Mapping[str, np.ndarray], dram_activations: np.ndarray | float,
            link_bytes: np.ndarray | float, time_s: np.ndarray) -> dict[str, np.ndarray]:
    """Energy by component, in J (arrays over hardware points); the components sum to the total.

    A priced action whose energy is unknown (NaN: a precision missing from the device's table) is
    an error naming it, unless its count is zero.
    """
    if getattr(time_s, "shape", None) == (1,):
        try:
            return _account_point(prices, flop, read_bytes, write_bytes, dram_activations, link_bytes, time_s)
        except EngineError:
            raise
        except (TypeError, ValueError):  # an entry not of one point: the arrays
            pass
    out: dict[str, np.ndarray] = {}
    compute = np.zeros_like(np.asarray(time_s, dtype=np.float64))
    into = dvfs.writer(compute)
    inplace = compute.size >= dvfs.INPLACE_MIN
    for key, count in flop.items():
        count = np.asarray(count, dtype=np.float64)
        if not count.any():
            continue
        price = prices.flop_j.get(key)
        used = count > 0
        if price is None:
            raise EngineError(_missing(key))
        if not np.isfinite(price).all():  # the usual table is all finite: nothing to check or replace
            if (np.isnan(price) & used).any():
                raise EngineError(_missing(key))
            # 0 x NaN is NaN: a point that does not use this unit (a P100's absent Tensor Cores, in a
            # sweep with an A100) must add nothing, not poison its total.
            price = np.nan_to_num(price, nan=0.0)
        energy = count * price
        if not inplace or energy.shape != compute.shape:
            compute = compute + np.where(used, energy, 0.0)
        else:  # the same floats: compute, a sum from +0 of such terms, is never -0 (adding +0 leaves it)
            compute = np.add(compute, energy, out=compute, where=used)
    out["compute"] = compute
    for level in dict.fromkeys([*read_bytes, *write_bytes]):
        r = np.asarray(read_bytes.get(level, 0.0), dtype=np.float64)
        w = np.asarray(write_bytes.get(level, 0.0), dtype=np.float64)
        e = r * prices.read_j_per_byte[level]
        e = into(np.add, e, w * prices.write_j_per_byte[level], e)
        if level == "dram":
            e = into(np.add, e, np.asarray(dram_activations, dtype=np.float64) * prices.activation_j, e)
        out[level] = into(np.add, out.get(level, 0.0), e, e)
    link = np.asarray(link_bytes, dtype=np.float64)
    if link.any():
        e = link * prices.link_j_per_byte
        out["link"] = into(np.add, out.get("link", 0.0), e, e)
    out["static"] = prices.static_power_w * np.asarray(time_s, dtype=np.float64)
    return {k: np.asarray(v, dtype=np.float64) for k, v in out.items()}


_MAX = float(np.finfo(np.float64).max)


def _count(a: np.ndarray | float) -> float:
    """A count of one point: a (1,) or 0-d array, or a scalar (ValueError otherwise)."""
    if isinstance(a, np.ndarray) and a.shape not in ((1,), ()):
        raise ValueError("not one point")
    return float(a.item() if isinstance(a, np.ndarray) else a)


def _price(a: np.ndarray) -> float:
    """A price of one point: a (1,) float64 array (ValueError otherwise: the result's shape is the arrays')."""
    if getattr(a, "shape", None) != (1,) or a.dtype != np.float64:
        raise ValueError("not one point")
    return a.item()


def _account_point(prices: EnergyPrices, flop: Mapping[str, np.ndarray | float], read_bytes: Mapping[str, np.ndarray],
                   write_bytes: Mapping[str, np.ndarray], dram_activations: np.ndarray | float,
                   link_bytes: np.ndarray | float, time_s: np.ndarray) -> dict[str, np.ndarray]:
    """:func:`account` at one point (``time_s`` and the prices used of shape (1,)) in Python floats:
    the same operations in the same order, each component a new (1,) array. ValueError where an
    entry is not of one point (the arrays then)."""
    out: dict[str, float] = {}
    compute = 0.0
    for key, count in flop.items():
        count = _count(count)
        if not count:
            continue
        price = prices.flop_j.get(key)
        used = count > 0
        if price is None:
            raise EngineError(_missing(key))
        price = _price(price)
        if not math.isfinite(price):
            if price != price and used:
                raise EngineError(_missing(key))
            # np.nan_to_num: NaN to 0, +-inf to the largest finite floats.
            price = 0.0 if price != price else (_MAX if price > 0 else -_MAX)
        compute = compute + (count * price if used else 0.0)
    out["compute"] = compute
    for level in dict.fromkeys([*read_bytes, *write_bytes]):
        e = (_count(read_bytes.get(level, 0.0)) * _price(prices.read_j_per_byte[level])
             + _count(write_bytes.get(level, 0.0)) * _price(prices.write_j_per_byte[level]))
        if level == "dram":
            e = e + _count(dram_activations) * _price(prices.activation_j)
        out[level] = out.get(level, 0.0) + e
    link = _count(link_bytes)
    if link:
        out["link"] = out.get("link", 0.0) + link * _price(prices.link_j_per_byte)
    out["static"] = _price(prices.static_power_w) * _price(time_s)
    return {k: np.array([v]) for k, v in out.items()}


def _missing(key: str) -> str:
    """The error of a FLOP key the energy table does not price."""
    return f"the energy table has no FLOP energy for {key!r}; add it to the preset's [energy]"

