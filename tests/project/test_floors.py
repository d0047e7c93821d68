"""The version floors of pyproject.toml are true: the code works with the lowest versions it allows.

The test builds a fresh virtual environment (no system packages), installs a copy of this
checkout with ``.[all,test]`` while pinning numpy, numba, gymnasium and pettingzoo to exactly
their floors, and runs the suite's fast part there (``-m "not slow"``; the tests of the
``integrations`` extra are left out: those libraries need newer versions, ray[rllib] pins its own
gymnasium). pip takes the packages from the same index as the rest of CI and caches them after
the first download; the engine's kernels are compiled afresh there (numba caches beside the copy,
the specialised kernels go to a folder of their own), so nothing compiled by another numba is
mixed in either way.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.version import Version

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
FLOORED = ("numpy", "numba", "gymnasium", "pettingzoo")
# tests of the integrations extra (other versions of these libraries), and this one
LEFT_OUT = ("project/test_floors.py", "envs/test_integrations_doc.py", "envs/test_openspiel.py", "envs/test_rllib.py")


def floors() -> dict[str, str]:
    """{package: its floor} for the floored packages, from the requirements of pyproject.toml."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    requirements = list(project["dependencies"]) + [r for extra in project["optional-dependencies"].values()
                                                    for r in extra]
    found = {}
    for requirement in requirements:
        match = re.match(r"^([A-Za-z0-9_.-]+)\s*>=\s*([0-9][0-9.]*)\s*$", requirement)
        if match and match[1] in FLOORED:
            found[match[1]] = match[2]
    return found


def test_every_floored_package_has_one_floor():
    assert sorted(floors()) == sorted(FLOORED)


@pytest.mark.slow
def test_the_fast_tests_pass_with_every_package_at_its_floor(tmp_path):
    pins = floors()
    source = tmp_path / "src"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(
        ".git", ".venv*", "build", "dist", "*.egg-info", "__pycache__", "*.nbi", "*.nbc", "*.sqlite*", "runs"))
    constraints = tmp_path / "floors.txt"
    # and CI's torch (the train extra's floor alone would take the newest, a CUDA build); the
    # rest of CI's exact versions could clash with the floors
    ci = [line for line in (ROOT / "constraints.txt").read_text().splitlines() if line.startswith("torch==")]
    constraints.write_text("".join(f"{line}\n" for line in ci)
                           + "".join(f"{name}=={version}\n" for name, version in pins.items()))
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "PYTHONPATH", "VIRTUAL_ENV")}
    env["MIDNIGHT_KERNEL_DIR"] = str(tmp_path / "kernels")
    install = subprocess.run([python, "-m", "pip", "install", "-q", "-c", str(constraints), "-e", ".[all,test]"],
                             cwd=source, env=env, capture_output=True, text=True)
    assert install.returncode == 0, install.stdout[-3000:] + install.stderr[-3000:]
    versions = subprocess.run([python, "-c", "import importlib.metadata as m; "
                               f"print(*(m.version(p) for p in {list(pins)!r}))"],
                              env=env, capture_output=True, text=True, check=True).stdout.split()
    # what pip installed is the floor, not a later release
    assert [Version(v) for v in versions] == [Version(v) for v in pins.values()], (versions, pins)
    run = subprocess.run([python, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "-m", "not slow",
                          *(f"--ignore=tests/{name}" for name in LEFT_OUT)],
                         cwd=source, env=env, capture_output=True, text=True)
    assert run.returncode == 0, f"with {pins}:\n{run.stdout[-6000:]}\n{run.stderr[-3000:]}"
