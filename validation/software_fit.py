"""The fits of the framework profiles' host work and kernel efficiencies (``models/software/``).

Run ``python -m validation.software_fit`` to redo them; each fit prints its value and residuals, and
the profiles' ``[[sources]]`` quote them. Every fit varies one mechanism's parameter over whole rows
of a published table (never a row's own prediction), on the development sets of
:mod:`validation.software`:

* ``pytorch-eager`` ``op_dispatch_instructions`` (one parameter): the NVIDIA DeepLearningExamples
  ResNet-50 v1.5 FP32 inference latencies on a V100, batches 1-256, minimising their MAPE;
* ``pytorch-eager-amp`` ``precision.cast_instructions_per_op`` (one parameter, the dispatch fixed by
  the FP32 fit): the same table's mixed-precision rows, minimising their MAPE;
* ``tf1-keras`` ``op_dispatch_instructions`` and ``iteration_instructions`` (two parameters): Woolf's
  Keras MNIST-MLP epochs on the 16-vCPU VM, the K80 and the P100, minimising the largest error;
* ``tf1-keras`` ``kernel_efficiency`` of ``conv2d`` (the host work fixed): the MNIST-CNN epoch on the
  16-vCPU VM for the host CPU's, the K80 and P100 epochs (their largest error) for the GPU's.

``launch_api_instructions`` is not fitted: it is the launch API's published host time
(``models/software/pytorch-eager.toml``). With ``--old-counting`` every launch pays the whole
per-operator dispatch (the counting before issue 15), to reproduce the earlier values.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

from scipy.optimize import minimize_scalar

__all__ = ["fit_pytorch_dispatch", "fit_amp_cast", "fit_keras_host", "fit_keras_conv"]


def _profile(name: str, updates: dict, old_counting: bool):
    from archsim.software import load_software, with_updates

    sw = with_updates(load_software(name), updates)
    if old_counting:  # each further launch pays the operator's whole dispatch, as before issue 15
        sw = with_updates(sw, {"launch_api_instructions": sw.op_dispatch_instructions
                               + sw.precision.cast_instructions_per_op})
    return sw


def _dle_errors(precision: str, profile) -> list[float]:
    """Relative errors (predicted / measured - 1) of the DLE V100 rows of ``precision``."""
    import pandas as pd

    import archsim
    from scenarios.input_pipeline import v100_node
    from scenarios.realtime_inference import _gpu_graph
    from validation.software import archsim_root

    data = pd.read_csv(archsim_root() / "scenarios" / "data" / "dle_resnet50_inference.csv")
    hw = v100_node()
    rows = data[(data["gpu"] == "v100") & (data["precision"] == precision)]
    return [archsim.estimate(_gpu_graph("resnet50", int(r.batch), "fp32"), hw, software=profile).latency_s
            / (float(r.latency_avg_ms) * 1e-3) - 1 for r in rows.itertuples()]


def _mape(errors: list[float]) -> float:
    return 100.0 * sum(abs(e) for e in errors) / len(errors)


def _scalar(objective: Callable[[float], float], lo: float, hi: float) -> float:
    """The minimiser of ``objective`` on [lo, hi] (bounded Brent, to 0.1 % of the value)."""
    res = minimize_scalar(objective, bounds=(lo, hi), method="bounded", options={"xatol": lo * 1e-3})
    return float(res.x)


def fit_pytorch_dispatch(old_counting: bool = False) -> tuple[float, list[float]]:
    """``op_dispatch_instructions`` of pytorch-eager and the FP32 rows' errors at it."""
    def errors(x: float) -> list[float]:
        return _dle_errors("fp32", _profile("pytorch-eager", {"op_dispatch_instructions": x}, old_counting))

    x = round(_scalar(lambda v: _mape(errors(v)), 20_000.0, 300_000.0), -2)
    return x, errors(x)


def fit_amp_cast(dispatch: float, old_counting: bool = False) -> tuple[float, list[float]]:
    """``precision.cast_instructions_per_op`` of pytorch-eager-amp (dispatch fixed) and its errors."""
    def errors(x: float) -> list[float]:
        return _dle_errors("amp", _profile("pytorch-eager-amp", {"op_dispatch_instructions": dispatch,
                                                                "precision.cast_instructions_per_op": x},
                                           old_counting))

    x = round(_scalar(lambda v: _mape(errors(v)), 1_000.0, 300_000.0), -2)
    return x, errors(x)


