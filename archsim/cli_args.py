"""The workload, hardware and engine arguments ``archsim estimate`` and ``archsim roofline`` share.

``--hw`` takes a preset id or a TOML file; the model flags become the zoo function's keyword
arguments (only those given, so a model keeps its own defaults); an ``.onnx`` model is imported;
the discrete-event flags become :func:`archsim.estimate`'s ``streams``, ``steps``, ``data_parallel``,
``loader`` and ``offload``.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from archsim.errors import ArchsimError
from archsim.presets import load_preset

__all__ = ["load_hw", "parse_value", "model_kwargs", "onnx_graph", "add_model_args", "add_hw_args", "des_options"]


def load_hw(ref: str) -> Any:
    """A preset id (``gpu/h100-sxm5-80gb``) or a hardware TOML file (``./my-gpu.toml``)."""
    from archsim.presets import load_hardware

    path = Path(ref)
    if ref.endswith(".toml") or path.is_file():
        if not path.is_file():
            raise ArchsimError(f"--hw {ref}: no such file (a preset id has no .toml; see `archsim presets list`)")
        return load_hardware(path)
    return load_preset(ref)


def parse_value(text: str) -> Any:
    """``--arg`` values: ints, floats, true/false, else the string."""
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def model_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    """The zoo model's keyword arguments from the model flags (only those given: the rest keep the model's
    defaults, e.g. its dtype)."""
    kwargs: dict[str, Any] = {"training": args.training}
    if args.batch is not None:
        kwargs["batch"] = args.batch
    for flag, key in (("dtype", "dtype"), ("seq_len", "seq_len"), ("mode", "mode"), ("image_size", "image_size"),
                      ("optimizer", "optimizer")):
        if getattr(args, flag, None) is not None:
            kwargs[key] = getattr(args, flag)
    for item in args.arg or ():
        key, sep, text = item.partition("=")
        if not sep or not key:
            raise ArchsimError(f"--arg {item!r}: expected KEY=VALUE, e.g. --arg size=medium")
        kwargs[key.replace("-", "_")] = parse_value(text)
    return kwargs


def add_model_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("workload (a zoo model and its arguments; `python -c \"import archsim; "
                             "help(archsim.zoo.gpt2)\"` lists a model's)")
    # the zoo is not imported to build the parser (startup time): an unknown name lists every model
    g.add_argument("--model", required=True, metavar="NAME|FILE.onnx",
                   help="zoo model (resnet50, bert_base, gpt2, llama_like, ...; docs/cli.md lists them all) "
                   "or an ONNX file")
    g.add_argument("--batch", type=int, help="batch size (default: the model's own; an ONNX file's batch dimension)")
    g.add_argument("--dtype", help="element type, e.g. fp16, bf16 (default: the model's own, fp32 for most)")
    g.add_argument("--training", action="store_true", help="a training step (forward, backward, update)")
    g.add_argument("--seq-len", type=int, help="tokens (transformers); in decode mode the KV-cache length")
    g.add_argument("--mode", choices=["prefill", "decode"], help="decoders: a prompt pass or one decode step")
    g.add_argument("--image-size", type=int, help="input height and width (image models)")
    g.add_argument("--optimizer", help="the training step's update, e.g. sgd, adam")
    g.add_argument("--arg", action="append", metavar="KEY=VALUE", help="any other model argument (repeatable)")


def add_hw_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--hw", required=True, metavar="ID|FILE",
                   help="hardware: a preset id (gpu/h100-sxm5-80gb) or a TOML file (./my-gpu.toml)")
    p.add_argument("--engine", default="roofline", choices=["roofline", "des"],
                   help="roofline (analytical) or des (discrete-event; docs/engines.md)")
    p.add_argument("--device", choices=["gpu", "host", "pim"], help="device role on a system preset")
    g = p.add_argument_group("discrete-event engine (--engine des)")
    g.add_argument("--streams", type=int, help="compute streams (independent ops overlap)")
    g.add_argument("--steps", type=int, help="iterations of the workload (training steps)")
    g.add_argument("--data-parallel", type=int, metavar="GPUS", help="data-parallel training on GPUS of a system")
    g.add_argument("--loader-cores", type=int, metavar="N", help="a CPU input pipeline of N workers")
    g.add_argument("--seconds-per-sample", type=float, metavar="S",
                   help="the loader's host time per sample on one core, in s (with --loader-cores)")
    g.add_argument("--offload", action="append", metavar="KIND", help="op kinds to run on the system's PIM "
                   "device, e.g. gemv (repeatable)")


def des_options(args: argparse.Namespace, graph: Any) -> dict[str, Any]:
    """The discrete-event engine's options from the flags (only those given)."""
    from archsim.engines.desim.config import DataParallel, InputPipeline, PIMOffload

    out: dict[str, Any] = {}
    if args.streams is not None:
        out["streams"] = args.streams
    if args.steps is not None:
        out["steps"] = args.steps
    if args.data_parallel is not None:
        out["data_parallel"] = DataParallel(gpus=args.data_parallel)
    if args.loader_cores is not None:
        if args.seconds_per_sample is None:
            raise ArchsimError("--loader-cores needs --seconds-per-sample (host time per sample, in s)")
        out["loader"] = InputPipeline(cores=args.loader_cores, batch=graph.batch,
                                      seconds_per_sample=args.seconds_per_sample)
    elif args.seconds_per_sample is not None:
        raise ArchsimError("--seconds-per-sample applies with --loader-cores")
    if args.offload:
        out["offload"] = PIMOffload(kinds=tuple(args.offload))
    if out and args.engine != "des":
        flags = ", ".join("--" + k.replace("_", "-") for k in out)
        raise ArchsimError(f"{flags} appl{'ies' if len(out) == 1 else 'y'} to --engine des")
    return out


def onnx_graph(args: argparse.Namespace) -> Any:
    """An ONNX file as a graph (its batch dimension bound to --batch; a training step with --training)."""
    from archsim.workload import from_onnx
    from archsim.workload.graph import training_step

    extra = [f for f in ("dtype", "seq_len", "mode", "image_size", "arg") if getattr(args, f, None)]
    if extra:
        raise ArchsimError(f"--{extra[0].replace('_', '-')} applies to zoo models; an ONNX file fixes its own shapes "
                           "and types (only --batch and --training apply)")
    graph = from_onnx(args.model, batch=args.batch)
    return training_step(graph, args.optimizer or "adam") if args.training else graph
