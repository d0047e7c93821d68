"""The layers of the codebase (docs/ARCHITECTURE.md): the file-level import graph of the installed
packages has no circle and imports only downward; the installed import names clash with nobody's,
and every package is installed."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]

# The layers, lowest first (docs/ARCHITECTURE.md): a module imports its own layer's modules and
# lower layers' only. The package root ``midnight_env`` (its __init__ and the old import paths)
# is the public facade above them all, which no module of the packages imports.
LAYERS = (
    ("infra", ("midnight_env.infra",)),
    ("core", ("midnight_env.core",)),
    ("render", ("midnight_env.render",)),
    ("arena", ("midnight_env.arena",)),
    ("envs and solver", ("midnight_env.envs", "midnight_env.solve")),
    ("agents", ("midnight_agents",)),
    ("tournament, training and analysis",
     ("midnight_env.tournament", "midnight_env.training", "midnight_env.analysis")),
    ("web", ("midnight_env.web",)),
    ("commands", ("midnight_env.commands", "midnight_env.cli")),
    ("facade", ("midnight_env", "midnight_env._old_paths")),
)


def module_name(path: Path, package: str, folder: Path) -> str:
    parts = path.relative_to(folder).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join((package, *parts))


def installed_modules() -> dict[str, Path]:
    """``{module: file}`` of the installed packages midnight_env and midnight_agents."""
    import midnight_agents
    import midnight_env

    modules = {}
    for package in (midnight_env, midnight_agents):
        folder = Path(package.__file__).parent
        for path in folder.rglob("*.py"):
            if "__pycache__" not in path.parts:
                modules[module_name(path, package.__name__, folder)] = path
    return modules


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def imported_names(path: Path, name: str) -> set[str]:
    """Every absolute name ``path`` (module ``name``) imports, at the top or inside functions, but
    not under ``if TYPE_CHECKING:``: ``import X.Y`` gives ``X.Y``; ``from X import a`` gives
    ``X.a`` (where that is a module, the name's own file) and ``X``."""
    found: set[str] = set()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _type_checking(child):
                for other in child.orelse:
                    visit_one(other)
            else:
                visit_one(child)

    def visit_one(node: ast.AST) -> None:
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) + 1 - node.level] + ([base] if base else []))
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
        visit(node)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return found


def import_graph() -> dict[str, set[str]]:
    """``{module: modules of the packages it imports}``, file by file. ``from X import a`` is an
    edge to the module ``X.a`` where there is one, else to ``X`` (whose file defines ``a``); a
    name of the packages that is no module at all is kept as it is, to be reported."""
    modules = installed_modules()
    graph = {}
    for name, path in modules.items():
        names = imported_names(path, name)
        edges = set()
        for imported in names:
            if imported.split(".")[0] not in ("midnight_env", "midnight_agents"):
                continue
            if imported in modules:
                # a package imported only for its submodules (``from X import a``, a a module) is no edge
                submodules = [n for n in names if n.rpartition(".")[0] == imported]
                if not (submodules and all(n in modules for n in submodules) and _only_from(path, imported)):
                    edges.add(imported)
            elif imported.rpartition(".")[0] not in modules:
                edges.add(imported)  # neither a module nor a name of one
        edges.discard(name)
        graph[name] = edges
    return graph