def _keras_errors(model_key: str, machines: tuple[str, ...], profile) -> dict[str, float]:
    import archsim
    from scenarios import why_gpus as w

    pub = w.published_epochs()
    pub = pub[pub["study"] == w.STUDY].set_index(["model", "hardware"])["published_epoch_s"]
    model = next(m for m in w.MODELS if m.key == model_key)
    out = {}
    for machine in w.MACHINES:
        if machine.key in machines:
            t = w.epoch_time(model, machine, archsim.load_preset(machine.preset), software=profile)
            out[machine.key] = t["epoch_s"] / float(pub[(model_key, machine.key)]) - 1
    return out


def fit_keras_host(old_counting: bool = False) -> tuple[float, float, dict[str, float]]:
    """tf1-keras (op_dispatch_instructions, iteration_instructions) minimising the MNIST-MLP rows'
    largest error, and the errors there."""
    from scipy.optimize import minimize

    machines = ("cpu16", "k80", "p100")

    def errors(v) -> dict[str, float]:
        sw = _profile("tf1-keras", {"op_dispatch_instructions": float(v[0]) * 1e3,
                                    "iteration_instructions": float(v[1]) * 1e6}, old_counting)
        return _keras_errors("mnist_mlp", machines, sw)

    def worst(v) -> float:
        if v[0] <= 0 or v[1] <= 0:
            return math.inf
        return max(abs(e) for e in errors(v).values())

    res = minimize(worst, [97.5, 13.8], method="Nelder-Mead", options={"xatol": 0.05, "fatol": 1e-4})
    op, it = round(float(res.x[0]) * 1e3, -2), round(float(res.x[1]) * 1e6, -5)
    return op, it, errors([op / 1e3, it / 1e6])


def fit_keras_conv(op: float, iteration: float, old_counting: bool = False) -> tuple[float, float, dict[str, float]]:
    """tf1-keras conv2d kernel efficiencies (GPU: the K80 and P100 MNIST-CNN rows' largest error;
    host: the 16-vCPU row), the host work fixed, and the errors at them."""
    base = {"op_dispatch_instructions": op, "iteration_instructions": iteration}

    def errors(gpu: float, host: float, machines: tuple[str, ...]) -> dict[str, float]:
        sw = _profile("tf1-keras", {**base, "kernel_efficiency.gpu": {"conv2d": gpu},
                                    "kernel_efficiency.host": {"conv2d": host}}, old_counting)
        return _keras_errors("mnist_cnn", machines, sw)

    gpu = round(_scalar(lambda g: max(abs(e) for e in errors(g, 0.14, ("k80", "p100")).values()), 0.05, 1.0), 2)
    host = round(_scalar(lambda h: abs(errors(gpu, h, ("cpu16",))["cpu16"]), 0.02, 1.0), 2)
    return gpu, host, errors(gpu, host, ("cpu16", "k80", "p100"))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old-counting", action="store_true", help="every launch pays the whole dispatch")
    args = parser.parse_args(argv)
    old = args.old_counting

    def pct(errs) -> str:
        values = errs.values() if isinstance(errs, dict) else errs
        return ", ".join(f"{100 * e:+.1f} %" for e in values)

    dispatch, errs = fit_pytorch_dispatch(old)
    print(f"pytorch-eager op_dispatch_instructions = {dispatch:.0f}: MAPE {_mape(errs):.1f} % ({pct(errs)})")
    cast, errs = fit_amp_cast(dispatch, old)
    print(f"pytorch-eager-amp cast_instructions_per_op = {cast:.0f}: MAPE {_mape(errs):.1f} % ({pct(errs)})")
    op, it, errs = fit_keras_host(old)
    print(f"tf1-keras op_dispatch_instructions = {op:.0f}, iteration_instructions = {it:.0f}: MNIST-MLP "
          f"{pct(errs)}")
    gpu, host, errs = fit_keras_conv(op, it, old)
    print(f"tf1-keras kernel_efficiency gpu conv2d = {gpu}, host conv2d = {host}: MNIST-CNN {pct(errs)}")


if __name__ == "__main__":
    main()
