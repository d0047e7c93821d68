"""Running a tournament: the games missing from the database, played batch by batch and stored.

Each batch is played with :func:`midnight_env.play.play_batch` and committed in one transaction
before the next starts (see :mod:`midnight_env.tournament.store` for what a kill loses); the
leaderboard is computed from the database at the end, so it counts every stored game, whichever
run played it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from midnight_env.provenance import code_commit
from midnight_env.registry import make_agent
from midnight_env.tournament.config import TournamentConfig, TournamentError
from midnight_env.tournament.ratings import Standing, leaderboard
from midnight_env.tournament.schedule import Schedule
from midnight_env.tournament.store import DEFAULT_DB, Results, ResultStore, check_writable, database_files, same_file


@dataclass
class TournamentRun:
    config: TournamentConfig
    games: int
    played: int  # games played by this run
    elapsed: float
    results: Results
    standings: list[Standing]
    records_written: int | None = None  # records in the ``records`` file (None: not asked for)
    started_beside: list[dict] = field(default_factory=list)  # other tournaments of the file, when this
    #                                                           one started in it now


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
    if records is not None:
        if Path(records).is_dir():
            raise TournamentError(f"records={str(records)!r} is a directory, not a file", "records")
        if any(same_file(records, f) for f in database_files(db)):
            raise TournamentError(f"records={str(records)!r} is the database {str(db)!r} (or one of its files): "
                                  "allowed is another file", "records")
        check_writable(records, "records=", "records")
    store = ResultStore.open(db, config, games, resume)
    try:
        done = {g for g in store.done() if g < games}
        schedule = Schedule(config)
        engine = config.engine()
        agents = [make_agent(spec) for spec in config.agents]
        commit = code_commit()
        start = time.perf_counter()
        played = 0
        with tqdm(total=games, initial=len(done), unit="game", disable=not progress,
                  desc=f"{config.variant} {config.num_players}p", smoothing=0.1) as bar:
            for chunk in missing_games(games, done, batch_size):
                lineups, seeds, deals = schedule.games(chunk)
                res = play_batch(engine, agents, lineups, seeds, record=records is not None,
                                 agent_names=list(config.agents))
                store.add(chunk, deals, seeds, lineups, res.points, res.ranks, res.rolls, res.decisions,
                          res.truncated, commit, res.records)
                bar.update(len(chunk))
                played += len(chunk)
                if on_batch is not None:
                    on_batch(chunk)
        elapsed = time.perf_counter() - start
        written = store.export_records(records, games) if records is not None else None
        results = store.results(games)
    finally:
        store.close()
    return TournamentRun(config, games, played, elapsed, results, leaderboard(results), written,
                         store.others if store.is_new else [])


def missing_games(games: int, done: set[int], batch_size: int) -> Iterator[np.ndarray]:
    """The indices 0..games-1 not in ``done``, in order, ``batch_size`` at a time (never all of
    them at once: a tournament of any length fits in memory)."""
    chunk: list[int] = []
    for g in range(games):
        if g in done:
            continue
        chunk.append(g)
        if len(chunk) == batch_size:
            yield np.array(chunk, np.int64)
            chunk = []
    if chunk:
        yield np.array(chunk, np.int64)
