"""Settings as a ``@dataclass`` whose fields carry a docstring each, read from YAML and flags.

cleanrl writes its ``Args`` this way (tyro reads the docstrings); this is the same idea with
argparse only: every field becomes ``--field-name``, its docstring the help text, and
``--config FILE.yaml`` sets fields first (flags given on the command line win). Lists are
comma-separated on the command line (``--opponents expert,coward``), dicts ``key=value`` pairs.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import inspect
import textwrap
import typing
from pathlib import Path
from typing import Any, ClassVar

import yaml

from midnight_env.infra import checks


class ConfigFileError(ValueError):
    """A config file or value that does not fit the settings."""


MAX_WIDTH = 4096  # the widest hidden layer a setting may ask for (the shipped networks' widest is 512)
MAX_LAYERS = 16  # the most hidden layers (the shipped networks have two)
_TOO_DEEP = object()  # a value whose YAML is nested too deeply to read
NESTED_TOO_DEEPLY = "nested too deeply: allowed are settings nested a few levels deep (a list, a mapping of lists)"


def _shown(value: Any, most: int = 80) -> str:
    """``repr(value)``, cut to ``most`` characters for an error message."""
    text = repr(value)
    return text if len(text) <= most else text[:most - 3] + "..."


def check_seed_below(seed: Any, limit: int, why: str, what: str = "seed") -> int:
    """``seed`` if it is an integer 0..``limit``-1 (a trainer's seeds, inside the game seeds' range
    :data:`~midnight_env.infra.seeds.SEED_RANGE`), else ConfigFileError naming it, the range and ``why``
    (``what``: the setting, ``seed=...``, or a flag, ``--seed ...``)."""
    name = what if what.startswith("--") else f"{what}="
    return checks.integer(name, seed, 0, limit - 1, allowed=f"integers 0..{limit - 1} ({why})", error=ConfigFileError)


def check_counts(settings, least: int, *names: str, why: str = "") -> None:
    """ConfigFileError naming the first setting of ``names`` below ``least`` (counts: games, epochs ...;
    ``why``: what is counted, or what the least means, said after the range)."""
    for name in names:
        checks.integer(f"{name}=", getattr(settings, name), least, allowed=f"{least} or more{why}",
                       error=ConfigFileError)


def check_numbers(settings, low: float, high: float | None, *names: str, low_open: bool = False,
                  high_open: bool = False, why: str = "") -> None:
    """ConfigFileError naming the first setting of ``names`` outside ``low``..``high`` (``high`` None: no
    upper bound but a finite number; ``low_open``/``high_open``: that end excluded; ``why``: what the
    ends mean, said after the range). NaN is outside every range."""
    if high is None:
        allowed = f"numbers above {low:g}" if low_open else f"{low:g} or more"
    else:
        allowed = f"numbers in {'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
    for name in names:
        checks.number(f"{name}=", getattr(settings, name), low, high, low_open=low_open, high_open=high_open,
                      allowed=allowed + why, error=ConfigFileError)


def check_widths(settings, name: str, least_layers: int = 0) -> None:
    """ConfigFileError unless setting ``name`` lists ``least_layers`` to :data:`MAX_LAYERS` hidden
    layers, each 1 to :data:`MAX_WIDTH` units wide."""
    widths = list(getattr(settings, name))
    allowed = (f"allowed are {f'{least_layers} to' if least_layers else 'at most'} {MAX_LAYERS} widths, each a whole "
               f"number 1..{MAX_WIDTH}")
    if not least_layers <= len(widths) <= MAX_LAYERS:
        raise ConfigFileError(f"{name}={_shown(widths)} has {len(widths)} layers: {allowed}")
    for width in widths:
        if not 1 <= width <= MAX_WIDTH:
            raise ConfigFileError(f"{name}={_shown(widths)}: width {width!r} is out of range: {allowed}")


def field_docs(cls) -> dict[str, str]:
    """Docstrings written under each field of a dataclass (the cleanrl convention), a base class's
    first and a subclass's where it writes the field again."""
    docs = {}
    for klass in reversed(cls.__mro__):
        if klass is object:
            continue
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(klass)))
        except (OSError, TypeError):
            continue
        body = tree.body[0].body
        for node, after in zip(body, body[1:]):
            if (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and isinstance(after, ast.Expr)
                    and isinstance(after.value, ast.Constant) and isinstance(after.value.value, str)):
                docs[node.target.id] = " ".join(after.value.value.split())
    return docs


