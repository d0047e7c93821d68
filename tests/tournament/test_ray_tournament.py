"""The ``ray`` tournament backend on a real Ray instance of this machine (loopback only, two
CPUs: the conftest's ``ray_instance``, started once for the module): the same games and table as
the local backend, a worker killed in the middle of a chunk, resuming across backends, model
files that reach the workers unasked, a cluster given by its address."""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import sys
import tempfile
import time

import pytest

from midnight_env import cli
from midnight_env.tournament import make_tournament_config, run_tournament
from midnight_env.tournament.ray_backend import TASK_NAME

ROWS = ("SELECT game_index, deal, seed, agents, points, ranks, rolls, decisions, truncated FROM games "
        "ORDER BY game_index")


def _rows(db) -> list[tuple]:
    with sqlite3.connect(db) as conn:
        return conn.execute(ROWS).fetchall()


# modules the workers import (the conftest's ray_instance puts them on their PYTHONPATH)
RAY_WORKER_MODULES = {"midnight_test_bots": """
import numpy as np

from midnight_env.arena.agent import Agent


class Stubborn(Agent):
    name = "stubborn"

    def act(self, decisions):
        return np.zeros(len(decisions), np.int64)  # action 0, legal or not
"""}


@pytest.fixture(scope="module")
def reference(tmp_path_factory, ray_instance):
    """A small tournament played by the local backend: its rows, standings and records."""
    folder = tmp_path_factory.mktemp("reference")
    config = make_tournament_config("midnight_party", 4, ["random", "runner", "expert", "ppo-midnight_party-4p",
                                                          f"ppo:path={_model_copy(folder)}"], seed=5)
    run = run_tournament(config, 40, db=folder / "local.sqlite", batch_size=40, records=folder / "local.jsonl",
                         progress=False)
    return config, run, _rows(folder / "local.sqlite"), (folder / "local.jsonl").read_text()


def _model_copy(folder):
    """A trained model in a file of its own (the shipped one, copied): ``ppo:path=`` names it."""
    from midnight_agents.ppo import MODELS_DIR

    for suffix in (".npz", ".json"):
        shutil.copy(MODELS_DIR / f"ppo-midnight_party-4p{suffix}", folder / f"mine{suffix}")
    return folder / "mine.npz"


@pytest.mark.slow  # a Ray instance and its workers
def test_the_same_games_and_table_as_the_local_backend(tmp_path, reference):
    config, local, rows, records = reference
    model = config.agents[-1].split("=", 1)[1]

    def model_gone(chunk):  # later chunks are played without the file: the weights travel in the agents
        for suffix in (".npz", ".json"):
            if os.path.exists(model[:-4] + suffix):
                os.rename(model[:-4] + suffix, tmp_path / f"moved{suffix}")

    try:
        run = run_tournament(config, 40, db=tmp_path / "ray.sqlite", batch_size=5, records=tmp_path / "ray.jsonl",
                             progress=False, backend="ray", on_batch=model_gone)
    finally:
        for suffix in (".npz", ".json"):
            if (tmp_path / f"moved{suffix}").exists():
                os.rename(tmp_path / f"moved{suffix}", model[:-4] + suffix)
    assert run.backend == "ray" and run.played == 40
    assert _rows(tmp_path / "ray.sqlite") == rows
    assert run.standings == local.standings
    assert (tmp_path / "ray.jsonl").read_text() == records


