"""Hostile files (issue 39): devices, FIFOs, a full disk, an endless line, bytes that are not text.
Each case gets one line naming the file or value and what is allowed, exit 2, and nothing stored is
lost; each test here failed before its fix. The lines they print:

- ``--records`` naming a FIFO or a device is written in place, never replaced by a plain file: a
  FIFO's reader gets every record line; ``/dev/full`` gives
  ``cannot write records to /dev/full: No space left on device`` (the games stay in the database),
  and so does ``simulate --record /dev/full`` however short its records.
- ``play --record FIFO`` writes the finished game to the FIFO (``recorded to FIFO``) instead of
  waiting forever to read it.
- ``--db /dev/null``: ``database '/dev/null' is a character device, not a regular file: allowed is
  a database file, or a new one; nothing was changed`` (a FIFO: ``is a FIFO``), nothing created.
- ``--db`` on a full disk: ``database 'PATH': the disk is full (database or disk is full); the N
  games of this tournament stored so far are kept: free some space, then run the same command again
  with --resume to play the rest``, and that command plays exactly the missing games.
- A record line over 16 MiB (``replay /dev/zero``): ``line N: longer than the limit of 16777216
  bytes (16 MiB) for a record line``, without reading it whole; ``--keep-going`` reads on after it.
- ``play`` given a line that is not UTF-8: ``not UTF-8 text (b'\\xff\\xfe'): answer with a number
  1..K or a choice's notation (b shows the board again, q quits)``, then asked again; quitting
  with ``--record`` creates no file.
"""

from __future__ import annotations

import io
import json
import os
import re
import resource
import sqlite3
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from cli_helpers import one_line_error, run_cli

from midnight_env.cli import main
from midnight_env.core import records
from midnight_env.core.records import RecordError, parse_lines
from midnight_env.tournament import store

ROOT = Path(__file__).resolve().parents[2]


def tournament(capsys, db: Path, *extra: str, games: int = 12, batch: int = 4):
    return run_cli(capsys, "tournament", "--players", "2", "--agents", "random,runner,coward", "--games", str(games),
                   "--batch-size", str(batch), "--seed", "5", "--db", str(db), "--no-progress", *extra)


def rows(db: Path) -> list[tuple]:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT game_index, seed, agents, points, ranks FROM games ORDER BY game_index").fetchall()


class FifoReader(threading.Thread):
    """Reads a FIFO to its end in the background (a daemon: a FIFO replaced under it leaves it waiting)."""

    def __init__(self, path: Path):
        super().__init__(daemon=True)
        self.path, self.data = path, b""

    def run(self):
        with open(self.path, "rb") as f:
            self.data = f.read()


def is_device(path: str) -> bool:
    return os.path.exists(path) and stat.S_ISCHR(os.stat(path).st_mode)


# ------------------------------------------------------------------------------------------------
# records written to devices and FIFOs


def test_tournament_records_to_a_fifo_reach_its_reader_and_the_fifo_stays(capsys, tmp_path):
    fifo = tmp_path / "records.fifo"
    os.mkfifo(fifo)
    reader = FifoReader(fifo)
    reader.start()
    code, out, err = tournament(capsys, tmp_path / "t.sqlite", "--records", str(fifo))
    reader.join(timeout=60)
    assert code == 0, err
    assert not reader.is_alive() and stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert f"records: 12 games written to {fifo}" in out
    assert not (tmp_path / "records.fifo.tmp").exists()
    regular = tmp_path / "r.jsonl"  # the same games exported to a plain file
    assert tournament(capsys, tmp_path / "t.sqlite", "--resume", "--records", str(regular))[0] == 0
    assert reader.data.decode().splitlines() == regular.read_text().splitlines()
    assert len(regular.read_text().splitlines()) == 12


