"""Analysis of sweep tables: wide form, Pareto fronts, sensitivity, the best point under constraints.

Every function takes a sweep table, tidy (one row per point and metric, as
:meth:`archsim.Sweep.run` returns) or wide (one row per point, one column per metric), and looks at
points with status ``ok`` only.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd

from archsim.errors import SweepError

__all__ = ["to_wide", "pareto_front", "sensitivity", "best", "parameter_columns"]

_ID = ("point", "status", "error")


def to_wide(table: pd.DataFrame) -> pd.DataFrame:
    """One row per point: ``point``, the axis columns, ``status``, ``error`` and one column per metric."""
    if "metric" not in table.columns:
        return table.copy()
    ids = [c for c in table.columns if c not in ("metric", "value")]
    firsts = table.drop_duplicates("point")[ids].set_index("point")
    metrics = list(dict.fromkeys(m for m in table["metric"] if isinstance(m, str)))
    values = table.pivot(index="point", columns="metric", values="value") if metrics else pd.DataFrame()
    wide = firsts.join(values[metrics]) if metrics else firsts
    wide = wide.reset_index()
    wide.columns.name = None
    return wide


def parameter_columns(table: pd.DataFrame) -> list[str]:
    """The axis columns of a sweep table (everything between ``point`` and ``status``)."""
    cols = list(table.columns)
    if "point" not in cols or "status" not in cols:
        raise SweepError("not a sweep table: it needs 'point' and 'status' columns")
    return cols[cols.index("point") + 1:cols.index("status")]


def _ok(table: pd.DataFrame, needed: Sequence[str]) -> pd.DataFrame:
    wide = to_wide(table)
    missing = [c for c in needed if c not in wide.columns]
    if missing:
        raise SweepError(f"columns {missing} are not in the table; it has {list(wide.columns)}")
    if "status" in wide.columns:
        wide = wide[wide["status"] == "ok"]
    return wide


def _sense(objectives: Mapping[str, str] | Sequence[str]) -> dict[str, str]:
    pairs = dict(objectives) if isinstance(objectives, Mapping) else {k: "min" for k in objectives}
    bad = {k: v for k, v in pairs.items() if v not in ("min", "max")}
    if bad or len(pairs) < 2:
        raise SweepError(f"objectives must name >= 2 columns, each 'min' or 'max'; got {pairs}")
    return pairs


def pareto_front(table: pd.DataFrame, objectives: Mapping[str, str] | Sequence[str] = ("latency_s", "energy_j"),
                 ) -> pd.DataFrame:
    """The non-dominated points (wide rows), sorted by the first objective.

    A point is dominated when another is no worse in every objective and better in one. Objectives
    are ``{column: "min" | "max"}`` or a list of columns to minimise. Points that tie in every
    objective are all kept. Two objectives take O(n log n) (sort, then a running best); more take
    O(n^2) pairwise comparisons.
    """
    sense = _sense(objectives)
    wide = _ok(table, list(sense))
    cols = list(sense)
    values = wide[cols].to_numpy(dtype=float) * np.array([1.0 if sense[c] == "min" else -1.0 for c in cols])
    finite = np.isfinite(values).all(axis=1)
    values, rows = values[finite], wide[finite]
    if len(cols) == 2:
        order = np.lexsort((values[:, 1], values[:, 0]))
        keep = np.zeros(len(values), dtype=bool)
        best_y = np.inf
        i = 0
        while i < len(order):
            # Points with the same first objective: only those with the group's smallest second objective survive.
            j = i
            while j < len(order) and values[order[j], 0] == values[order[i], 0]:
                j += 1
            group = order[i:j]
            y_min = values[group, 1].min()
            if y_min < best_y:
                keep[group[values[group, 1] == y_min]] = True
                best_y = y_min
            i = j
    else:
        le = (values[:, None, :] <= values[None, :, :]).all(axis=2)
        lt = (values[:, None, :] < values[None, :, :]).any(axis=2)
        dominated = (le & lt).any(axis=0)
        keep = ~dominated
    front = rows[keep]
    return front.sort_values(cols, kind="stable").reset_index(drop=True)


_CONSTRAINT = re.compile(r"^\s*([A-Za-z_][\w.\-:]*)\s*(<=|>=|==|!=|<|>)\s*(\S+)\s*$")
_OPS = {"<=": operator.le, ">=": operator.ge, "<": operator.lt, ">": operator.gt, "==": operator.eq,
        "!=": operator.ne}


def _constraint(text: str) -> tuple[str, Any, float | str]:
    match = _CONSTRAINT.match(text)
    if not match:
        raise SweepError(f"constraint {text!r} is not of the form '<column> <op> <number>' "
                         f"(ops: {', '.join(_OPS)}), e.g. 'energy_j <= 0.5'")
    column, op, raw = match.groups()
    try:
        value: float | str = float(raw)
    except ValueError:
        value = raw.strip("'\"")
    return column, _OPS[op], value


def best(table: pd.DataFrame, objective: str = "latency_s", *, minimize: bool = True,
         constraints: Sequence[str] = ()) -> pd.Series:
    """The point that optimises ``objective`` among those meeting every constraint (a wide row).

    Constraints are strings in SI units, over metrics or axis columns: ``"energy_j <= 0.5"``,
    ``"gpu.sm_count <= 100"``. Ties go to the lowest point index.
    """
    parsed = [_constraint(c) for c in constraints]
    wide = _ok(table, [objective, *(c for c, _, _ in parsed)])
    mask = np.ones(len(wide), dtype=bool)
    for column, op, value in parsed:
        mask &= op(wide[column], value).to_numpy(dtype=bool)
    feasible = wide[mask & np.isfinite(wide[objective].to_numpy(dtype=float))]
    if feasible.empty:
        raise SweepError(f"no point with status 'ok' meets the constraints {list(constraints)}")
    index = feasible[objective].idxmin() if minimize else feasible[objective].idxmax()
    return feasible.loc[index]


def sensitivity(table: pd.DataFrame, output: str = "latency_s", inputs: Sequence[str] | None = None,
                method: Literal["rbd_fast", "delta"] = "rbd_fast", seed: int = 0, resamples: int = 100,
                ) -> pd.DataFrame:
    """How much of the variance of ``output`` each axis explains, from a random/LHS/Sobol' sweep.

    ``rbd_fast`` estimates first-order Sobol' indices S1 from any sample by random balance designs
    (Tarantola, Gatelli & Mara 2006; bias-corrected as Tissot & Prieur 2012), ``delta`` Borgonovo's
    moment-independent delta and S1 (Plischke, Borgonovo & Smith 2013), both from SALib. Both work on
    the points a sweep already has: they order the sample along each input, so a log-scaled axis and
    its logarithm give the same indices. Choice axes enter by their level index. Returns one row per
    input: ``input``, ``S1`` (and ``delta``) and their 95% confidence intervals from ``resamples``
    bootstrap resamples (delta's cost grows with them: one kernel density estimate per resample).
    """
    from SALib.analyze import delta as salib_delta
    from SALib.analyze import rbd_fast

    params = inputs if inputs is not None else parameter_columns(to_wide(table))
    wide = _ok(table, [output, *params])
    if isinstance(resamples, bool) or not isinstance(resamples, int) or resamples < 1:
        raise SweepError(f"resamples must be a positive integer, got {resamples!r}")
    if len(wide) < 16:
        raise SweepError(f"sensitivity needs at least 16 valid points, the table has {len(wide)}")
    columns = []
    for p in params:
        col = wide[p]
        if not pd.api.types.is_numeric_dtype(col) or pd.api.types.is_bool_dtype(col):
            col = col.astype("category").cat.codes
        columns.append(col.to_numpy(dtype=float))
    x = np.column_stack(columns)
    y = wide[output].to_numpy(dtype=float)
    constant = [p for p, c in zip(params, columns, strict=True) if np.ptp(c) == 0]
    if constant:
        raise SweepError(f"inputs {constant} do not vary in the table: leave them out of the analysis")
    problem = {"num_vars": len(params), "names": list(params),
               "bounds": [[float(c.min()), float(c.max())] for c in columns]}
    if method == "rbd_fast":
        res = rbd_fast.analyze(problem, x, y, num_resamples=resamples, seed=seed)
        frame = pd.DataFrame({"input": list(params), "S1": res["S1"], "S1_conf": res["S1_conf"]})
    elif method == "delta":
        res = salib_delta.analyze(problem, x, y, num_resamples=resamples, seed=seed, print_to_console=False)
        # SALib >= 1.5 names the classic estimator "delta_raw" (and adds a bias-balanced variant).
        name = "delta" if "delta" in res else "delta_raw"
        frame = pd.DataFrame({"input": list(params), "delta": res[name], "delta_conf": res[f"{name}_conf"],
                              "S1": res["S1"], "S1_conf": res["S1_conf"]})
    else:
        raise SweepError(f"sensitivity method {method!r} is not known; allowed: 'rbd_fast', 'delta'")
    return frame
