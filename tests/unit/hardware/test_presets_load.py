"""Every preset loads, validates and round-trips through model_dump -> validate_hardware."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from archsim.hardware import DRAM, CPUDevice, GPUDevice, PIMDevice, System
from archsim.presets import list_presets, load_preset, models_dir, validate_hardware

PRESETS = list_presets()
KIND_CLASS = {"cpu": CPUDevice, "gpu": GPUDevice, "memory": DRAM, "pim": PIMDevice, "system": System}

REQUIRED = [
    "gpu/v100-sxm2-16gb", "gpu/p100-16gb", "gpu/gtx-1080-ti", "gpu/titan-xp", "gpu/t4", "gpu/a100-sxm4-40gb",
    "gpu/a100-sxm4-80gb", "gpu/h100-sxm5-80gb", "gpu/h200-sxm-141gb", "gpu/rtx-4090", "gpu/gtx-580", "gpu/k80",
    "cpu/skylake-16vcpu", "cpu/i9-10980xe", "cpu/sapphire-rapids-8480", "cpu/epyc-genoa-9654",
    "cpu/epyc-milan-7763", "cpu/xeon-phi-7250", "cpu/epyc-genoa-2vcpu", "cpu/epyc-rome-7742",
    "memory/ddr4-3200", "memory/ddr5-4800", "memory/lpddr5", "memory/gddr6x", "memory/hbm2", "memory/hbm2e",
    "memory/hbm3", "memory/hbm3e", "pim/hbm2-pim", "pim/upmem-2560",
    "system/dgx-a100", "system/workstation-1080ti", "system/cloud-16vcpu", "system/cloud-k80",
    "system/cloud-p100", "system/h100-node", "system/upmem-server", "system/hbm-pim-node",
]


def test_catalogue_has_every_required_id() -> None:
    missing = sorted(set(REQUIRED) - set(PRESETS))
    assert not missing, f"missing presets: {missing}"


@pytest.mark.parametrize("preset_id", PRESETS)
def test_preset_loads_as_its_kind(preset_id: str) -> None:
    hw = load_preset(preset_id)
    assert isinstance(hw, KIND_CLASS[preset_id.split("/")[0]])
    assert hw.name


@pytest.mark.parametrize("preset_id", PRESETS)
def test_preset_round_trips(preset_id: str) -> None:
    hw = load_preset(preset_id)
    dump = hw.model_dump(mode="json")
    again = validate_hardware(dump, preset_id)
    assert again == hw
    assert again.model_dump(mode="json") == dump
    assert again.content_hash() == hw.content_hash()


@pytest.mark.parametrize("preset_id", PRESETS)
def test_preset_cites_sources(preset_id: str) -> None:
    hw = load_preset(preset_id)
    assert hw.sources, f"{preset_id} has no [[sources]]"
    # Every source names at least one field (enforced by the model) and a url or a document.
    assert all(s.fields and (s.url or s.document) for s in hw.sources)


def test_cloud_16vcpu_has_no_gpu() -> None:
    system = load_preset("system/cloud-16vcpu")
    assert system.gpu is None and system.gpu_count == 0


def test_dgx_a100_wiring() -> None:
    dgx = load_preset("system/dgx-a100")
    assert dgx.gpu_count == 8 and dgx.gpu.name == "NVIDIA A100 SXM4 40GB"
    assert dgx.host.cores == 128  # 2 x 64-core EPYC 7742
    # NVLink 3: 600 GB/s per GPU counts both directions; the link stores one direction.
    assert dgx.gpu_link.bandwidth_bytes_per_s == pytest.approx(300e9)
    assert dgx.host_link.kind == "pcie4"


def test_derived_preset_keeps_base_sources_and_overrides() -> None:
    a80 = load_preset("gpu/a100-sxm4-80gb")
    a40 = load_preset("gpu/a100-sxm4-40gb")
    assert a80.dram.kind == "hbm2e" and a40.dram.kind == "hbm2"
    assert a80.sm == a40.sm
    # base sources first, less the fields the derived file sources itself (the 40 GB part's "5 active
    # HBM2 stacks" note is about its own dram.channels), then the derived file's own
    import tomllib

    own_file = tomllib.loads((models_dir() / "gpu" / "a100-sxm4-80gb.toml").read_text())["sources"]
    own = {f for s in own_file for f in s.get("fields", ())}
    kept = [s.document for s in a40.sources if not s.fields or set(s.fields) - own]
    assert [s.document for s in a80.sources[: len(kept)]] == kept
    assert len(a80.sources) == len(kept) + len(own_file)
    assert all(not set(s.fields) & own for s in a80.sources[: len(kept)])  # trimmed to the fields it still sources
    sourced: dict[str, list[str | None]] = {}
    for s in a80.sources:
        for f in s.fields:
            sourced.setdefault(f, []).append(s.document or s.url)
    assert len(sourced["dram.channels"]) == 1  # one source per field, the derived file's


def test_models_dir_holds_only_kind_folders() -> None:
    folders = {p.name for p in models_dir().iterdir() if p.is_dir()}
    # the hardware kinds, and the software profiles (archsim.software) beside them
    assert folders <= {"cpu", "gpu", "memory", "pim", "system", "software"}


def test_python_c_load_preset_prints_the_model() -> None:
    # `python -c "import archsim; print(archsim.load_preset(...))"`: prints the model's repr, no noise.
    root = Path(__file__).resolve().parents[3]
    code = "import archsim; print(archsim.load_preset('gpu/h100-sxm5-80gb'))"
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "NVIDIA H100 SXM5 80GB" in out.stdout and "sm_count=132" in out.stdout
    assert out.stderr == ""


def test_content_hash_is_kept_without_changing_the_model() -> None:
    # The hash is computed once per object and kept outside the fields: equality, dumps and copies
    # behave as for a model that never computed it; a changed copy gets its own hash.
    hw, fresh = load_preset("gpu/v100-sxm2-16gb"), load_preset("gpu/v100-sxm2-16gb")
    first = hw.content_hash()
    assert hw.content_hash() is first  # kept, not recomputed
    assert hw == fresh and fresh == hw and hw.model_dump() == fresh.model_dump() and repr(hw) == repr(fresh)
    assert dict(hw) == dict(fresh)
    assert fresh.content_hash() == first
    changed = hw.model_copy(update={"sm_count": 40})
    assert changed.content_hash() != first
    assert changed.content_hash() == validate_hardware(changed.model_dump(), "x").content_hash()
    assert hw.model_copy().content_hash() == first
