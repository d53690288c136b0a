"""The ``archsim`` command line: thin wrappers over the library.

``main(argv)`` parses with argparse subcommands; each subcommand is one small function taking the
parsed arguments and returning an exit code, registered in :func:`build_parser`. New commands
(``estimate``, ``sweep``, ``roofline``) add a ``_add_<name>`` function there. Errors a user can cause
(:class:`~archsim.errors.ArchsimError`) print one line to stderr and exit with code 2, without a
traceback. This module (with ``plot/``) is where SI floats become human units.

Exit codes:

* 0: done;
* 1: done, but some sweep points are ``invalid`` or ``failed`` (or a preset file did not read in
  ``presets list``, or did not validate in ``presets check``): the table says which and why;
* 2: bad input (a usage error, a bad preset, spec or option) or an output that cannot be written
  (a directory or unwritable path as ``-o``, a full disk); one line on stderr;
* 141: the reader closed the output pipe (``archsim estimate ... | head``): nothing is printed, and
  the code is the one a shell reports for a tool ended by SIGPIPE (128 + 13).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any

from archsim.cli_args import add_hw_args, add_model_args, des_options, load_hw, model_kwargs, onnx_graph, parse_value
from archsim.errors import ArchsimError
from archsim.presets import list_presets, load_preset, preset_summary

# The models, units and engines (pydantic, pint, numba) are imported by the commands that use them:
# `archsim presets list` reads TOML files only and starts in about the time of a bare interpreter.

__all__ = ["main", "build_parser", "hardware_json_schema", "headline", "derived_peaks"]


def format_si(value: float, dimension: str, digits: int = 3) -> str:
    """:func:`archsim.units.format_si` (imported on first use)."""
    from archsim.units import format_si as fmt

    return fmt(value, dimension, digits)


# --------------------------------------------------------------------------- formatting helpers

def _one_line(exc: BaseException) -> str:
    return " ".join(line.strip() for line in str(exc).splitlines() if line.strip())


def _human(value: Any) -> str:
    """A dumped value in human units: ``"3350000000000.0 B/s"`` -> ``"3.35 TB/s"``."""
    if isinstance(value, str):
        from archsim.units import DIMENSIONS

        number, _, symbol = value.partition(" ")
        dimension = next((name for name, d in DIMENSIONS.items() if d.symbol == symbol), None)
        if dimension is not None:
            try:
                return format_si(float(number), dimension)
            except ValueError:
                return value
        return value
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _lines(data: Mapping[str, Any], indent: int = 2) -> Iterable[str]:
    """Fields of a dumped model, one per line, nested tables indented; sources are left out."""
    from archsim.hardware.base import PRECISIONS

    pad = " " * indent
    scalars = {k: v for k, v in data.items() if not isinstance(v, Mapping | list) and v is not None}
    tables = {k: v for k, v in data.items() if isinstance(v, Mapping | list) and k != "sources"}
    width = max((len(k) for k in scalars), default=0)
    for key, value in scalars.items():
        yield f"{pad}{key:<{width}}  {_human(value)}"
    for key, value in tables.items():
        if not value:
            continue
        if isinstance(value, Mapping) and all(k in PRECISIONS for k in value):
            # per-precision tables (fma_lanes, vector_flop, ...) fit on one line
            inner = ", ".join(f"{k}={_human(v)}" for k, v in value.items())
            yield f"{pad}{key}  {{{inner}}}"
        elif isinstance(value, Mapping):
            yield f"{pad}[{key}]"
            yield from _lines(value, indent + 2)
        elif all(isinstance(v, Mapping) for v in value):
            for i, item in enumerate(value):
                yield f"{pad}[{key}.{i}]" + (f"  {item['name']}" if "name" in item else "")
                yield from _lines(item, indent + 2)
        else:
            yield f"{pad}{key}  {', '.join(_human(v) for v in value)}"


def _rate(value: float) -> str:
    return format_si(value, "flop_rate")


def headline(hw: Any) -> str:
    """One headline figure of a preset: its best peak and its memory bandwidth."""
    from archsim.hardware import DRAM, CPUDevice, GPUDevice, PIMDevice, System
    from archsim.hardware.base import PRECISIONS

    if isinstance(hw, GPUDevice):
        best = max(PRECISIONS, key=lambda p: (hw.best_peak_flop_per_s(p) if p in ("fp16", "fp32") else 0.0))
        return (f"{_rate(hw.best_peak_flop_per_s(best))} {best}, "
                f"{format_si(hw.dram_bandwidth_bytes_per_s, 'bandwidth')}")
    if isinstance(hw, CPUDevice):
        return (f"{_rate(hw.peak_flop_per_s('fp32'))} fp32, "
                f"{format_si(hw.dram_bandwidth_bytes_per_s, 'bandwidth')}")
    if isinstance(hw, PIMDevice):
        precision = max(hw.units.ops_per_cycle, key=lambda p: hw.peak_flop_per_s(p))
        return (f"{_rate(hw.peak_flop_per_s(precision))} {precision}, "
                f"{format_si(hw.internal_bandwidth_bytes_per_s, 'bandwidth')} internal")
    if isinstance(hw, DRAM):
        return (f"{format_si(hw.bandwidth_bytes_per_s, 'bandwidth')}, "
                f"{format_si(hw.capacity_bytes, 'size')}")
    if isinstance(hw, System):
        parts = [hw.host.name]
        if hw.gpu is not None:
            parts.append(f"{hw.gpu_count}x {hw.gpu.name}")
        if hw.pim is not None:
            parts.append(hw.pim.name)
        return " + ".join(parts)
    return ""


def derived_peaks(hw: Any) -> list[tuple[str, str]]:
    """(label, human value) pairs of the figures derived from a model's fields."""
    from archsim.hardware import DRAM, CPUDevice, GPUDevice, PIMDevice, System
    from archsim.hardware.base import PRECISIONS

    out: list[tuple[str, str]] = []
    if isinstance(hw, GPUDevice):
        for unit in ("vector", "tensor"):
            for p in PRECISIONS:
                rate = hw.peak_flop_per_s(p, unit)  # type: ignore[arg-type]
                if rate:
                    out.append((f"peak {p} {unit}", _rate(rate)))
        out.append(("cuda cores", str(hw.cuda_cores)))
        out.append(("dram bandwidth", format_si(hw.dram_bandwidth_bytes_per_s, "bandwidth")))
        out.append(("ridge point fp32", f"{hw.ridge_point('fp32'):.3g} FLOP/B"))
    elif isinstance(hw, CPUDevice):
        for unit in ("vector", "matrix"):
            for p in PRECISIONS:
                rate = hw.peak_flop_per_s(p, unit)  # type: ignore[arg-type]
                if rate:
                    out.append((f"peak {p} {unit}", _rate(rate)))
        out.append(("dram bandwidth", format_si(hw.dram_bandwidth_bytes_per_s, "bandwidth")))
        out.append(("ridge point fp32", f"{hw.ridge_point('fp32'):.3g} FLOP/B"))
    elif isinstance(hw, PIMDevice):
        for p in hw.units.ops_per_cycle:
            out.append((f"peak {p}", _rate(hw.peak_flop_per_s(p))))
        out.append(("internal bandwidth", format_si(hw.internal_bandwidth_bytes_per_s, "bandwidth")))
        out.append(("host link bandwidth", format_si(hw.host_link.bandwidth_bytes_per_s, "bandwidth")))
    elif isinstance(hw, DRAM):
        out.append(("wire bandwidth", format_si(hw.wire_bandwidth_bytes_per_s, "bandwidth")))
    elif isinstance(hw, System):
        out.extend((f"host {k}", v) for k, v in derived_peaks(hw.host))
        if hw.gpu is not None:
            out.extend((f"gpu {k}", v) for k, v in derived_peaks(hw.gpu))
            best = hw.gpu.best_peak_flop_per_s("fp16") or hw.gpu.best_peak_flop_per_s("fp32")
            out.append((f"all {hw.gpu_count} gpus, best fp16/fp32 peak", _rate(hw.gpu_count * best)))
        if hw.pim is not None:
            out.extend((f"pim {k}", v) for k, v in derived_peaks(hw.pim))
    return out


