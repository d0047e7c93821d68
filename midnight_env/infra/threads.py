"""When the compiled kernels run on threads, and in how many tasks.

Batches of at least ``PARALLEL_FROM`` games (1,024) may run numba's threaded kernels (engine steps,
random choices, the observation encoder, the VectorEnv step); smaller ones run the serial kernels,
with the same results. On an idle machine threads pay from about 1,000 games (BENCHMARKS.md). On a
machine busy with other work they do not: numba's worker threads wait for cores other processes
hold, and a threaded step of any batch can cost ~15 ms, several times the serial kernel's.

So by default each call site (a :class:`Site`) measures, per batch-size class (games rounded to a
power of two), which kernel is faster *here and now*: its first calls alternate the serial and the
threaded kernel, it keeps the faster (threads only when clearly faster: ``MARGIN``), and re-probes
now and then (``REPROBE_S``, doubling while the choice holds, up to ``REPROBE_MAX_S``) since the
load changes. A probe stops early where threads are far slower (``DECISIVE``: a busy machine pays
one threaded call per probe), and kept threads re-probe at once when their calls turn slower than
the serial kernel was (``WATCH``: load that came since). Where other work visibly holds the cores
when a probe falls due (``_cores_taken``: the machine's runnable tasks, read on Linux, this
process's own left out), the serial kernel runs and the probe waits ``LOOK_S``, and so on while
the load lasts: a threaded call there costs 15-60 ms, a look about 20 µs, and when the load
leaves the probe runs within ``LOOK_S``. Both kernels give the same games bit for bit, so the
choice changes only the speed.

The environment variable ``MIDNIGHT_PARALLEL_FROM`` is the user's override: set, it turns the
measuring off, and batches of that many games or more always run threaded, smaller ones serial
(e.g. 1000000000: always one thread; 1024: always threads from 1,024 games, as before issue 43).
A process forked from one that has run threaded kernels stays serial (numba's OpenMP layer aborts
there: "fork() called from a process already using GNU OpenMP").
"""

from __future__ import annotations

import os
import statistics
import sys
import warnings
from time import perf_counter as _clock  # tests fake it

import numba

CHUNK = 64  # fewest games per task of a threaded kernel
DEFAULT_PARALLEL_FROM = 1024
MARGIN = 0.9  # threads are kept only if their time per game is under MARGIN x the serial kernel's
# probe order: serial (S) and threaded (T) calls alternated ABBA-wise so a drifting load hits both
# alike; the first probe's leading pair only warms up (compilation, page faults) and is not counted
FIRST_PROBE = "ST" + "STTSSTTS"
PROBE = "STTSST"
REPROBE_S = 2.0  # seconds until the first re-probe, and after a re-probe that changed the choice
REPROBE_MAX_S = 30.0  # the longest wait between re-probes (the wait doubles while the choice holds)
DECISIVE = 2.0  # a probe ends early once every threaded call took over DECISIVE x every serial one
WATCH = 2  # kept threads re-probe after this many calls in a row slower than the serial kernel was
LOOK_S = 0.02  # while other work holds the cores, a due probe is put off this long (no threaded call)


def _parallel_from(default: int = DEFAULT_PARALLEL_FROM) -> tuple[int, bool]:
    """(``MIDNIGHT_PARALLEL_FROM`` or ``default``, whether it was set), or ``default`` with a warning
    naming a value that is not a whole number >= 1 (a tuning knob: a typo there must not stop a run)."""
    text = os.environ.get("MIDNIGHT_PARALLEL_FROM")
    if text is None:
        return default, False
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        warnings.warn(f"MIDNIGHT_PARALLEL_FROM={text!r} is not allowed: allowed are whole numbers >= 1 (the batch "
                      f"size from which kernels run on threads); using {default}", RuntimeWarning, stacklevel=2)
        return default, False
    return value, True


PARALLEL_FROM, _fixed = _parallel_from()
# True: measure per call site which kernel is faster; False: threaded from PARALLEL_FROM games, always
# (``MIDNIGHT_PARALLEL_FROM`` set; benchmarks and tests set these two names to force either kernel)
AUTO = not _fixed
_THREADS = numba.config.NUMBA_NUM_THREADS  # threads numba launches for its threaded kernels
_threads_used = False  # this process has run a threaded kernel
_forked_after_threads = False  # this process was forked from one that had


def _machine_load_seen() -> bool:
    """Whether ``_cores_taken`` can tell: Linux's ``/proc/loadavg`` counts the machine's runnable
    tasks, which says something of this process's cores only where it may run on all of them."""
    try:
        return sys.platform.startswith("linux") and len(os.sched_getaffinity(0)) == os.cpu_count() and \
            os.path.exists("/proc/loadavg")
    except (AttributeError, OSError):
        return False


_LOAD_SEEN = _machine_load_seen()
_CORES = os.cpu_count() or 1


def _cores_taken() -> bool:
    """Whether other work holds every core but the one this thread runs on, right now: the tasks
    runnable on the machine (``/proc/loadavg``) less this process's own (its idle numba workers may
    still be spinning) number at least the cores less one. Threads cannot gain then. False where
    it cannot be told (``_LOAD_SEEN``) or read."""
    if not _LOAD_SEEN:
        return False
    try:
        with open("/proc/loadavg") as f:
            runnable = int(f.read().split()[3].split("/")[0])
        own = 0
        for task in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{task}/stat") as f:
                stat = f.read()
            own += stat[stat.rindex(")") + 2] == "R"  # the state follows the command's closing bracket
    except (OSError, ValueError, IndexError):
        return False
    return runnable - own >= _CORES - 1


