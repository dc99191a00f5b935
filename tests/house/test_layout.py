"""The import graph of offctl/ and commands/ (STYLE.md, "Layout that shows the architecture"; the picture is
docs/architecture.md): no cycle between modules, no import from a lower floor up to a higher one, and no flat bin
of modules at the top of offctl/.

Read from the source with ast, nothing imported: every `import` and `from ... import` of the tree, at module level
or inside a function (a function-level import is still a dependency, only a later one), relative ones resolved.
`from P import name` is an import of module P.name when that is a module of the tree, else of P. Imports under
`if TYPE_CHECKING:` count like any other: they do not run, but a module that names another's type depends on it,
and a cycle hidden behind TYPE_CHECKING is still a cycle (issue 28: plan.py named cost.py's PlanCost so, while
cost.py imports plan.py; the record moved to offctl.core.plans.plancost). commands/ installs as offctl.commands
(pyproject.toml) and is named so here.

A package's __init__ is a module like any other (`offctl`, `offctl.core`, ...): an import of it by name is an edge,
and, for the cycle check only, so is the import Python makes of each enclosing package's __init__ before a module
(importing offctl.core.records.model runs offctl/__init__.py and offctl/core/__init__.py first). The __init__ files
import nothing today, so these edges close no cycle; one that imported its own submodules would.

Floors, lowest first, by folder; a module imports from its own floor or lower ones:

0. foundation: offctl (the package's __init__: the version), offctl.errors (the one error hierarchy),
   offctl.inputs (checks of hostile input), offctl.interrupts (Ctrl-C and SIGTERM). Leaves every floor may use.
1. offctl/core/: the pure core (records, Storm's behaviour, the rules, lag, estimates, plans), in rooms by concern,
   each importing only the rooms before it (CORE_ORDER): storm/ (what a release does, how Storm reads its JSON),
   records/ (the records, parsed, and the catalogue), rules/ (the numbered rules, the judge), then time/ (the
   findings made after the read) and plans/ (the repairs' plans and their cost), which do not import each other.
2. offctl/adapters/: the outside world (ZooKeeper, Kafka, Spark, files, HTTP), returning core types.
3. the library every face shares: offctl.ports (the stores' Protocols), offctl/settings/ (settings resolved
   once), offctl/pipeline/ (the one read-analyze-estimate call), offctl/repair/ (the repairs and their one
   writer), offctl/render/ (the one renderer).
4. the faces: offctl/faces/ (serve and watch, Storm UI's monitor, mcp, audit, peek, sandbox, reference),
   offctl.commands (the Typer layer) and offctl.__main__ (`offctl`, `python -m offctl`).

Inside floor 3, settings and ports come before the pipeline, the pipeline before repair, and none of them
imports render (render reads the result objects; the library never formats).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TREES = {"offctl": ROOT / "offctl", "offctl.commands": ROOT / "commands"}
FOUNDATION = {"offctl", "offctl.errors", "offctl.inputs", "offctl.interrupts"}
FLOORS = (  # (floor, the module or folder), by dotted name
    (1, "offctl.core"),
    (2, "offctl.adapters"),
    (3, "offctl.ports"),
    (3, "offctl.settings"),
    (3, "offctl.pipeline"),
    (3, "offctl.repair"),
    (3, "offctl.render"),
    (4, "offctl.faces"),
    (4, "offctl.commands"),
    (4, "offctl.__main__"),
)
LAYERS = ("foundation", "core", "adapters", "library", "faces")
# Within the library floor, what each room may import of the others (render is imported by faces only).
LIBRARY_ORDER = {
    "offctl.ports": set(),
    "offctl.settings": set(),
    "offctl.render": {"offctl.settings"},
    "offctl.pipeline": {"offctl.ports", "offctl.settings"},
    "offctl.repair": {"offctl.ports", "offctl.settings", "offctl.pipeline"},
}
# Within the core floor, what each room may import of the others: no circle between them, and a module of the core
# outside these rooms fails.
CORE_ORDER = {
    "offctl.core.storm": set(),
    "offctl.core.records": {"offctl.core.storm"},
    "offctl.core.rules": {"offctl.core.storm", "offctl.core.records"},
    "offctl.core.time": {"offctl.core.storm", "offctl.core.records", "offctl.core.rules"},
    "offctl.core.plans": {"offctl.core.storm", "offctl.core.records", "offctl.core.rules"},
    "offctl.core.results": {
        "offctl.core.storm",
        "offctl.core.records",
        "offctl.core.rules",
        "offctl.core.time",
        "offctl.core.plans",
    },
}
TOP_MODULES_AT_MOST = 8


def modules() -> dict[str, Path]:
    """Every module of the tree by its dotted name."""
    found = {}
    for package, base in TREES.items():
        for path in sorted(base.rglob("*.py")):
            parts = list(path.relative_to(base).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join([package, *parts])] = path
    return found


def room(module: str) -> tuple[int, str] | None:
    """(floor, the module or folder it belongs to); None for a module no floor names."""
    if module in FOUNDATION:
        return 0, module
    for floor, prefix in FLOORS:
        if module == prefix or module.startswith(prefix + "."):
            return floor, prefix
    return None


def core_room(module: str) -> str | None:
    """The room of the core a module of offctl/core/ is in (its first folder below offctl/core/), else None."""
    parts = module.split(".")
    return ".".join(parts[:3]) if parts[:2] == ["offctl", "core"] and len(parts) > 2 else None


def layer(module: str) -> int:
    return room(module)[0]


def imports(module: str, path: Path, known: set[str]) -> list[tuple[str, int]]:
    """(imported module of the tree, line) for every import in `path`, under `if TYPE_CHECKING:` too."""
    is_package = path.name == "__init__.py"
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")
                base = base[: len(base) - node.level + (1 if is_package else 0)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            for alias in node.names:
                child = f"{source}.{alias.name}"
                out.append((child if child in known else source, node.lineno))
    resolved: dict[str, int] = {}
    for name, line in sorted(out, key=lambda nl: nl[1]):
        while name and name not in known:  # `import offctl.core.records.model as m`, or a name inside a module
            name = name.rpartition(".")[0]
        if name and name != module:
            resolved.setdefault(name, line)  # the first line that imports it
    return list(resolved.items())


def graph() -> dict[str, list[tuple[str, int]]]:
    found = modules()
    known = set(found)
    return {m: imports(m, p, known) for m, p in found.items()}


def enclosing(module: str, known: set[str]) -> list[str]:
    """The packages whose __init__ Python runs before `module`."""
    parts = module.split(".")
    return [p for p in (".".join(parts[:i]) for i in range(1, len(parts))) if p in known]


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def test_the_tree_is_read():
    g = graph()
    assert {"offctl.pipeline.read", "offctl.core.records.model", "offctl.adapters.kafka", "offctl.commands.app"} <= set(
        g
    )
    # function-level and relative imports are seen: inspect opens the adapters inside a function, the commands
    # import their options relatively
    assert "offctl.adapters.kafka" in {m for m, _ in g["offctl.pipeline.read"]}
    assert "offctl.commands.options" in {m for m, _ in g["offctl.commands.app"]}
    assert "offctl.commands.app" in {m for m, _ in g["offctl.__main__"]}


def test_no_import_cycle_between_modules():
    g = graph()
    known = set(g)
    edges = {m: {t for t, _ in targets} | set(enclosing(m, known)) for m, targets in g.items()}
    found = cycles(edges)
    assert not found, "import cycles: " + "; ".join(
        " <-> ".join(c) + " (" + ", ".join(f"{m} -> {t} line {line}" for m in c for t, line in g[m] if t in c) + ")"
        for c in found
    )


def test_every_module_is_on_a_floor():
    """A new module goes in a folder the floors name (docs/architecture.md, "Where a new thing goes")."""
    assert [m for m in graph() if room(m) is None] == []


def test_no_flat_bin_at_the_top_of_offctl():
    top = sorted(p.name for p in (ROOT / "offctl").glob("*.py"))
    assert len(top) <= TOP_MODULES_AT_MOST, top


def test_the_library_rooms_import_in_their_order():
    """settings and ports first, then the pipeline, then repair; render from the result objects, imported by the
    faces only."""
    wrong = []
    for m, targets in graph().items():
        here = room(m)
        for t, line in targets:
            there = room(t)
            if here[0] == there[0] == 3 and here[1] != there[1] and there[1] not in LIBRARY_ORDER[here[1]]:
                wrong.append(f"{m} imports {t} at line {line}")
    assert not wrong, "\n".join(wrong)


def test_every_module_of_the_core_is_in_a_room():
    """offctl/core/ holds its rooms (and its __init__), no module of its own: a new one goes in the room of its
    concern."""
    assert [m for m in graph() if core_room(m) is not None and core_room(m) not in CORE_ORDER] == []


def test_the_core_rooms_import_in_their_order():
    """storm first, then records, then rules, then time and plans: no two rooms of the core import each other,
    directly or round a circle."""
    assert cycles(CORE_ORDER) == []
    wrong = []
    for m, targets in graph().items():
        here = core_room(m)
        for t, line in targets:
            there = core_room(t)
            if here and there and here != there and there not in CORE_ORDER.get(here, ()):
                wrong.append(f"{m} imports {t} at line {line}")
    assert not wrong, "\n".join(wrong)


def test_no_import_from_a_lower_layer_up_to_a_higher_one():
    upward = [
        f"{m} ({LAYERS[layer(m)]}) imports {t} ({LAYERS[layer(t)]}) at line {line}"
        for m, targets in graph().items()
        for t, line in targets
        if layer(t) > layer(m)
    ]
    assert not upward, "\n".join(upward)


@pytest.mark.parametrize(
    "edges, want",
    [
        ({"a": {"b"}, "b": {"a"}}, [["a", "b"]]),
        ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [["a", "b", "c"]]),
        ({"a": {"b"}, "b": set()}, []),
    ],
)
def test_the_cycle_check_finds_cycles(edges, want):
    assert cycles(edges) == want


def test_an_import_under_type_checking_is_an_edge(tmp_path):
    """A type-only import is a dependency like any other: a cycle behind `if TYPE_CHECKING:` is still a cycle."""
    path = tmp_path / "plan.py"
    path.write_text(
        "from typing import TYPE_CHECKING\nimport typing\n\nif TYPE_CHECKING:\n"
        "    from offctl.core.plans.cost import PlanCost\n"
        "if typing.TYPE_CHECKING:\n    import offctl.core.records.model\n",
        encoding="utf-8",
    )
    known = {"offctl.core.plans.plan", "offctl.core.plans.cost", "offctl.core.records.model"}
    assert dict(imports("offctl.core.plans.plan", path, known)) == {
        "offctl.core.plans.cost": 5,
        "offctl.core.records.model": 7,
    }


def test_one_class_per_name():
    """STYLE.md, "One record, one name": two classes never share a name across offctl/ and commands/ (a reader who
    meets `RepairResult` or `Outcome` knows which one it is without its import)."""
    where: dict[str, list[str]] = {}
    for tree in TREES.values():
        for path in sorted(tree.rglob("*.py")):
            for node in ast.parse(path.read_text(encoding="utf-8")).body:
                if isinstance(node, ast.ClassDef):
                    where.setdefault(node.name, []).append(str(path.relative_to(ROOT)))
    assert {name: paths for name, paths in where.items() if len(paths) > 1} == {}
