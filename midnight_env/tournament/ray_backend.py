"""The ``ray`` backend: a tournament's missing games played as Ray tasks, stored here as they arrive.

The games go out in chunks (``batch_size`` games each), one Ray task per chunk; each task plays
its chunk with :func:`midnight_env.tournament.chunk.play_chunk`, exactly as the ``local`` backend
does, and sends the outcome back; the driver stores every chunk in the one SQLite database as
soon as it arrives (in whatever order the chunks finish: rows are keyed by game index). So:

- the same seed and agents give the same games, and the same table, as the ``local`` backend;
- ``resume`` sends out only the games the database lacks, whichever backend played the others;
- a worker that dies in a chunk (killed, out of memory, its node lost) has that chunk played again
  by Ray (``max_retries``); only a finished chunk is ever stored, and the store's INSERT OR IGNORE
  keeps a game from being counted twice in any case;
- the agents are built here, from their specs, and sent to the workers once through Ray's object
  store: a trained model's weights (``ppo:path=...``, the shipped models) travel inside its
  agent, so no file needs copying to the cluster's nodes. The nodes need midnight-env installed
  (the same engine version: a chunk played by another one is refused), and an agent given as
  ``module:Attribute`` needs its module importable there (Ray's ``runtime_env`` can ship it).

Without an address, and with no Ray started in this process, the run starts a Ray instance of
its own on this machine's cores, bound to the loopback address, and stops it at the end
(:func:`midnight_env.infra.ray_cluster.ray_session`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager

import numpy as np

from midnight_env.arena.agent import Agent
from midnight_env.infra import ray_cluster
from midnight_env.tournament.chunk import Chunk, play_chunk
from midnight_env.tournament.config import TournamentConfig, TournamentError

RETRIES = 3  # a chunk whose worker dies is played again up to this many times
TASK_NAME = "tournament_chunk"  # a worker playing a chunk shows as "ray::tournament_chunk" in ps


def check_ray(address: str | None) -> None:
    """TournamentError (``backend``, ``address``) when Ray is not installed or no cluster answers
    at ``address`` (or ``RAY_ADDRESS``): checked before the database is touched."""
    import os

    try:
        ray_cluster.require_ray()
        import ray

        address = address or os.environ.get("RAY_ADDRESS") or None
        if address is not None and not ray.is_initialized():
            ray_cluster.check_address(address)
    except ray_cluster.RayUnavailable as err:
        raise TournamentError(f"{err}" + (", or play with the local backend" if err.parameter == "backend" else ""),
                              err.parameter) from None


# -- the worker's side ----------------------------------------------------------------------------

_worker_cache: dict = {}  # what a worker process keeps between chunks: the schedule, engine, commit


def tournament_chunk(config: TournamentConfig, agents: Sequence[Agent], indices: np.ndarray, record: bool) -> Chunk:
    """Play one chunk in a Ray worker (the task; see :func:`play_chunk`)."""
    from midnight_env.infra.provenance import code_commit
    from midnight_env.infra.threads import PARALLEL_FROM
    from midnight_env.tournament.schedule import Schedule

    if len(indices) >= PARALLEL_FROM:
        import numba

        numba.set_num_threads(1)  # the task holds one CPU: numba's threads would wait for the others' cores
    if _worker_cache.get("key") != config.key:
        _worker_cache.update(key=config.key, schedule=Schedule(config), engine=config.engine())
    if "commit" not in _worker_cache:
        _worker_cache["commit"] = code_commit()
    return play_chunk(config, agents, indices, record, _worker_cache["commit"], _worker_cache["schedule"],
                      _worker_cache["engine"])


# -- the driver's side ----------------------------------------------------------------------------


@contextmanager
def session(address: str | None = None, workers: int | None = None) -> Iterator[None]:
    """Ray for a run (:func:`midnight_env.infra.ray_cluster.ray_session`); TournamentError (``address``)
    when no cluster can be joined there."""
    try:
        with ray_cluster.ray_session(address, workers):
            yield
    except ray_cluster.RayUnavailable as err:
        raise TournamentError(str(err), err.parameter) from None


def play_chunks(config: TournamentConfig, agents: Sequence[Agent], chunks: Iterable[np.ndarray], record: bool,
                workers: int | None = None) -> Iterator[Chunk]:
    """The outcomes of ``chunks``, as they finish on Ray (in a :func:`session`; see the module docstring).

    ``workers`` chunks are in flight at once (default: two per CPU of the cluster, so that no
    CPU waits for the driver between chunks); the chunks are drawn from ``chunks`` as the earlier
    ones finish, never all at once.
    """
    import ray
    from ray.exceptions import RayError, RayTaskError

    task = ray.remote(num_cpus=1, max_retries=RETRIES, retry_exceptions=False)(tournament_chunk).options(
        name=TASK_NAME)
    slots = workers if workers is not None else 2 * max(1, int(ray.cluster_resources().get("CPU", 1)))
    config_ref, agents_ref = ray.put(config), ray.put(list(agents))
    pending: dict = {}  # object ref -> the game indices it plays
    chunks = iter(chunks)
    exhausted = False
    try:
        while True:
            while not exhausted and len(pending) < slots:
                indices = next(chunks, None)
                if indices is None:
                    exhausted = True
                    break
                pending[task.remote(config_ref, agents_ref, indices, record)] = indices
            if not pending:
                return
            (ref,), _ = ray.wait(list(pending), num_returns=1)
            indices = pending.pop(ref)
            try:
                chunk = ray.get(ref)
            except RayTaskError as err:  # the chunk's own error (an agent's, say): as the local backend raises it
                raise _worker_error(err, indices) from None
            except RayError as err:  # the worker died more often than the retries allow, or its node
                raise TournamentError(f"games {indices[0]}..{indices[-1]} could not be played on Ray "
                                      f"({type(err).__name__}: {str(err).splitlines()[0]}); the games stored so far "
                                      f"are kept: run again with resume=True to play the rest", "resume") from None
            if chunk.engine_version != config.engine_version:
                raise TournamentError(f"a Ray worker runs engine version {chunk.engine_version}, this tournament is "
                                      f"of version {config.engine_version}: install the same midnight-env on every "
                                      "node of the cluster; its games were not stored")
            yield chunk
    finally:  # an error, or the caller stopped: what is still queued or running is not needed
        for ref in pending:
            ray.cancel(ref)


def _worker_error(err, indices: np.ndarray) -> Exception:
    """The exception a chunk raised on its worker, as this process would have raised it."""
    cause = getattr(err, "cause", None)
    cause = getattr(cause, "client_exc", cause)  # a RaySystemError: the task's arguments could not be unpickled
    if isinstance(cause, ImportError):
        return TournamentError(f"a Ray worker could not import {getattr(cause, 'name', None) or cause} to play games "
                               f"{indices[0]}..{indices[-1]}: install midnight-env, and the module of any "
                               "module:Attribute agent, on every node of the cluster (for Ray on this machine: "
                               "on PYTHONPATH), or ship them with Ray's runtime_env")
    return cause if isinstance(cause, Exception) else TournamentError(str(err))


__all__ = ["RETRIES", "TASK_NAME", "check_ray", "play_chunks", "session", "tournament_chunk"]