def _kind(hw: Any) -> str:
    from archsim.hardware import DRAM

    return "memory" if isinstance(hw, DRAM) else hw.kind


# --------------------------------------------------------------------------- JSON Schema

_PRESET_PROPERTY = {"type": "string", "description": "id of a preset this table starts from, e.g. 'memory/hbm3'"}
_PRESET_TABLE = {
    "type": "object",
    "required": ["preset"],
    "properties": {"preset": _PRESET_PROPERTY},
    "description": "a table that starts from a preset and overrides some keys (checked when loaded)",
}


def _allow_preset_reference(definition: dict[str, Any]) -> dict[str, Any]:
    # A table with `preset = "<id>"` gives only the keys it overrides, and its sub-tables may be
    # partial too; the loader validates the merged result, so the schema only checks the id here.
    return {"anyOf": [definition, _PRESET_TABLE]}


def hardware_json_schema() -> dict[str, Any]:
    """JSON Schema (2020-12) of a preset file: a device, a system or a memory, by TOML names."""
    from pydantic import Field, TypeAdapter

    from archsim.hardware import DRAM, CPUDevice, GPUDevice, PIMDevice, System

    any_file = Annotated[CPUDevice | GPUDevice | PIMDevice | System | DRAM, Field(discriminator="kind")]
    schema = TypeAdapter(any_file).json_schema(by_alias=True, mode="validation")
    defs = schema.get("$defs", {})
    for name, definition in defs.items():
        defs[name] = _allow_preset_reference(definition)
    root = {key: schema.pop(key) for key in ("oneOf", "discriminator") if key in schema}
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "archsim hardware preset"
    schema["anyOf"] = [root, _PRESET_TABLE]
    return schema


