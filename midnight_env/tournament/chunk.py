"""A chunk of a tournament's games: played, and its outcome as the store takes it.

The one place games of a tournament are played, by either backend: the ``local`` one in this
process (:mod:`midnight_env.tournament.run`), the ``ray`` one in Ray tasks
(:mod:`midnight_env.tournament.ray_backend`, which sends :class:`Chunk` back).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from midnight_env.arena.agent import Agent
from midnight_env.core.engine import ENGINE_VERSION
from midnight_env.tournament.config import TournamentConfig
from midnight_env.tournament.schedule import Schedule


@dataclass
class Chunk:
    """The outcome of a chunk of games, as the store takes it (what a Ray task sends back)."""

    indices: np.ndarray  # (n,) game indices
    deals: np.ndarray  # (n,)
    seeds: np.ndarray  # (n,)
    lineups: np.ndarray  # (n, N) agent index per seat
    points: np.ndarray  # (n, N)
    ranks: np.ndarray  # (n, N)
    rolls: np.ndarray  # (n,)
    decisions: np.ndarray  # (n,)
    truncated: np.ndarray  # (n,) bool
    records: list[dict] | None
    commit: str | None  # the code that played them
    engine_version: str = ENGINE_VERSION


def play_chunk(config: TournamentConfig, agents: Sequence[Agent], indices: np.ndarray, record: bool = False,
               commit: str | None = None, schedule: Schedule | None = None, engine=None, on_step=None) -> Chunk:
    """Play games ``indices`` of the tournament: the one place a chunk is played, by either backend.
    ``commit`` is the code's (:func:`~midnight_env.infra.provenance.code_commit`, looked up once per
    process by the caller: it runs git); ``on_step`` is :func:`~midnight_env.arena.play.play_batch`'s."""
    from midnight_env.arena.play import play_batch

    schedule = schedule if schedule is not None else Schedule(config)
    engine = engine if engine is not None else config.engine()
    indices = np.asarray(indices, np.int64)
    lineups, seeds, deals = schedule.games(indices)
    res = play_batch(engine, agents, lineups, seeds, record=record, agent_names=list(config.agents), on_step=on_step)
    return Chunk(indices, deals, seeds, lineups, res.points, res.ranks, res.rolls, res.decisions, res.truncated,
                 res.records, commit)