def _convert(name: str, kind, value: Any):
    """``value`` (from YAML or a flag's text) as the field's type, or ConfigFileError naming it."""
    given = value
    origin = typing.get_origin(kind)
    args = typing.get_args(kind)
    if origin is typing.Union or str(origin) == "types.UnionType":
        if value is None and type(None) in args:
            return None
        kind = next(a for a in args if a is not type(None))
        origin, args = typing.get_origin(kind), typing.get_args(kind)
    try:
        if kind is bool:
            if isinstance(value, str):
                low = value.lower()
                if low not in ("true", "false", "1", "0", "yes", "no"):
                    raise ValueError
                return low in ("true", "1", "yes")
            if not isinstance(value, bool):
                raise ValueError
            return value
        if kind in (int, float):
            if isinstance(value, bool):
                raise ValueError
            if kind is float:
                return float(value)
            if isinstance(value, int):  # exactly, however large (a float holds 53 bits)
                return value
            try:
                return int(value) if isinstance(value, str) else int(value.__index__())
            except (ValueError, TypeError, AttributeError):
                number = float(value)  # 1e6, 2.0: whole numbers written as floats
                if not number.is_integer():
                    raise ValueError from None
                return int(number)
        if kind is str:
            return "" if value is None else str(value)
        collection = origin in (list, tuple, dict) or kind is dict
        if collection and isinstance(value, str) and value.strip()[:1] in ("[", "{"):
            try:
                value = yaml.safe_load(value)  # YAML's own form, as in a config file: [256, 128], {rounds: 1}
            except RecursionError:  # brackets nested by the thousand: said below, outside this handler
                value = _TOO_DEEP
                raise ValueError from None
        if origin in (list, tuple):
            if isinstance(value, dict):
                raise ValueError
            items = [s.strip() for s in value.split(",") if s.strip()] if isinstance(value, str) else list(value or [])
            return origin(_convert(name, args[0], item) for item in items)
        if origin is dict or kind is dict:  # a bare `dict` field too (native's options)
            if isinstance(value, str):
                pairs = [p.partition("=") for p in value.split(",") if p.strip()]
                if any(not eq for _, eq, _ in pairs):
                    raise ValueError
                return {k.strip(): v.strip() for k, _, v in pairs}
            if not isinstance(value, dict):
                raise ValueError
            return dict(value)
    except (ValueError, TypeError, yaml.YAMLError):
        if value is _TOO_DEEP:
            raise ConfigFileError(f"setting {name}={_shown(given)} is {NESTED_TOO_DEEPLY}") from None
    else:
        return value
    raise ConfigFileError(f"setting {name}={_shown(given)} is not a valid {getattr(kind, '__name__', kind)}: "
                          f"allowed are {_allowed(kind)}")


def _allowed(kind) -> str:
    """The values a setting of type ``kind`` takes, in words, for error messages."""
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if kind is bool:
        return "true or false"
    if kind is int:
        return "whole numbers"
    if kind is float:
        return "numbers"
    if origin in (list, tuple):
        item = args[0] if args else str
        example = ["256", "128"] if item in (int, float) else ["expert", "search"]
        return (f"{getattr(item, '__name__', item)} values, comma-separated ({','.join(example)}) or as a YAML "
                f"list ([{', '.join(example)}])")
    if origin is dict or kind is dict:
        return "KEY=VALUE pairs, comma-separated (rounds=1,guests_per_player=2) or a YAML mapping ({rounds: 1})"
    return "text"


def load_yaml(path: str | Path) -> dict:
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"config file {path} does not exist")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        raise ConfigFileError(f"config file {path} is not valid YAML{where}: "
                              f"{getattr(err, 'problem', None) or err}") from None
    except UnicodeDecodeError as err:
        raise ConfigFileError(f"config file {path} is not UTF-8 text (byte {err.start + 1})") from None
    except RecursionError:
        raise ConfigFileError(f"config file {path} is {NESTED_TOO_DEEPLY}") from None
    if not isinstance(data, dict):
        raise ConfigFileError(f"config file {path} must hold a mapping of settings, got {type(data).__name__}")
    return data


def from_mapping(cls, data: dict, where: str = "config"):
    """An instance of dataclass ``cls`` from a mapping; unknown keys are refused by name, and a deleted
    setting (``cls.RETIRED``) unless it holds the value that had it do nothing (an old run's config)."""
    hints = typing.get_type_hints(cls)
    names = [f.name for f in dataclasses.fields(cls)]
    data = retire(cls, data, where)
    unknown = [k for k in data if k.replace("-", "_") not in names]
    if unknown:
        raise ConfigFileError(f"{where}: unknown setting {unknown[0]!r}: allowed are {', '.join(names)}")
    values = {k.replace("-", "_"): _convert(k, hints[k.replace("-", "_")], v) for k, v in data.items()}
    return cls(**values)


