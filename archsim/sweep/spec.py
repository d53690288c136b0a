"""Sweep specification files (TOML) for ``archsim sweep SPEC.toml``; the format is in ``docs/sweeps.md``.

:func:`load_spec` reads and checks a file into a :class:`SweepSpec` (unknown tables or keys are
errors listing the allowed ones); :func:`run_spec` runs it into an output folder:

* ``store/``: the resumable result store (one Parquet file per finished chunk);
* ``results.parquet`` and ``results.csv``: the tidy table;
* ``<plot name>.pdf`` / ``.png``: the plots the spec lists.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from archsim.errors import SweepError

__all__ = ["SweepSpec", "load_spec", "run_spec", "spec_title", "PLOT_KINDS"]

PLOT_KINDS = ("sweep_lines", "heatmap", "pareto")

_PLOT_NAME = re.compile(r"^(?!\.)[A-Za-z0-9._-]{1,100}$")

_TABLES: dict[str, set[str]] = {
    "base": {"preset", "path"},
    "work": set(),  # any keyword of the zoo model (model, batch, dtype, training, ...)
    "engine": {"name", "options"},
    "sweep": {"sampler", "n", "seed", "metrics", "executor", "workers", "address", "chunk_size"},
    "axes": set(),
    "plots": set(),
}


@dataclass(frozen=True)
class SweepSpec:
    """A checked sweep specification (see ``docs/sweeps.md``)."""

    source: Path
    base: Any
    axes: Mapping[str, Any]
    work: Mapping[str, Any]
    engine: str = "roofline"
    options: Mapping[str, Any] = field(default_factory=dict)
    sampler: str = "grid"
    n: int | None = None
    seed: int = 0
    metrics: list[str] | None = None
    executor: str = "processes"
    workers: int | None = None
    address: str | None = None
    chunk_size: int | None = None
    plots: list[dict[str, Any]] = field(default_factory=list)


def _table(data: Mapping[str, Any], name: str, where: str) -> dict[str, Any]:
    value = data.get(name, {})
    if not isinstance(value, Mapping):
        raise SweepError(f"{where}: [{name}] must be a table")
    allowed = _TABLES[name]
    unknown = sorted(set(value) - allowed) if allowed else []
    if unknown:
        raise SweepError(f"{where}: unknown key(s) {unknown} in [{name}]; allowed: {', '.join(sorted(allowed))}")
    return dict(value)


def load_spec(path: str | Path) -> SweepSpec:
    """Read and check a sweep specification file."""
    from archsim.presets import read_toml

    p = Path(path)
    data = read_toml(p, SweepError)
    where = str(p)
    unknown = sorted(set(data) - set(_TABLES))
    if unknown:
        raise SweepError(f"{where}: unknown table(s) {unknown}; allowed: {', '.join(_TABLES)}")
    base_t = _table(data, "base", where)
    if len(base_t) != 1:
        raise SweepError(f"{where}: [base] needs exactly one of 'preset' (an id) or 'path' (a TOML file)")
    if "preset" in base_t:
        from archsim.presets import load_preset

        base = load_preset(base_t["preset"])
    else:
        from archsim.presets import load_hardware

        if not isinstance(base_t["path"], str) or not base_t["path"]:
            raise SweepError(f"{where}: [base] path must be a file name string, got {base_t['path']!r}")
        base_path = Path(base_t["path"])
        base = load_hardware(base_path if base_path.is_absolute() else p.parent / base_path)
    axes = data.get("axes")
    if not isinstance(axes, Mapping) or not axes:
        raise SweepError(f"{where}: [axes] must list at least one axis, e.g. \"gpu.dram.bandwidth\" = [\"1 TB/s\"]")
    engine_t = _table(data, "engine", where)
    sweep_t = _table(data, "sweep", where)
    plots = data.get("plots", [])
    if not isinstance(plots, list) or not all(isinstance(x, Mapping) for x in plots):
        raise SweepError(f"{where}: plots must be an array of tables: [[plots]] kind = ...")
    for i, plot in enumerate(plots):
        if plot.get("kind") not in PLOT_KINDS:
            raise SweepError(f"{where}: plots[{i}].kind is {plot.get('kind')!r}; allowed: {', '.join(PLOT_KINDS)}")
        if "name" in plot and (not isinstance(plot["name"], str) or not _PLOT_NAME.match(plot["name"])):
            # A plot is written into --out: a name is a file stem, never a path ("../../x").
            raise SweepError(f"{where}: plots[{i}].name is {plot['name']!r}; allowed: a file name of letters, "
                             "digits, '.', '_' and '-' (no '/' or '..'), written into the output folder")
        _check_plot(plot, f"{where}: plots[{i}] ({plot['kind']})")
    options = engine_t.get("options", {})
    if not isinstance(options, Mapping):
        raise SweepError(f"{where}: [engine] options must be a table")
    return SweepSpec(source=p, base=base, axes=dict(axes), work=_table(data, "work", where),
                     engine=engine_t.get("name", "roofline"), options=dict(options),
                     sampler=sweep_t.get("sampler", "grid"), n=sweep_t.get("n"), seed=sweep_t.get("seed", 0),
                     metrics=sweep_t.get("metrics"), executor=sweep_t.get("executor", "processes"),
                     workers=sweep_t.get("workers"), address=sweep_t.get("address"),
                     chunk_size=sweep_t.get("chunk_size"), plots=[dict(x) for x in plots])


def _check_plot(options: Mapping[str, Any], where: str) -> None:
    """Check a ``[[plots]]`` table against its plot's signature before the sweep runs: a missing or
    unknown option is an error naming the plot's options, not a TypeError after the last point."""
    import inspect

    from archsim import plot as plots

    params = dict(inspect.signature(getattr(plots, options["kind"])).parameters)
    params.pop(next(iter(params)))  # the table
    params.pop("style_name", None)
    given = {k for k in options if k not in ("kind", "name")}
    allowed = ", ".join(params)
    unknown = sorted(given - set(params))
    if unknown:
        raise SweepError(f"{where}: unknown option(s) {', '.join(unknown)}; its options: {allowed}")
    missing = [n for n, p in params.items() if p.default is inspect.Parameter.empty and n not in given]
    if missing:
        raise SweepError(f"{where}: needs {' and '.join(missing)} (output columns of the sweep, e.g. "
                         f"\"gpu.dram.bandwidth_bytes_per_s\", \"gpu.sm_count\"); its options: {allowed}")