# --------------------------------------------------------------------------- subcommands

def _preset_rows(kind: str | None, row: Callable[[str], tuple[str, ...]]) -> tuple[list[tuple[str, ...]], int]:
    """``row(id)`` of every preset of ``kind`` (all when None) and how many failed. One broken file
    must not hide the others: each failure is printed on stderr and the rest are listed."""
    rows = []
    broken = 0
    for preset_id in list_presets():
        if kind and not preset_id.startswith(kind + "/"):
            continue
        try:
            rows.append(row(preset_id))
        except ArchsimError as exc:
            broken += 1
            print(f"archsim: error: {_one_line(exc)}", file=sys.stderr)
    return rows, broken


def _presets_list(args: argparse.Namespace) -> int:
    # A TOML scan: id, kind and name of every preset, nothing validated (`presets check` validates).
    rows, broken = _preset_rows(args.kind, lambda preset_id: tuple(preset_summary(preset_id)))
    _table(("id", "kind", "name"), rows)
    return 1 if broken else 0


def _presets_check(args: argparse.Namespace) -> int:
    def validated(preset_id: str) -> tuple[str, ...]:
        hw = load_preset(preset_id)
        return preset_id, _kind(hw), hw.name, headline(hw)

    rows, broken = _preset_rows(args.kind, validated)
    _table(("id", "kind", "name", "headline"), rows)
    return 1 if broken else 0


def _table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> None:
    """Columns padded to their widest cell; the last one is not padded."""
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(header[:-1])]
    for row in (header, *rows):
        print("  ".join([*(f"{c:<{w}}" for c, w in zip(row, widths, strict=False)), row[-1]]).rstrip())


def _presets_show(args: argparse.Namespace) -> int:
    hw = load_hw(args.id)  # a preset id or your own TOML file
    data = hw.model_dump(mode="json")
    print(f"{args.id}: {hw.name} ({_kind(hw)})")
    for line in _lines(data):
        print(line)
    derived = derived_peaks(hw)
    if derived:
        print("derived:")
        width = max(len(k) for k, _ in derived)
        for label, value in derived:
            print(f"  {label:<{width}}  {value}")
    sources = data.get("sources") or []
    if sources:
        print("sources:")
        for s in sources:
            print(f"  - {s.get('url') or s.get('document')}")
    return 0


def check_output_file(path: str, suffixes: Sequence[str] | None = None, flag: str = "-o") -> Path:
    """An output file path checked before anything is computed: its suffix, that it is not a
    directory, and that its folder exists and is writable. Raises ArchsimError naming the problem."""
    out = Path(path)
    if suffixes is not None and out.suffix.lower() not in suffixes:
        raise ArchsimError(f"{flag} {out}: the file must end in {', '.join(suffixes[:-1])} or {suffixes[-1]}")
    if out.is_dir():
        raise ArchsimError(f"{flag} {out}: cannot write: is a directory; give a file name")
    parent = out.parent if str(out.parent) else Path(".")
    if not parent.is_dir():
        raise ArchsimError(f"{flag} {out}: cannot write: the folder {parent} does not exist")
    if (out.exists() and not os.access(out, os.W_OK)) or not os.access(parent, os.W_OK | os.X_OK):
        raise ArchsimError(f"{flag} {out}: cannot write: permission denied")
    return out


