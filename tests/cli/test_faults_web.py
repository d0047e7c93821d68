"""Hostile input to the web server, second round (issue 39): each case, and the one line or answer it
gets. Items 1 and 2 are met as a user meets them, through a real ``midnight serve --data DIR`` on
127.0.0.1 (a subprocess); the field checks through Starlette's test client. Each test here failed
before its fix, but those marked "kept" (a link inside the folder, and cases that were refused by
name before and are checked the same way as the rest now).

The data folder's played file (item 1):

- ``played.jsonl`` a dangling link out of ``--data`` when the server starts: ``midnight serve``
  exits 2 with ``midnight serve: error: played.jsonl in the data folder is a symbolic link to
  '.../outside/x.jsonl', outside --data '.../srv': played games are written inside it only (remove
  the link, or let it lead to a file inside the folder)``; nothing is created outside.
- the same link made while the server runs, then a game played to its end through ``POST
  /api/play`` and ``/api/play/{id}``: the game ends, its ``saved`` is ``{"error": "the record could
  not be written: played.jsonl in the data folder is a symbolic link to ..., outside --data ...:
  ..."}``; nothing is created outside.
- ``played.jsonl`` a link to a file inside ``--data`` (kept): the record is appended there.
- ``played.jsonl`` a named pipe: refused at start-up and at a write, ``played.jsonl in the data folder
  is not a regular file (a folder, a named pipe ...): played games are written to a file (move it
  away)`` (before: the server's thread waited on the pipe for ever).
- a database whose ``-wal`` side file is a link: 403 ``database 't.sqlite': its SQLite side file
  t.sqlite-wal is a symbolic link: allowed are databases whose -wal, -shm, -journal files are
  plain files inside the data folder (or absent)``.

What an analysis may cost (item 2):

- 45 concurrent ``GET /api/analysis?file=good.jsonl&line=1&evaluator=search%3Abudget%3D1000000000``:
  each a 400 ``evaluator budget 1000000000 is above this server's limit: allowed are 1..10000
  positions a decision (midnight serve --max-budget sets the limit)``, and the server answers
  other requests meanwhile; ``turns=1000000000``: 400 ``evaluator turns 1000000000 is above this
  server's limit: allowed are 1..4``.
- an analysis while ``--max-analyses`` are running: 503 ``busy: 1 analyses running, try again in a
  moment (this server runs at most 1 at once: midnight serve --max-analyses)``, Retry-After 5.
- an analysis whose client has gone: the server stops working on it within seconds (its CPU goes
  idle, its place frees), instead of searching on for the rest of the game.
- ``analyze_record(..., cancelled=...)``: AnalysisCancelled ``the analysis was cancelled after 0 of
  N decisions valued``; valued in batches, a search's values are those of one batch.
- ``midnight serve --max-budget 100``: exit 2, ``--max-budget 100 is out of range: allowed are 1500
  or more (...)``.

The fields of the API (items 15, 16 and the others, each naming the field and what is allowed):

- ``POST /api/play {"opponents": 5}``: 400 ``opponents 5 is a number: allowed are an agent's name
  for every other seat, names separated by commas, or a list of names (one per other seat)``
  (before: 500 internal error (TypeError ...)).
- ``POST /api/play {"opponents": "random", "players": 2.5}``: 400 ``players 2.5 is not a whole
  number: allowed are 1..8`` (before: a two-player game); and the rest in :data:`BAD_PLAY`,
  :data:`BAD_QUERIES`.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("starlette", reason="the web extra is not installed: python -m pip install -e '.[web]'")
from starlette.testclient import TestClient  # noqa: E402

from midnight_env import Engine  # noqa: E402
from midnight_env.analysis.judge import AnalysisCancelled, analyze_record  # noqa: E402
from midnight_env.arena.play import play_batch  # noqa: E402
from midnight_env.arena.registry import make_agent  # noqa: E402
from midnight_env.cli import main  # noqa: E402
from midnight_env.web.app import create_app  # noqa: E402
from midnight_env.web.errors import WebError  # noqa: E402
from midnight_env.web.sources import PLAYED_FILE, DataFolder  # noqa: E402

BIG = "search%3Abudget%3D1000000000"  # the issue's evaluator, as the query string carries it


@pytest.fixture(scope="module")
def record() -> dict:
    engine = Engine("midnight_party", 2)
    return play_batch(engine, [make_agent("random")], np.zeros((1, 2), np.int64), [3], record=True,
                      agent_names=["random"]).records[0]


@pytest.fixture
def data(tmp_path, record) -> Path:
    folder = tmp_path / "srv"
    folder.mkdir()
    (tmp_path / "outside").mkdir()
    (folder / "good.jsonl").write_text(json.dumps(record) + "\n", encoding="utf-8")
    return folder


# ------------------------------------------------------------------------------------------------
# a real server on 127.0.0.1


@contextmanager
def serving(data: Path, *options: str):
    """``midnight serve --data DATA --port 0 OPTIONS`` in a subprocess: yields (base URL, process)."""
    proc = subprocess.Popen([sys.executable, "-m", "midnight_env.cli", "serve", "--data", str(data), "--port", "0",
                             *options], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()  # its address, or nothing when it exits
        found = re.search(r"http://127\.0\.0\.1:\d+", line)
        assert found, (line, proc.stderr.read() if proc.poll() is not None else "")
        yield found.group(0), proc
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # 127.0.0.1 directly, whatever the proxy


def call(url: str, body: dict | None = None, timeout: float = 60) -> tuple[int, dict, Any]:
    """A GET (or, with ``body``, a JSON POST): status, JSON answer, headers (any case)."""
    request = urllib.request.Request(url, data=None if body is None else json.dumps(body).encode(),
                                     headers={} if body is None else {"content-type": "application/json"})
    try:
        with _OPENER.open(request, timeout=timeout) as reply:
            return reply.status, json.loads(reply.read()), reply.headers
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read()), err.headers


def running(url: str) -> int:
    return call(f"{url}/api/info", timeout=10)[1]["limits"]["analyses_running"]


def wait_for(condition, seconds: float) -> float:
    """Seconds until ``condition()`` holds; fails after ``seconds``."""
    started = time.monotonic()
    while not condition():
        assert time.monotonic() - started < seconds, f"not within {seconds} s"
        time.sleep(0.1)
    return time.monotonic() - started


def open_request(url: str, path: str) -> socket.socket:
    """A GET sent on a connection of its own, the answer not read: the test closes it (a client leaving)."""
    host, port = url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)))
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode())
    return sock


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def play_to_the_end(url: str) -> dict:
    status, reply, _ = call(f"{url}/api/play", {"variant": "hidden_castle", "players": 1, "seat": 0,
                                                 "opponents": [], "seed": 2})
    assert status == 200, reply
    while not reply["over"]:
        status, reply, _ = call(f"{url}/api/play/{reply['id']}", {"move": reply["frame"]["legal"][0]})
        assert status == 200, reply
    return reply


# ------------------------------------------------------------------------------------------------
# item 1: nothing is written outside --data


def test_a_dangling_link_out_of_the_folder_is_refused_at_start(data, tmp_path):
    os.symlink(tmp_path / "outside" / "x.jsonl", data / PLAYED_FILE)
    proc = subprocess.run([sys.executable, "-m", "midnight_env.cli", "serve", "--data", str(data), "--port", "0"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert lines[0].startswith(f"midnight serve: error: {PLAYED_FILE} in the data folder is a symbolic link to "
                               f"'{tmp_path / 'outside' / 'x.jsonl'}', outside --data"), lines[0]
    assert os.listdir(tmp_path / "outside") == []


def test_a_link_out_of_the_folder_made_while_serving_gets_no_record(data, tmp_path):
    with serving(data) as (url, _):
        os.symlink(tmp_path / "outside" / "x.jsonl", data / PLAYED_FILE)  # dangling: the old check missed it
        reply = play_to_the_end(url)
        assert reply["saved"]["error"].startswith(f"the record could not be written: {PLAYED_FILE} in the data "
                                                  f"folder is a symbolic link to '{tmp_path / 'outside' / 'x.jsonl'}'"
                                                  ", outside --data"), reply["saved"]
        os.symlink(tmp_path / "outside" / "y.jsonl", data / "other.jsonl")  # nor through any name read
        status, answer, _ = call(f"{url}/api/records?file=other.jsonl")
        assert status == 403 and "outside the data folder" in answer["error"]
        assert running(url) == 0  # still serving
    assert os.listdir(tmp_path / "outside") == []


def test_a_link_to_a_file_inside_the_folder_receives_the_record(data):  # kept
    (data / "mine").mkdir()
    os.symlink(data / "mine" / "all.jsonl", data / PLAYED_FILE)
    client = TestClient(create_app(data))
    reply = client.post("/api/play", json={"variant": "hidden_castle", "players": 1, "seat": 0, "opponents": []}).json()
    while not reply["over"]:
        reply = client.post(f"/api/play/{reply['id']}", json={"move": reply["frame"]["legal"][0]}).json()
    assert reply["saved"] == {"file": PLAYED_FILE, "line": 1}
    assert json.loads((data / "mine" / "all.jsonl").read_text())["agents"] == ["human"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_a_played_file_that_is_a_named_pipe_is_refused_not_waited_on(data, record):
    with pytest.raises(WebError, match="is not a regular file"):  # at start-up
        os.mkfifo(data / PLAYED_FILE)
        DataFolder(data)
    os.remove(data / PLAYED_FILE)
    folder = DataFolder(data)
    os.mkfifo(data / PLAYED_FILE)  # made while serving
    outcome: list = []

    def save():
        try:
            outcome.append(folder.save_record(record))
        except WebError as err:
            outcome.append(err)

    worker = threading.Thread(target=save, daemon=True)
    worker.start()
    worker.join(20)
    assert not worker.is_alive(), "save_record waits on the pipe"
    assert isinstance(outcome[0], WebError) and outcome[0].status == 403
    assert str(outcome[0]) == (f"{PLAYED_FILE} in the data folder is not a regular file (a folder, a named pipe ...): "
                               "played games are written to a file (move it away)")


def test_a_database_with_a_linked_side_file_is_refused_by_name(data, tmp_path):
    import sqlite3

    conn = sqlite3.connect(data / "t.sqlite")
    conn.execute("CREATE TABLE notes (text TEXT)")
    conn.commit()
    conn.close()
    os.symlink(tmp_path / "outside" / "wal", data / "t.sqlite-wal")
    reply = TestClient(create_app(data)).get("/api/tournaments", params={"db": "t.sqlite"})
    assert reply.status_code == 403, reply.text
    assert reply.json()["error"] == ("database 't.sqlite': its SQLite side file t.sqlite-wal is a symbolic link: "
                                     "allowed are databases whose -wal, -shm, -journal files are plain files inside "
                                     "the data folder (or absent)")
    assert os.listdir(tmp_path / "outside") == []


# ------------------------------------------------------------------------------------------------
# item 2: what an analysis may cost


def test_the_issues_45_huge_analyses_are_refused_and_the_server_answers_on(data):
    with serving(data) as (url, _):
        with ThreadPoolExecutor(45) as pool:
            asked = [pool.submit(call, f"{url}/api/analysis?file=good.jsonl&line=1&evaluator={BIG}", None, 30)
                     for _ in range(45)]
            started = time.monotonic()
            status, _, _ = call(f"{url}/api/files", timeout=10)
            assert status == 200 and time.monotonic() - started < 10
            answers = [future.result() for future in asked]
        for status, answer, _ in answers:
            assert status == 400, answer
            assert answer["error"] == ("evaluator budget 1000000000 is above this server's limit: allowed are "
                                       "1..10000 positions a decision (midnight serve --max-budget sets the limit)")
        assert running(url) == 0


@pytest.mark.parametrize("evaluator, why", [
    ("search:budget=10001", "evaluator budget 10001 is above this server's limit: allowed are 1..10000"),
    ("value-midnight_party-4p:budget=99999", "evaluator budget 99999 is above this server's limit"),
    ("search:turns=1000000000", "evaluator turns 1000000000 is above this server's limit: allowed are 1..4"),
])
def test_an_evaluator_over_the_limits_is_a_400_naming_them(data, evaluator, why):
    reply = TestClient(create_app(data)).get("/api/analysis", params={"file": "good.jsonl", "line": 1,
                                                                      "evaluator": evaluator})
    assert reply.status_code == 400 and why in reply.json()["error"], reply.text
    raised = TestClient(create_app(data, max_budget=20_000)).get(
        "/api/analysis", params={"file": "good.jsonl", "line": 1, "evaluator": "search:budget=10001"})
    assert raised.status_code == 200  # --max-budget moves the limit


SLOW = "search%3Abudget%3D100000"  # about 15 s for the game's 80 decisions, a second or two for its slowest


def test_analyses_beyond_the_bound_are_answered_busy(data):
    with serving(data, "--max-analyses", "1", "--max-budget", "100000") as (url, _):
        slow = open_request(url, f"/api/analysis?file=good.jsonl&line=1&evaluator={SLOW}")
        try:
            wait_for(lambda: running(url) == 1, 30)
            status, answer, headers = call(f"{url}/api/analysis?file=good.jsonl&line=1&evaluator=search%3Abudget"
                                           "%3D100")
            assert status == 503, answer
            assert answer["error"] == ("busy: 1 analyses running, try again in a moment (this server runs at most 1 "
                                       "at once: midnight serve --max-analyses)")
            assert headers.get("Retry-After") == "5"
            assert call(f"{url}/api/files", timeout=10)[0] == 200  # the rest is served
        finally:
            slow.close()


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads the server's CPU time from /proc")
def test_an_analysis_whose_client_has_gone_stops(data):
    with serving(data, "--max-analyses", "1", "--max-budget", "100000") as (url, proc):
        slow = open_request(url, f"/api/analysis?file=good.jsonl&line=1&evaluator={SLOW}")
        wait_for(lambda: running(url) == 1, 30)
        time.sleep(1.5)  # searching the moves now
        slow.close()  # the client leaves
        wait_for(lambda: running(url) == 0, 8)  # within a decision or two: the rest of the game takes 13 s or more
        before = cpu_seconds(proc.pid)
        time.sleep(2)
        assert cpu_seconds(proc.pid) - before < 0.5  # idle: nothing searches on
        status, answer, _ = call(f"{url}/api/analysis?file=good.jsonl&line=1&evaluator=search%3Abudget%3D100")
        assert status == 200 and answer["evaluator"]["spec"] == "search:budget=100"  # its place serves the next


def test_an_analysis_stops_when_cancelled_and_batches_change_no_value(record):
    asked = []

    def cancelled() -> bool:
        asked.append(1)
        return len(asked) > 2

    with pytest.raises(AnalysisCancelled, match=r"the analysis was cancelled after 2 of \d+ decisions valued"):
        analyze_record(record, 1, "search:budget=100", batch=1, cancelled=cancelled)
    assert len(asked) == 3
    whole = analyze_record(record, 1, "search:budget=100").as_dict()["decisions"]
    assert analyze_record(record, 1, "search:budget=100", batch=7).as_dict()["decisions"] == whole


@pytest.mark.parametrize("argv, why", [
    (["--max-budget", "100"], "--max-budget 100 is out of range: allowed are 1500 or more"),
    (["--max-analyses", "0"], "--max-analyses 0 is out of range: allowed are 1 or more"),
])
def test_serve_refuses_limits_out_of_range(capsys, data, argv, why):
    code = main(["serve", "--port", "0", "--data", str(data), *argv])
    err = capsys.readouterr().err
    assert code == 2 and why in err and len(err.strip().splitlines()) == 1


# ------------------------------------------------------------------------------------------------
# items 15, 16: every field checked for its type and range, by name


BAD_PLAY = [
    ({"opponents": 5}, "opponents 5 is a number: allowed are an agent's name for every other seat, names separated "
                       "by commas, or a list of names (one per other seat)"),
    ({"players": 2.5}, "players 2.5 is not a whole number: allowed are 1..8"),
    ({"players": "2.5"}, "players '2.5' is not a number: allowed are 1..8"),  # kept
    ({"players": "\u00b2"}, "players '\u00b2' is not a number: allowed are 1..8"),  # kept
    ({"players": [2]}, "players [2] is a list, not a number: allowed are 1..8"),
    ({"players": None}, "players None is not a number: allowed are 1..8"),
    ({"players": 9}, "players 9 is out of range: allowed are 1..8"),
    ({"seat": 1.5}, "seat 1.5 is not a whole number: allowed are 0..2"),
    ({"seat": -1}, "seat -1 is out of range: allowed are 0..2"),  # kept
    ({"seed": 1.5}, "seed 1.5 is not a whole number: allowed are integers 0..2**62-1"),
    ({"seed": 2**62}, "seed 4611686018427387904 is out of range: allowed are integers 0..2**62-1"),
    ({"seed": {"n": 1}}, "seed {'n': 1} is an object, not a number"),
    ({"variant": 5}, "variant 5 is a number, not text: allowed are midnight_party, hidden_castle"),
    ({"opponents": ["random", 5]}, "opponents[1] 5 is a number, not an agent's name"),
    ({"opponents": {"seat": "random"}}, "opponents {'seat': 'random'} is an object: allowed are an agent's name"),
    ({"player": 2}, "POST /api/play: unknown field 'player': allowed are variant, players, seat, opponents, seed"),
]


@pytest.mark.parametrize("body, why", BAD_PLAY)
def test_a_bad_field_of_a_new_game_is_a_400_naming_it(data, body, why):
    client = TestClient(create_app(data))
    reply = client.post("/api/play", json={"variant": "midnight_party", "players": 3, "seat": 0,
                                           "opponents": "random", **body})
    assert reply.status_code == 400, reply.text
    assert why in reply.json()["error"], reply.json()
    assert client.get("/api/files").status_code == 200


def test_the_issues_two_and_a_half_players_start_no_game(data):
    reply = TestClient(create_app(data)).post("/api/play", json={"opponents": "random", "players": 2.5})
    assert reply.status_code == 400 and reply.json() == {"error": "players 2.5 is not a whole number: allowed are 1..8"}


def test_a_move_with_an_unknown_field_is_refused(data):
    client = TestClient(create_app(data))
    game = client.post("/api/play", json={"variant": "hidden_castle", "players": 1, "opponents": []}).json()
    reply = client.post(f"/api/play/{game['id']}", json={"move": game["frame"]["legal"][0], "undo": True})
    assert reply.status_code == 400
    assert reply.json()["error"] == "POST /api/play/{id}: unknown field 'undo': allowed are move"


BAD_QUERIES = [
    ("/api/agents", {"players": "99"}, "players 99 is out of range: allowed are 1..8"),
    ("/api/game", {"agents": "random", "players": "2.5", "seed": "1"},
     "players '2.5' is not a number: allowed are 1..8"),  # kept
    ("/api/game", {"agents": "random", "players": "2", "seed": "1.5"},
     "seed '1.5' is not a number: allowed are integers 0..2**62-1"),
    ("/api/game", {"agents": "random", "players": "2", "seed": "-3"},
     "seed -3 is out of range: allowed are integers 0..2**62-1"),
    ("/api/game", {"file": "good.jsonl", "line": "1.0"},
     "line '1.0' is not a line number: allowed are integers 1 or more"),  # kept
    ("/api/game", {"file": "good.jsonl", "line": "0"},
     "line 0 is out of range: allowed are integers 1 or more"),  # kept
    ("/api/tournament", {"db": "t.sqlite", "key": "k", "offset": "-1"},
     "offset -1 is out of range: allowed are integers 0 or more"),
    ("/api/tournament", {"db": "t.sqlite", "key": "k", "limit": "0"}, "limit 0 is out of range: allowed are 1..10000"),
    ("/api/game", {"db": "t.sqlite", "key": "k", "game": "-1"}, "game -1 is out of range: allowed are integers 0 or "
                                                                "more"),
]


@pytest.mark.parametrize("path, params, why", BAD_QUERIES)
def test_a_bad_query_field_is_a_400_naming_it(data, path, params, why):
    import sqlite3

    conn = sqlite3.connect(data / "t.sqlite")  # a database to name (its tournament is never reached)
    conn.execute("CREATE TABLE tournaments (config_hash TEXT, config TEXT)")
    conn.commit()
    conn.close()
    reply = TestClient(create_app(data)).get(path, params=params)
    assert reply.status_code == 400, reply.text
    assert why in reply.json()["error"], reply.json()
