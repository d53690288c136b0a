"""archsim: time and energy of neural-network workloads on CPUs, GPUs, DRAM and PIM.

The public namespace is small (``__all__``) and loaded lazily: ``import archsim`` computes nothing
and imports no engine, plotting or numba code until a name is first used.

    hw = archsim.load_preset("gpu/h100-sxm5-80gb")
    graph = archsim.zoo.resnet50(batch=256, dtype="fp16", training=True)
    res = archsim.estimate(graph, hw)              # RunResult: latency_s, energy_j, ops, to_frame()
"""

from __future__ import annotations

import importlib
from typing import Any

from archsim._version import __version__

# public name -> (module, attribute or None for the module itself)
_LAZY: dict[str, tuple[str, str | None]] = {
    "load_preset": ("archsim.presets", "load_preset"),
    "load_hardware": ("archsim.presets", "load_hardware"),
    "list_presets": ("archsim.presets", "list_presets"),
    "estimate": ("archsim.engines", "estimate"),
    "estimate_many": ("archsim.engines", "estimate_many"),
    "many_columns": ("archsim.engines", "many_columns"),
    "Estimator": ("archsim.engines", "Estimator"),
    "Sweep": ("archsim.sweep", "Sweep"),
    "pareto_front": ("archsim.sweep.analysis", "pareto_front"),
    "sensitivity": ("archsim.sweep.analysis", "sensitivity"),
    "best": ("archsim.sweep.analysis", "best"),
    "to_wide": ("archsim.sweep.analysis", "to_wide"),
    "RunResult": ("archsim.results", "RunResult"),
    "OpResult": ("archsim.results", "OpResult"),
    "OpGraph": ("archsim.workload", "OpGraph"),
    "training_step": ("archsim.workload", "training_step"),
    "from_onnx": ("archsim.workload", "from_onnx"),
    "DType": ("archsim.workload", "DType"),
    "TensorSpec": ("archsim.workload", "TensorSpec"),
    "ArchsimError": ("archsim.errors", "ArchsimError"),
    "keep_freed_memory": ("archsim.allocator", "keep_freed_memory"),
    "InputPipeline": ("archsim.engines.desim.config", "InputPipeline"),
    "DataParallel": ("archsim.engines.desim.config", "DataParallel"),
    "PIMOffload": ("archsim.engines.desim.config", "PIMOffload"),
    "ops": ("archsim.ops", None),
    "zoo": ("archsim.zoo", None),
    "plot": ("archsim.plot", None),
    "hardware": ("archsim.hardware", None),
    "microarch": ("archsim.microarch", None),
    "units": ("archsim.units", None),
}

__all__ = ["__version__", *sorted(_LAZY)]


def __getattr__(name: str) -> Any:
    try:
        module, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'archsim' has no attribute {name!r}") from None
    mod = importlib.import_module(module)
    value = mod if attr is None else getattr(mod, attr)
    globals()[name] = value  # cache: later lookups bypass __getattr__
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