def _schema(args: argparse.Namespace) -> int:
    if args.out:
        check_output_file(args.out, flag="--out")
    text = json.dumps(hardware_json_schema(), indent=2, sort_keys=False) + "\n"
    if args.out:
        try:
            Path(args.out).write_text(text)
        except OSError as exc:
            raise ArchsimError(f"cannot write the schema to {args.out}: {exc.strerror}") from None
        print(f"wrote the JSON Schema of preset files to {args.out} (point your editor's TOML schema at it)")
    else:
        sys.stdout.write(text)
    return 0


def _add_presets(sub: argparse._SubParsersAction) -> None:
    presets = sub.add_parser("presets", help="list and show hardware presets")
    psub = presets.add_subparsers(dest="presets_command", required=True, metavar="{list,check,show}")
    p_list = psub.add_parser("list", help="every preset: id, kind and name (read, not validated)")
    p_list.add_argument("--kind", choices=["cpu", "gpu", "memory", "pim", "system"], help="only this kind")
    p_list.set_defaults(func=_presets_list)
    p_check = psub.add_parser("check", help="validate every preset; id, kind, name and a headline figure")
    p_check.add_argument("--kind", choices=["cpu", "gpu", "memory", "pim", "system"], help="only this kind")
    p_check.set_defaults(func=_presets_check)
    p_show = psub.add_parser("show", help="all fields of a preset in human units, with derived peaks")
    p_show.add_argument("id", metavar="ID|FILE", help="preset id (gpu/h100-sxm5-80gb) or a TOML file (./my-gpu.toml)")
    p_show.set_defaults(func=_presets_show)