def run_spec(spec: SweepSpec, out: str | Path, *, executor: str | None = None, address: str | None = None,
             resume: bool = False, progress: bool | None = None, evaluator: Any = None) -> pd.DataFrame:
    """Run ``spec``, writing the store, the table and the plots under ``out``; returns the table.

    ``evaluator`` replaces the spec's engine (see :meth:`archsim.Sweep.run`).
    """
    from archsim.sweep import Sweep
    from archsim.sweep.store import store_lock

    out = Path(out)
    check_out_dir(out)
    sweep = Sweep(spec.base, spec.axes, sampler=spec.sampler, n=spec.n, seed=spec.seed)
    chosen = executor or spec.executor
    # One sweep at a time per output folder: a second one is refused, never interleaved.
    with store_lock(out, "output folder"):
        table = sweep.run(dict(spec.work) or None, engine=spec.engine, options=spec.options, metrics=spec.metrics,
                          executor=chosen, workers=spec.workers if chosen != "dask" else None,
                          address=(address or spec.address) if chosen == "dask" else None,
                          chunk_size=spec.chunk_size, store=out / "store", resume=resume, progress=progress,
                          evaluator=evaluator)
        table.attrs["title"] = spec_title(spec)  # kept in the parquet file: `archsim plot` titles with it
        _write_atomic(out / "results.parquet", lambda fh: table.to_parquet(fh, index=False))
        _write_atomic(out / "results.csv", lambda fh: fh.write(table.to_csv(index=False).encode()))
        _plots(spec, table, out)
    return table


def check_out_dir(out: Path) -> None:
    """Raise a SweepError now (before computing) if ``out`` cannot be the output folder."""
    if out.exists() and not out.is_dir():
        raise SweepError(f"--out {out}: exists and is not a directory")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SweepError(f"--out {out}: cannot create the output folder: {exc.strerror or exc}") from None
    if not os.access(out, os.W_OK | os.X_OK):
        raise SweepError(f"--out {out}: the output folder is not writable")


def _write_atomic(path: Path, write: Any) -> None:
    # Written beside and renamed: a reader (or a kill) never sees half a results file.
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
        try:
            with os.fdopen(fd, "wb") as fh:
                write(fh)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise SweepError(f"cannot write {path}: {exc.strerror or exc}") from None


def spec_title(spec: SweepSpec) -> str:
    """What a sweep's plots show: ``"bert_base, batch 8, fp16 on NVIDIA H100 SXM5 80GB"`` (the [work]
    model or op and the [base] hardware); a ``title`` in a [[plots]] table replaces it."""
    work = dict(spec.work)
    name = work.get("model") or work.get("op") or "work"
    parts = [str(name)] + [f"{k.replace('_', ' ')} {work[k]}" for k in ("batch", "seq_len") if work.get(k) is not None]
    parts += [str(work[k]) for k in ("dtype", "mode") if work.get(k)]
    if work.get("training"):
        parts.append("training")
    return ", ".join(parts) + f" on {getattr(spec.base, 'name', '')}".rstrip()


def _plots(spec: SweepSpec, table: pd.DataFrame, out: Path) -> None:
    if spec.plots:
        from archsim import plot as plots

        for i, options in enumerate(spec.plots):
            kwargs = {k: v for k, v in options.items() if k not in ("kind", "name")}
            kwargs.setdefault("title", spec_title(spec))
            try:
                fig = getattr(plots, options["kind"])(table, **kwargs)
            except TypeError as exc:  # an option the plot does not take
                raise SweepError(f"{spec.source}: plots[{i}] ({options['kind']}): {exc}") from None
            try:
                plots.save(fig, out / options.get("name", f"{i:02d}-{options['kind']}"))
            except OSError as exc:
                raise SweepError(f"{spec.source}: plots[{i}]: cannot write into {out}: {exc.strerror or exc}") from None