def _only_from(path: Path, package: str) -> bool:
    """Whether ``path`` names ``package`` only as ``from package import ...`` (never ``import package``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return not any(isinstance(node, ast.Import) and any(alias.name == package for alias in node.names)
                   for node in ast.walk(tree))


def layer_of(name: str) -> int | None:
    """The rank of ``name``'s layer (its most specific package wins), None if it has none."""
    best, rank = -1, None
    for index, (_, packages) in enumerate(LAYERS):
        for package in packages:
            if (name == package or name.startswith(package + ".")) and len(package) > best:
                best, rank = len(package), index
    return rank


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import circles: one path round each strongly connected component of two or more modules."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []

    def connect(node: str) -> None:  # Tarjan's algorithm
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in graph:
                continue
            if nxt not in index:
                connect(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(max(10_000, sys.getrecursionlimit()))
    for node in sorted(graph):
        if node not in index:
            connect(node)
    return found


def test_every_module_has_a_layer():
    unplaced = sorted(name for name in installed_modules() if layer_of(name) is None)
    assert not unplaced, f"modules in no layer of LAYERS (docs/ARCHITECTURE.md says where each kind goes): {unplaced}"


def test_the_import_graph_has_no_circle():
    found = cycles(import_graph())
    assert not found, "import circles (each a set of modules importing each other): " + "; ".join(
        " <-> ".join(component) for component in found)


def test_layers_import_only_downward():
    graph = import_graph()
    upward = []
    for name, edges in sorted(graph.items()):
        rank = layer_of(name)
        for imported in sorted(edges):
            if imported not in graph:
                upward.append(f"{name} imports {imported}, which is no module of the packages")
            elif layer_of(imported) > rank:
                upward.append(f"{name} ({LAYERS[rank][0]}) imports {imported} ({LAYERS[layer_of(imported)][0]})")
            elif imported in ("midnight_env", "midnight_env._old_paths") and rank != len(LAYERS) - 1:
                upward.append(f"{name} imports the facade {imported}: import the module the name is defined in")
    assert not upward, "imports against the layers:\n" + "\n".join(upward)


def test_the_graph_sees_imports_inside_functions_and_skips_type_checking(tmp_path):
    """The two cases the issue names: a function's import is an edge, a TYPE_CHECKING one is not."""
    path = tmp_path / "probe.py"
    path.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from midnight_env.web import app\n"
                    "else:\n    import json\ndef f():\n    from midnight_env.core.engine import Engine\n")
    names = imported_names(path, "midnight_env.core.probe")
    assert "midnight_env.core.engine" in names and "json" in names
    assert "midnight_env.web.app" not in names
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_the_library_never_imports_experiments():
    offenders = sorted(name for name, path in installed_modules().items()
                       if any(m == "experiments" or m.startswith("experiments.") for m in imported_names(path, name)))
    assert not offenders, f"modules importing experiments/: {offenders}"


def test_old_import_paths_are_the_moved_modules():
    """``midnight_env.records`` and the other names of before the layers still import, as the very
    module at its new place (users' code, and Gymnasium ids with a module prefix)."""
    import importlib

    from midnight_env._old_paths import MOVED

    checked = 0
    for old, new in MOVED.items():
        try:
            module = importlib.import_module(new)
        except ImportError as err:  # an adapter whose library is an extra not installed (pyspiel, ray)
            assert not (err.name or "").startswith("midnight"), err
            continue
        assert importlib.import_module(f"midnight_env.{old}") is module, old
        checked += 1
    assert checked >= 30, "the core, arena and Gymnasium modules import with the default extras"
    assert set(MOVED.values()) <= set(installed_modules())


def test_no_top_level_agents_package_is_installed(tmp_path):
    """The folder agents/ is installed as midnight_agents: a top-level `agents` would clash with
    other distributions' (openai-agents)."""
    code = ("import importlib.util, midnight_agents, midnight_env; "
            "print(importlib.util.find_spec('agents') is None, midnight_agents.__name__)")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "midnight_agents"]


def test_every_package_is_listed_for_installation():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    folders = {"midnight_agents": ROOT / "agents", "midnight_env": ROOT / "midnight_env"}
    assert config["package-dir"] == {"midnight_agents": "agents"}
    found = set()
    for package, folder in folders.items():
        for init in folder.rglob("__init__.py"):
            if "__pycache__" not in init.parts:
                found.add(module_name(init, package, folder))
    data_only = {"midnight_env.core.boards", "midnight_env.web.static", "midnight_agents.models"}  # data files only
    assert found | data_only == set(config["packages"])


def test_no_sys_path_insert_anywhere():
    """Scripts, tests and the library import the installed package, never a checkout by path."""
    offenders = []
    for path in sorted(ROOT.rglob("*.py")):
        if {".git", ".venv", "build"} & set(path.parts) or path.name == "test_layout.py":
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if "sys.path.insert" in line or "sys.path.append" in line:
                offenders.append(f"{path.relative_to(ROOT)}:{number}")
    assert not offenders, offenders
