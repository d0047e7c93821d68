"""Agents for midnight-env behind one interface (``agents.base.Agent``) and a name registry."""

from agents.base import Agent, Decisions, RandomAgent
from agents.registry import AgentError, list_agents, make_agent, register
from agents.simple import CowardAgent, GreenHunterAgent, PlacerAgent, RunnerAgent
from agents.expert import ExpertAgent
from agents.search import SearchAgent

for _cls in (RunnerAgent, CowardAgent, GreenHunterAgent, PlacerAgent, ExpertAgent, SearchAgent):
    register(_cls.name, _cls, _cls.description)

# trained policies (numpy inference): ppo:path=FILE, and the models shipped in agents/models
from agents.ppo import PPOAgent, shipped_description, shipped_factory, shipped_models  # noqa: E402

register(PPOAgent.name, PPOAgent, PPOAgent.description)
for _name, _stem, _meta in shipped_models():
    register(_name, shipped_factory(_stem), shipped_description(_meta))

__all__ = ["Agent", "Decisions", "RandomAgent", "AgentError", "list_agents", "make_agent", "register"]
