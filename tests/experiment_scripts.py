"""Experiment scripts (``experiments/NAME.py``) loaded by tests: they are not a package, so each is
imported from its file, registered in ``sys.modules`` while it runs (dataclasses and pickling look
their module up there) and removed after, so no test sees another's copy."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType

EXPERIMENTS = Path(__file__).resolve().parents[1] / "experiments"


@contextmanager
def experiment(name: str) -> Iterator[ModuleType]:
    """``experiments/<name>.py`` as a module, registered under ``name`` inside the ``with``."""
    spec = importlib.util.spec_from_file_location(name, EXPERIMENTS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        del sys.modules[name]


def load_script(name: str) -> ModuleType:
    """``experiments/<name>.py`` loaded (registered only while its code runs at import)."""
    with experiment(name) as module:
        return module