def _add_schema(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("schema", help="write the JSON Schema of preset files (for editors)")
    p.add_argument("--out", metavar="FILE", help="write to FILE instead of stdout")
    p.set_defaults(func=_schema)


def _run(args: argparse.Namespace) -> tuple[Any, Any]:
    from archsim.engines import estimate
    from archsim.workload import zoo

    hw = load_hw(args.hw)
    graph = onnx_graph(args) if args.model.endswith(".onnx") else zoo.get(args.model, **model_kwargs(args))
    options: dict[str, Any] = {"engine": args.engine, "device": args.device, **des_options(args, graph)}
    if getattr(args, "overlap", False):
        options["overlap"] = True
    if getattr(args, "software", None):
        options["software"] = args.software
    return hw, estimate(graph, hw, **options)


def _estimate(args: argparse.Namespace) -> int:
    from archsim.cli_format import op_table_lines, summary_lines

    hw, res = _run(args)
    if args.save:
        _write(Path(args.save), res.to_json() + "\n")
    if args.format == "json":
        sys.stdout.write(res.to_json() + "\n")
        return 0
    if args.format == "csv":
        sys.stdout.write(res.to_frame().to_csv(index=False))
        return 0
    lines = op_table_lines(res) if args.per_op else summary_lines(res, hw, device=args.device,
                                                                  onnx=args.model.endswith(".onnx"))
    print("\n".join(lines))
    if args.save:
        redraw = (f"archsim plot timeline {args.save}" if res.timeline
                  else f"archsim plot roofline {args.save} --hw {args.hw}")
        print(f"result: {args.save} (redraw with `{redraw}` or `archsim plot breakdown {args.save}`)")
    if args.software and args.software != "none":
        print(f"software {args.software}: host {format_si(res.host_s, 'time')}, device "
              f"{format_si(res.device_s, 'time')}; bound: {res.bound}")
    return 0


def _write(path: Path, text: str) -> None:
    try:
        path.write_text(text)
    except OSError as exc:
        raise ArchsimError(f"cannot write {path}: {exc.strerror}") from None


def _add_estimate(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("estimate", help="time and energy of a zoo model on hardware (a summary, or per op)")
    add_hw_args(p)
    add_model_args(p)
    p.add_argument("--overlap", action="store_true", help="overlap independent ops (roofline)")
    p.add_argument("--per-op", action="store_true", help="every op, one line each, instead of the summary")
    p.add_argument("--format", default="table", choices=["table", "json", "csv"],
                   help="table (text), json (the whole result) or csv (one row per op)")
    p.add_argument("--save", metavar="FILE.json", help="also write the result as JSON (for `archsim plot`)")
    _add_software(p)
    p.set_defaults(func=_estimate)


def _add_software(p: argparse.ArgumentParser) -> None:
    from archsim.presets import models_dir

    # The ids archsim.software.list_software gives (the file names), read without importing the
    # profile models (pydantic): every command builds this parser, `presets list` included.
    ids = sorted(f.stem for f in (models_dir() / "software").glob("*.toml"))
    p.add_argument("--software", default="none", choices=ids,
                   help="software profile (models/software/): host dispatch, fusion, precision; it prices host "
                   "work on a system's host, so pair it with a system preset (--hw system/h100-node); default none")


def _sweep(args: argparse.Namespace) -> int:
    from archsim.allocator import keep_freed_memory
    from archsim.sweep.spec import load_spec, run_spec

    spec = load_spec(args.spec)
    out = Path(args.out) if args.out else Path("results") / Path(args.spec).stem
    if args.address and args.executor not in (None, "dask"):
        raise ArchsimError("--address is for --executor dask")
    executor = "dask" if args.address and args.executor is None else args.executor
    from archsim.sweep.spec import check_out_dir

    check_out_dir(out)
    if not args.resume and any((out / "store" / "chunks").glob("*.parquet")):
        raise ArchsimError(f"{out} already holds results of an earlier run: pass --resume to reuse them, "
                           "or --out another folder")
    keep_freed_memory()  # this command's own process (a serial sweep runs in it): archsim.allocator
    table = run_spec(spec, out, executor=executor, address=args.address, resume=args.resume,
                     progress=False if args.no_progress else None)
    points = table.drop_duplicates("point")
    counts = points["status"].value_counts()
    print(f"{len(points)} points: " + ", ".join(f"{counts.get(s, 0)} {s}" for s in ("ok", "invalid", "failed")))
    if "latency_s" in set(table["metric"]) and counts.get("ok", 0):
        from archsim.sweep.analysis import best

        row = best(table, "latency_s")
        params = ", ".join(_axis_value(c, row[c]) for c in table.columns[1:table.columns.get_loc("status")])
        print(f"fastest: point {row['point']} ({params}): {format_si(row['latency_s'], 'time')}")
    print(f"table: {out / 'results.parquet'} (and .csv); store: {out / 'store'}")
    for i, options in enumerate(spec.plots):
        stem = out / options.get("name", f"{i:02d}-{options['kind']}")
        print(f"plot: {stem}.pdf, .png and .csv ({options['kind']})")
    return 0 if counts.get("ok", 0) == len(points) else 1


# Unit suffixes of sweep columns -> the dimension format_si writes them in.
_SUFFIX_DIMENSIONS = (("_bytes_per_s", "bandwidth"), ("_hz", "frequency"), ("_bytes", "size"), ("_s", "time"),
                      ("_w", "power"), ("_j", "energy"))


def _axis_value(column: str, value: Any) -> str:
    """``gpu.dram.bandwidth_bytes_per_s``, 5e12 -> ``gpu.dram.bandwidth=5 TB/s``; other columns as they are."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        for suffix, dimension in _SUFFIX_DIMENSIONS:
            if column.endswith(suffix):
                return f"{column[:-len(suffix)]}={format_si(float(value), dimension)}"
        return f"{column}={value:g}"
    return f"{column}={value}"


def _add_sweep(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("sweep", help="run a parameter sweep from a TOML spec (see docs/sweeps.md)")
    p.add_argument("spec", help="the sweep specification, SPEC.toml")
    p.add_argument("--executor", choices=["serial", "processes", "dask"], help="override the spec's executor")
    p.add_argument("--address", metavar="ADDR", help="Dask scheduler, e.g. tcp://host:8786 (implies --executor dask)")
    p.add_argument("--resume", action="store_true", help="reuse the finished points already in --out")
    p.add_argument("--out", metavar="DIR", help="output folder (default: results/<spec name>)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar, even on a terminal")
    p.set_defaults(func=_sweep)


_FIGURE_SUFFIXES = (".pdf", ".png", ".svg")


def _figure_out(output: str) -> Path:
    out = Path(output)
    if out.suffix.lower() not in _FIGURE_SUFFIXES:
        raise ArchsimError(f"-o {out}: the file must end in .pdf, .png or .svg")
    return out


def _save_figure(fig: Any, out: Path) -> list[Path]:
    from archsim import plot

    return plot.save(fig, out.with_suffix(""), formats=(out.suffix.lower()[1:],))


def _roofline(args: argparse.Namespace) -> int:
    from archsim import plot

    out = _figure_out(args.output)
    hw, result = _run(args)
    fig = plot.roofline(result, hw, device=args.device, precision=args.precision, width=args.width)
    written = _save_figure(fig, out)
    print(f"{out}: {len(result.ops)} ops, {format_si(result.latency_s, 'time')}, "
          f"{format_si(result.energy_j, 'energy')}; data: {', '.join(str(p) for p in written[1:])}")
    from archsim.cli_format import precision_note

    note = precision_note(hw, (result._meta.get("workload") or {}).get("precision"), args.device,
                          onnx=args.model.endswith(".onnx"), software=getattr(args, "software", None))
    if note:
        print(note)
    return 0


def _add_roofline(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("roofline", help="plot a zoo model on the hierarchical roofline of hardware")
    add_hw_args(p)
    add_model_args(p)
    p.add_argument("--precision", help="compute ceilings to draw: fp16, fp32, ... or all (default: the run's)")
    p.add_argument("--width", default="column", choices=["column", "text"],
                   help="figure width: one column (3.5 in) or the text width (7.16 in)")
    p.add_argument("-o", "--output", required=True, metavar="FILE", help="figure file: .pdf, .png or .svg "
                   "(the data goes beside it as .csv)")
    _add_software(p)
    p.set_defaults(func=_roofline)


def _plot(args: argparse.Namespace) -> int:
    from archsim import plot

    out = _figure_out(args.output)
    source = Path(args.source)
    if not source.is_file():
        raise ArchsimError(f"{source}: no such file (a result from `archsim estimate --save`, or a sweep's "
                           "results.parquet/.csv)")
    if args.kind in ("roofline", "breakdown", "timeline"):
        from archsim.results import RunResult

        try:
            result = RunResult.from_json(source.read_text())
        except (ValueError, TypeError, KeyError) as exc:
            raise ArchsimError(f"{source}: not a result written by `archsim estimate --save` ({exc})") from None
        if args.kind == "roofline":
            if not args.hw:
                raise ArchsimError("archsim plot roofline needs --hw (the hardware the result was estimated on)")
            fig = plot.roofline(result, load_hw(args.hw), device=args.device, precision=args.precision,
                                width=args.width or "column", title=args.title)
        elif args.kind == "breakdown":
            fig = plot.breakdown(result, by=args.by, top=args.top, width=args.width or "text", title=args.title)
        else:
            fig = plot.timeline(result, color_by=args.color_by, width=args.width or "text", title=args.title)
    else:
        import pandas as pd

        table = pd.read_parquet(source) if source.suffix == ".parquet" else pd.read_csv(source)
        where = dict(_where(w) for w in args.where or ())
        # a sweep spec's table carries its title (model and base hardware) in the parquet file
        common = {"width": args.width or "column", "title": args.title or table.attrs.get("title")}
        if args.kind == "sweep_lines":
            fig = plot.sweep_lines(table, _need(args, "x"), args.y or "latency_s", hue=args.hue, where=where,
                                   logx=args.logx, logy=args.logy, **common)
        elif args.kind == "heatmap":
            fig = plot.heatmap(table, _need(args, "x"), args.y if args.y else _need(args, "y"),
                               args.value or "latency_s", where=where, **common)
        else:
            fig = plot.pareto(table, args.x or "latency_s", args.y or "energy_j", hue=args.hue, **common)
    written = _save_figure(fig, out)
    print(", ".join(str(p) for p in written))
    return 0


def _need(args: argparse.Namespace, name: str) -> str:
    value = getattr(args, name)
    if not value:
        raise ArchsimError(f"archsim plot {args.kind} needs --{name} (a column of the table)")
    return str(value)


def _where(item: str) -> tuple[str, Any]:
    key, sep, text = item.partition("=")
    if not sep:
        raise ArchsimError(f"--where {item!r}: expected COLUMN=VALUE")
    return key, parse_value(text)


def _add_plot(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("plot", help="redraw a saved result (estimate --save) or sweep table as a figure")
    p.add_argument("kind", choices=["roofline", "breakdown", "timeline", "sweep_lines", "heatmap", "pareto"])
    p.add_argument("source", help="RESULT.json (roofline, breakdown, timeline) or results.parquet/.csv (sweeps)")
    p.add_argument("-o", "--output", required=True, metavar="FILE", help="figure file: .pdf, .png or .svg")
    p.add_argument("--hw", metavar="ID|FILE", help="roofline: the hardware of the result")
    p.add_argument("--device", choices=["gpu", "host", "pim"], help="roofline: the device of a system")
    p.add_argument("--precision", help="roofline: compute ceilings to draw (default: the run's)")
    p.add_argument("--width", choices=["column", "text"],
                   help="one column (3.5 in) or the text width (7.16 in); default: column, text for breakdown "
                   "and timeline")
    p.add_argument("--title", help="the figure's title (default: model, batch, dtype and hardware of a result "
                   "or of a sweep spec's results.parquet)")
    p.add_argument("--by", default="op", choices=["op", "component"], help="breakdown: bars per op or one bar")
    p.add_argument("--top", type=int, default=10, help="breakdown: ops shown before 'other'")
    p.add_argument("--color-by", default="phase", choices=["phase", "op", "kind", "resource"],
                   help="timeline colours: phase (forward, backward, update, communication...), the busiest ops, "
                   "op kinds or resources")
    p.add_argument("--x", help="sweeps: the x column (e.g. gpu.dram.bandwidth_bytes_per_s)")
    p.add_argument("--y", help="sweeps: the y column (default latency_s; heatmap: the second axis)")
    p.add_argument("--hue", help="sweep_lines, pareto: one series per value of this column")
    p.add_argument("--value", help="heatmap: the colour column (default latency_s)")
    p.add_argument("--where", action="append", metavar="COLUMN=VALUE", help="sweeps: fix another axis")
    p.add_argument("--logx", action="store_true", help="sweep_lines: log x axis")
    p.add_argument("--logy", action="store_true", help="sweep_lines: log y axis")
    p.set_defaults(func=_plot)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand registered."""
    parser = argparse.ArgumentParser(
        prog="archsim", description="Time and energy of neural-network workloads on CPUs, GPUs and PIM."
    )
    sub = parser.add_subparsers(dest="command", required=True,
                                metavar="{presets,schema,estimate,sweep,roofline,plot}")
    _add_presets(sub)
    _add_schema(sub)
    _add_estimate(sub)
    _add_sweep(sub)
    _add_roofline(sub)
    _add_plot(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (see the module documentation: 0, 1 or 2)."""
    parser = build_parser()
    try:
        args = parser.parse_args(list(argv) if argv is not None else None)
    except SystemExit as exc:  # argparse exits on --help (0) and on usage errors (2)
        return int(exc.code) if isinstance(exc.code, int) else 2
    try:
        code = int(args.func(args))
        sys.stdout.flush()  # a full disk or closed pipe surfaces here, inside the handlers below
        return code
    except ArchsimError as exc:
        print(f"archsim: error: {_one_line(exc)}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # The reader took what it wanted (``| head``): not an error to report.
        _silence_stdout()
        return CLOSED_PIPE
    except OSError as exc:  # inputs are read with their own messages: what is left is output
        where = f" {exc.filename}" if exc.filename else ""
        return _output_failed(f"cannot write the output{where}: {exc.strerror or exc}")


CLOSED_PIPE = 141
"""Exit code when the reader closed the output pipe: 128 + SIGPIPE, as a shell reports it."""


def _silence_stdout() -> None:
    # Python would print a second traceback when it flushes stdout at exit; point it at /dev/null.
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def _output_failed(message: str) -> int:
    _silence_stdout()
    try:
        print(f"archsim: error: {message}", file=sys.stderr)
    except OSError:
        pass
    return 2


if __name__ == "__main__":  # pragma: no cover - `python -m archsim.cli`
    raise SystemExit(main())
