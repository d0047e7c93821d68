"""The first use of a feature says that it compiles (issue 40): a numba compilation is announced
on stderr once it has gone on for a second, with the time it took at the end; a cached kernel says
nothing; `midnight compile` compiles every feature's kernels ahead."""

from __future__ import annotations

import io
import os
import selectors
import subprocess
import sys
import time

import pytest
from numba import njit

from midnight_env.infra import compile_notice as notice_module
from midnight_env.infra.compile_notice import compile_notice


def test_a_compilation_is_announced_and_timed(monkeypatch):
    monkeypatch.setattr(notice_module, "QUIET_SECONDS", 0.0)

    @njit(cache=False)
    def twice(x):
        return 2 * x

    stream = io.StringIO()
    with compile_notice("midnight test", stream):
        assert twice(3) == 6
    said = stream.getvalue().splitlines()
    assert said[0].startswith("midnight test: compiling the engine's kernels (first use only")
    assert "`midnight compile` compiles them ahead" in said[0]
    assert said[1].startswith("midnight test: compiled 1 kernels in ") and said[1].endswith("cached for the next run")
    quiet = io.StringIO()
    with compile_notice("midnight test", quiet):  # compiled already: nothing to say
        assert twice(4) == 8
    assert quiet.getvalue() == ""


def test_a_short_compilation_is_not_announced():
    @njit(cache=False)
    def thrice(x):
        return 3 * x

    stream = io.StringIO()
    with compile_notice("midnight test", stream):
        assert thrice(1) == 3  # well under QUIET_SECONDS
    assert stream.getvalue() == ""


def test_a_nested_block_leaves_the_word_to_the_outer_one(monkeypatch):
    monkeypatch.setattr(notice_module, "QUIET_SECONDS", 0.0)

    @njit(cache=False)
    def plus(x):
        return x + 1

    outer, inner = io.StringIO(), io.StringIO()
    with compile_notice("midnight outer", outer), compile_notice("midnight inner", inner):
        plus(1)
    assert inner.getvalue() == "" and "midnight outer: compiling" in outer.getvalue()


@pytest.mark.slow
def test_the_main_job_says_compiling_within_its_first_minute(tmp_path):
    """The README's first command with a cold kernel cache: 'compiling' on stderr well before a
    minute has passed (it was two silent minutes)."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba"), "MIDNIGHT_KERNEL_DIR": str(tmp_path / "k")}
    proc = subprocess.Popen([sys.executable, "-m", "midnight_env.cli", "tournament", "--games", "36",
                             "--db", str(tmp_path / "t.sqlite")], stderr=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            env=env, cwd=tmp_path)
    start = time.monotonic()
    seen = ""
    try:
        selector = selectors.DefaultSelector()
        selector.register(proc.stderr, selectors.EVENT_READ)
        while time.monotonic() - start < 60 and "compiling the engine's kernels" not in seen:
            if selector.select(timeout=1):
                chunk = os.read(proc.stderr.fileno(), 4096)
                if not chunk:
                    break
                seen += chunk.decode(errors="replace")
    finally:
        proc.kill()
        proc.wait()
    assert "midnight tournament: compiling the engine's kernels (first use only" in seen, seen[-2000:]
    assert time.monotonic() - start < 60


@pytest.mark.slow
def test_midnight_compile_leaves_nothing_to_compile(tmp_path):
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba"), "MIDNIGHT_KERNEL_DIR": str(tmp_path / "k")}
    first = subprocess.run([sys.executable, "-m", "midnight_env.cli", "compile"], capture_output=True, text=True,
                           env=env, cwd=tmp_path, timeout=900)
    assert first.returncode == 0, first.stderr[-3000:]
    assert "every kernel compiled and cached" in first.stdout
    assert "compiling" not in first.stderr  # it says what it does itself, once per feature
    after = subprocess.run([sys.executable, "-m", "midnight_env.cli", "simulate", "--games", "2", "--no-progress"],
                           capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert after.returncode == 0 and "compiling" not in after.stderr, after.stderr[-2000:]
