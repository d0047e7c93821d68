"""Agents by name: the built-in ones, plugins of other packages, and agents in any module.

A *spec* names an agent and its options::

    expert                               a registered name
    search:budget=200,turns=2            options, passed to the agent's constructor
    ppo:runs/x/model.npz                 a bare first value is the option ``path``
    mybots.greedy:Greedy                 an Agent class (or a factory) in an importable module
    mybots.greedy:Greedy:depth=2         ... with options

Names come from, in this order (the first one found wins):

1. :func:`register`, called in this process;
2. entry points of the group ``midnight_env.agents`` of the installed distributions, this one's
   own built-in agents first (``[project.entry-points."midnight_env.agents"]`` in pyproject.toml).
   An entry point names an :class:`~midnight_env.arena.agent.Agent` subclass or a factory that returns
   one (the agent is called like the entry point), or an :class:`AgentInfo` or a list of them
   (a package with many agents: they keep their own names). An entry point is loaded when its
   name is asked for, or when every name is listed.

A line-up of seats is comma-separated specs; a comma followed by ``key=value`` continues the
options of the spec before it, so ``search:budget=10,turns=2,expert`` is two agents
(:func:`split_specs`).
"""

from __future__ import annotations

import importlib
import inspect
import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass, replace
from importlib import metadata
from typing import Any

from midnight_env.arena.agent import Agent, AgentError

ENTRY_POINT_GROUP = "midnight_env.agents"
DISTRIBUTION = "midnight-env"  # this project's own distribution: its agents are listed first
_MODULE_SPEC = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*$")
_IDENTIFIER = re.compile(r"^[A-Za-z_]\w*$")
_OPTION = re.compile(r"^\s*[A-Za-z_]\w*\s*=")  # `key=value`: continues the spec before it


@dataclass(frozen=True)
class AgentInfo:
    """One named agent: how to make it (``factory(**options)``), what it does, where it comes from,
    and which set-ups it plays (``plays``: words, or a function returning them; by default the
    factory's own ``plays``, see :meth:`setups`)."""

    name: str
    factory: Callable[..., Agent]
    description: str = ""
    source: str = "registered"  # "midnight-env", "plugin mybots 1.0", "registered"
    plays: str | Callable[[], str] = ""

    def setups(self, default: bool = True) -> str:
        """Which set-ups the agent plays, in words, without making it: its ``plays``, else its
        factory's (an Agent class's ``plays``), else (``default``) what can be said of an agent
        that does not say; without ``default`` then ``""``."""
        for said in (self.plays, getattr(self.factory, "plays", "")):
            if callable(said):
                try:
                    said = said()
                except Exception as err:  # a plugin's own failure: said, never fatal to the listing
                    return f"unknown ({type(err).__name__}: {err})"
            if isinstance(said, str) and said.strip():
                return " ".join(said.split())
        if not default:
            return ""
        if inspect.isclass(self.factory) and not hasattr(self.factory, "check_engine"):
            return "every set-up (the agent does not say; it refuses none)"
        return "not said (a tournament asks the agent before its first game)"


_REGISTERED: dict[str, AgentInfo] = {}  # register(), and the entry points loaded so far
_BROKEN: dict[str, str] = {}  # entry point name -> why it could not be loaded
_loaded: set[str] = set()  # entry point names loaded (or failed)


def register(name: str, factory: Callable[..., Agent], description: str = "",
             plays: str | Callable[[], str] = "") -> None:
    """Make ``factory`` (an Agent class or a function returning an Agent) known as ``name``;
    ``plays`` says which set-ups it plays (by default the factory's own ``plays``)."""
    if not isinstance(name, str) or not _IDENTIFIER.match(name.replace("-", "_")):
        raise AgentError(f"agent name {name!r} is not allowed: allowed are letters, digits, '_' and '-'")
    _REGISTERED[name] = AgentInfo(name, factory, description or _describe(factory), plays=plays)


def _describe(factory) -> str:
    text = getattr(factory, "description", "") or (inspect.getdoc(factory) or "").split("\n\n")[0]
    return " ".join(str(text).split())


# ------------------------------------------------------------------------------------------------
# entry points


def _entry_points() -> list[metadata.EntryPoint]:
    """The group's entry points: this distribution's first, then by distribution; each
    distribution's in the order it declares them."""
    points = list(metadata.entry_points(group=ENTRY_POINT_GROUP))

    def order(ep: metadata.EntryPoint):
        dist = ep.dist.name if ep.dist is not None else ""
        return (dist != DISTRIBUTION, dist)

    return sorted(points, key=order)


