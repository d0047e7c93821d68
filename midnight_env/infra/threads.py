"""When the compiled kernels run on threads, and in how many tasks.

Batches of at least ``PARALLEL_FROM`` games run numba's threaded kernels (engine steps, random
choices, the observation encoder, the VectorEnv step); smaller ones run the serial kernels, with
the same results. On an idle machine threads pay from about 1,000 games (BENCHMARKS.md). On a
machine busy with other work they do not: numba's worker threads wait for cores other processes
hold, and a loaded machine can step a large batch several times slower than the serial kernel.
There, set the environment variable ``MIDNIGHT_PARALLEL_FROM`` to a large number (e.g.
1000000000) to stay serial.
"""

from __future__ import annotations

import os
import warnings

import numba

CHUNK = 64  # fewest games per task of a threaded kernel


def _parallel_from(default: int = 1024) -> int:
    """``MIDNIGHT_PARALLEL_FROM``, or ``default`` with a warning naming a value that is not a whole
    number >= 1 (a tuning knob: a typo there must not stop a run)."""
    text = os.environ.get("MIDNIGHT_PARALLEL_FROM")
    if text is None:
        return default
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        warnings.warn(f"MIDNIGHT_PARALLEL_FROM={text!r} is not allowed: allowed are whole numbers >= 1 (the batch "
                      f"size from which kernels run on threads); using {default}", RuntimeWarning, stacklevel=2)
        return default
    return value


PARALLEL_FROM = _parallel_from()
_THREADS = numba.config.NUMBA_NUM_THREADS  # threads numba launches for its threaded kernels
_threads_used = False  # this process has run a threaded kernel
_forked_after_threads = False  # this process was forked from one that had


def threaded(batch: int) -> bool:
    """Whether a batch of ``batch`` games runs the threaded kernels: from ``PARALLEL_FROM`` games,
    except in a process forked from one that had run them already (numba's OpenMP threads abort
    such a child: "fork() called from a process already using GNU OpenMP"), which stays serial."""
    global _threads_used
    if batch < PARALLEL_FROM or _forked_after_threads:
        return False
    _threads_used = True
    return True


def task_size(batch: int) -> int:
    """Games per task of a threaded kernel over ``batch`` games: an equal share per thread numba
    launches (``numba.config.NUMBA_NUM_THREADS``), at least ``CHUNK``. A VectorEnv step runs its
    phases (rules, bookkeeping, observations) over a task's games in turn, and long runs of each
    pay (BENCHMARKS.md). The launched threads are read once, not ``numba.get_num_threads()`` per
    call, which is slow from Python right after a pass over a batch; with fewer threads set
    (``numba.set_num_threads``) each thread runs several tasks, with the same results."""
    return max(CHUNK, -(-batch // _THREADS))


def _after_fork_in_child() -> None:
    global _forked_after_threads
    _forked_after_threads = _forked_after_threads or _threads_used


os.register_at_fork(after_in_child=_after_fork_in_child)