@pytest.mark.skipif(not is_device("/dev/full"), reason="no /dev/full on this system")
def test_tournament_records_to_dev_full_is_one_line_and_the_device_stays(capsys, tmp_path):
    db = tmp_path / "t.sqlite"
    code, _, err = tournament(capsys, db, "--records", "/dev/full")
    assert code == 2
    one_line_error(err, "cannot write records to /dev/full: No space left on device")
    assert is_device("/dev/full")
    assert len(rows(db)) == 12  # the games are kept
    assert not Path("/dev/full.tmp").exists()


@pytest.mark.skipif(not is_device("/dev/null"), reason="no /dev/null on this system")
def test_tournament_records_to_dev_null_are_written_in_place(capsys, tmp_path):
    code, out, err = tournament(capsys, tmp_path / "t.sqlite", "--records", "/dev/null")
    assert code == 0, err
    assert "records: 12 games written to /dev/null" in out and is_device("/dev/null")


@pytest.mark.skipif(not is_device("/dev/full"), reason="no /dev/full on this system")
def test_simulate_names_dev_full_however_short_its_records(capsys):
    code, _, err = run_cli(capsys, "simulate", "--variant", "hidden_castle", "--players", "1", "--games", "1",
                           "--set", "max_turns=3", "--record", "/dev/full", "--no-progress")
    assert code == 2
    one_line_error(err, "cannot write records to /dev/full: No space left on device")


