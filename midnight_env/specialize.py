"""Kernels compiled for one rule set, with its numbers as constants.

The kernels of ``rules.py`` and ``vector_kernels.py`` read the board and player numbers (squares,
rooms, players, stair places, which variant ...) from the batch's ``Rules`` ``R`` at run time, so
that one compiled kernel serves every variant, player count and option. Compiled with those
numbers as constants, LLVM drops the other variant's branches, unrolls the loops over players and
squares and folds the action layout's arithmetic: the rules and bookkeeping of a VectorEnv step of
midnight_party games ran 19 % faster on one core; 4096 games stepped with random legal actions on
2 cores made 14 % more decisions per second (hidden_castle 7 %; BENCHMARKS.md).

Numba gives no other way to hand constants to a threaded kernel that it can cache: it drops literal
types at the boundary of a ``prange`` body; closures over other compiled functions miss its cache
in every new process (the key holds each dispatcher's random id); and a module-level constant is
not part of the key at all (a changed value would meet the kernel compiled for the old one). So
:func:`specialized` writes a copy of those two modules in which every scalar ``R.<field>`` is
replaced by its value, into the kernel directory, and imports it; numba compiles the copy the first
time and caches it beside it. A copy's file name is a hash of the modules it is made of or calls
into and of the rule values, so that a changed module or rule set never meets a stale kernel.
Arrays of ``R`` (doors, room kinds ...) stay arguments.

Compiling a copy takes about 25 s the first time a rule set is used on a machine. VectorEnv uses
one for batches that run threaded (``engine.PARALLEL_FROM``), where that pays.

Environment variables: ``MIDNIGHT_SPECIALIZE=0`` turns specialization off (the generic kernels
run); ``MIDNIGHT_KERNEL_DIR`` is the kernel directory (default ``~/.cache/midnight_env/kernels``,
under ``XDG_CACHE_HOME`` when that is set). A directory that cannot be written is reported in a
warning and the generic kernels run.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import sys
import warnings
from pathlib import Path
from types import ModuleType

import numpy as np

from midnight_env.config import Rules

PACKAGE_DIR = Path(__file__).resolve().parent
COPIED = ("rules", "vector_kernels")  # the modules copied, in import order
CALLED = ("board", "config", "dice", "state", "observation")  # modules whose code numba compiles into the copies
_FIELD = re.compile(r"\bR\.([A-Za-z_]\w*)")
_warned = False


def enabled() -> bool:
    """Whether threaded VectorEnv batches use specialized kernels (``MIDNIGHT_SPECIALIZE``)."""
    value = os.environ.get("MIDNIGHT_SPECIALIZE", "1")
    if value not in ("0", "1"):
        raise ValueError(f"MIDNIGHT_SPECIALIZE={value!r} is not allowed: allowed are 0 (off) and 1 (on)")
    return value == "1"


def kernel_dir() -> Path:
    """Where the copies are written (``MIDNIGHT_KERNEL_DIR``, else the user's cache directory)."""
    if os.environ.get("MIDNIGHT_KERNEL_DIR"):
        return Path(os.environ["MIDNIGHT_KERNEL_DIR"])
    cache = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(cache) / "midnight_env" / "kernels"


def rule_constants(rules: Rules) -> dict[str, int | bool]:
    """The scalar fields of ``rules`` as Python values (the arrays stay arguments)."""
    out = {}
    for name, value in zip(rules._fields, rules):
        if isinstance(value, (bool, np.bool_)):
            out[name] = bool(value)
        elif isinstance(value, (int, np.integer)):
            out[name] = int(value)
    return out


def specialized_sources(rules: Rules) -> dict[str, str]:
    """``{module name: source}`` of the copies for ``rules``, in import order: each copied module
    with every scalar ``R.<field>`` replaced by its value and the imports of copied modules
    pointing at their copies. The names hold a hash of everything the copies are made of."""
    constants = rule_constants(rules)
    texts = {m: (PACKAGE_DIR / f"{m}.py").read_text() for m in COPIED + CALLED}
    digest = hashlib.sha256(repr((sorted(constants.items()), sorted(texts.items()))).encode()).hexdigest()[:20]
    names = {m: f"midnight_kernels_{digest}_{m}" for m in COPIED}

    def constant(match: re.Match) -> str:
        return repr(constants[match.group(1)]) if match.group(1) in constants else match.group(0)

    sources = {}
    for m in COPIED:
        text = _FIELD.sub(constant, texts[m])
        for other in COPIED:
            text = text.replace(f"from midnight_env.{other} import", f"from {names[other]} import")
        sources[names[m]] = text
    return sources


def _write(path: Path, text: str) -> None:
    """``text`` into ``path`` unless it holds it already: rewriting would change the file's time,
    which numba's cache checks, and another process may be reading it (hence write and rename)."""
    if path.exists() and path.read_text() == text:
        return
    temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    temporary.write_text(text)
    os.replace(temporary, path)


def specialized(rules: Rules, module: str = "vector_kernels") -> ModuleType | None:
    """The copy of ``module`` (one of ``COPIED``) compiled for ``rules``; None when the kernel
    directory cannot be written (with a warning, once per process)."""
    global _warned
    if module not in COPIED:
        raise ValueError(f"module {module!r} is not allowed: allowed are {', '.join(COPIED)}")
    sources = specialized_sources(rules)
    wanted = next(name for name in sources if name.endswith(f"_{module}"))
    if wanted in sys.modules:  # loaded by this process already (the name says what it holds)
        return sys.modules[wanted]
    directory = kernel_dir()
    try:
        directory.mkdir(parents=True, exist_ok=True)
        for name, text in sources.items():
            _write(directory / f"{name}.py", text)
    except OSError as error:
        if not _warned:
            warnings.warn(f"midnight_env: cannot write specialized kernels to {directory} ({error}); the "
                          f"generic ones run. MIDNIGHT_KERNEL_DIR names another directory.", stacklevel=2)
            _warned = True
        return None
    for name in sources:  # the copies import each other by name: load them in order
        if name not in sys.modules:
            spec = importlib.util.spec_from_file_location(name, directory / f"{name}.py")
            copy = importlib.util.module_from_spec(spec)
            sys.modules[name] = copy
            try:
                spec.loader.exec_module(copy)
            except BaseException:
                del sys.modules[name]
                raise
    return sys.modules[wanted]