def _origin(ep: metadata.EntryPoint) -> str:
    if ep.dist is None:
        return f"entry point {ep.name} = {ep.value}"
    if ep.dist.name == DISTRIBUTION:
        return DISTRIBUTION
    return f"plugin {ep.dist.name} {ep.dist.version}"


def _load(ep: metadata.EntryPoint) -> None:
    """Register what entry point ``ep`` names; a failure is kept in ``_BROKEN`` under its name."""
    _loaded.add(ep.name)
    where = f"entry point '{ep.name} = {ep.value}'" + (f" of {ep.dist.name} {ep.dist.version}" if ep.dist else "")
    try:
        target = ep.load()
    except Exception as err:  # a plugin's own import error: reported, never fatal to the others
        _BROKEN[ep.name] = f"agent plugin {ep.name!r} ({where}) failed to load: {type(err).__name__}: {err}"
        return
    infos = _infos_of(target, ep.name, _origin(ep))
    if infos is None:
        _BROKEN[ep.name] = (f"agent plugin {ep.name!r} ({where}) names {target!r}: allowed are an Agent "
                            f"subclass, a function returning an Agent, or AgentInfo entries")
        return
    for info in infos:
        if info.name in _REGISTERED:  # the first one found keeps the name
            warnings.warn(f"agent {info.name!r} of {info.source} is ignored: the name is taken by "
                          f"{_REGISTERED[info.name].source}", stacklevel=3)
            continue
        _REGISTERED[info.name] = info


def _infos_of(target: Any, name: str, source: str) -> list[AgentInfo] | None:
    if isinstance(target, AgentInfo):
        return [replace(target, source=source)]
    if isinstance(target, (list, tuple)) and all(isinstance(t, AgentInfo) for t in target):
        return [replace(t, source=source) for t in target]
    if callable(target) and not isinstance(target, Agent):
        return [AgentInfo(name, target, _describe(target), source)]
    return None


def _load_all() -> None:
    for ep in _entry_points():
        if ep.name not in _loaded:
            _load(ep)


def _find(name: str) -> AgentInfo | None:
    """The agent registered as ``name``: this distribution's own agents, then the entry point of
    that name, then every one."""
    for ep in _entry_points():
        if name in _REGISTERED:
            return _REGISTERED[name]
        if ep.name not in _loaded and (ep.name == name or (ep.dist is not None and ep.dist.name == DISTRIBUTION)):
            _load(ep)
    if name in _REGISTERED:
        return _REGISTERED[name]
    _load_all()  # a name may come from an entry point that lists several agents
    return _REGISTERED.get(name)


def agent_infos() -> list[AgentInfo]:
    """Every known agent, the built-in ones first (loads every entry point of the group)."""
    _load_all()
    return list(_REGISTERED.values())


def list_agents() -> list[tuple[str, str]]:
    """(name, description) of every known agent, for ``midnight agents``."""
    return [(info.name, info.description) for info in agent_infos()]


def plugin_errors() -> dict[str, str]:
    """Entry point name -> why it could not be loaded (after :func:`agent_infos`)."""
    return dict(_BROKEN)


# ------------------------------------------------------------------------------------------------
# specs


def split_specs(text: str) -> list[str]:
    """The specs of a comma-separated line-up; ``a:x=1,y=2,b`` is ``["a:x=1,y=2", "b"]``."""
    specs: list[str] = []
    for part in str(text).split(","):
        if specs and _OPTION.match(part) and ":" in specs[-1]:
            specs[-1] += "," + part.strip()
        elif part.strip():
            specs.append(part.strip())
    return specs


def _parse_value(text: str):
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(text.lower(), text)


def _parse_options(text: str, spec: str) -> dict[str, Any]:
    options: dict[str, Any] = {}
    for k, part in enumerate(text.split(",")):
        key, eq, value = part.partition("=")
        if not eq and k == 0 and part.strip():  # `ppo:models/x.npz`: a bare first value is the path
            options["path"] = part.strip()
            continue
        if not eq or not key.strip():
            raise AgentError(f"agent option {part!r} in {spec!r} must be key=value")
        if key.strip() in options:
            raise AgentError(f"agent option {key.strip()!r} is given twice in {spec!r}")
        options[key.strip()] = _parse_value(value.strip())
    return options