def test_play_writes_its_record_to_a_fifo(tmp_path):
    fifo = tmp_path / "game.fifo"
    os.mkfifo(fifo)
    reader = FifoReader(fifo)
    reader.start()
    done = subprocess.run([sys.executable, "-m", "midnight_env.cli", "play", "--players", "2", "--seed", "5",
                           "--opponents", "random", "--no-color", "--record", str(fifo)], input="1\n" * 400,
                          capture_output=True, text=True, timeout=120, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    reader.join(timeout=30)
    assert done.returncode == 0 and f"recorded to {fifo}" in done.stdout, done.stderr
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    (line,) = reader.data.decode().splitlines()
    assert json.loads(line)["agents"] == ["human", "random"]


# ------------------------------------------------------------------------------------------------
# databases: devices, FIFOs and a full disk


def test_a_database_that_is_a_device_or_a_fifo_is_refused_before_anything_is_created(capsys, tmp_path):
    if is_device("/dev/null"):
        journal_before = os.path.exists("/dev/null-journal")
        code, _, err = tournament(capsys, Path("/dev/null"))
        assert code == 2
        one_line_error(err, "database '/dev/null' is a character device, not a regular file",
                       "allowed is a database file, or a new one")
        assert is_device("/dev/null") and os.path.exists("/dev/null-journal") == journal_before
    fifo = tmp_path / "t.sqlite"
    os.mkfifo(fifo)
    code, _, err = tournament(capsys, fifo)
    assert code == 2
    one_line_error(err, f"database {str(fifo)!r} is a FIFO, not a regular file")
    assert [p.name for p in tmp_path.iterdir()] == ["t.sqlite"]


def test_a_full_disk_is_one_line_and_the_same_command_resumes(capsys, tmp_path, monkeypatch):
    reference = tmp_path / "reference.sqlite"
    assert tournament(capsys, reference, games=480, batch=16)[0] == 0
    db = tmp_path / "t.sqlite"
    connect = store._connect

    def small_disk(path):  # SQLite's own page limit: its real "database or disk is full" error
        conn = connect(path)
        conn.execute("PRAGMA max_page_count = 30")
        return conn

    monkeypatch.setattr(store, "_connect", small_disk)
    code, _, err = tournament(capsys, db, games=480, batch=16)
    assert code == 2
    one_line_error(err, f"database {str(db)!r}: the disk is full (database or disk is full)", "stored so far are kept",
                   "run the same command again with --resume to play the rest")
    kept = rows(db)
    assert 0 < len(kept) < 480 and f"the {len(kept)} games of this tournament stored so far are kept" in err
    monkeypatch.undo()
    code, out, _ = tournament(capsys, db, "--resume", games=480, batch=16)
    assert code == 0 and f"played {480 - len(kept)} games" in out
    assert rows(db) == rows(reference)


# ------------------------------------------------------------------------------------------------
# record lines without end


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero on this system")
def test_replay_of_an_endless_line_stops_at_the_limit():
    def two_gib():  # before the fix, the line was read until memory ran out: here a MemoryError
        resource.setrlimit(resource.RLIMIT_AS, (2 * 2**30, 2 * 2**30))

    done = subprocess.run([sys.executable, "-m", "midnight_env.cli", "replay", "/dev/zero"], capture_output=True,
                          text=True, timeout=120, preexec_fn=two_gib, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert done.returncode == 2
    one_line_error(done.stderr, "/dev/zero: line 1: longer than the limit of 16777216 bytes (16 MiB) for a record line")
    assert "0 records replayed, 1 bad" in done.stdout


def test_a_line_over_the_limit_is_named_and_the_readers_go_on(capsys, tmp_path):
    good = tmp_path / "g.jsonl"
    assert main(["simulate", "--players", "2", "--games", "2", "--record", str(good), "--no-progress"]) == 0
    first, last = good.read_text().splitlines()
    limit = records.MAX_LINE_BYTES
    assert limit == 16 * 2**20
    path = tmp_path / "long.jsonl"
    with open(path, "w") as f:
        f.write(first + " " * (limit - len(first)) + "\n")  # exactly at the limit: a record
        f.write("x" * (limit + 1) + "\n")  # one byte over
        f.write(last + "\n")
    capsys.readouterr()
    code, out, err = run_cli(capsys, "replay", "--keep-going", str(path))
    assert code == 2 and "2 records replayed, 1 bad" in out
    one_line_error(err, "line 2: longer than the limit of 16777216 bytes (16 MiB) for a record line")
    code, _, err = run_cli(capsys, "render", "--record", str(path), "--line", "2", "--no-color")
    assert code == 2
    one_line_error(err, "line 2: longer than the limit of 16777216 bytes")
    code, out, _ = run_cli(capsys, "render", "--record", str(path), "--line", "3", "--no-color")
    assert code == 0 and "game over" in out
    (number, error), = parse_lines([b"[" + b"0," * (limit // 2) + b"0]"])  # an upload's line too
    assert number == 1 and isinstance(error, RecordError) and "longer than the limit" in str(error)


# ------------------------------------------------------------------------------------------------
# midnight play: bytes that are not text, and quitting with --record


def test_play_answers_a_line_that_is_not_utf8_and_asks_again(capsys, tmp_path, monkeypatch):
    path = tmp_path / "f.jsonl"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"\xff\xfe\n1\n"), encoding="utf-8"))
    code, out, err = run_cli(capsys, "play", "--seed", "3", "--players", "2", "--opponents", "random", "--no-color",
                             "--record", str(path))
    assert code == 0 and err == ""
    assert re.search(r"not UTF-8 text \(b'\\xff\\xfe'\): answer with a number 1\.\.\d+ or a choice's notation", out)
    assert out.count("your choice [") == 3  # asked, asked again, answered 1, then the next decision
    assert "game left unfinished: goodbye (nothing recorded)" in out
    assert not path.exists()


def test_quitting_with_record_creates_no_file_but_a_bad_folder_is_named_first(capsys, tmp_path, monkeypatch):
    path = tmp_path / "f.jsonl"
    monkeypatch.setattr(sys, "stdin", io.StringIO("q\n"))
    code, out, _ = run_cli(capsys, "play", "--players", "2", "--seed", "1", "--no-color", "--record", str(path))
    assert code == 0 and "nothing recorded" in out and not path.exists()
    code, _, err = run_cli(capsys, "play", "--players", "2", "--seed", "1", "--record", str(tmp_path / "no" / "f"))
    assert code == 2
    one_line_error(err, "--record", "cannot be created: folder", "does not exist")
