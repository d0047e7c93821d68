"""The import paths of the modules that moved into the layer packages, kept for users' code.

Until 0.1.0 every module lay in ``midnight_env/`` itself; ``from midnight_env.records import
read_records`` and the Gymnasium id ``"midnight_env.registration:midnight_env/HiddenCastle-v0"``
still work: the old name imports the module at its new place and is the same module object
(one module, one set of kernels, classes that pickle by their new names). Code of this package
never uses these names (tests/project/test_layout.py checks it).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys

# old name under midnight_env -> the module's place now
MOVED = {
    **{name: f"midnight_env.infra.{name}" for name in ("threads", "kernel_cache", "seeds", "provenance",
                                                       "ray_cluster")},
    **{name: f"midnight_env.core.{name}" for name in (
        "board", "config", "state", "rules", "dice", "scoring", "actions", "observation", "engine",
        "vector_kernels", "specialize", "random_choice", "records", "positions", "bench")},
    **{name: f"midnight_env.arena.{name}" for name in ("agent", "registry", "play")},
    **{name: f"midnight_env.envs.{name}" for name in (
        "aec", "midnight_v0", "gym_env", "vector", "seat_vector", "sb3_vec", "rllib", "openspiel",
        "registration", "env_common")},
}


class _Loader(importlib.abc.Loader):
    def __init__(self, target: str):
        self.target = target

    def create_module(self, spec):
        return importlib.import_module(self.target)  # the module itself, imported at its new place

    def exec_module(self, module) -> None:
        pass  # already executed under its own name


class _OldPathFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        package, _, name = fullname.rpartition(".")
        if package != "midnight_env" or name not in MOVED:
            return None
        return importlib.util.spec_from_loader(fullname, _Loader(MOVED[name]))


def install() -> None:
    if not any(isinstance(finder, _OldPathFinder) for finder in sys.meta_path):
        sys.meta_path.append(_OldPathFinder())