def _chunk_workers() -> list[int]:
    """Process ids of the Ray workers playing a chunk now (Ray titles them ``ray::<task>``)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                title = f.read().split(b"\0")[0].decode(errors="replace")
        except OSError:
            continue
        if title.startswith(f"ray::{TASK_NAME}"):
            found.append(int(pid))
    return found


@pytest.mark.slow  # a Ray instance, and chunks long enough to be caught in the middle
def test_a_worker_killed_in_a_chunk_loses_and_doubles_no_game(tmp_path, ray_instance):
    config = make_tournament_config("midnight_party", 4, ["random", "runner", "coward", "expert"], seed=11)
    games, batch = 1600, 400  # a chunk takes about a second here: long enough to be killed in
    killed = []

    def kill_a_worker(chunk):
        deadline = time.monotonic() + 60
        while not killed and time.monotonic() < deadline:
            for pid in _chunk_workers():
                os.kill(pid, signal.SIGKILL)  # Ray plays that worker's chunk again
                killed.append(pid)
                break
            else:
                time.sleep(0.01)

    run = run_tournament(config, games, db=tmp_path / "ray.sqlite", batch_size=batch, progress=False,
                         backend="ray", on_batch=kill_a_worker)
    assert len(killed) == 1, "no worker was found playing a chunk"
    assert run.played == games and run.results.num_games == games
    rows = _rows(tmp_path / "ray.sqlite")
    assert [r[0] for r in rows] == list(range(games))  # every game once
    local = run_tournament(config, games, db=tmp_path / "local.sqlite", batch_size=batch, progress=False)
    assert rows == _rows(tmp_path / "local.sqlite") and run.standings == local.standings


@pytest.mark.slow  # a Ray instance
def test_resume_across_backends(tmp_path, reference):
    config, local, rows, _ = reference
    # ray first, local resumes
    run_tournament(config, 15, db=tmp_path / "a.sqlite", batch_size=5, progress=False, backend="ray")
    rest = run_tournament(config, 40, db=tmp_path / "a.sqlite", resume=True, batch_size=8, progress=False)
    assert rest.played == 25 and _rows(tmp_path / "a.sqlite") == rows and rest.standings == local.standings
    # local first, ray resumes: only the missing games go out
    run_tournament(config, 12, db=tmp_path / "b.sqlite", batch_size=4, progress=False)
    sent = []
    rest = run_tournament(config, 40, db=tmp_path / "b.sqlite", resume=True, batch_size=6, progress=False,
                          backend="ray", on_batch=lambda chunk: sent.extend(chunk.tolist()))
    assert sorted(sent) == list(range(12, 40)) and rest.played == 28
    assert _rows(tmp_path / "b.sqlite") == rows and rest.standings == local.standings


@pytest.mark.slow  # a Ray instance
def test_cli_backend_ray(tmp_path, ray_instance, capsys):
    args = ["tournament", "--variant", "hidden_castle", "--players", "3", "--agents", "random,runner,coward",
            "--games", "12", "--batch-size", "4", "--db", str(tmp_path / "t.sqlite"), "--no-progress"]
    assert cli.main(args + ["--backend", "ray", "--workers", "2"]) == 0
    out = capsys.readouterr().out
    assert "played 12 games on Ray" in out and "| rank | agent |" in (tmp_path / "t_leaderboard.md").read_text()


@pytest.mark.slow  # a Ray instance
def test_the_instance_listens_on_the_loopback_address_only(ray_instance):
    assert [node["NodeManagerAddress"] for node in ray_instance.nodes()] == ["127.0.0.1"]
    assert ray_instance.cluster_resources()["CPU"] == 2


@pytest.mark.slow  # a Ray instance
def test_an_agents_error_on_a_worker_is_raised_as_here(tmp_path, ray_instance):
    from midnight_env.arena.registry import AgentError

    config = make_tournament_config("midnight_party", 2, ["random", "midnight_test_bots:Stubborn"], seed=2)
    errors = []
    for backend in ("local", "ray"):
        with pytest.raises(AgentError, match="chose an illegal action in the game seeded") as err:
            run_tournament(config, 8, db=tmp_path / f"{backend}.sqlite", progress=False, backend=backend)
        errors.append(str(err.value))
    assert errors[0] == errors[1]


@pytest.mark.slow  # a Ray cluster started apart (ray start --head), and a driver process
def test_a_tournament_on_a_cluster_given_by_its_address(tmp_path, ray_instance):
    """``--address``: the cluster of ``ray start --head`` on this machine, bound to the loopback
    address, token authentication on (Ray's default) and the driver told so."""
    import socket
    import subprocess

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = dict(os.environ, RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER="0", RAY_USAGE_STATS_ENABLED="0", RAY_AUTH_MODE="token")
    ray_command = os.path.join(os.path.dirname(sys.executable), "ray")
    # its own temp folder: `ray start` leaves its address there for ray.init() to join, and the
    # machine's /tmp/ray is anyone's (short: Ray's socket paths must fit in 107 characters)
    temp = tempfile.mkdtemp(prefix="ray", dir="/tmp")
    head = subprocess.Popen([ray_command, "start", "--head", "--block", f"--port={port}", "--num-cpus=2",
                             "--include-dashboard=false", f"--temp-dir={temp}"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert head.poll() is None and time.monotonic() < deadline, "ray start --head did not come up"
                time.sleep(0.2)
        args = ["tournament", "--variant", "hidden_castle", "--players", "3", "--agents", "random,runner,coward",
                "--games", "12", "--batch-size", "4", "--db", str(tmp_path / "t.sqlite"), "--no-progress"]
        run = subprocess.run([sys.executable, "-m", "midnight_env.cli", *args, "--backend", "ray", "--address",
                              f"127.0.0.1:{port}"], env=env, capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stderr[-3000:]
        assert "played 12 games on Ray" in run.stdout
    finally:
        head.send_signal(signal.SIGTERM)  # `ray start --block` stops the processes it started
        head.wait(timeout=120)
        shutil.rmtree(temp, ignore_errors=True)
    assert cli.main(args + ["--out", str(tmp_path / "local")]) == 0  # complete: the local backend plays nothing
    local = run_tournament(make_tournament_config("hidden_castle", 3, ["random", "runner", "coward"]), 12,
                           db=tmp_path / "local.sqlite", progress=False)
    assert _rows(tmp_path / "t.sqlite") == _rows(tmp_path / "local.sqlite") and local.played == 12


def test_ray_refusals_come_before_anything_is_written(tmp_path, monkeypatch, capsys):
    db = tmp_path / "t.sqlite"
    base = ["tournament", "--players", "2", "--agents", "random,runner", "--games", "4", "--db", str(db),
            "--no-progress"]
    assert cli.main(base + ["--address", "127.0.0.1:1"]) == 2
    assert "--address '127.0.0.1:1' is only for the ray backend" in capsys.readouterr().err
    assert cli.main(base + ["--backend", "ray", "--workers", "0"]) == 2
    assert "--workers 0 is out of range" in capsys.readouterr().err
    monkeypatch.setitem(sys.modules, "ray", None)  # Ray not installed
    assert cli.main(base + ["--backend", "ray"]) == 2
    err = capsys.readouterr().err
    assert "--backend 'ray' needs Ray, which is not installed: pip install 'midnight-env[ray]'" in err
    assert len(err.strip().splitlines()) == 1 and not db.exists()


@pytest.mark.slow  # a driver process
def test_an_address_where_no_cluster_answers_is_refused_at_once(tmp_path):
    import subprocess

    pytest.importorskip("ray")
    db = tmp_path / "t.sqlite"
    env = dict(os.environ, RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER="0")  # 127.0.0.1 stays 127.0.0.1 (Ray's own rule)
    run = subprocess.run([sys.executable, "-m", "midnight_env.cli", "tournament", "--players", "2", "--agents",
                          "random,runner", "--games", "4", "--db", str(db), "--no-progress", "--backend", "ray",
                          "--address", "127.0.0.1:1"], env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 2 and not db.exists()
    assert run.stderr.strip().splitlines()[-1].startswith(
        "midnight tournament: error: --address '127.0.0.1:1': no Ray cluster answers there")


@pytest.mark.slow  # a process that starts a Ray instance of its own
def test_benchmark_script_runs(tmp_path):
    """Smoke test of experiments/bench_ray.py with a tiny budget (it measures, never asserts speed)."""
    import subprocess
    from pathlib import Path

    script = Path(__file__).resolve().parents[2] / "experiments" / "bench_ray.py"
    run = subprocess.run([sys.executable, str(script), "--quick", "--parts", "chunk"], capture_output=True, text=True,
                         timeout=600, cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "| a Ray task's round trip, one at a time, 1 worker, nothing stored | 40 |" in run.stdout
