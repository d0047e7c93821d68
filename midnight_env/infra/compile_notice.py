"""Saying so while numba compiles.

The first use of a feature compiles its kernels: a minute or two on a 2-core machine, during
which nothing else moves (BENCHMARKS.md, "First use"). Numba reports every real compilation (a
kernel found in the on-disk cache is loaded without one) as a ``numba:compile`` event; a listener
on it says once, on stderr, that compiling has started (once it has gone on for a second), and at
the end how long it took. A run whose kernels are all cached says nothing.
"""

from __future__ import annotations

import sys
import threading
import time
from contextlib import contextmanager
from typing import TextIO

from numba.core import event

# what a first use takes on a 2-core machine with a cold cache, measured (BENCHMARKS.md, "First use")
FIRST_USE = "about 1-2 minutes on 2 cores"
QUIET_SECONDS = 1.0  # compiling that ends sooner, in all, is not announced


class CompileNotice(event.Listener):
    """A numba event listener: one line when the first kernel starts compiling, the time spent
    compiling when :meth:`close` is called. Compilations nest (a kernel compiles what it calls):
    only the outermost ones are timed."""

    def __init__(self, what: str, stream: TextIO | None = None):
        self.what = what
        self.stream = stream
        self.depth = 0
        self.started = 0.0
        self.seconds = 0.0
        self.kernels = 0
        self.announced = False
        self.timer: threading.Timer | None = None

    def _write(self, text: str) -> None:
        stream = self.stream if self.stream is not None else sys.stderr
        try:
            from tqdm import tqdm

            tqdm.write(text, file=stream)  # above a progress bar, not through it
        except ImportError:
            print(text, file=stream, flush=True)

    def _announce(self) -> None:
        if not self.announced:
            self.announced = True
            self._write(f"{self.what}: compiling the engine's kernels (first use only, {FIRST_USE}; "
                        "`midnight compile` compiles them ahead) ...")

    def on_start(self, ev) -> None:
        if self.depth == 0:
            self.started = time.perf_counter()
            if not self.announced:  # a kernel of a second or less is not worth a word
                self.timer = threading.Timer(QUIET_SECONDS, self._announce)
                self.timer.daemon = True
                self.timer.start()
        self.depth += 1

    def on_end(self, ev) -> None:
        self.depth -= 1
        if self.depth == 0:
            self.kernels += 1
            self.seconds += time.perf_counter() - self.started
            if self.timer is not None:
                self.timer.cancel()
                self.timer = None
            if self.seconds > QUIET_SECONDS:  # short kernels adding up
                self._announce()

    def close(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
        if self.announced:
            self._write(f"{self.what}: compiled {self.kernels} kernels in {self.seconds:.0f} s, cached for the next "
                        "run")


_open: list[CompileNotice] = []  # the notices in force, outermost first: only the outermost speaks


@contextmanager
def compile_notice(what: str, stream: TextIO | None = None, announce: bool = True):
    """Within the block, say when numba compiles (see :class:`CompileNotice`); ``announce=False``
    only keeps the notices of nested blocks quiet (``midnight compile`` says what it does itself).
    A block inside another (a command run by another) says nothing of its own."""
    if _open:
        yield _open[0]
        return
    notice = CompileNotice(what, stream)
    _open.append(notice)
    if announce:
        event.register("numba:compile", notice)
    try:
        yield notice
    finally:
        _open.remove(notice)
        if announce:
            event.unregister("numba:compile", notice)
            notice.close()
