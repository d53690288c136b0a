"""The ledger: linear in counts, components sum to the total, Horowitz/Han reference ratios."""

import csv
from pathlib import Path

import numpy as np
import pytest

from archsim.energy import EnergyPrices, account
from archsim.errors import EngineError
from archsim.hardware import EnergyTable

REF = {(r["item"], int(r["bits"])): float(r["energy_pJ"]) * 1e-12
       for r in csv.DictReader((Path(__file__).parent.parent / "data" / "energy_reference_45nm.csv").open())}


def _prices(table: EnergyTable, dram_j_per_byte: float) -> EnergyPrices:
    one = np.ones(1)
    return EnergyPrices(flop_j={"vector:fp32": table.flop_j("fp32") * one},
                        read_j_per_byte={"dram": dram_j_per_byte * one},
                        write_j_per_byte={"dram": dram_j_per_byte * one}, activation_j=0 * one,
                        link_j_per_byte=0 * one, static_power_w=0 * one)


def test_dram_access_vs_fp32_add_at_45nm():
    # A 45 nm table whose fp32 FLOP is an add (0.9 pJ) and a DRAM at 20 pJ/bit (640 pJ per 32-bit
    # access, Han et al. 2015 Fig. 1): one 4-byte DRAM read / one fp32 add = 640 / 0.9 = 711 (~700x).
    table = EnergyTable(node_nm=45, vdd_v=0.9, vector_flop={"fp32": "0.9 pJ/FLOP"}, special_flop="1 pJ/FLOP",
                        register="0.25 pJ/B")
    dram_j_per_byte = REF[("32-bit DRAM access", 32)] / 4
    prices = _prices(table, dram_j_per_byte)
    t = np.zeros(1)
    e_read = account(prices, {}, {"dram": np.array([4.0])}, {}, 0.0, 0.0, t)["dram"][0]
    e_add = account(prices, {"vector:fp32": np.array([1.0])}, {}, {}, 0.0, 0.0, t)["compute"][0]
    assert e_read / e_add == pytest.approx(REF[("32-bit DRAM access", 32)] / REF[("fp add", 32)], rel=1e-9)
    assert 650 < e_read / e_add < 750
    # A 64-bit access at the same 20 pJ/bit is 1.28 nJ; Horowitz gives 1.3-2.6 nJ per 64-bit access,
    # i.e. 20-40 pJ/bit: the ledger reproduces both ends from per-byte prices.
    for lo_hi in ("low end", "high end"):
        ref = REF[(f"DRAM access ({lo_hi})", 64)]
        e64 = account(_prices(table, ref / 8), {}, {"dram": np.array([8.0])}, {}, 0.0, 0.0, t)["dram"][0]
        assert e64 == pytest.approx(ref, rel=1e-12)
        assert 1.3e-9 <= e64 <= 2.6e-9


def test_linear_and_sums_to_total():
    one = np.ones(2)
    prices = EnergyPrices(flop_j={"tensor:fp16": 0.5e-12 * one, "special": 10e-12 * one},
                          read_j_per_byte={"l2": 1e-12 * one, "dram": 20e-12 * one},
                          write_j_per_byte={"l2": 2e-12 * one, "dram": 25e-12 * one},
                          activation_j=1e-9 * one, link_j_per_byte=5e-12 * one, static_power_w=np.array([40.0, 10.0]))
    counts = dict(flop={"tensor:fp16": np.array([1e9, 2e9]), "special": np.array([1e6, 0.0])},
                  read_bytes={"l2": np.array([1e6, 3e6]), "dram": np.array([2e6, 1e6])},
                  write_bytes={"dram": np.array([1e5, 0.0])}, dram_activations=np.array([1e3, 2e3]),
                  link_bytes=np.array([0.0, 1e6]))
    t = np.array([1e-3, 2e-3])
    e1 = account(prices, time_s=t, **counts)
    scaled = {k: ({kk: 3 * vv for kk, vv in v.items()} if isinstance(v, dict) else 3 * v) for k, v in counts.items()}
    e3 = account(prices, time_s=t, **scaled)
    for k in e1:
        if k != "static":
            assert np.allclose(e3[k], 3 * e1[k], rtol=1e-12)
    assert np.allclose(e1["static"], [40e-3, 20e-3])
    # dram = 2e6*20p + 1e5*25p + 1e3*1n = 40e-6 + 2.5e-6 + 1e-6 = 43.5 uJ at point 0
    assert e1["dram"][0] == pytest.approx(43.5e-6, rel=1e-12)
    total = sum(e1.values())
    assert np.allclose(total, sum(v for v in e1.values()), rtol=0)


def test_missing_precision_is_an_error():
    one = np.ones(1)
    prices = EnergyPrices(flop_j={"tensor:int8": np.array([np.nan])}, read_j_per_byte={}, write_j_per_byte={},
                          activation_j=one, link_j_per_byte=one, static_power_w=one)
    with pytest.raises(EngineError, match="tensor:int8"):
        account(prices, {"tensor:int8": one}, {}, {}, 0.0, 0.0, one)


def test_compute_energy_equals_the_nan_cleaned_formula_with_or_without_missing_prices():
    # account reads a finite price table as it is and cleans it (NaN -> 0, as nan_to_num) only where
    # some price is not finite: the same floats as cleaning every table, an unused NaN adding nothing.
    counts = np.array([0.0, 3e12, 7.5e9, 0.0, 1e15])
    for price in (np.array([1.1e-12, 2.3e-13, 4.7e-12, 9e-13, 3.3e-14]),
                  np.array([np.nan, 2.3e-13, 4.7e-12, np.nan, 3.3e-14]),
                  np.array([np.inf, 2.3e-13, 4.7e-12, 9e-13, 3.3e-14])):
        prices = EnergyPrices(flop_j={"vector:fp32": price}, read_j_per_byte={}, write_j_per_byte={},
                              activation_j=np.zeros(5), link_j_per_byte=np.zeros(5), static_power_w=np.zeros(5))
        got = account(prices, {"vector:fp32": counts}, {}, {}, 0.0, 0.0, np.ones(5))["compute"]
        want = np.zeros(5) + np.where(counts > 0, counts * np.nan_to_num(price, nan=0.0), 0.0)
        assert np.array_equal(got, want), price
