"""rig's own imports, read from the source (ast): no import cycle anywhere inside rig/, and no
import against the data flow (DESIGN.md, docs/architecture.md):

    engine ← cluster ← workload / faults / checks ← simulate ← pipeline

`analysis` never imports `report` or the model; `events` and `engine` import neither the model
nor anything downstream, and `events` nothing from strategies. Every import counts, those under
`if TYPE_CHECKING:` and inside functions too: a cycle a type checker or a late import hides is
still a cycle for whoever reads the code.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

RIG = Path(__file__).resolve().parent.parent / "rig"

# What each part of rig must not import (its own package and rig's leaves are always fine).
DOWNSTREAM_OF_MODEL = {"workload", "faults", "checks", "simulate", "pipeline", "analysis",
                       "report", "search", "commands", "cli", "testing"}
FORBIDDEN: dict[str, set[str]] = {
    "engine": {"cluster", "events", "strategies", *DOWNSTREAM_OF_MODEL},
    "events": {"cluster", "engine", "strategies", *DOWNSTREAM_OF_MODEL},
    "strategies": {"cluster", *DOWNSTREAM_OF_MODEL},
    "cluster": DOWNSTREAM_OF_MODEL,
    "workload": DOWNSTREAM_OF_MODEL - {"workload", "faults", "checks"},
    "faults": DOWNSTREAM_OF_MODEL - {"workload", "faults", "checks"},
    "checks": DOWNSTREAM_OF_MODEL - {"workload", "faults", "checks"},
    "simulate": {"pipeline", "analysis", "report", "search", "commands", "cli", "testing"},
    "analysis": {"report", "cluster", "engine", "workload", "faults", "checks", "simulate",
                 "pipeline", "search", "commands", "cli", "testing"},
    "pipeline": {"search", "commands", "cli", "testing"},
}

# Imports against the flow that are tolerated for now, each with its reason; a test fails once
# one of them is gone, so that the list only ever shrinks. Empty since the analysis took the
# bucket rule out of the report (rig.analysis.buckets).
KNOWN: set[tuple[str, str]] = set()


def module_name(path: Path) -> str:
    parts = list(path.relative_to(RIG.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path, modules: set[str]) -> set[str]:
    """The rig modules `path` imports, wherever the import statement stands."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            # `from package import module` imports the module; `from module import name` the
            # module itself.
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                       for alias in node.names]
        else:
            continue
        for target in targets:
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def import_graph() -> dict[str, set[str]]:
    paths = {module_name(p): p for p in RIG.rglob("*.py")}
    modules = set(paths)
    return {name: imports_of(path, modules) for name, path in paths.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def part(module: str) -> str:
    """`rig.cluster.broker` → `cluster`; `rig.simulate` → `simulate`."""
    return module.split(".")[1] if "." in module else module


def against_the_flow(graph: dict[str, set[str]]) -> set[tuple[str, str]]:
    return {(a, b) for a, targets in graph.items() for b in targets
            if part(b) in FORBIDDEN.get(part(a), ())}


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    return import_graph()


def test_the_graph_is_read_as_python_reads_it(graph: dict[str, set[str]]) -> None:
    # Absolute, relative, `from package import module`, under TYPE_CHECKING and in functions.
    assert "rig.cluster.replica_manager" in graph["rig.cluster.broker"]
    assert "rig.engine.kernel" in graph["rig.engine"]
    assert "rig.cluster.broker" in graph["rig.cluster.fetcher"]  # under TYPE_CHECKING
    assert "rig.simulate" in graph["rig.pipeline"]


def test_no_import_cycle_inside_rig(graph: dict[str, set[str]]) -> None:
    assert cycles(graph) == []


def test_a_planted_cycle_is_found() -> None:
    graph = {"rig.a": {"rig.b"}, "rig.b": {"rig.c"}, "rig.c": {"rig.a"}, "rig.d": {"rig.a"}}
    assert cycles(graph) == [["rig.a", "rig.b", "rig.c"]]


def test_no_import_runs_against_the_data_flow(graph: dict[str, set[str]]) -> None:
    assert sorted(against_the_flow(graph) - KNOWN) == []


def test_the_known_exceptions_are_still_there(graph: dict[str, set[str]]) -> None:
    gone = KNOWN - against_the_flow(graph)
    assert not gone, f"remove from KNOWN, they no longer exist: {sorted(gone)}"


def test_planted_imports_against_the_flow_are_found() -> None:
    planted = {"rig.engine.kernel": {"rig.cluster.broker"},
               "rig.events.aggregate": {"rig.strategies.fetch_session"},
               "rig.cluster.broker": {"rig.simulate", "rig.events"},
               "rig.analysis.stages": {"rig.report.charts", "rig.events.names"},
               "rig.pipeline": {"rig.simulate"}}
    assert against_the_flow(planted) == {
        ("rig.engine.kernel", "rig.cluster.broker"),
        ("rig.events.aggregate", "rig.strategies.fetch_session"),
        ("rig.cluster.broker", "rig.simulate"),
        ("rig.analysis.stages", "rig.report.charts")}


def test_no_file_of_the_cluster_model_is_over_300_lines() -> None:
    # Recursively: the KRaft model (rig/cluster/kraft) included.
    long = {str(p.relative_to(RIG)): n for p in (RIG / "cluster").rglob("*.py")
            if (n := len(p.read_text().splitlines())) > 300}
    assert long == {}
