"""What an installed midnight-env holds besides its modules: the boards, the trained agents'
weights, and the PEP 561 marker ``py.typed`` that lets type checkers read the packages'
annotations."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_build_ships_the_data_files_and_the_type_marker(tmp_path):
    """setuptools' build step on a copy of the sources: what a wheel of them would hold."""
    src = tmp_path / "src"
    ignore = shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc", "*.egg-info")
    for folder in ("midnight_env", "agents"):
        shutil.copytree(ROOT / folder, src / folder, ignore=ignore)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    out = tmp_path / "lib"
    subprocess.run([sys.executable, "-c", "import setuptools; setuptools.setup()", "-q", "build_py", "-d", str(out)],
                   cwd=src, check=True, capture_output=True, text=True)
    built = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()}
    assert {"midnight_env/py.typed", "midnight_agents/py.typed"} <= built
    assert {"midnight_env/core/boards/midnight_party.json", "midnight_env/core/boards/hidden_castle.json"} <= built
    assert any(p.startswith("midnight_agents/models/") and p.endswith(".npz") for p in built)
    assert "midnight_env/envs/registration.py" in built and not any(p.startswith("agents/") for p in built)
