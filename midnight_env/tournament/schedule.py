"""The balanced schedule: the line-up and seed of every game of a tournament.

Games come in *deals*: a deal draws as many agents as there are seats and plays N seat-rotated
copies of one game, all with the same game seed. The engine's dice stream depends on the game
seed alone, so every copy sees the same sequence of die faces: each agent of the deal meets that
luck once from every seat (duplicate play, as in duplicate bridge). The luck of the dice and of
the seat then cancels between the agents of a deal instead of adding to the noise of their
comparison. The agent sets of the deals cycle through every combination of N of the K agents
(shuffled once per cycle), so after every complete cycle each agent has played every seat
equally often and met every other agent equally often (for very many combinations, random
sets: about equally often). Game ``g`` is copy ``g % N`` of deal ``g // N``; its line-up and
seed depend on the configuration and ``g`` only, so a tournament can be extended or split
across workers.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from itertools import combinations

import numpy as np

from midnight_env.infra.seeds import derived_seed
from midnight_env.tournament.config import TournamentConfig

DEFAULT_GAMES = 1000  # at least; rounded up to complete schedule cycles (see default_games)
MAX_COMBINATIONS = 50_000  # beyond this many agent sets per cycle, deals draw random sets


def default_games(config: TournamentConfig, minimum: int = DEFAULT_GAMES) -> int:
    """At least ``minimum`` games, rounded up to complete cycles of the schedule (every agent set
    once) when a cycle is short enough, else to complete deals."""
    n = config.num_players
    cycle = math.comb(len(config.agents), n) * n
    unit = cycle if cycle <= 2 * minimum else n
    return unit * math.ceil(minimum / unit)


class Schedule:
    """Line-up and seed of every game of a tournament (see the module docstring)."""

    def __init__(self, config: TournamentConfig):
        self.config = config
        self.num_players = config.num_players
        k = len(config.agents)
        self.num_agents = k
        count = math.comb(k, self.num_players)
        self._sets = list(combinations(range(k), self.num_players)) if count <= MAX_COMBINATIONS else None
        self._cycles: dict[int, np.ndarray] = {}

    def deal_seed(self, deal: int) -> int:
        return derived_seed(self.config.key, "deal", deal)

    def deal_agents(self, deal: int) -> np.ndarray:
        """Agents of a deal in seat order of its first copy."""
        rng = np.random.default_rng(derived_seed(self.config.key, "seats", deal))
        if self._sets is not None:
            cycle, pos = divmod(deal, len(self._sets))
            if cycle not in self._cycles:
                shuffle = np.random.default_rng(derived_seed(self.config.key, "cycle", cycle))
                order = shuffle.permutation(len(self._sets))
                self._cycles = {cycle: order}  # one cycle at a time: deals are asked for in order
            members = np.array(self._sets[self._cycles[cycle][pos]])
        else:
            members = rng.choice(self.num_agents, self.num_players, replace=False)
        return rng.permutation(members)

    def games(self, indices: Iterable[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(lineups (n, N) agent index per seat, seeds (n,), deals (n,)) of games ``indices``."""
        idx = np.asarray(list(indices), dtype=np.int64)
        n = self.num_players
        lineups = np.empty((len(idx), n), np.int64)
        seeds = np.empty(len(idx), np.int64)
        deals = idx // n
        cache: dict[int, tuple[np.ndarray, int]] = {}
        for j, (g, d) in enumerate(zip(idx, deals)):
            if d not in cache:
                cache[int(d)] = (self.deal_agents(int(d)), self.deal_seed(int(d)))
            members, seed = cache[int(d)]
            lineups[j] = np.roll(members, int(g % n))  # copy r: every agent moves r seats on
            seeds[j] = seed
        return lineups, seeds, deals