def retire(cls, data: dict, where: str) -> dict:
    """``data`` without the settings ``cls`` deleted (``cls.RETIRED``: name -> (the value that did
    nothing, why it went)); ConfigFileError for one set to anything else."""
    retired = getattr(cls, "RETIRED", {})
    for key, value in data.items():
        name = key.replace("-", "_")
        if name in retired and value != retired[name][0]:
            raise ConfigFileError(f"{where}: setting {name}={_shown(value)} was deleted ({retired[name][1]}): "
                                  f"allowed is only {retired[name][0]!r}, which did nothing")
    return {k: v for k, v in data.items() if k.replace("-", "_") not in retired}


def parse_args(cls, argv: list[str] | None = None, description: str | None = None):
    """Build ``cls`` from ``--config FILE`` (if the class has a ``config`` field) and flags."""
    hints = typing.get_type_hints(cls)
    docs = field_docs(cls)
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    for f in dataclasses.fields(cls):
        default = f.default if f.default is not dataclasses.MISSING else f.default_factory()
        parser.add_argument("--" + f.name.replace("_", "-"), dest=f.name, default=argparse.SUPPRESS,
                            help=f"{docs.get(f.name, '')} (default: {default!r})")
    given = vars(parser.parse_args(argv))
    data: dict = {}
    if "config" in hints and given.get("config"):
        data.update(load_yaml(given["config"]))
    data.update(given)
    return from_mapping(cls, data, where=given.get("config") or "command line")


def to_mapping(obj) -> dict:
    """The dataclass as plain YAML-able values (tuples as lists)."""
    out = {}
    for f in dataclasses.fields(obj):
        v = getattr(obj, f.name)
        out[f.name] = list(v) if isinstance(v, tuple) else v
    return out


@dataclasses.dataclass
class Settings:
    """The settings every trainer shares, and how settings are made: ``Args.load(path, overrides)``
    (a YAML file, then overrides), ``parse_args(Args, argv)`` (flags), ``args.check()`` (every
    range, ConfigFileError naming the first setting out of it; run when the settings are made and
    again when a trainer starts, as settings may change in between). A trainer's ``Args`` adds its
    own fields, writes a field again where its meaning differs, and extends :meth:`check`."""

    SEEDS: ClassVar[tuple[int, str]] = (2**32, "")
    """the trainer's seeds: below this limit (:func:`check_seed_below`), and why"""
    RUN_NAME: ClassVar[str] = "run"
    """the run folder's name without ``exp_name``: <RUN_NAME>-<variant>-<N>p-s<seed>"""
    RETIRED: ClassVar[dict[str, tuple[Any, str]]] = {}
    """deleted settings: name -> (the value that did nothing, read from old configs; why it went)"""

    config: str = ""
    """YAML file of settings (these field names); flags given on the command line override it"""
    exp_name: str = ""
    """name of the run (default <trainer>-<variant>-<N>p); its folder is <run_dir>/<exp_name>-s<seed>"""
    run_dir: str = "runs"
    """folder that receives the run folders"""
    seed: int = 1
    """seed of the run"""
    threads: int = 1
    """torch CPU threads (torch.set_num_threads): one by default, as the small networks here gain
    little from more and a machine busy with other work trains them 5-10x slower with two"""
    variant: str = "midnight_party"
    """rule set: midnight_party or hidden_castle"""
    num_players: int = 4
    """players per game"""
    options: dict = dataclasses.field(default_factory=dict)
    """rule options passed to the engine (e.g. pass_rule: always)"""

    def __post_init__(self):
        self.check()

    @classmethod
    def load(cls, path: str | Path | None = None, overrides: dict[str, Any] | None = None):
        """The settings of a YAML file (or the defaults) with ``overrides`` applied; ``config`` names the file."""
        data = load_yaml(path) if path else {}
        data.update(overrides or {})
        if path:
            data["config"] = str(path)
        return from_mapping(cls, data, where=str(path) if path else "overrides")

    def check(self) -> None:
        """ConfigFileError (one line naming the setting, its value and what is allowed) for a setting
        out of range; the game's set-up refused as :func:`~midnight_env.core.config.make_config` does."""
        from midnight_env.core.config import make_config

        check_seed_below(self.seed, *self.SEEDS)
        make_config(self.variant, self.num_players, **self.options)
        check_counts(self, 1, "threads")

    def run_name(self) -> str:
        """The run folder's name: <exp_name>-s<seed>, exp_name by default <RUN_NAME>-<variant>-<N>p."""
        return f"{self.exp_name or f'{self.RUN_NAME}-{self.variant}-{self.num_players}p'}-s{self.seed}"

    def as_mapping(self) -> dict[str, Any]:
        """Every setting as plain YAML-able values (what config.yaml and a model's metadata hold)."""
        return to_mapping(self)
