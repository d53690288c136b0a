"""What a first GPU estimate loads, and the names loaded on first use.

A ResNet-50 estimate on a GPU preset in a fresh process imports neither the ONNX importer, the
transformer models, the attention/movement/kernel operators nor the CPU, PIM and link cost models,
and builds the validators of the GPU models only (the hardware models build theirs on first use).
Every lazily loaded name still resolves, by attribute and by ``from ... import``, is listed by
``dir()``, is the one object wherever it is reached from, and pickles by reference; a preset
validated with the model of its kind reports the errors the union of all kinds reports.
"""

from __future__ import annotations

import importlib
import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import TypeAdapter, ValidationError

import archsim
from archsim import presets
from archsim.errors import SchemaError, WorkloadError
from archsim.hardware import CPUDevice, GPUDevice, Hardware, PIMDevice, System
from archsim.hardware._errors import format_validation_error

NOT_ON_THE_GPU_PATH = (
    "archsim.workload.onnx_import", "archsim.workload.onnx_mapping", "archsim.workload.zoo.transformers",
    "archsim.workload.ops.attention", "archsim.workload.ops.movement", "archsim.workload.ops.kernel",
    "archsim.cost.cpu", "archsim.cost.pim", "archsim.cost.link", "archsim.software", "archsim.sweep",
    "archsim.plot", "archsim.engines.des", "onnx", "pandas", "pint", "dask", "matplotlib",
)

LAZY_MODULES = ("archsim.workload", "archsim.workload.ops", "archsim.workload.zoo", "archsim.zoo", "archsim.ops",
                "archsim.cost")


def _fresh(code: str) -> str:
    """stdout of ``code`` run in a fresh interpreter on this checkout."""
    env = {**os.environ, "PYTHONPATH": str(Path(archsim.__file__).parents[1])}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env).stdout


def test_a_gpu_estimate_leaves_the_unused_modules_unimported() -> None:
    code = ("import json, sys, archsim\n"
            "from archsim.hardware import CPUDevice, GPUDevice, PIMDevice, System\n"
            "hw = archsim.load_preset('gpu/v100-sxm2-16gb')\n"
            "archsim.estimate(archsim.zoo.resnet50(batch=32, dtype='fp16'), hw)\n"
            f"print(json.dumps([sorted(m for m in {NOT_ON_THE_GPU_PATH!r} if m in sys.modules),\n"
            "                   [c.__name__ for c in (CPUDevice, GPUDevice, PIMDevice, System)\n"
            "                    if c.__pydantic_complete__]]))")
    imported, built = json.loads(_fresh(code))
    assert imported == []
    assert built == ["GPUDevice"]  # the CPU, PIM and System validators are never built for a GPU


def test_the_lazy_names_resolve_in_a_fresh_process() -> None:
    # each module's __all__ by attribute, before anything else imported the lazy modules
    code = ("import json, importlib\n"
            f"mods = [importlib.import_module(m) for m in {LAZY_MODULES!r}]\n"
            "print(json.dumps([[n for n in m.__all__ if getattr(m, n, None) is None or n not in dir(m)]\n"
            "                  for m in mods]))")
    assert json.loads(_fresh(code)) == [[] for _ in LAZY_MODULES]
    code = ("from archsim.workload import from_onnx, ImportReport, OnnxImportWarning, Attention, Copy, Kernel\n"
            "from archsim.workload.ops import Embedding, Concat, HostToDevice, DeviceToHost\n"
            "from archsim.workload.zoo import gpt2, GPT2_SIZES\n"
            "from archsim.zoo import bert_base\n"
            "from archsim.ops import Attention as A2\n"
            "import archsim\n"
            "g = archsim.zoo.get('llama_like', batch=1, seq_len=16, layers=1)\n"
            "print(A2 is Attention, gpt2 is archsim.zoo.gpt2, len(g.ops) > 0, callable(from_onnx))")
    assert _fresh(code).split() == ["True", "True", "True", "True"]


