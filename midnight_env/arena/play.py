"""Playing batches of games between agents: the loop behind ``simulate`` and ``tournament``.

Each game has a line-up (one agent per seat). Per decision, the games are grouped by the agent
holding the deciding seat and each agent decides its group in one call. With ``record=True``
the rolls are made one at a time so that every event can be written; the games are the same
either way (same dice streams, same agent streams).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from midnight_env.arena.agent import Agent, Decisions, decide
from midnight_env.core.dice import agent_streams
from midnight_env.core.engine import Engine
from midnight_env.core.records import Recorder
from midnight_env.core.state import MOVE, PLACE, ROLL, GameState


@dataclass
class BatchResult:
    seeds: np.ndarray  # (B,) game seeds
    lineups: np.ndarray  # (B, N) agent index per seat
    points: np.ndarray  # (B, N) final spooky points
    ranks: np.ndarray  # (B, N) 1 = winner (fewest points), ties share
    rolls: np.ndarray  # (B,) rolls made
    decisions: np.ndarray  # (B,) decisions made
    truncated: np.ndarray  # (B,) bool
    records: list[dict] | None
    state: GameState


def play_batch(engine: Engine, agents: Sequence[Agent], lineups: np.ndarray, seeds: Sequence[int],
               record: bool = False, agent_names: Sequence[str] | None = None,
               on_decision: Callable[[int], None] | None = None,
               on_step: Callable[[GameState], None] | None = None) -> BatchResult:
    """Play one batch of games to the end. ``lineups[g, seat]`` indexes ``agents``; ``on_step``
    sees the state after each step (a progress bar reads how far the games are)."""
    seeds = np.asarray(seeds, dtype=np.int64)
    lineups = np.asarray(lineups, dtype=np.int64).reshape(len(seeds), engine.num_players)
    state = engine.new_games(seeds)
    rng = agent_streams(seeds)
    b = len(seeds)
    games = np.arange(b)
    decisions = np.zeros(b, np.int64)
    names = list(agent_names) if agent_names is not None else [a.name for a in agents]
    recorder = Recorder(engine, seeds, [[names[k] for k in row] for row in lineups]) if record else None
    while True:
        if recorder is not None and (state.phase == ROLL).any():
            players = state.player.copy()
            recorder.rolls(players, engine.apply_roll(state))
            recorder.round_ends(state)
            continue
        deciding = (state.phase == PLACE) | (state.phase == MOVE)
        if not deciding.any():
            break
        actions = np.full(b, -1, np.int64)
        holder = lineups[games, state.player]
        for k in np.unique(holder[deciding]):
            group = np.flatnonzero(deciding & (holder == k))
            actions[group] = decide(agents[k], Decisions(engine, state, group, rng, seeds))
        decisions += deciding
        if recorder is not None:
            engine.check_actions(state, actions)
            recorder.decisions(state, actions)
            engine.apply_action(state, actions, check=False)
            recorder.round_ends(state)
        else:
            engine.step(state, actions)
        if on_decision is not None:
            on_decision(int(deciding.sum()))
        if on_step is not None:
            on_step(state)
    records = [recorder.record(state, i) for i in range(b)] if recorder is not None else None
    return BatchResult(seeds=seeds, lineups=lineups, points=state.spooky.copy(), ranks=engine.ranks(state),
                       rolls=state.rolls.copy(), decisions=decisions, truncated=state.truncated.copy(),
                       records=records, state=state)
