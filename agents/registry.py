"""Agents by name: ``make_agent("random")``, ``make_agent("search:budget=200")``.

A spec is ``name`` or ``name:key=value,key=value`` (options passed to the agent's constructor);
a bare first value is the option ``path`` (``ppo:runs/x/model.npz``).
``list_agents()`` gives (name, description) for every registered agent, for ``midnight agents``.
Plugins register with :func:`register`.
"""

from __future__ import annotations

from typing import Callable

from agents.base import Agent, RandomAgent


class AgentError(ValueError):
    """An unknown agent name or a bad agent option."""


_REGISTRY: dict[str, tuple[Callable[..., Agent], str]] = {}


def register(name: str, factory: Callable[..., Agent], description: str) -> None:
    _REGISTRY[name] = (factory, description)


def list_agents() -> list[tuple[str, str]]:
    return [(name, desc) for name, (_, desc) in _REGISTRY.items()]


def _parse_value(text: str):
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(text.lower(), text)


def parse_spec(spec: str) -> tuple[str, dict]:
    name, _, rest = spec.strip().partition(":")
    options = {}
    if rest:
        for k, part in enumerate(rest.split(",")):
            key, eq, value = part.partition("=")
            if not eq and k == 0 and part.strip():  # `ppo:models/x.npz`: a bare first value is the path
                options["path"] = part.strip()
                continue
            if not eq or not key:
                raise AgentError(f"agent option {part!r} in {spec!r} must be key=value")
            options[key.strip()] = _parse_value(value.strip())
    return name, options


def make_agent(spec: str) -> Agent:
    """Build an agent from its spec; AgentError names an unknown agent and lists the known ones."""
    name, options = parse_spec(spec)
    if name not in _REGISTRY:
        raise AgentError(f"unknown agent {name!r}: known agents are {', '.join(_REGISTRY)}")
    factory, _ = _REGISTRY[name]
    try:
        agent = factory(**options)
    except TypeError as err:
        raise AgentError(f"agent {spec!r}: bad option ({err})") from None
    if options:
        agent.name = spec
    return agent


register("random", RandomAgent, RandomAgent.description)
