"""The built-in agents in the order ``midnight agents`` lists them (and the default tournament
seats them): the entry point ``midnight_agents`` of pyproject.toml names this list."""

from __future__ import annotations

from midnight_agents.card import CardAgent
from midnight_agents.expert import ExpertAgent
from midnight_agents.openspiel import MCTSAgent
from midnight_agents.optimal import OptimalAgent
from midnight_agents.ppo import SHIPPED_AGENTS, PPOAgent
from midnight_agents.search import SearchAgent
from midnight_agents.simple import CowardAgent, GreenHunterAgent, PlacerAgent, RandomAgent, RunnerAgent
from midnight_agents.value import SHIPPED_VALUE_AGENTS, ValueAgent
from midnight_env.arena.registry import AgentInfo

BUILTIN_AGENTS = [AgentInfo(cls.name, cls, cls.description)
                  for cls in (RandomAgent, RunnerAgent, CowardAgent, GreenHunterAgent, PlacerAgent, ExpertAgent,
                              CardAgent, SearchAgent, PPOAgent, OptimalAgent, ValueAgent)]
BUILTIN_AGENTS += SHIPPED_AGENTS + SHIPPED_VALUE_AGENTS
# the shipped trained agents, strongest kind first: where both kinds fit a game the value network
# beat the PPO policy in every strong-field tournament (LEADERBOARD.md)
SHIPPED_CHAMPIONS = [info.name for info in SHIPPED_VALUE_AGENTS + SHIPPED_AGENTS]
BUILTIN_AGENTS.append(AgentInfo(MCTSAgent.name, MCTSAgent, MCTSAgent.description))  # needs the openspiel extra