@pytest.mark.parametrize("module", LAZY_MODULES)
def test_every_public_name_is_listed_and_resolves(module: str) -> None:
    mod = importlib.import_module(module)
    listed = dir(mod)
    for name in mod.__all__:
        assert name in listed
        assert getattr(mod, name) is not None
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        mod.no_such_name  # noqa: B018


def test_the_compiled_search_imports_no_cost_model() -> None:
    code = ("import sys\n"
            "from archsim.cost import gemm_search\n"
            "print(sorted(m for m in sys.modules if m.startswith('archsim')))")
    assert _fresh(code).strip() == str(["archsim", "archsim._lazy", "archsim._version", "archsim.cost",
                                          "archsim.cost.gemm_search"])


def test_the_lazy_names_are_one_object_wherever_reached() -> None:
    from archsim.workload.ops.attention import Attention
    from archsim.workload.ops.movement import Copy

    assert archsim.ops.Attention is archsim.workload.Attention is archsim.workload.ops.Attention is Attention
    assert archsim.ops.Copy is Copy
    assert archsim.zoo.gpt2 is archsim.workload.zoo.gpt2
    assert archsim.zoo.get("gpt2", batch=1, seq_len=8).ops
    for fn in (archsim.zoo.gpt2, archsim.zoo.bert_base, archsim.zoo.resnet50):
        assert pickle.loads(pickle.dumps(fn)) is fn  # sweep workers receive models by reference
    assert sorted(archsim.zoo.list_models()) == archsim.zoo.list_models() and len(archsim.zoo.list_models()) == 13
    with pytest.raises(WorkloadError, match="did you mean gpt2"):
        archsim.zoo.get("gtp2")
    with pytest.raises(WorkloadError, match="unknown model"):
        archsim.zoo.get(["gpt2"])  # type: ignore[arg-type]
    for module in (archsim.ops, archsim.zoo, archsim.workload, archsim.workload.ops, archsim.cost):
        with pytest.raises(AttributeError, match=f"module '{module.__name__}' has no attribute 'nope'"):
            module.nope  # noqa: B018 - the lookup is the test


def _broken(data: dict) -> list[dict]:
    """Variants of a preset's table with one problem each (unknown keys, wrong types, bad units)."""
    out = [{**data, "bogus": 1}]
    for key, value in data.items():
        if isinstance(value, dict):
            out += [{**data, key: {**value, "typo": 3}}, {**data, key: 5}]
            out += [{**data, key: {**value, k: "3 parsecs"}} for k, v in value.items() if isinstance(v, str)]
        elif isinstance(value, str) and key != "kind":
            out += [{**data, key: "12 furlongs"}, {**data, key: 7}]
        elif isinstance(value, int) and not isinstance(value, bool):
            out += [{**data, key: -3}, {**data, key: 1.5}]
    return out


@pytest.mark.parametrize("preset", ["gpu/v100-sxm2-16gb", "system/dgx-a100", *[
    p for p in presets.list_presets() if p.startswith(("cpu/", "pim/"))][:2]])
def test_a_preset_reports_the_errors_of_the_union_of_all_kinds(preset: str) -> None:
    union = TypeAdapter(Hardware)
    kinds = {"cpu": CPUDevice, "gpu": GPUDevice, "pim": PIMDevice, "system": System}
    data = presets._resolve(presets._read_toml(presets._preset_path(preset)), "", (preset,))
    assert presets.validate_hardware(data, preset) == union.validate_python(data)
    errors = 0
    for case in _broken(data):
        try:
            expected = union.validate_python(case)
        except ValidationError as exc:
            errors += 1
            with pytest.raises(SchemaError) as got:
                presets.validate_hardware(case, preset)
            assert str(got.value) == format_validation_error(exc, preset, None, kinds)
        else:
            assert presets.validate_hardware(case, preset) == expected
    assert errors > 10
