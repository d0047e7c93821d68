"""Running a tournament: the games missing from the database, played batch by batch and stored.

Each batch (a *chunk* of game indices) is played by :func:`~midnight_env.tournament.chunk.play_chunk`
and committed in one transaction as it comes back (see :mod:`midnight_env.tournament.store` for what a kill loses).
The ``local`` backend plays the chunks one after the other in this process; the ``ray`` backend
(:mod:`midnight_env.tournament.ray_backend`) plays them as Ray tasks, on this machine's cores or
a cluster's, and this process stores each one as it arrives. A game's line-up and seed depend on
the configuration and its index only, and a game on its seed and its agents' decisions only, so
both backends store the same games. The leaderboard is computed from the database at the end,
so it counts every stored game, whichever run and backend played it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import ExitStack, closing
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import numpy as np

from midnight_env.arena.agent import Agent
from midnight_env.arena.registry import make_agent
from midnight_env.core.state import OVER
from midnight_env.infra import checks
from midnight_env.infra.provenance import code_commit
from midnight_env.tournament.chunk import Chunk, play_chunk
from midnight_env.tournament.config import TournamentConfig, TournamentError
from midnight_env.tournament.ratings import Standing, leaderboard
from midnight_env.tournament.schedule import Schedule
from midnight_env.tournament.store import (
    DEFAULT_DB,
    Results,
    ResultStore,
    check_database_path,
    check_writable,
    database_files,
    same_file,
)

BACKENDS = ("local", "ray")


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
    backend: str = "local"


def run_tournament(config: TournamentConfig, games: int, db: str | Path = DEFAULT_DB, resume: bool = False,
                   batch_size: int = 256, records: str | Path | None = None, progress: bool = True,
                   on_batch: Callable[[np.ndarray], None] | None = None, backend: str = "local",
                   address: str | None = None, workers: int | None = None,
                   on_start: Callable[[], None] | None = None) -> TournamentRun:
    """Play the games of ``config`` missing from ``db`` (0..games-1), batch by batch, and rate.

    ``resume`` consents to a database that holds other tournaments or an unfinished run of this
    one (see :meth:`ResultStore.open`); ``records`` also writes every game as a record (JSON Lines);
    ``on_batch`` is called with the game indices of each batch once the batch is committed (a
    test kills the process there to interrupt a run at a known point). ``backend="ray"`` plays
    the batches as Ray tasks: on the cluster at ``address``, else on Ray already started in this
    process, else on a Ray instance of ``workers`` CPUs (default: every core) started for the
    run; ``workers`` also caps the batches played at once (default: the cluster's CPUs).
    ``on_start`` is called once every input is checked, before the first game is played.
    """
    from tqdm import tqdm

    for name, value in (("games", games), ("batch_size", batch_size)):
        checks.integer(f"{name}=", value, 1, error=partial(TournamentError, parameter=name))
    checks.choice("backend=", backend, BACKENDS, error=partial(TournamentError, parameter="backend"))
    if workers is not None:
        checks.integer("workers=", workers, 1, error=partial(TournamentError, parameter="workers"))
    if backend == "local" and (address is not None or workers is not None):
        given = "address" if address is not None else "workers"
        raise TournamentError(f"{given}={address if address is not None else workers!r} is only for the ray backend: "
                              f"allowed with the local backend is no {given}", given)
    check_database_path(db)  # a device or FIFO is refused before anything is created beside it
    if records is not None:
        if Path(records).is_dir():
            raise TournamentError(f"records={str(records)!r} is a directory, not a file", "records")
        if any(same_file(records, f) for f in database_files(db)):
            raise TournamentError(f"records={str(records)!r} is the database {str(db)!r} (or one of its files): "
                                  "allowed is another file", "records")
        check_writable(records, "records=", "records")
    if backend == "ray":
        from midnight_env.tournament import ray_backend

        ray_backend.check_ray(address)
    with ExitStack() as stack:
        store = ResultStore.open(db, config, games, resume)  # refusals first: Ray takes seconds to start
        stack.callback(store.close)
        done = {g for g in store.done() if g < games}
        if backend == "ray" and len(done) < games:  # Ray only when there is something to play
            stack.enter_context(ray_backend.session(address, workers))
        agents = [make_agent(spec) for spec in config.agents]
        chunks = missing_games(games, done, batch_size)
        if on_start is not None:
            on_start()
        record = records is not None
        start = time.perf_counter()
        played = 0
        with tqdm(total=games, initial=len(done), unit="game", disable=not progress,
                  desc=f"{config.variant} {config.num_players}p", smoothing=0.1,
                  bar_format="{l_bar}{bar}| {n:.0f}/{total} [{elapsed}<{remaining}, {rate_fmt}]") as bar:
            within = BatchProgress(bar) if progress and backend == "local" else None
            if backend == "ray":
                outcomes = ray_backend.play_chunks(config, agents, chunks, record, workers)
            else:
                outcomes = _play_here(config, agents, chunks, record, within)
            with closing(outcomes):  # on any error, the backend's tasks in flight are cancelled at once
                for chunk in outcomes:
                    store.add(chunk.indices, chunk.deals, chunk.seeds, chunk.lineups, chunk.points,
                              chunk.ranks, chunk.rolls, chunk.decisions, chunk.truncated, chunk.commit,
                              chunk.records)
                    if within is not None:
                        within.batch_done(chunk)
                    else:
                        bar.update(len(chunk.indices))
                    played += len(chunk.indices)
                    if on_batch is not None:
                        on_batch(chunk.indices)
        elapsed = time.perf_counter() - start
        written = store.export_records(records, games) if records is not None else None
        results = store.results(games)
    return TournamentRun(config, games, played, elapsed, results, leaderboard(results), written,
                         store.others if store.is_new else [], backend)


class BatchProgress:
    """Moves a progress bar of games while a batch is played, not only when it is stored: a batch
    of a few hundred games takes half a minute, and its games end together. Each game counts the
    share of a typical game's rolls it has made (at most 0.95 until it is over); the typical game
    is the mean of the games finished so far, at first ``PRIOR_ROLLS``. The stored batch settles
    the count. The bar is read at most every ``EVERY`` seconds."""

    PRIOR_ROLLS = 100.0  # rolls of a first estimate of a game: about a 4-player game's
    EVERY = 0.5

    def __init__(self, bar):
        self.bar = bar
        self.shown = 0.0  # of the batch in play
        self.last = 0.0
        self.rolls = 0.0
        self.finished = 0

    def step(self, state) -> None:
        now = time.perf_counter()
        if now - self.last < self.EVERY:
            return
        self.last = now
        typical = self.rolls / self.finished if self.finished else self.PRIOR_ROLLS
        over = state.phase == OVER
        estimate = float(over.sum() + np.minimum(state.rolls[~over] / typical, 0.95).sum())
        if estimate > self.shown:
            self.bar.update(estimate - self.shown)
            self.shown = estimate

    def batch_done(self, chunk: Chunk) -> None:
        self.bar.update(len(chunk.indices) - self.shown)
        self.shown = 0.0
        self.rolls += float(chunk.rolls.sum())
        self.finished += len(chunk.indices)


def _play_here(config: TournamentConfig, agents: Sequence[Agent], chunks: Iterable[np.ndarray],
               record: bool, progress: BatchProgress | None = None) -> Iterator[Chunk]:
    """The local backend: the chunks in order, in this process."""
    schedule = Schedule(config)
    engine = config.engine()
    commit = code_commit()
    on_step = progress.step if progress is not None else None
    for indices in chunks:
        yield play_chunk(config, agents, indices, record, commit, schedule, engine, on_step)


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
