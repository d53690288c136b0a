"""Bad hardware descriptions fail loudly, with an archsim error that names the offending field."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from archsim.errors import ArchsimError, PresetError, SchemaError, UnitError
from archsim.presets import load_hardware, load_preset, validate_hardware

GPU = load_preset("gpu/v100-sxm2-16gb").model_dump(mode="json")
CPU = load_preset("cpu/epyc-genoa-2vcpu").model_dump(mode="json")
MEM = load_preset("memory/hbm2").model_dump(mode="json")
PIM = load_preset("pim/upmem-2560").model_dump(mode="json")
SYS = load_preset("system/workstation-1080ti").model_dump(mode="json")


def edit(base: dict[str, Any], change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    data = copy.deepcopy(base)
    change(data)
    return data


def setp(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def apply(d: dict[str, Any]) -> None:
        *parents, leaf = path.split(".")
        for p in parents:
            d = d[int(p)] if p.isdigit() else d[p]
        d[leaf] = value
    return apply


def delp(path: str) -> Callable[[dict[str, Any]], None]:
    def apply(d: dict[str, Any]) -> None:
        *parents, leaf = path.split(".")
        for p in parents:
            d = d[int(p)] if p.isdigit() else d[p]
        del d[leaf]
    return apply


# (base, change, error type, text the message must contain)
CASES = [
    # typos and unknown keys
    (GPU, setp("clokc", "1 GHz"), SchemaError, "clokc"),
    (GPU, setp("sm.cuda_coers", 64), SchemaError, "sm.cuda_coers"),
    (GPU, setp("l2.sizee", "6 MiB"), SchemaError, "did you mean 'size'"),
    (CPU, setp("core.clck", "3 GHz"), SchemaError, "core.clck"),
    (MEM, setp("bandwith", "1 TB/s"), SchemaError, "bandwith"),
    # unitless numbers and wrong dimensions
    (GPU, setp("clock", 1530), SchemaError, "clock"),
    (GPU, setp("clock", "1530"), SchemaError, "no unit"),
    (GPU, setp("dram.bandwidth", "900 GHz"), SchemaError, "dram.bandwidth"),
    (GPU, setp("l2.size", "6 MHz"), SchemaError, "l2.size"),
    (CPU, setp("tdp", "8 J"), SchemaError, "tdp"),
    (MEM, setp("read_energy", "4 pJ"), SchemaError, "read_energy"),
    (MEM, setp("latency", "300 furlongs"), SchemaError, "latency"),
    (GPU, setp("energy.vector_flop.fp32", "2.3 pJ/B"), SchemaError, "energy.vector_flop.fp32"),
    # negative and zero sizes and counts
    (GPU, setp("sm_count", 0), SchemaError, "sm_count"),
    (GPU, setp("sm.l1.size", "-128 KiB"), SchemaError, "sm.l1.size"),
    (CPU, setp("cores", -2), SchemaError, "cores"),
    (MEM, setp("capacity", "0 GiB"), SchemaError, "capacity"),
    (MEM, setp("channels", 0), SchemaError, "channels"),
    (CPU, setp("core.clock", "0 Hz"), SchemaError, "core.clock"),
    (GPU, setp("efficiency.dram_bandwidth_efficiency", 1.5), SchemaError, "efficiency.dram_bandwidth_efficiency"),
    # the launch API's host time (issue 15): a time with a unit, not negative, spelled right, required
    (CPU, setp("efficiency.launch_api", "-3.5 us"), SchemaError, "efficiency.launch_api"),
    (CPU, setp("efficiency.launch_api", 3.5), SchemaError, "efficiency.launch_api"),
    (CPU, setp("efficiency.launch_api", "3.5"), SchemaError, "no unit"),
    (CPU, setp("efficiency.launch_apii", "3.5 us"), SchemaError, "efficiency.launch_apii"),
    (CPU, delp("efficiency.launch_api"), SchemaError, "efficiency.launch_api"),
    # geometry and consistency
    (GPU, setp("l2.ways", 7), SchemaError, "divisible by ways x line_size"),
    (CPU, setp("caches.0.line_size", 48), SchemaError, "power of two"),
    (CPU, setp("caches.1.size", "16 KiB"), SchemaError, "must be larger than l1d"),
    (GPU, setp("l2.size", "64 KiB"), SchemaError, "l2.size must be larger than sm.l1.size"),
    (MEM, setp("channels", 0), SchemaError, "channels"),
    (GPU, setp("sm.fma_lanes.fp32", 32), SchemaError, "fma_lanes.fp32"),
    (GPU, setp("energy.node_nm", 7), SchemaError, "energy.node_nm"),
    (CPU, setp("static_power", "100 W"), SchemaError, "static_power exceeds tdp"),
    (CPU, setp("branch_predictor.table_entries", 1000), SchemaError, "table_entries"),
    (SYS, delp("host_link"), SchemaError, "host_link"),
    (SYS, setp("gpu_count", 0), SchemaError, "gpu_count"),
    # wrong types and kinds
    (GPU, setp("sm_count", "eighty"), SchemaError, "sm_count"),
    (GPU, setp("kind", "tpu"), SchemaError, "'kind'"),
    (MEM, setp("kind", "sram"), SchemaError, "'kind'"),
    (CPU, setp("core.fma_units", {"fp33": 2, "fp32": 2}), SchemaError, "core.fma_units"),
    (GPU, setp("sm.l1.replacement", "mru"), SchemaError, "sm.l1.replacement"),
    (PIM, setp("units.kind", "systolic"), SchemaError, "units.kind"),
    (GPU, delp("dram"), SchemaError, "dram: required field is missing"),
    (GPU, setp("sources", [{"fields": ["clock"]}]), SchemaError, "url"),
]


@pytest.mark.parametrize(("base", "change", "error", "text"), CASES, ids=[c[3] for c in CASES])
def test_bad_description_names_the_field(base, change, error, text) -> None:
    with pytest.raises(error) as info:
        validate_hardware(edit(base, change), "test")
    assert text in str(info.value)
    assert isinstance(info.value, ArchsimError)


def test_at_least_thirty_bad_inputs() -> None:
    assert len(CASES) >= 30


def test_not_a_table() -> None:
    with pytest.raises(SchemaError, match="expected a table"):
        validate_hardware(["kind", "gpu"])  # type: ignore[arg-type]


# --------------------------------------------------------------------------- files and references

def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_duplicate_toml_key_is_an_error(tmp_path: Path) -> None:
    f = write(tmp_path / "dup.toml", 'preset = "memory/hbm2"\nchannels = 8\nchannels = 16\n')
    with pytest.raises(PresetError, match="invalid TOML") as info:
        load_hardware(f)
    assert "dup.toml" in str(info.value)


def test_toml_syntax_error_names_the_file(tmp_path: Path) -> None:
    f = write(tmp_path / "broken.toml", 'kind = "hbm2\n')
    with pytest.raises(PresetError, match="broken.toml"):
        load_hardware(f)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(PresetError, match="cannot read"):
        load_hardware(tmp_path / "absent.toml")


def test_unknown_preset_id_suggests_close_matches() -> None:
    with pytest.raises(PresetError, match=r"did you mean .*gpu/h100-sxm5-80gb"):
        load_preset("gpu/h100-sxm5-80g")


def test_malformed_preset_id() -> None:
    with pytest.raises(PresetError, match="<kind>/<name>"):
        load_preset("h100")


def test_unknown_preset_reference_inside_a_table(tmp_path: Path) -> None:
    f = write(tmp_path / "gpu.toml", '[dram]\npreset = "memory/hbm9"\n')
    with pytest.raises(PresetError, match="unknown preset 'memory/hbm9'; did you mean"):
        load_hardware(f)


def test_preset_reference_must_be_a_string(tmp_path: Path) -> None:
    f = write(tmp_path / "gpu.toml", 'preset = 3\n')
    with pytest.raises(PresetError, match="preset must be a preset id string"):
        load_hardware(f)


def test_preset_reference_cycle(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path / "memory" / "a.toml", 'preset = "memory/b"\n')
    write(tmp_path / "memory" / "b.toml", 'preset = "memory/a"\n')
    monkeypatch.setenv("ARCHSIM_MODELS", str(tmp_path))
    with pytest.raises(PresetError, match=r"cycle: memory/a -> memory/b -> memory/a"):
        load_preset("memory/a")


def test_override_of_a_preset_is_validated(tmp_path: Path) -> None:
    # Overrides are merged before validation, so an override that breaks a rule is caught.
    f = write(tmp_path / "mem.toml", 'preset = "memory/hbm2"\nbanks_per_channel = 0\n')
    with pytest.raises(SchemaError, match="banks_per_channel"):
        load_hardware(f)


def test_unitless_number_in_a_file_names_the_field(tmp_path: Path) -> None:
    f = write(tmp_path / "mem.toml", 'preset = "memory/hbm2"\nlatency = 300\n')
    with pytest.raises(SchemaError) as info:
        load_hardware(f)
    assert "latency" in str(info.value) and "no unit" in str(info.value)


def test_unit_error_is_raised_directly_by_parse() -> None:
    from archsim.units import parse

    with pytest.raises(UnitError, match="field 'clock'"):
        parse(1.5, "frequency", "clock")
