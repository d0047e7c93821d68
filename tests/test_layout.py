"""The layers of the codebase: the core imports no concrete agent, the agents no top-layer module,
the installed import names clash with nobody's, and every package is installed."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
# play, tournaments, training, the web page and the commands use both the library and the agents
TOP_LAYER = ("midnight_env.play", "midnight_env.tournament", "midnight_env.training", "midnight_env.commands",
             "midnight_env.cli", "midnight_env.bench", "midnight_env.web")


def module_name(path: Path, package: str, folder: Path) -> str:
    parts = path.relative_to(folder).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join((package, *parts))


def imported_modules(path: Path) -> set[str]:
    """Every module ``path`` imports, at the top or inside functions."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def in_layer(name: str, layer: tuple[str, ...]) -> bool:
    return any(name == top or name.startswith(top + ".") for top in layer)


def test_the_core_imports_no_concrete_agent():
    offenders = {}
    for path in sorted((ROOT / "midnight_env").rglob("*.py")):
        name = module_name(path, "midnight_env", ROOT / "midnight_env")
        if in_layer(name, TOP_LAYER):
            continue
        agents = sorted(m for m in imported_modules(path) if m == "midnight_agents" or m.startswith("midnight_agents."))
        if agents:
            offenders[name] = agents
    assert not offenders, f"core modules importing concrete agents: {offenders}"


def test_the_agents_import_no_top_layer_module():
    offenders = {}
    for path in sorted((ROOT / "agents").rglob("*.py")):
        tops = sorted(m for m in imported_modules(path) if in_layer(m, TOP_LAYER))
        if tops:
            offenders[module_name(path, "midnight_agents", ROOT / "agents")] = tops
    assert not offenders, f"agents importing the top layer: {offenders}"


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
    data_only = {"midnight_env.boards", "midnight_env.web.static", "midnight_agents.models"}  # folders of data files
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
