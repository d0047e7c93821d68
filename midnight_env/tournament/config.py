"""What a tournament is: the game, the agents and the seed, validated, and hashed into its key.

A configuration names the variant, the number of players, every rule option (resolved to its
value, so that a default changed later cannot pass for the same tournament), the agents as
given, the seed and the engine version. Its :attr:`TournamentConfig.key` hashes all of them:
results of different configurations never mix, in the schedule (every seed derives from the
key) or in the database (every row is keyed by it).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from midnight_env.arena.agent import fit_error
from midnight_env.arena.registry import AgentError, agent_infos, make_agent, plugin_errors, split_specs
from midnight_env.core.config import make_config
from midnight_env.core.engine import ENGINE_VERSION, Engine
from midnight_env.infra import checks
from midnight_env.infra.seeds import SEED_LIMIT, SEED_RANGE

FORMAT = "midnight-tournament/1"
DEFAULT_VARIANT = "midnight_party"
DEFAULT_PLAYERS = 4
# agents left out of the default tournament: too slow for a run of a few minutes, or needing
# options (a trained model's file)
SLOW_AGENTS = ("ppo", "openspiel_mcts")
# in a line-up of agents: every registered agent that can play the game, slow ones included
ALL_AGENTS = "all"


class TournamentError(ValueError):
    """Bad tournament input or a database that cannot be used; nothing was written.

    ``parameter`` names the argument at fault, where there is one (``seed``, ``games``,
    ``batch_size``, ``records``, ``db``, or ``resume`` when the fix is to pass ``resume=True``).
    Messages write an argument as ``name=value``, so that a caller with other names for the
    arguments (``midnight tournament`` and its flags) can reword them.
    """

    def __init__(self, message: str, parameter: str | None = None):
        super().__init__(message)
        self.parameter = parameter


@dataclass(frozen=True)
class TournamentConfig:
    variant: str
    num_players: int
    agents: tuple[str, ...]  # agent specs, as given (names in the leaderboard)
    seed: int = 0
    options: dict[str, Any] = field(default_factory=dict, hash=False)  # every rule option, resolved
    engine_version: str = ENGINE_VERSION
    # what `all` in the line-up left out, (name, why) each: a note, no part of the tournament's identity
    left_out: tuple[tuple[str, str], ...] = field(default=(), compare=False)

    def identity(self) -> dict:
        return {"format": FORMAT, "variant": self.variant, "num_players": self.num_players,
                "options": {k: self.options[k] for k in sorted(self.options)}, "agents": list(self.agents),
                "seed": self.seed, "engine_version": self.engine_version}

    @property
    def key(self) -> str:
        """Hash of the configuration: results of different configurations never mix."""
        text = json.dumps(self.identity(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def describe(self) -> str:
        opts = ", ".join(f"{k}={v}" for k, v in sorted(self.options.items()))
        return (f"{self.variant}, {self.num_players} players, agents {', '.join(self.agents)}, seed {self.seed}, "
                f"options {opts}, engine {self.engine_version}")

    def engine(self) -> Engine:
        return Engine(self.variant, self.num_players, **self.options)


def playable_agents(variant: str = DEFAULT_VARIANT, num_players: int = DEFAULT_PLAYERS,
                    options: dict[str, Any] | None = None, slow: bool = True) -> tuple[list[str], dict[str, str]]:
    """(names, left out) of the registered agents for this game: the names of those that can be made
    without options and can play it (``fit_error`` is None), in the order ``midnight agents`` lists
    them, and name -> why for the others (the set-ups the agent says it plays where it says, else
    its refusal; a plugin that failed to load too). ``slow=False`` leaves out :data:`SLOW_AGENTS`."""
    engine = Engine(variant, num_players, **(options or {}))
    names: list[str] = []
    left: dict[str, str] = {}
    for info in agent_infos():
        if not slow and info.name in SLOW_AGENTS:
            left[info.name] = "slow: left out of the default tournament"
            continue
        try:
            reason = fit_error(make_agent(info.name), engine)
        except (AgentError, ValueError, OSError) as err:  # needs options (a model file), or a missing package
            reason = str(err)
        if reason is None:
            names.append(info.name)
            continue
        said = info.setups(default=False)
        left[info.name] = f"it plays {said}" if said and not said.startswith("every set-up") else reason
    left.update(plugin_errors())
    return names, left


def default_agents(variant: str = DEFAULT_VARIANT, num_players: int = DEFAULT_PLAYERS,
                   options: dict[str, Any] | None = None) -> list[str]:
    """Every registered agent that needs no options and can play this game, except the slow ones."""
    return playable_agents(variant, num_players, options, slow=False)[0]


def _expand_all(specs: list[str], config) -> tuple[list[str], dict[str, str]]:
    """``specs`` with ``all`` replaced by every agent that can play ``config``'s game and is not
    in the line-up already; and what it left out, but the agents the line-up names (``ppo:path=X``
    names ``ppo``)."""
    playable, left = playable_agents(config.variant, config.num_players, config.options)
    expanded: list[str] = []
    for spec in specs:
        expanded += [n for n in playable if n not in specs] if spec == ALL_AGENTS else [spec]
    named = {spec.split(":")[0] for spec in specs}
    return expanded, {name: why for name, why in left.items() if name not in named}


def make_tournament_config(variant: str = DEFAULT_VARIANT, num_players: int = DEFAULT_PLAYERS,
                           agents: Sequence[str] | str | None = None, seed: int = 0,
                           options: dict[str, Any] | None = None) -> TournamentConfig:
    """Validate a tournament: the game set-up (ConfigError) and the agents (AgentError naming
    an unknown one; TournamentError for too few or repeated agents, or a bad seed).

    ``agents``: specs (a list, or one comma-separated line-up); None: :func:`default_agents`. The
    spec ``all`` stands for every registered agent that can play the game (:func:`playable_agents`,
    slow ones included) and is not named elsewhere in the line-up (``all,search:budget=6000`` adds
    one); what it left out, and why, is the config's ``left_out``."""
    config = make_config(variant, num_players, **(options or {}))
    left_out: dict[str, str] = {}
    if agents is None:
        specs = default_agents(config.variant, config.num_players, config.options)
    elif isinstance(agents, str):
        specs = split_specs(agents)
    else:
        specs = [str(a).strip() for a in agents]
    repeated = sorted({a for a in specs if specs.count(a) > 1})
    if repeated:
        raise TournamentError(f"agent {repeated[0]!r} is listed twice: every agent takes part once "
                              f"(give a variant a different option, e.g. {repeated[0].split(':')[0]}:budget=50)")
    if ALL_AGENTS in specs:
        specs, left_out = _expand_all(specs, config)
    needed = max(2, config.num_players)
    if len(specs) < needed:
        raise TournamentError(f"a {config.num_players}-player tournament needs at least {needed} agents, got "
                              f"{len(specs)} ({', '.join(specs) or 'none'})")
    engine = Engine(config)
    for spec in specs:
        reason = fit_error(make_agent(spec), engine)  # AgentError: unknown name or bad option
        if reason is not None:
            raise TournamentError(f"agent {spec!r} cannot play {config.variant} with {config.num_players} "
                                  f"players: {reason}")
    seed = checks.integer("seed=", seed, 0, SEED_LIMIT - 1, allowed=SEED_RANGE,
                          error=partial(TournamentError, parameter="seed"))
    return TournamentConfig(variant=config.variant, num_players=config.num_players, agents=tuple(specs),
                            seed=seed, options=dict(config.options), left_out=tuple(left_out.items()))
