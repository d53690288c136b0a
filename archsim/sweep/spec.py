"""Sweep specification files (TOML) for ``archsim sweep SPEC.toml``; the format is in ``docs/sweeps.md``.

:func:`load_spec` reads and checks a file into a :class:`SweepSpec` (unknown tables or keys are
errors listing the allowed ones); :func:`run_spec` runs it into an output folder:

* ``store/``: the resumable result store (one Parquet file per finished chunk);
* ``results.parquet`` and ``results.csv``: the tidy table;
* ``<plot name>.pdf`` / ``.png``: the plots the spec lists.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from archsim.errors import SweepError

__all__ = ["SweepSpec", "load_spec", "run_spec", "PLOT_KINDS"]

PLOT_KINDS = ("sweep_lines", "heatmap", "pareto")

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
    p = Path(path)
    try:
        with p.open("rb") as fh:
            data = tomllib.load(fh)
    except OSError as exc:
        raise SweepError(f"{p}: cannot read: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise SweepError(f"{p}: invalid TOML: {exc}") from None
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

    out = Path(out)
    sweep = Sweep(spec.base, spec.axes, sampler=spec.sampler, n=spec.n, seed=spec.seed)
    chosen = executor or spec.executor
    table = sweep.run(dict(spec.work) or None, engine=spec.engine, options=spec.options, metrics=spec.metrics,
                      executor=chosen, workers=spec.workers if chosen != "dask" else None,
                      address=(address or spec.address) if chosen == "dask" else None,
                      chunk_size=spec.chunk_size, store=out / "store", resume=resume, progress=progress,
                      evaluator=evaluator)
    table.to_parquet(out / "results.parquet", index=False)
    table.to_csv(out / "results.csv", index=False)
    if spec.plots:
        from archsim import plot as plots

        for i, options in enumerate(spec.plots):
            kwargs = {k: v for k, v in options.items() if k not in ("kind", "name")}
            try:
                fig = getattr(plots, options["kind"])(table, **kwargs)
            except TypeError as exc:  # an option the plot does not take
                raise SweepError(f"{spec.source}: plots[{i}] ({options['kind']}): {exc}") from None
            plots.save(fig, out / options.get("name", f"{i:02d}-{options['kind']}"))
    return table
