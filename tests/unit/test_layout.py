"""The package's import structure: no cycles, and every import points down the layer stack.

The imports are read from the source (``ast``), function-level (lazy) imports included, so a cycle
hidden behind a local import fails here too. The layers follow the data flow of the design:
hardware and workload are inputs, ``cost`` prices ops, ``engines`` schedule them, results are values,
plots read results, the sweep runner and the CLI sit on top.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2] / "archsim"

# Layer of each unit (a top-level module or package, or a module named on its own); a module may
# import its own unit and any unit of a lower layer, never a higher one.
LAYERS: dict[str, float] = {
    "archsim._version": 0,
    "archsim.errors": 0,
    "archsim._lazy": 0,  # public names loaded on first use (any package may)
    "archsim.allocator": 0,  # the C allocator's settings (stdlib only)
    "archsim.limits": 1,
    "archsim.units": 1,
    "archsim.hardware": 2,
    "archsim.workload": 2,
    "archsim.energy": 2,
    "archsim.results": 2,
    "archsim.presets": 3,
    "archsim.ops": 3,
    "archsim.zoo": 3,
    "archsim.microarch": 3,
    "archsim.software": 3.5,  # profiles read hardware, workload and the preset folder; cost reads them
    "archsim.cost": 4,
    "archsim.engines": 5,
    "archsim.engines.ordered_sums": 4.5,  # compiled running sums of rows (numpy and numba only)
    "archsim.sweep.analysis": 6,  # pure table analysis, read by plots
    "archsim.plot": 7,
    "archsim.sweep": 8,  # the sweep runner (its spec files draw plots)
    "archsim.cli": 9,
    "archsim.cli_format": 8.5,  # the text archsim.cli prints
    "archsim.cli_args": 8.5,  # the workload and engine flags of archsim.cli
    "archsim": 10,  # the lazy public namespace
}


def _modules() -> dict[str, Path]:
    mods = {}
    for path in ROOT.rglob("*.py"):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        mods[".".join(parts)] = path
    return mods


MODULES = _modules()


def _resolve(name: str) -> str | None:
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _imports(module: str) -> set[str]:
    path = MODULES[module]
    is_pkg = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [_resolve(a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".") if is_pkg else module.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            # ``from pkg import sub`` imports the submodule ``pkg.sub`` when there is one
            targets = [f"{name}.{a.name}" if f"{name}.{a.name}" in MODULES else _resolve(name) for a in node.names]
        else:
            continue
        found.update(t for t in targets if t and t != module)
    return found


GRAPH = {m: _imports(m) for m in MODULES}


def _unit(module: str) -> str:
    best = max((u for u in LAYERS if module == u or module.startswith(u + ".")), key=len)
    return best


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            for w in children:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))
    return out


def test_the_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles():
    assert _cycles(GRAPH) == []


def test_every_module_has_a_layer():
    assert all(_unit(m) for m in MODULES)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_point_down(module):
    here = _unit(module)
    upward = sorted(t for t in GRAPH[module]
                    if _unit(t) != here and LAYERS[_unit(t)] >= LAYERS[here])
    assert upward == [], f"{module} (layer {LAYERS[here]}) imports {upward}"


def test_the_moved_modules_are_gone():
    # the cost model lives in archsim/cost/ and the sweep in archsim/sweep/: no copies at the top
    for old in ("traffic", "kernels", "_gemm_engine", "sweep_axes", "sweep_spec", "sweep_store"):
        assert not (ROOT / f"{old}.py").exists()
    for old in ("cost", "gpu_cost", "cpu_cost", "pim_cost", "link_cost", "params", "gpu_batch", "common"):
        assert not (ROOT / "engines" / f"{old}.py").exists()