def threaded(batch: int) -> bool:
    """Whether a batch of ``batch`` games may run the threaded kernels: from ``PARALLEL_FROM`` games,
    except in a process forked from one that had run them already, which stays serial. (With
    ``AUTO``, a :class:`Site` then decides per call which kernel runs.)"""
    return batch >= PARALLEL_FROM and not _forked_after_threads


def task_size(batch: int) -> int:
    """Games per task of a threaded kernel over ``batch`` games: an equal share per thread numba
    launches (``numba.config.NUMBA_NUM_THREADS``), at least ``CHUNK``. A VectorEnv step runs its
    phases (rules, bookkeeping, observations) over a task's games in turn, and long runs of each
    pay (BENCHMARKS.md). The launched threads are read once, not ``numba.get_num_threads()`` per
    call, which is slow from Python right after a pass over a batch; with fewer threads set
    (``numba.set_num_threads``) each thread runs several tasks, with the same results."""
    return max(CHUNK, -(-batch // _THREADS))


class _Choice:
    """The kept choice of one site for one batch-size class, and its probe in progress."""

    __slots__ = ("threads", "probe", "probed", "skip", "times", "due", "wait", "serial_time", "slow")

    def __init__(self) -> None:
        self.threads = False  # the kernel kept between probes
        self.probe = ""  # kernels still to time in the probe under way ("" between probes)
        self.probed = False  # a probe has started (the first one has a warm-up pair)
        self.skip = 0  # leading calls of the probe not counted
        self.times: tuple[list[float], list[float]] = ([], [])  # seconds per game: serial, threaded
        self.due = 0.0  # _clock() time of the next probe
        self.wait = REPROBE_S
        self.serial_time = 0.0  # the serial kernel's seconds per game at the last probe
        self.slow = 0  # kept threaded calls in a row slower than that


class Site:
    """One call site that has a serial and a threaded kernel giving the same results.

    ``site.run(batch, serial, parallel, *args)`` calls ``serial(*args)`` or
    ``parallel(*args, task_size(batch))``, whichever this process measured faster for batches of
    this size (see the module docstring), and returns what it returns."""

    def __init__(self, name: str):
        self.name = name
        self._choices: dict[int, _Choice] = {}

    def __repr__(self) -> str:
        kept = {1 << (k - 1): ("threads" if c.threads else "serial") + (" (probing)" if c.probe else "")
                for k, c in sorted(self._choices.items())}
        return f"Site({self.name!r}, {kept})"

    def run(self, batch: int, serial, parallel, *args):
        global _threads_used
        if not threaded(batch):
            return serial(*args)
        if not AUTO:
            _threads_used = True
            return parallel(*args, task_size(batch))
        choice = self._choices.get(batch.bit_length())
        if choice is None:
            choice = self._choices[batch.bit_length()] = _Choice()
        if not choice.probe:
            start = _clock()
            if start < choice.due:  # the kept choice
                if not choice.threads:
                    return serial(*args)
                _threads_used = True
                result = parallel(*args, task_size(batch))
                # threads kept are watched (their calls are long: the clock costs nothing): load that
                # came since makes them slower than the serial kernel was, and twice in a row re-probes
                choice.slow = choice.slow + 1 if (_clock() - start) / batch > choice.serial_time else 0
                if choice.slow >= WATCH:
                    choice.due = choice.slow = 0
                return result
            if _cores_taken():  # a threaded call would wait for the cores: no probe now, and no threads
                choice.threads = False
                # look again in LOOK_S, or later where a look is slow (a process of many threads has
                # many to read): looking costs at most 1 % of the time
                choice.due = start + max(LOOK_S, 100 * (_clock() - start))
                return serial(*args)
            choice.probe, choice.skip = (PROBE, 0) if choice.probed else (FIRST_PROBE, 2)
            choice.probed = True
        use_threads = choice.probe[0] == "T"
        start = _clock()
        if use_threads:
            _threads_used = True
            result = parallel(*args, task_size(batch))
        else:
            result = serial(*args)
        end = _clock()
        if choice.skip:
            choice.skip -= 1
        else:
            choice.times[use_threads].append((end - start) / batch)
        choice.probe = choice.probe[1:]
        serial_times, threaded_times = choice.times
        if serial_times and threaded_times and min(threaded_times) > DECISIVE * max(serial_times):
            choice.probe = ""  # threads far slower already (a busy machine): no more of them
        if not choice.probe:
            self._decide(choice, end)
        return result

    @staticmethod
    def _decide(choice: _Choice, now: float) -> None:
        serial, threads = (statistics.median(t) for t in choice.times)
        keep = threads < MARGIN * serial
        choice.wait = min(2 * choice.wait, REPROBE_MAX_S) if keep == choice.threads else REPROBE_S
        choice.threads = keep
        choice.serial_time = serial
        choice.times = ([], [])
        choice.due = now + choice.wait


def _after_fork_in_child() -> None:
    global _forked_after_threads
    _forked_after_threads = _forked_after_threads or _threads_used


os.register_at_fork(after_in_child=_after_fork_in_child)
