"""Running a tournament: the games missing from the database, played batch by batch and stored.

Each batch is played with :func:`midnight_env.play.play_batch` and committed in one transaction
before the next starts (see :mod:`midnight_env.tournament.store` for what a kill loses); the
leaderboard is computed from the database at the end, so it counts every stored game, whichever
run played it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from midnight_env.provenance import code_commit
from midnight_env.registry import make_agent
from midnight_env.tournament.config import TournamentConfig, TournamentError
from midnight_env.tournament.ratings import Standing, leaderboard
from midnight_env.tournament.schedule import Schedule
from midnight_env.tournament.store import DEFAULT_DB, Results, ResultStore


@dataclass
class TournamentRun:
    config: TournamentConfig
    games: int
    played: int  # games played by this run
    elapsed: float
    results: Results
    standings: list[Standing]
    records_written: int | None = None  # records in the ``records`` file (None: not asked for)


def run_tournament(config: TournamentConfig, games: int, db: str | Path = DEFAULT_DB, resume: bool = False,
                   batch_size: int = 256, records: str | Path | None = None, progress: bool = True,
                   on_batch: Callable[[np.ndarray], None] | None = None) -> TournamentRun:
    """Play the games of ``config`` missing from ``db`` (0..games-1), batch by batch, and rate.

    ``resume`` consents to a database that holds other tournaments or an unfinished run of this
    one (see :meth:`ResultStore.open`); ``records`` also writes every game as a record (JSON Lines);
    ``on_batch`` is called with the game indices of each batch once the batch is committed (a
    test kills the process there to interrupt a run at a known point).
    """
    from tqdm import tqdm

    from midnight_env.play import play_batch

    for name, value in (("games", games), ("batch_size", batch_size)):
        if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 1:
            raise TournamentError(f"{name}={value!r} is out of range: allowed are integers 1 or more", name)
    if records is not None and Path(records).is_dir():
        raise TournamentError(f"records={str(records)!r} is a directory, not a file", "records")
    store = ResultStore.open(db, config, games, resume)
    try:
        todo = np.array(sorted(set(range(games)) - store.done()), np.int64)
        schedule = Schedule(config)
        engine = config.engine()
        agents = [make_agent(spec) for spec in config.agents]
        commit = code_commit()
        start = time.perf_counter()
        with tqdm(total=games, initial=games - len(todo), unit="game", disable=not progress,
                  desc=f"{config.variant} {config.num_players}p", smoothing=0.1) as bar:
            for first in range(0, len(todo), batch_size):
                chunk = todo[first:first + batch_size]
                lineups, seeds, deals = schedule.games(chunk)
                res = play_batch(engine, agents, lineups, seeds, record=records is not None,
                                 agent_names=list(config.agents))
                store.add(chunk, deals, seeds, lineups, res.points, res.ranks, res.rolls, res.decisions,
                          res.truncated, commit, res.records)
                bar.update(len(chunk))
                if on_batch is not None:
                    on_batch(chunk)
        elapsed = time.perf_counter() - start
        written = store.export_records(records, games) if records is not None else None
        results = store.results(games)
    finally:
        store.close()
    return TournamentRun(config, games, len(todo), elapsed, results, leaderboard(results), written)
