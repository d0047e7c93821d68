"""What an installed midnight-env holds besides its modules: the boards, the trained agents'
weights, and the PEP 561 marker ``py.typed`` that lets type checkers read the packages'
annotations."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


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


@pytest.mark.slow
def test_the_main_job_installs_no_torch(tmp_path):
    """The README's first command installs the ``tournament`` extra: resolved in a fresh virtual
    environment (pip's dry run), it takes numpy and numba but no torch, Ray or RLlib."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    main_job = next(line for line in readme.splitlines() if line.endswith("&& midnight tournament"))
    extras = re.search(r'-e "\.\[([a-z,]+)\]"', main_job)[1]
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    report = tmp_path / "report.json"
    run = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--dry-run", "-q", "--report",
                          str(report), "-e", f".[{extras}]"], cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-3000:]
    names = {item["metadata"]["name"].lower().replace("_", "-") for item in json.loads(report.read_text())["install"]}
    assert {"numpy", "numba", "openskill", "midnight-env"} <= names
    assert not names & {"torch", "ray", "stable-baselines3", "tensorboard", "nvidia-cudnn-cu12", "triton"}, names
