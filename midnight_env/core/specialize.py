"""Kernels compiled for one rule set, with its numbers as constants.

The kernels of ``rules.py`` and ``vector_kernels.py`` read the board and player numbers (squares,
rooms, players, stair places, which variant ...) from the batch's ``Rules`` ``R`` at run time, so
that one compiled kernel serves every variant, player count and option. Compiled with those
numbers as constants, LLVM drops the other variant's branches, unrolls the loops over players and
squares and folds the action layout's arithmetic. What that gains differs by rule set, and not
always in the same direction (BENCHMARKS.md, "Kernels compiled per rule set").

Numba gives no other way to hand constants to a threaded kernel that it can cache: it drops literal
types at the boundary of a ``prange`` body; closures over other compiled functions miss its cache
in every new process (the key holds each dispatcher's random id); and a module-level constant is
not part of the key at all (a changed value would meet the kernel compiled for the old one). So
:func:`specialized` writes a copy of those two modules into the kernel directory and imports it;
numba compiles the copy the first time and caches it beside it.

How a copy is made, over the syntax tree of each copied module (:func:`specialize_module`): every
``R.<field>`` that reads a scalar of the rules becomes a ``Constant``, and the imports of the other
copied module point at its copy. The rules reach a copy's functions as a parameter named ``R``
only; a copied module that reaches them any other way (an alias, a parameter of another name, a
``getattr`` ...) is refused with :class:`SpecializeError`, since its kernel would silently stay
generic where it reads them so. Arrays of ``R`` (doors, room kinds ...) stay arguments.

A copy's file name holds a hash of the rule values and a hash of the code it is made of: the
sources of every ``midnight_env`` module the copied modules import, transitively (found from their
``import`` statements, :func:`module_closure`; numba compiles whatever the kernels call from them
into the copy), and of this module. A changed module or rule set never meets a stale kernel.

Copies nobody uses are pruned when a new one is written (:func:`prune`): those of the same rule
set made from other code once unused for ``SUPERSEDED_AFTER`` seconds, any once unused for
``UNUSED_AFTER``. "Used" is the time of a copy's ``.used`` marker, touched each time a process
loads it, or of its files' last access. A copy is needed on disk only from that touch until its
module has been executed (numba decorates its functions then, and reads the source no more), so
a copy unused for that long is not being imported; the kernel directory is shared by every
checkout on the machine, which is why another checkout's current copy is never removed at once.

VectorEnv uses a copy for batches that run threaded (``threads.PARALLEL_FROM``); compiling one,
the first time a rule set is used on a machine, takes a while (BENCHMARKS.md).

Environment variables: ``MIDNIGHT_SPECIALIZE`` is ``auto`` (the default: the rule sets where it
was measured to pay, :func:`enabled`), ``1`` (every rule set) or ``0`` (off: the generic kernels
run); ``MIDNIGHT_KERNEL_DIR`` is the kernel directory (default ``~/.cache/midnight_env/kernels``,
under ``XDG_CACHE_HOME`` when that is set). A directory that cannot be written is reported in a
warning and the generic kernels run.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import os
import re
import stat
import sys
import time
import warnings
from pathlib import Path
from types import ModuleType

import numpy as np

from midnight_env.core.config import Rules

PACKAGE = "midnight_env"
PACKAGE_DIR = Path(__file__).resolve().parent.parent  # midnight_env/
COPIED = ("core.rules", "core.vector_kernels")  # the modules copied, in import order (dotted, below the package)
RULES_NAME = "R"  # the parameter through which every function of the copied modules gets the rules
PREFIX = "midnight_kernels"
SUPERSEDED_AFTER = 3600.0  # s unused after which a copy of the same rules from other code is pruned
UNUSED_AFTER = 7 * 86400.0  # s unused after which any copy is pruned
# a copy's files: <PREFIX>_<rules hash>_<code hash>_<module>.py, .used, __pycache__/<module name>.*;
# also those of the copies of before (one hash of both): <PREFIX>_<hash of 20>_<module>.*
_COPY = re.compile(rf"^({PREFIX}_([0-9a-f]{{12}})_[0-9a-f]{{12}})[_.]|^({PREFIX}_[0-9a-f]{{20}})_")
_warned = False


class SpecializeError(Exception):
    """A copied module reaches the rules other than through ``R.<field>`` of a parameter ``R``."""


def enabled(rules: Rules) -> bool:
    """Whether a threaded VectorEnv batch of these rules uses specialized kernels (``MIDNIGHT_SPECIALIZE``).

    ``auto`` (the default) specializes where it was measured to pay: hidden_castle, and
    midnight_party with 2 players; midnight_party with 3 or 4 players ran slower specialized
    (BENCHMARKS.md, "Kernels compiled per rule set"), and other counts are not measured.
    ``1`` specializes every rule set, ``0`` none."""
    value = os.environ.get("MIDNIGHT_SPECIALIZE", "auto")
    if value not in ("auto", "0", "1"):
        raise ValueError(f"MIDNIGHT_SPECIALIZE={value!r} is not allowed: allowed are auto (where it was "
                         f"measured to pay, the default), 0 (off) and 1 (on)")
    if value == "auto":
        return bool(rules.castle) or rules.num_players == 2
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


# ---------------------------------------------------------------------------------------------
# the code a copy is made of


def _short(module: str) -> str:
    """``core.rules`` -> ``rules``: how a copy and the ``module`` of :func:`specialized` name it."""
    return module.rpartition(".")[2]


def _path(module: str) -> str:
    """``core.rules`` -> ``midnight_env/core/rules.py`` (messages, the copy's first line)."""
    return f"{PACKAGE}/{module.replace('.', '/')}.py"


def _module_path(module: str, package_dir: Path) -> Path | None:
    """The file of ``midnight_env`` module ``module`` (dotted, without the package; ``""`` is the
    package's ``__init__``), or None when there is no such module."""
    base = package_dir.joinpath(*module.split(".")) if module else package_dir
    for path in ([base.with_suffix(".py")] if module else []) + [base / "__init__.py"]:
        if path.is_file():
            return path
    return None


def _imports(tree: ast.Module, module: str, package_dir: Path) -> set[str]:
    """The ``midnight_env`` modules that ``module`` imports, in function bodies too: for ``from X
    import a, b`` the modules among ``X.a`` and ``X.b``, and ``X`` itself when a name is not a
    module (a name from a package is its ``__init__``'s)."""
    path = _module_path(module, package_dir)
    package = module if path is not None and path.name == "__init__.py" else module.rpartition(".")[0]

    def inner(name: str) -> str | None:  # "midnight_env.a.b" -> "a.b" when that is a module here
        if name != PACKAGE and not name.startswith(f"{PACKAGE}."):
            return None
        name = name[len(PACKAGE) + 1:]
        return name if _module_path(name, package_dir) else None

    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(inner(alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative to this module's package
                parts = package.split(".") if package else []
                base = ".".join([PACKAGE, *parts[:len(parts) + 1 - node.level], *filter(None, [node.module])])
            else:
                base = node.module or ""
            submodules = [inner(f"{base}.{alias.name}") for alias in node.names]
            found.update(submodules)
            if None in submodules:
                found.add(inner(base))
    found.discard(None)
    return found


def module_closure(roots: tuple[str, ...] = COPIED, package_dir: Path | None = None) -> dict[str, Path]:
    """``{module: file}`` of the ``midnight_env`` modules ``roots`` import, transitively, and of
    ``roots`` themselves (module names dotted, without the package; ``""`` is its ``__init__``),
    in ``package_dir`` (by default this package's folder)."""
    package_dir = package_dir or PACKAGE_DIR
    closure: dict[str, Path] = {}
    todo = list(roots)
    while todo:
        module = todo.pop()
        if module in closure:
            continue
        path = _module_path(module, package_dir)
        if path is None:
            raise SpecializeError(f"module {PACKAGE}.{module} has no file under {package_dir}")
        closure[module] = path
        todo.extend(_imports(ast.parse(path.read_text(), str(path)), module, package_dir))
    return dict(sorted(closure.items()))


def code_hash(package_dir: Path | None = None) -> str:
    """Hash of the sources of :func:`module_closure` and of this module, which writes the copies."""
    package_dir = package_dir or PACKAGE_DIR
    digest = hashlib.sha256(Path(__file__).read_bytes())
    for module, path in module_closure(COPIED, package_dir).items():
        digest.update(f"\0{module}\0".encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def rules_hash(rules: Rules) -> str:
    """Hash of the scalar rule values, which a copy holds as constants."""
    return hashlib.sha256(repr(sorted(rule_constants(rules).items())).encode()).hexdigest()[:12]


# ---------------------------------------------------------------------------------------------
# a copied module, specialized over its syntax tree


def _params(function: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> list[str]:
    """The positional parameters of ``function``."""
    return [p.arg for p in function.args.posonlyargs + function.args.args]


def _functions(tree: ast.Module) -> dict[str, list[str]]:
    """``{name: positional parameters}`` of a module's top-level functions."""
    return {node.name: _params(node) for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}


class _Specializer(ast.NodeTransformer):
    """Writes the scalar ``R.<field>`` of one copied module as constants and points its imports of
    copied modules at their copies; raises SpecializeError where the module reaches the rules in a
    way this cannot follow."""

    def __init__(self, module: str, constants: dict[str, int | bool], copies: dict[str, str],
                 functions: dict[str, dict[str, list[str]]]):
        self.module, self.constants, self.copies = module, constants, copies
        self.callees = dict(functions[module])  # {name here: parameters} of the copies' functions
        self.package_names = set(self.callees)  # names bound here to midnight_env functions or modules
        self.functions = functions
        self.parents: dict[ast.AST, ast.AST] = {}
        self.scopes: list[ast.AST] = []  # the functions the visit is inside

    def run(self, tree: ast.Module) -> ast.Module:
        for parent in ast.walk(tree):
            for child in ast.iter_child_nodes(parent):
                self.parents[child] = parent
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith(PACKAGE)):
                source = self._copied(node)
                for alias in node.names:
                    self.package_names.add(alias.asname or alias.name)
                    if source and alias.name in self.functions[source]:
                        self.callees[alias.asname or alias.name] = self.functions[source][alias.name]
        return self.visit(tree)

    def fail(self, node: ast.AST, what: str) -> None:
        raise SpecializeError(f"{_path(self.module)} line {getattr(node, 'lineno', '?')}: {what} "
                              f"(`{ast.unparse(node)}`). The kernels compiled per rule set "
                              f"({PACKAGE}.specialize) can only read the rules as {RULES_NAME}.<field> of a "
                              f"parameter named {RULES_NAME} or hand {RULES_NAME} on to a {PACKAGE} function")

    # -- imports of the copied modules

    def _copied(self, node: ast.ImportFrom) -> str | None:
        """The copied module that ``node`` imports from, if any."""
        target = node.module
        return next((m for m in self.copies if target == f"{PACKAGE}.{m}"), None)

    def visit_ImportFrom(self, node: ast.ImportFrom):
        source = self._copied(node)
        if source:
            return ast.copy_location(ast.ImportFrom(self.copies[source], node.names, 0), node)
        copied = {f"{PACKAGE}.{m}" for m in self.copies}
        if any(f"{node.module}.{alias.name}" in copied for alias in node.names):
            self.fail(node, "a copied module is imported as a module, so its copy would not be called")
        return node

    def visit_Import(self, node: ast.Import):
        if any(alias.name in {f"{PACKAGE}.{m}" for m in self.copies} for alias in node.names):
            self.fail(node, "a copied module is imported as a module, so its copy would not be called")
        return node

    # -- where the rules are

    def _function(self, node):
        for arg in node.args.posonlyargs + node.args.args + node.args.kwonlyargs:
            if arg.arg != RULES_NAME and arg.annotation is not None \
                    and ast.unparse(arg.annotation).strip("'\"").rpartition(".")[2] == "Rules":
                self.fail(node, f"a function takes the rules as parameter {arg.arg!r}")
        self.scopes.append(node)
        self.generic_visit(node)
        self.scopes.pop()
        return node

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _function

    def _check_scope(self, node: ast.AST) -> None:
        if not any(RULES_NAME in _params(f) for f in self.scopes):
            self.fail(node, f"{RULES_NAME} is read in a function that has no parameter {RULES_NAME}")

    def visit_Attribute(self, node: ast.Attribute):
        if not (isinstance(node.value, ast.Name) and node.value.id == RULES_NAME):
            if node.attr in Rules._fields:
                self.fail(node, f"field {node.attr!r} of the rules is read from something other than {RULES_NAME}")
            return self.generic_visit(node)
        if node.attr not in Rules._fields:
            self.fail(node, f"{node.attr!r} is no field of the rules: allowed are {', '.join(Rules._fields)}")
        if not isinstance(node.ctx, ast.Load):
            self.fail(node, "a field of the rules is assigned")
        self._check_scope(node)
        if node.attr in self.constants:
            return ast.copy_location(ast.Constant(self.constants[node.attr]), node)
        return node  # an array: stays an argument

    def _is_rules(self, node: ast.AST | None) -> bool:
        """``R`` or ``Rules(*R)``."""
        if isinstance(node, ast.Name):
            return node.id == RULES_NAME
        return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Rules"
                and len(node.args) == 1 and not node.keywords and isinstance(node.args[0], ast.Starred)
                and self._is_rules(node.args[0].value) and isinstance(node.args[0].value, ast.Name))

    def _check_handed_on(self, value: ast.AST) -> None:
        """``value`` (``R`` or ``Rules(*R)``) is bound to ``R`` or is an argument of a midnight_env
        function (of a copy's function: at a parameter named ``R``)."""
        self._check_scope(value)
        parent = self.parents.get(value)
        if isinstance(parent, ast.Assign) and parent.value is value:
            if [ast.unparse(target) for target in parent.targets] != [RULES_NAME]:
                self.fail(parent, f"the rules are bound to a name other than {RULES_NAME}")
            return
        if isinstance(parent, ast.keyword) and parent.arg is not None:
            call, param = self.parents[parent], parent.arg
        elif isinstance(parent, ast.Call) and value in parent.args:
            call, at = parent, parent.args.index(value)
            if any(isinstance(a, ast.Starred) for a in call.args[:at]):
                self.fail(call, "the rules are handed on after a *argument")
            params = self.callees.get(getattr(call.func, "id", None), [])
            param = params[at] if at < len(params) else None
        else:
            self.fail(parent or value, "the rules are used other than as R.<field> or an argument")
        if not isinstance(call.func, ast.Name) or call.func.id not in self.package_names:
            self.fail(call, f"the rules are handed to {ast.unparse(call.func)}, which is no {PACKAGE} function")
        if call.func.id in self.callees and param != RULES_NAME:  # a function of the copies: R there too
            self.fail(call, f"{call.func.id} takes the rules as parameter {param!r}")

    def visit_Name(self, node: ast.Name):
        if node.id != RULES_NAME:
            return node
        parent = self.parents.get(node)
        if isinstance(parent, ast.Assign) and node in parent.targets and self._is_rules(parent.value):
            return node  # R = Rules(*R)
        if isinstance(parent, ast.Starred) and self._is_rules(self.parents.get(parent)):
            return node  # the R of Rules(*R), which is checked as a whole
        if not isinstance(node.ctx, ast.Load):
            self.fail(parent or node, f"{RULES_NAME} is bound to something other than the rules")
        self._check_handed_on(node)
        return node

    def visit_Call(self, node: ast.Call):
        if self._is_rules(node):
            self._check_handed_on(node)
        return self.generic_visit(node)


def specialize_module(text: str, module: str, constants: dict[str, int | bool], copies: dict[str, str],
                      functions: dict[str, dict[str, list[str]]] | None = None) -> str:
    """The source of the copy of ``module`` (its text ``text``): every scalar ``R.<field>`` written
    as its value in ``constants``, and the imports of copied modules pointing at their copies
    (``copies``: ``{module: name of its copy}``). ``functions`` (``{module: {function: positional
    parameters}}``, by default ``module``'s own) are the copied modules' functions: a call that hands
    them the rules must do so at a parameter named ``R``. Raises SpecializeError where ``module``
    reaches the rules another way."""
    tree = ast.parse(text, _path(module))
    functions = {module: _functions(tree)} if functions is None else functions
    tree = _Specializer(module, constants, copies, functions).run(tree)
    return (f"# {_path(module)} with the rule numbers as constants, written by {PACKAGE}.specialize\n"
            + ast.unparse(ast.fix_missing_locations(tree)) + "\n")


def specialized_sources(rules: Rules) -> dict[str, str]:
    """``{module name: source}`` of the copies for ``rules``, in import order; their names start
    with ``midnight_kernels_<hash of the rules>_<hash of the code>_``."""
    prefix = f"{PREFIX}_{rules_hash(rules)}_{code_hash(PACKAGE_DIR)}"
    copies = {m: f"{prefix}_{_short(m)}" for m in COPIED}
    texts = {m: _module_path(m, PACKAGE_DIR).read_text() for m in COPIED}
    functions = {m: _functions(ast.parse(texts[m])) for m in COPIED}
    constants = rule_constants(rules)
    return {copies[m]: specialize_module(texts[m], m, constants, copies, functions) for m in COPIED}


# ---------------------------------------------------------------------------------------------
# the kernel directory


def _write(path: Path, text: str) -> bool:
    """``text`` into ``path`` unless it holds it already (whether it wrote): rewriting would change
    the file's time, which numba's cache checks, and another process may be reading it (hence write
    and rename)."""
    if path.exists() and path.read_text() == text:
        return False
    temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    temporary.write_text(text)
    os.replace(temporary, path)
    return True


def prune(directory: Path, current: str, now: float | None = None) -> list[Path]:
    """Delete the files of the stale copies in ``directory`` (the module docstring says which, and
    why those), never those of ``current`` (the start of a copy's names, ``midnight_kernels_<rules
    hash>_<code hash>``); returns the files deleted."""
    now = time.time() if now is None else now
    groups: dict[str, list[Path]] = {}
    rules_of: dict[str, str | None] = {}
    for path in [*directory.glob(f"{PREFIX}_*"), *(directory / "__pycache__").glob(f"{PREFIX}_*")]:
        match = _COPY.match(path.name)
        if match:
            prefix = match.group(1) or match.group(3)
            groups.setdefault(prefix, []).append(path)
            rules_of[prefix] = match.group(2)
    current_rules = _COPY.match(f"{current}_").group(2)
    removed = []
    for prefix, paths in groups.items():
        if prefix == current:
            continue
        try:
            used = max(max(p.stat().st_mtime, p.stat().st_atime) for p in paths)
        except OSError:  # removed by another process meanwhile
            continue
        superseded = rules_of[prefix] == current_rules
        if now - used > (SUPERSEDED_AFTER if superseded else UNUSED_AFTER):
            for path in paths:
                try:
                    path.unlink()
                    removed.append(path)
                except OSError:
                    pass
    return removed


def check_private(directory: Path) -> None:
    """PermissionError unless only its owner can write ``directory``: the kernels there are Python
    modules, and numba's cache files beside them pickles, both run when loaded."""
    mode = directory.stat().st_mode
    if mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise PermissionError(f"{directory} is writable by others (mode {stat.filemode(mode)}): the kernels and "
                              "their cache run code when loaded, so only their owner may write there (chmod go-w)")


def specialized(rules: Rules, module: str = "vector_kernels") -> ModuleType | None:
    """The copy of ``module`` (one of ``COPIED``) compiled for ``rules``; None when the kernel
    directory cannot be written (with a warning, once per process). Raises SpecializeError when a
    copied module reaches the rules other than as ``R.<field>``."""
    global _warned
    if module not in {_short(m) for m in COPIED}:
        raise ValueError(f"module {module!r} is not allowed: allowed are {', '.join(_short(m) for m in COPIED)}")
    sources = specialized_sources(rules)
    wanted = next(name for name in sources if name.endswith(f"_{module}"))
    prefix = wanted[:-len(module) - 1]
    if wanted in sys.modules:  # loaded by this process already (the name says what it holds)
        return sys.modules[wanted]
    directory = kernel_dir()
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        check_private(directory)
        (directory / f"{prefix}.used").touch()  # before writing: pruning goes by this time
        wrote = [_write(directory / f"{name}.py", text) for name, text in sources.items()]
    except OSError as error:
        if not _warned:
            warnings.warn(f"midnight_env: cannot use {directory} for specialized kernels ({error}); the "
                          f"generic ones run. MIDNIGHT_KERNEL_DIR names another directory.", stacklevel=2)
            _warned = True
        return None
    if any(wrote):  # a new copy: the time to clear out old ones
        prune(directory, prefix)
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
