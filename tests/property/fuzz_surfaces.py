"""Bad-input surfaces of archsim, as hypothesis strategies and one checker per surface.

Each checker takes one drawn input, feeds it to a public entry point and returns ``"rejected"`` (an
:class:`~archsim.errors.ArchsimError`, one line or a header plus one line per field) or
``"accepted"`` (and then every result it produced is finite, latency and bytes positive). Any other
exception escapes: that is the bug the fuzz suite looks for. ``test_fuzz_inputs.py`` runs them under
hypothesis; ``benchmarks/fuzz_counts.py`` counts outcomes per surface for the issue notes.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from pathlib import Path
from typing import Any

import hypothesis.strategies as st

import archsim
from archsim.errors import ArchsimError
from archsim.presets import load_preset, validate_hardware
from archsim.workload import ops

PRESETS = ("gpu/v100-sxm2-16gb", "cpu/skylake-16vcpu", "pim/upmem-2560", "system/dgx-a100", "memory/hbm2")
_DUMPS = {p: load_preset(p).model_dump(mode="json") for p in PRESETS}
_OP = ops.Gemm(256, 256, 256)


# --------------------------------------------------------------------------- value strategies

FLOATS = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([0.0, -1.0, 1e200, 2.5, 1e-300]))
INTS = st.one_of(st.integers(-5, 300), st.sampled_from([0, -1, 2**40, 2**63, 10**30]))
UNITS = ("B/s", "GB/s", "TB/s", "Hz", "GHz", "B", "KiB", "MiB", "s", "ns", "us", "J", "pJ", "W", "pJ/bit",
         "pJ/FLOP", "TFLOP/s", "GB/0s", "", "furlong", "1/s", "B*s")
NUMBERS = st.one_of(st.sampled_from(["1", "0", "-1", "3.35", "1e400", "inf", "nan", "0/0", "1e-400", "9**9**9",
                                     "2^10", "1_000", "0x10", "1e30", "1e31"]),
                    st.floats(allow_nan=True, allow_infinity=True).map(repr))
UNIT_TEXT = st.one_of(
    st.builds(lambda n, u: f"{n} {u}".strip(), NUMBERS, st.sampled_from(UNITS)),
    st.text(max_size=40),
    st.integers(1, 3000).map(lambda d: "(" * d + "1 GB/s" + ")" * d),
)
ANY_VALUE = st.one_of(
    INTS, FLOATS, st.booleans(), st.none(), UNIT_TEXT, st.sampled_from(["80", "yes", "true", "", "fp32", "lru"]),
    st.lists(INTS, max_size=3), st.dictionaries(st.sampled_from(["fp32", "fp16", "bogus"]), INTS, max_size=2),
)


def _finite_positive(latency: float, energy: float) -> None:
    assert math.isfinite(latency) and latency > 0, f"latency {latency!r}"
    assert math.isfinite(energy) and energy >= 0, f"energy {energy!r}"


def _one_line_or_fields(exc: ArchsimError) -> None:
    lines = [ln for ln in str(exc).splitlines() if ln.strip()]
    assert lines, "an error without a message"
    assert len(lines) == 1 or "problem(s)" in lines[0], f"multi-line error: {exc}"


def _rejected(exc: ArchsimError) -> str:
    _one_line_or_fields(exc)
    return "rejected"


# --------------------------------------------------------------------------- units

def check_units(value: Any, dimension: str) -> str:
    from archsim.units import parse

    try:
        si = parse(value, dimension)
    except ArchsimError as exc:
        return _rejected(exc)
    assert isinstance(si, float) and math.isfinite(si), si
    return "accepted"


UNIT_MAGNITUDES = st.tuples(
    st.builds(lambda e, u: f"{10.0 ** e!r} {u}", st.floats(-40, 40),
              st.sampled_from(["B/s", "TB/s", "GHz", "KiB", "ns", "pJ", "W", "pJ/bit", "pJ/FLOP", "TFLOP/s"])),
    st.sampled_from(sorted(archsim.units.DIMENSIONS)))

UNIT_INPUTS = st.tuples(st.one_of(UNIT_TEXT, ANY_VALUE), st.sampled_from(sorted(archsim.units.DIMENSIONS)))


# --------------------------------------------------------------------------- hardware schema

def _leaves(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    if isinstance(node, dict):
        return [p for k, v in node.items() for p in _leaves(v, (*path, k))] or [path]
    if isinstance(node, list):
        return [p for i, v in enumerate(node) for p in _leaves(v, (*path, i))] or [path]
    return [path]


def _set(node: Any, path: tuple[Any, ...], value: Any) -> Any:
    # A copy of ``node`` with ``path`` set; a path through something an earlier mutation replaced
    # by a scalar leaves the node as it is.
    if not path:
        return value
    key = path[0]
    if isinstance(node, dict):
        copy = dict(node)
        copy[key] = _set(copy.get(key, {}), path[1:], value)
        return copy
    if isinstance(node, list) and isinstance(key, int) and key < len(node):
        items = list(node)
        items[key] = _set(items[key], path[1:], value)
        return items
    return node


@st.composite
def hardware_inputs(draw: st.DrawFn) -> tuple[str, Any]:
    preset = draw(st.sampled_from(PRESETS))
    dump = _DUMPS[preset]
    paths = [p for p in _leaves(dump) if p and p[0] != "sources"]
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(paths))
        if draw(st.booleans()) and len(path) > 1:
            # An unknown key beside a known one, or a whole table replaced.
            parent = path[:-1]
            dump = _set(dump, (*parent, draw(st.sampled_from(["bogus", "sm_cout", "preset"]))), draw(ANY_VALUE))
        else:
            dump = _set(dump, path, draw(st.one_of(ANY_VALUE, _plausible(_get(dump, path)))))
    return preset, dump


def _get(node: Any, path: tuple[Any, ...], missing: Any = None) -> Any:
    # The value at ``path``, or ``missing`` where the path does not exist.
    for key in path:
        try:
            node = node[key]
        except (KeyError, IndexError, TypeError):
            return missing
    return node


def _plausible(old: Any) -> st.SearchStrategy[Any]:
    # A value of the right type and unit at any magnitude: what a sweep or a typo in a number gives.
    if isinstance(old, bool):
        return st.booleans()
    if isinstance(old, int):
        return st.one_of(st.integers(0, 2**45), st.sampled_from([1, 2, 3, 1024, 10**15]))
    if isinstance(old, float):
        return st.floats(1e-9, 1e4)
    if isinstance(old, str) and " " in old:
        unit = old.partition(" ")[2]
        return st.floats(-30, 30.5).map(lambda e: f"{10.0 ** e!r} {unit}")
    return ANY_VALUE


@st.composite
def plausible_hardware_inputs(draw: st.DrawFn) -> tuple[str, Any]:
    """One or two fields set to a value of the right type and unit at any magnitude (most validate)."""
    preset = draw(st.sampled_from(PRESETS))
    dump = _DUMPS[preset]
    paths = [p for p in _leaves(dump) if p and p[0] != "sources" and not isinstance(_get(dump, p), str | bool)
             or (isinstance(_get(dump, p), str) and " " in _get(dump, p))]
    for _ in range(draw(st.integers(1, 2))):
        path = draw(st.sampled_from(paths))
        dump = _set(dump, path, draw(_plausible(_get(dump, path))))
    return preset, dump


_MISSING = object()


def _si_of(text: str) -> tuple[str, float] | None:
    # The (dimension, SI value) of a unit string, or None when it is no dimensioned quantity.
    from archsim.units import parse

    for dim in archsim.units.DIMENSIONS:
        try:
            return dim, parse(text, dim)
        except ArchsimError:
            continue
    return None


def _taken_as_given(given: Any, stored: Any) -> bool:
    """Whether the validated model holds ``given`` as it was written: a bool stays a bool, a number a
    number of the same value, a unit string the same quantity, an enum string the same string, None
    None. Anything else is a silent coercion ("80" read as 80, true as 1 SM, 2.7 as 2, a bare number
    taken for a bandwidth) that an accepted input must never get."""
    if isinstance(given, bool) or isinstance(stored, bool):
        return type(given) is type(stored) and given == stored
    if given is None or stored is None:
        return given is stored
    if isinstance(given, int | float):
        return isinstance(stored, int | float) and float(given) == float(stored)
    if isinstance(given, str):
        if not isinstance(stored, str):
            return False
        if given == stored:
            return True
        quantity = _si_of(stored)
        if quantity is None:
            return False
        from archsim.units import parse

        try:
            value = parse(given, quantity[0])
        except ArchsimError:
            return False
        return math.isclose(value, quantity[1], rel_tol=1e-12, abs_tol=0.0)
    return True  # a table or list: its own leaves are checked where they were written


def _coercions(original: Any, data: Any, validated: Any, path: tuple[Any, ...] = ()) -> list[str]:
    # Every scalar leaf of ``data`` that differs from ``original`` (so the input set it) and that the
    # validated dump holds differently from how it was written.
    if isinstance(data, dict):
        return [c for k, v in data.items() for c in _coercions(original.get(k, _MISSING) if isinstance(original, dict)
                                                               else _MISSING, v, validated, (*path, k))]
    if isinstance(data, list):
        return [c for i, v in enumerate(data) for c in _coercions(
            original[i] if isinstance(original, list) and i < len(original) else _MISSING, v, validated, (*path, i))]
    if original is not _MISSING and type(original) is type(data) and original == data:
        return []
    stored = _get(validated, path, _MISSING)
    if stored is _MISSING or isinstance(stored, dict | list):
        return []  # a key the schema dropped is rejected elsewhere; a leaf replaced by a table is built anew
    return [] if _taken_as_given(data, stored) else [f"{'.'.join(map(str, path))}: {data!r} stored as {stored!r}"]


def check_hardware(preset: str, data: Any) -> str:
    try:
        hw = validate_hardware(data, preset)
    except ArchsimError as exc:
        return _rejected(exc)
    coerced = _coercions(_DUMPS[preset], data, hw.model_dump(mode="json"))
    assert not coerced, f"accepted with silent coercion: {coerced}"
    if preset.startswith("memory/"):
        return "accepted"
    try:
        res = archsim.estimate(_OP, hw)
    except ArchsimError as exc:
        return _rejected(exc)
    _finite_positive(res.latency_s, res.energy_j)
    return "accepted"


# --------------------------------------------------------------------------- ops

SIZE = st.one_of(st.integers(1, 64), INTS, FLOATS, st.booleans(), st.sampled_from(["3", "33", None, (2.7, 3)]),
                 st.tuples(st.integers(1, 5), st.integers(1, 5)), st.tuples(FLOATS, INTS))
SHAPE = st.one_of(st.lists(st.integers(1, 64), min_size=1, max_size=4).map(tuple),
                  st.lists(SIZE, max_size=3).map(tuple), SIZE)


@st.composite
def op_inputs(draw: st.DrawFn) -> tuple[str, tuple[Any, ...], dict[str, Any]]:
    kind = draw(st.sampled_from(["Conv2d", "Gemm", "Elementwise", "TensorSpec", "Pool", "Softmax", "LayerNorm",
                                 "Kernel", "Copy"]))
    dtype = draw(st.sampled_from(["fp32", "fp16", "bf16", "int8", "fp7", 3]))
    if kind == "Conv2d":
        args = tuple(draw(st.one_of(st.integers(1, 16), SIZE)) for _ in range(5))
        kw = {k: draw(SIZE) for k in draw(st.sets(st.sampled_from(["kernel", "stride", "padding", "dilation",
                                                                   "groups"])))}
        kw["dtype"] = dtype
    elif kind == "Gemm":
        args, kw = tuple(draw(st.one_of(st.integers(1, 512), SIZE)) for _ in range(3)), {"dtype": dtype}
    elif kind == "Pool":
        args = tuple(draw(st.one_of(st.integers(1, 16), SIZE)) for _ in range(4))
        kw = {"kernel": draw(SIZE), "mode": draw(st.sampled_from(["max", "avg", "min"]))}
    elif kind == "Kernel":
        args, kw = ("k",), {"flop_vector": draw(SIZE), "dram_read_bytes": draw(SIZE), "grid": draw(SHAPE)}
    else:
        args, kw = (draw(SHAPE),), {"dtype": dtype} if kind != "TensorSpec" else {}
        if kind == "TensorSpec":
            args = (draw(SHAPE), dtype)
    return kind, args, kw


def check_op(kind: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    from archsim.workload import TensorSpec

    cls = TensorSpec if kind == "TensorSpec" else getattr(ops, kind)
    try:
        op = cls(*args, **kwargs)
    except ArchsimError as exc:
        return _rejected(exc)
    except TypeError as exc:
        # A missing or extra positional argument of the dataclass itself is Python's own error.
        assert "argument" in str(exc), exc
        return "rejected"
    coerced = _op_coercions(op, args, kwargs)
    assert not coerced, f"{kind} accepted with silent coercion: {coerced}"
    if kind == "TensorSpec":
        assert op.numel >= 1 and all(isinstance(d, int) for d in op.shape)
        return "accepted"
    try:
        assert op.flop() >= 0 and op.min_bytes() >= 0
        res = archsim.estimate(op, load_preset("gpu/v100-sxm2-16gb"))
    except ArchsimError as exc:
        return _rejected(exc)
    _finite_positive(res.latency_s, res.energy_j)
    return "accepted"


def _op_value_as_given(given: Any, stored: Any) -> bool:
    # An op holds each argument as written, up to the documented normalisations: a scalar kernel,
    # stride, padding or dilation of 3 is (3, 3); a grid or block of (2, 3) is (2, 3, 1); a dtype
    # string is its DType member; a list is a tuple; a scalar grid of 91 is (91, 1, 1).
    import enum

    if isinstance(stored, enum.Enum):
        return isinstance(given, str | enum.Enum) and (given == stored or given == stored.value)
    if isinstance(given, list | tuple):
        if not isinstance(stored, tuple) or len(stored) < len(given):
            return False
        return (all(_op_value_as_given(g, v) for g, v in zip(given, stored, strict=False))
                and all(v == 1 for v in stored[len(given):]))
    if isinstance(stored, tuple) and not isinstance(given, str | bool) and given is not None:
        return bool(stored) and (all(_op_value_as_given(given, v) for v in stored)
                                 or _op_value_as_given((given,), stored))
    return _taken_as_given(given, stored)


def _op_coercions(op: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[str]:
    import dataclasses

    names = [f.name for f in dataclasses.fields(op) if f.init]
    given = {**dict(zip(names, args, strict=False)), **kwargs}
    return [f"{name}={value!r} stored as {getattr(op, name)!r}" for name, value in given.items()
            if name in names and not _op_value_as_given(value, getattr(op, name))]


# --------------------------------------------------------------------------- zoo arguments

SMALL_MODELS = ("mlp", "lenet5", "mnist_cnn", "cifar10_cnn", "gpt2", "resnet18", "nonexistent")


@st.composite
def zoo_inputs(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    model = draw(st.sampled_from(SMALL_MODELS))
    keys = draw(st.sets(st.sampled_from(["batch", "dtype", "training", "image_size", "seq_len", "layers", "depth",
                                         "size", "optimizer"]), max_size=3))
    small = st.one_of(st.integers(1, 8), st.integers(-2, 0), st.floats(0.5, 64.5), st.booleans(),
                      st.sampled_from(["8", "fp16", "tiny", "adam", None, 2**41]))
    kwargs = {k: draw(small) for k in keys}
    if "image_size" in kwargs and isinstance(kwargs["image_size"], int) and not isinstance(kwargs["image_size"], bool):
        kwargs["image_size"] = max(kwargs["image_size"], 32)  # keep accepted CNNs small but valid
    return model, kwargs


def check_zoo(model: str, kwargs: dict[str, Any]) -> str:
    from archsim.workload import zoo

    try:
        graph = zoo.get(model, **kwargs)
        res = archsim.estimate(graph, load_preset("gpu/v100-sxm2-16gb"))
    except ArchsimError as exc:
        return _rejected(exc)
    _finite_positive(res.latency_s, res.energy_j)
    return "accepted"


# --------------------------------------------------------------------------- ONNX bytes

def _small_onnx() -> bytes:
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 64])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 32])
    w = helper.make_tensor("w", TensorProto.FLOAT, [64, 32], [0.0] * (64 * 32))
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node("Relu", ["h"], ["y"])],
                              "tiny", [x], [y], [w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    return bytes(model.SerializeToString())


ONNX_BYTES = _small_onnx()


@st.composite
def onnx_inputs(draw: st.DrawFn) -> tuple[bytes, Any]:
    data = bytearray(ONNX_BYTES)
    how = draw(st.sampled_from(["flip", "truncate", "random", "intact"]))
    if how == "flip":
        for _ in range(draw(st.integers(1, 4))):
            i = draw(st.integers(0, len(data) - 1))
            data[i] = draw(st.integers(0, 255))
    elif how == "truncate":
        data = data[:draw(st.integers(0, len(data) - 1))]
    elif how == "random":
        data = bytearray(draw(st.binary(max_size=200)))
    dims = draw(st.one_of(st.just({"batch": 4}), st.dictionaries(st.sampled_from(["batch", "seq", 3]),
                                                                    st.one_of(INTS, FLOATS, st.text(max_size=3)),
                                                                    max_size=2), st.sampled_from([None, [1], "x"])))
    return bytes(data), dims


def check_onnx(data: bytes, dims: Any) -> str:
    import warnings

    from archsim.workload import from_onnx

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "m.onnx"
        path.write_bytes(data)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                graph = from_onnx(path, dims=dims)
            res = archsim.estimate(graph, load_preset("gpu/v100-sxm2-16gb"))
        except ArchsimError as exc:
            return _rejected(exc)
    _finite_positive(res.latency_s, res.energy_j)
    return "accepted"


# --------------------------------------------------------------------------- sweep specs

def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return repr(v) if math.isfinite(v) else ("nan" if v != v else ("inf" if v > 0 else "-inf"))
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{json.dumps(str(k))} = {_toml_value(x)}" for k, x in v.items()) + "}"
    return json.dumps(str(v))


def to_toml(tables: dict[str, dict[str, Any]]) -> str:
    out = []
    for name, table in tables.items():
        out.append(f"[{name}]")
        out.extend(f"{json.dumps(k)} = {_toml_value(v)}" for k, v in table.items())
    return "\n".join(out) + "\n"


AXIS_VALUES = st.one_of(
    st.sampled_from([["300 GB/s", "900 GB/s"], [40, 80], [1, 4]]),
    st.lists(st.sampled_from(["300 GB/s", "900 GB/s", "1 TB/s", "0 B/s", "-1 GB/s", "1 GB/0s", 40, 80, 0, -3, 2.5,
                              True, "80", "inf GB/s"]), min_size=1, max_size=3, unique_by=repr),
    st.fixed_dictionaries({"from": st.sampled_from(["100 GB/s", 10, "x"]), "to": st.sampled_from(["900 GB/s", 80]),
                           "num": st.sampled_from([2, 3, 0, 10**9, 2.5])}),
    st.sampled_from([[], "oops", {}]),
)


@st.composite
def spec_inputs(draw: st.DrawFn) -> str:
    # Valid choices are repeated so that about one spec in ten runs to the end.
    good_base = {"preset": "gpu/v100-sxm2-16gb"}
    base = draw(st.sampled_from([good_base] * 6 + [{"preset": "gpu/nope"}, {"preset": "../evil"}, {"path": 3}, {}]))
    axes = {draw(st.sampled_from(["gpu.dram.bandwidth", "gpu.sm_count", "dram.bandwidth", "gpu.nope", "gpu.clock",
                                  "workload.batch", "workload.batch", "workload.nonsense"])): draw(AXIS_VALUES)
            for _ in range(draw(st.integers(1, 2)))}
    work = draw(st.sampled_from([{"model": "mlp", "batch": 8}] * 5 + [{"model": "mlp", "depth": 3}, {"model": "nope"},
                                                                      {"model": "lenet5", "batch": 2.5}, {}]))
    engine = draw(st.sampled_from([{"name": "roofline"}] * 4 + [{"name": "des"}, {"name": "warp"},
                                   {"name": "roofline", "options": {"bogus": 1}},
                                   {"name": "roofline", "options": {"overlap": True}}]))
    sweep = {k: draw(v) for k, v in {
        "executor": st.sampled_from(["serial"]),
        "sampler": st.sampled_from(["grid", "grid", "random", "sobol", "warp"]),
        "n": st.sampled_from([4, 0, -1, 3, 10**12]), "seed": st.sampled_from([0, -1, 2.5, "x"]),
        "metrics": st.sampled_from([["latency_s"], ["latency"], "latency_s", [3]]),
        "chunk_size": st.sampled_from([1, 0, 2.5, None]),
    }.items() if draw(st.integers(0, 3)) == 3 or k == "executor"}
    sweep = {k: v for k, v in sweep.items() if v is not None}
    tables = {"base": base, "work": work, "engine": engine, "sweep": sweep, "axes": axes}
    if draw(st.integers(0, 4)) == 3:
        tables[draw(st.sampled_from(["bogus", "work"]))] = {"depth": 3}
    plots = draw(st.sampled_from(["", "", "", '[[plots]]\nkind = "sweep_lines"\nname = "../../x"\n']))
    return to_toml(tables) + plots


def check_spec(text: str) -> str:
    from archsim.sweep.spec import load_spec, run_spec

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "spec.toml"
        path.write_text(text)
        try:
            spec = load_spec(path)
            table = run_spec(spec, Path(tmp) / "out", executor="serial", progress=False)
        except ArchsimError as exc:
            return _rejected(exc)
        assert not (Path(tmp).parent / "x.pdf").exists()
    ok = table[(table["status"] == "ok") & (table["metric"] == "latency_s")]
    assert ok["value"].map(lambda v: math.isfinite(v) and v > 0).all(), ok
    return "accepted"


# --------------------------------------------------------------------------- CLI arguments

CLI_TOKENS = ["presets", "list", "show", "schema", "estimate", "sweep", "roofline", "--hw", "--model", "--batch",
              "--dtype", "--engine", "--device", "--format", "--out", "-o", "--kind", "--training", "--resume",
              "gpu/v100-sxm2-16gb", "gpu/nope", "../evil", "mlp", "lenet5", "nope", "1", "0", "-1", "2.5", "fp16",
              "fp7", "des", "roofline", "json", "csv", "table", "gpu", "pim", "OUT/x.png", "OUT/x.jpg", "OUT",
              "/dev/full", "OUT/missing/x.json", "SPEC", "--help"]


@st.composite
def cli_inputs(draw: st.DrawFn) -> list[str]:
    head = draw(st.sampled_from([["presets", "list"], ["presets", "show"], ["schema"], ["estimate"], ["sweep"],
                                 ["roofline"], []]))
    return head + draw(st.lists(st.sampled_from(CLI_TOKENS), max_size=6))


def check_cli(argv: list[str]) -> str:
    import contextlib
    import io

    from archsim import cli

    with tempfile.TemporaryDirectory() as tmp:
        spec = Path(tmp) / "spec.toml"
        spec.write_text(to_toml({"base": {"preset": "gpu/v100-sxm2-16gb"}, "work": {"model": "mlp", "batch": 4},
                                 "sweep": {"executor": "serial"}, "axes": {"gpu.sm_count": [40, 80]}}))
        args = [a.replace("OUT", tmp).replace("SPEC", str(spec)) for a in argv]
        if "sweep" in args and "--out" not in args:
            args += ["--out", str(Path(tmp) / "sweep-out")]
        err, out = io.StringIO(), io.StringIO()
        cwd = os.getcwd()
        try:
            os.chdir(tmp)
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
                code = cli.main(args)
        finally:
            os.chdir(cwd)
    assert code in (0, 1, 2), code
    if code == 2 and "usage:" not in err.getvalue():
        lines = [ln for ln in err.getvalue().splitlines() if ln.strip()]
        assert len(lines) == 1 and lines[0].startswith("archsim: error: "), err.getvalue()
    return "accepted" if code == 0 else "rejected"