def parse_spec(spec: str) -> tuple[str, dict]:
    """(name, options) of a spec; the name of a module's agent is ``module:attribute``."""
    spec = str(spec).strip()
    name, _, rest = spec.partition(":")
    if rest and _find(name) is None and _MODULE_SPEC.match(name):
        attribute, _, rest = rest.partition(":")
        if _IDENTIFIER.match(attribute):
            name = f"{name}:{attribute}"
    return name, (_parse_options(rest, spec) if rest else {})


def _module_agent(name: str) -> AgentInfo:
    """The agent class or factory ``module:attribute`` (the module must be importable)."""
    module_name, _, attribute = name.partition(":")
    try:
        module = importlib.import_module(module_name)
    except Exception as err:
        raise AgentError(f"agent {name!r}: module {module_name!r} cannot be imported "
                         f"({type(err).__name__}: {err})") from None
    target = getattr(module, attribute, None)
    if target is None:
        raise AgentError(f"agent {name!r}: module {module_name!r} has no attribute {attribute!r}")
    infos = _infos_of(target, name, f"module {module_name}")
    if infos is None or len(infos) != 1:
        raise AgentError(f"agent {name!r} names {target!r}: allowed are an Agent subclass or a function "
                         "returning an Agent")
    return infos[0]


def _check_options(info: AgentInfo, options: dict[str, Any], spec: str) -> None:
    """AgentError naming an option the agent does not take, or a value of the wrong type (judged
    by the default of the constructor's parameter)."""
    try:
        parameters = inspect.signature(info.factory).parameters
    except (TypeError, ValueError):
        return  # no signature to check against (a builtin): the factory judges
    takes_any = any(p.kind is p.VAR_KEYWORD for p in parameters.values())
    named = {k: p for k, p in parameters.items() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    for key, value in options.items():
        if key not in named:
            if takes_any:
                continue
            allowed = ", ".join(named) or "none"
            raise AgentError(f"agent {spec!r}: unknown option {key!r}: {info.name} takes {allowed}")
        default = named[key].default
        if default is inspect.Parameter.empty or default is None:
            continue
        ok = (isinstance(value, bool) if isinstance(default, bool)
              else isinstance(value, int) and not isinstance(value, bool) if isinstance(default, int)
              else isinstance(value, (int, float)) and not isinstance(value, bool) if isinstance(default, float)
              else isinstance(value, type(default)))
        if not ok:  # by hand: a type judged by the parameter's default, any of bool, int, float, str
            kind = {bool: "true or false", int: "integers", float: "numbers", str: "text"}.get(type(default),
                                                                                          type(default).__name__)
            raise AgentError(f"agent {spec!r}: option {key}={value!r} is not allowed: allowed are {kind}")


def make_agent(spec: str) -> Agent:
    """Build an agent from its spec; AgentError names an unknown agent (listing the known ones), a
    bad option, or a plugin that failed to load."""
    name, options = parse_spec(spec)
    info = _find(name)
    if info is None:
        if name in _BROKEN:
            raise AgentError(_BROKEN[name])
        if ":" in name:
            info = _module_agent(name)
        else:
            known = ", ".join(_REGISTERED)
            broken = f"; plugins that failed to load: {', '.join(_BROKEN)}" if _BROKEN else ""
            raise AgentError(f"unknown agent {name!r}: known agents are {known}, or module:Attribute for an "
                             f"agent in an importable module{broken}")
    _check_options(info, options, spec)
    try:
        agent = info.factory(**options)
    except ValueError:  # the agent's own judgement of its options or files (ModelError ...): as it is
        raise
    except TypeError as err:
        raise AgentError(f"agent {spec!r}: bad option ({err})") from None
    except Exception as err:
        raise AgentError(f"agent {spec!r} failed to start ({type(err).__name__}: {err})") from None
    if not callable(getattr(agent, "act", None)):
        raise AgentError(f"agent {spec!r}: {info.factory!r} returned {agent!r}, which has no act(decisions) method")
    if options or ":" in name:
        agent.name = str(spec).strip()
    return agent


__all__ = ["AgentError", "AgentInfo", "ENTRY_POINT_GROUP", "register", "make_agent",
           "list_agents", "agent_infos", "plugin_errors", "parse_spec", "split_specs"]
