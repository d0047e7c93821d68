"""The ``ray`` backend: a tournament's missing games played as Ray tasks, stored here as they arrive.

The games go out in chunks (``batch_size`` games each), one Ray task per chunk; each task plays
its chunk with :func:`midnight_env.tournament.run.play_chunk`, exactly as the ``local`` backend
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
its own on this machine's cores, bound to the loopback address and sending no usage statistics
(:func:`start_local_ray`), and stops it at the end.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager

import numpy as np

from midnight_env.agent import Agent
from midnight_env.tournament.config import TournamentConfig, TournamentError
from midnight_env.tournament.run import Chunk, play_chunk

RETRIES = 3  # a chunk whose worker dies is played again up to this many times
TASK_NAME = "tournament_chunk"  # a worker playing a chunk shows as "ray::tournament_chunk" in ps


def require_ray() -> None:
    """TournamentError (``backend``) when Ray is not installed, before anything is written."""
    try:
        import ray  # noqa: F401
    except ImportError:
        raise TournamentError("backend='ray' needs Ray, which is not installed: pip install 'midnight-env[ray]', "
                              "or play with the local backend", "backend") from None


@contextmanager
def _loopback():
    """Ray's settings, while an instance starts, for one that only this machine can reach.

    Ray binds a new instance to the address other machines would reach it by, unless its
    ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER`` is false (what it does on a laptop): then to 127.0.0.1.
    Its processes read the variables when they start, and the driver reads the setting once when
    ray is imported, hence the constant too. Restored afterwards: a later ``ray.init(address=...)``
    of this process must find its own address again.
    """
    from ray._private import ray_constants

    saved_env = {k: os.environ.get(k) for k in ("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "RAY_USAGE_STATS_ENABLED")}
    saved_constant = ray_constants.ENABLE_RAY_CLUSTER
    os.environ.update(RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER="0", RAY_USAGE_STATS_ENABLED="0")
    ray_constants.ENABLE_RAY_CLUSTER = False
    try:
        yield
    finally:
        ray_constants.ENABLE_RAY_CLUSTER = saved_constant
        for key, value in saved_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def start_local_ray(num_cpus: int | None = None) -> None:
    """Start Ray in this process on this machine alone: ``num_cpus`` workers (default: every
    core), listening on the loopback address only, no dashboard, no usage statistics."""
    import ray

    with _loopback():
        ray.init(num_cpus=num_cpus, include_dashboard=False, logging_level=logging.WARNING)


def connect(address: str) -> None:
    """Join the Ray cluster at ``address`` (``ray start --head`` printed it); TournamentError
    (``address``) naming it when no cluster answers there."""
    import ray

    try:
        ray.init(address=address, logging_level=logging.WARNING)
    except (ConnectionError, ValueError, RuntimeError) as err:
        raise TournamentError(f"address={address!r}: no Ray cluster could be joined there ({err}); allowed is the "
                              "address `ray start --head` printed, e.g. 127.0.0.1:6379", "address") from None


# -- the worker's side ----------------------------------------------------------------------------

_worker_cache: dict = {}  # what a worker process keeps between chunks: the schedule, engine, commit


def tournament_chunk(config: TournamentConfig, agents: Sequence[Agent], indices: np.ndarray, record: bool) -> Chunk:
    """Play one chunk in a Ray worker (the task; see :func:`play_chunk`)."""
    from midnight_env.provenance import code_commit
    from midnight_env.threads import PARALLEL_FROM
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


def play_chunks(config: TournamentConfig, agents: Sequence[Agent], chunks: Iterable[np.ndarray], record: bool,
                address: str | None = None, workers: int | None = None) -> Iterator[Chunk]:
    """The outcomes of ``chunks``, as they finish on Ray (see the module docstring).

    ``workers`` chunks are in flight at once (default: two per CPU of the cluster, so that no
    CPU waits for the driver between chunks); the chunks are drawn from ``chunks`` as the earlier
    ones finish, never all at once.
    """
    import ray
    from ray.exceptions import RayError, RayTaskError

    started = False
    if not ray.is_initialized():
        if address is not None:
            connect(address)
        else:
            start_local_ray(workers)
            started = True
    task = ray.remote(num_cpus=1, max_retries=RETRIES, retry_exceptions=False)(tournament_chunk).options(
        name=TASK_NAME)
    pending: dict = {}  # object ref -> the game indices it plays
    try:
        slots = workers if workers is not None else 2 * max(1, int(ray.cluster_resources().get("CPU", 1)))
        config_ref, agents_ref = ray.put(config), ray.put(list(agents))
        chunks = iter(chunks)
        exhausted = False
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
    finally:
        for ref in pending:
            ray.cancel(ref)
        if started:
            ray.shutdown()


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


__all__ = ["RETRIES", "TASK_NAME", "connect", "play_chunks", "require_ray", "start_local_ray", "tournament_chunk"]
