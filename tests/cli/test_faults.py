"""Hostile and careless input (issue 12): each case gets one line naming the value and what is
allowed, exit 2, and nothing stored is lost or changed. Each test here failed before its fix.

The second round (issue 39) lives beside this file, each module's docstring listing its cases with
the line each prints: ``test_faults_web.py`` (the server: paths inside ``--data``, bounded
analyses, every field of a request), ``test_faults_files.py`` (devices, FIFOs, a full disk, an
endless line, bytes that are not text), ``test_faults_settings.py`` (batch sizes, every trainer's
settings, nested configs, exploit and solve flags), ``test_faults_api.py`` (hand-made states,
seeds, indices, faces, actions and rolls of the Python API)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from cli_helpers import one_line_error, run_cli

import midnight_env
from midnight_env import ActionError, Engine, VectorEnv
from midnight_env.cli import main
from midnight_env.core.config import ConfigError, UnknownOptionError
from midnight_env.core.records import RecordError, replay_record
from midnight_env.envs.aec import OrderError


@pytest.fixture(scope="module")
def record_lines(tmp_path_factory):
    path = tmp_path_factory.mktemp("records") / "r.jsonl"
    assert main(["simulate", "--players", "2", "--games", "3", "--record", str(path), "--no-progress"]) == 0
    return path.read_text().splitlines()


# ------------------------------------------------------------------------------------------------
# records


def test_replay_keep_going_checks_every_line_after_a_bad_one(tmp_path, capsys, record_lines):
    path = tmp_path / "mixed.jsonl"
    path.write_bytes(record_lines[0].encode() + b"\n{not json\n" + b"\xff\xfe bad bytes\n"
                     + record_lines[1].encode() + b"\n" + b"[" * 100_000 + b"\n" + record_lines[2].encode() + b"\n")
    code, out, err = run_cli(capsys, "replay", "--keep-going", str(path))
    assert code == 2
    assert "3 records replayed, 3 bad" in out
    assert "line 2: not valid JSON" in err and "line 3: not UTF-8 text" in err
    assert "line 5: not a record: its JSON is nested too deeply" in err and "Traceback" not in err


def test_replay_and_render_refuse_malformed_values_with_line_and_event(tmp_path, capsys, record_lines):
    rec = json.loads(record_lines[0])
    rec["events"][0]["legal"] = [["g1"], "g2"]  # an unhashable entry
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps(rec) + "\n")
    for command in (["replay", str(path)], ["render", "--record", str(path)]):
        code, _, err = run_cli(capsys, *command)
        assert code == 2
        one_line_error(err, "line 1, event 0", "'legal' must be a list of choices")


def test_a_decision_without_its_legal_choices_is_refused(record_lines):
    rec = json.loads(record_lines[0])
    del rec["events"][3]["legal"]
    with pytest.raises(RecordError, match=r"event 3: .* without 'legal': RECORDS.md lists the legal choices"):
        replay_record(rec, 1)


def test_a_record_cannot_name_a_board_file(record_lines, tmp_path):
    rec = json.loads(record_lines[0])
    rec["options"]["board"] = str(tmp_path / "any.json")
    with pytest.raises(RecordError, match=r"line 4: unknown option 'board' for variant midnight_party"):
        replay_record(rec, 4)


def test_set_takes_only_rule_options(capsys):
    for pair, word in [("board=/etc/passwd", "'board'"), ("variant=hidden_castle", "'variant'"),
                       ("num_players=3", "'num_players'")]:
        code, _, err = run_cli(capsys, "simulate", "--games", "1", "--set", pair, "--no-progress")
        assert code == 2
        one_line_error(err, f"unknown option {word}", "allowed are guests_per_player")
    code, _, err = run_cli(capsys, "simulate", "--set", "rounds=1", "--set", "rounds=2")
    assert code == 2 and "given twice" in err


def test_unknown_env_keywords_are_type_errors_naming_what_is_allowed():
    with pytest.raises(TypeError, match=r"unknown option 'frameskip' .*allowed are guests_per_player"):
        midnight_env.env("midnight_party", 2, frameskip=4)
    with pytest.raises(ConfigError):  # still a ConfigError (ValueError) for the command line
        Engine("hidden_castle", 2, rounds=2)
    assert issubclass(UnknownOptionError, TypeError) and issubclass(UnknownOptionError, ValueError)


# ------------------------------------------------------------------------------------------------
# seeds and the engine API


@pytest.mark.parametrize("seed, games", [(9223372036854775807, 2), (2**63, 1), (2**62 - 1, 2), (-1, 1)])
def test_simulate_refuses_seeds_out_of_range_before_playing(capsys, tmp_path, seed, games):
    out = tmp_path / "r.jsonl"
    code, _, err = run_cli(capsys, "simulate", "--seed", str(seed), "--games", str(games), "--record", str(out),
                           "--no-progress")
    assert code == 2
    one_line_error(err, "allowed are", "2**62-1")
    assert not out.exists()


@pytest.mark.parametrize("actions", [[3.7, -1], [np.nan, -1], [np.inf, -1], ["3", -1], [True, False],
                                     np.array([2**64 - 1, 0], np.uint64), [[1, 2]], [1, 2, 3]])
def test_the_engine_takes_integer_actions_of_the_right_shape_only(actions):
    engine = Engine("midnight_party", 2)
    state = engine.new_games([1, 2])
    before = state.copy()
    with pytest.raises(ActionError):
        engine.step(state, actions)
    assert state.equal(before)


@pytest.mark.parametrize("seeds", [[1.5], [np.nan], [2**63], [-3], [True], ["7"], 1.5])
def test_new_games_takes_seeds_in_range_only(seeds):
    with pytest.raises(ValueError, match="allowed are integers 0..2\\*\\*62-1"):
        Engine("midnight_party", 2).new_games(seeds)


def test_vector_env_takes_one_action_per_game():
    venv = VectorEnv(4, "midnight_party", 2, seed=0)
    obs, _ = venv.reset()
    legal = obs["action_mask"].argmax(axis=1)
    with pytest.raises(ValueError, match=r"shape \(2, 2\) for 4 games"):
        venv.step(legal.reshape(2, 2))
    with pytest.raises(ValueError, match="is out of range"):
        venv.step(np.full(4, 2**64 - 1, np.uint64))


# ------------------------------------------------------------------------------------------------
# crashes that became one line


def test_disk_full_is_one_line_naming_the_file(capsys):
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full on this system")
    code, _, err = run_cli(capsys, "simulate", "--games", "3", "--record", "/dev/full", "--no-progress")
    assert code == 2
    one_line_error(err, "cannot write records to /dev/full", "No space left on device")


@pytest.mark.parametrize("args, words", [
    (["render", "--delay", "inf"], ["--delay inf", "allowed are 0..60"]),
    (["render", "--delay", "nan"], ["--delay nan"]),
    (["render", "--line", "0", "--record", "x.jsonl"], ["--line 0"]),
    (["bench", "--batches", "0"], ["--batches 0", "1 or more"]),
    (["bench", "--batches", "a,b"], ["--batches 'a,b'"]),
    (["bench", "--repeats", "0"], ["--repeats 0"]),
    (["simulate", "--games", "0"], ["--games 0"]),
])
def test_bad_numbers_on_the_command_line(capsys, args, words):
    code, _, err = run_cli(capsys, *args)
    assert code == 2
    one_line_error(err, *words)


def test_a_bad_parallel_threshold_is_a_warning_not_a_crash():
    env = dict(os.environ, MIDNIGHT_PARALLEL_FROM="abc")
    out = subprocess.run([sys.executable, "-m", "midnight_env.cli", "agents"], env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0 and "Traceback" not in out.stderr
    assert "MIDNIGHT_PARALLEL_FROM='abc' is not allowed: allowed are whole numbers >= 1" in out.stderr


def test_play_with_stdin_closed_leaves_the_game():
    out = subprocess.run([sys.executable, "-m", "midnight_env.cli", "play", "--players", "2", "--seed", "1",
                          "--no-color"], stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and "game left unfinished" in out.stdout and "Traceback" not in out.stderr
    closed = subprocess.run([sys.executable, "-c", "import os, sys; os.close(0); sys.stdin = None; "
                             "from midnight_env.cli import main; sys.exit(main(['play', '--players', '2', "
                             "'--seed', '1', '--no-color']))"], capture_output=True, text=True, timeout=300)
    assert closed.returncode == 0 and "game left unfinished" in closed.stdout, closed.stderr


def test_play_takes_a_superscript_digit_as_a_wrong_answer(monkeypatch, capsys):
    import io

    monkeypatch.setattr(sys, "stdin", io.StringIO("²\nq\n"))
    code, out, _ = run_cli(capsys, "play", "--players", "2", "--seed", "3", "--no-color")
    assert code == 0
    assert "'²' is not a legal choice here" in out and "game left unfinished" in out


@pytest.mark.slow
def test_a_huge_simulation_starts_instead_of_running_out_of_memory():
    """10**15 games are played batch by batch: the first games finish (the run is then stopped)."""
    proc = subprocess.Popen([sys.executable, "-m", "midnight_env.cli", "simulate", "--games", str(10**15),
                             "--batch-size", "4", "--players", "2"], stderr=subprocess.PIPE, text=True)
    try:
        seen = ""
        while "4/1000000000000000" not in seen and proc.poll() is None:
            seen += proc.stderr.read(1)
        assert proc.poll() is None, seen  # still playing, not dead of a MemoryError
    finally:
        proc.kill()
        proc.wait()


# ------------------------------------------------------------------------------------------------
# the PettingZoo env's order


def test_the_env_names_calls_out_of_order():
    env = midnight_env.env("midnight_party", 2, max_turns=3)
    with pytest.raises(OrderError, match="observe\\(\\) called before reset"):
        env.observe("player_0")
    env.reset(seed=1)
    for _ in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else int(np.flatnonzero(obs["action_mask"])[0]))
    assert env.agents == []
    with pytest.raises(OrderError, match="after every agent has left"):
        env.step(None)
    with pytest.raises(OrderError, match="after every agent has left"):
        env.last()


# ------------------------------------------------------------------------------------------------
# a damaged kernel cache


# slow: compiles a kernel afresh in a new process (5 s)
@pytest.mark.slow
def test_a_damaged_kernel_cache_file_is_compiled_again(tmp_path):
    (tmp_path / "kernel_mod.py").write_text("from numba import njit\n\n@njit(cache=True)\ndef plus_one(x):\n"
                                            "    return x + 1\n")
    code = "import midnight_env, kernel_mod; print(kernel_mod.plus_one(41))"
    env = dict(os.environ, PYTHONPATH=str(tmp_path))

    def run():
        return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)

    first = run()
    assert first.stdout.strip() == "42", first.stderr
    for cached in (tmp_path / "__pycache__").glob("kernel_mod*.nb*"):
        cached.write_bytes(cached.read_bytes()[:20])  # truncated, as after a crash mid-write
    again = run()
    assert again.returncode == 0 and again.stdout.strip() == "42", again.stderr
    assert "is unreadable" in again.stderr and "the kernel is compiled again" in again.stderr
    healed = run()
    assert healed.stdout.strip() == "42" and "unreadable" not in healed.stderr  # written afresh


def test_no_warning_when_the_cache_is_sound():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Engine("hidden_castle", 2).new_games(3)


# ------------------------------------------------------------------------------------------------
# tournaments: outputs, databases, configurations


def tournament(capsys, tmp_path, *extra, db="t.sqlite", agents="random,runner,coward"):
    return run_cli(capsys, "tournament", "--players", "2", "--agents", agents, "--games", "6", "--db",
                   str(tmp_path / db) if not os.path.isabs(db) else db, "--no-progress", *extra)


def rows(db: Path) -> int:
    import sqlite3

    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT COUNT(*) FROM games").fetchone()[0]


def test_records_may_not_overwrite_the_database(capsys, tmp_path):
    db = tmp_path / "t.sqlite"
    assert tournament(capsys, tmp_path)[0] == 0
    (tmp_path / "sub").mkdir()
    os.symlink(db, tmp_path / "link.sqlite")
    for target in (db, tmp_path / "sub" / ".." / "t.sqlite", tmp_path / "link.sqlite", Path(f"{db}-wal")):
        code, _, err = tournament(capsys, tmp_path, "--resume", "--records", str(target))
        assert code == 2
        one_line_error(err, "--records", "is the database")
    assert rows(db) == 6


@pytest.mark.parametrize("name", ["a%41b.sqlite", "a#b.sqlite", "a?b.sqlite"])
def test_database_names_with_uri_characters(capsys, tmp_path, name):
    assert tournament(capsys, tmp_path, db=name)[0] == 0
    assert tournament(capsys, tmp_path, db=name)[0] == 0  # reused: all games already there
    code, _, err = tournament(capsys, tmp_path, "--seed", "5", db=name)  # another configuration
    assert code == 2 and "holds another tournament configuration" in err
    assert sorted(p.name for p in tmp_path.iterdir() if p.suffix == ".sqlite") == [name]
    assert rows(tmp_path / name) == 6


def test_tournament_seeds_in_the_one_range(capsys, tmp_path):
    code, _, err = tournament(capsys, tmp_path, "--seed", str(2**63))
    assert code == 2
    one_line_error(err, "--seed 9223372036854775808 is out of range: allowed are integers 0..2**62-1")
    assert not (tmp_path / "t.sqlite").exists()


def test_a_solo_tournament_is_rated_by_points_against_hugo(capsys, tmp_path):
    code, out, _ = run_cli(capsys, "tournament", "--players", "1", "--agents", "expert,random", "--games", "8",
                           "--db", str(tmp_path / "solo.sqlite"), "--no-progress")
    assert code == 0
    table = [line.split() for line in out.splitlines() if line.strip()[:1].isdigit() and "expert" in line
             or "random" in line and line.strip()[:1].isdigit()]
    assert [r[1] for r in table] == ["expert", "random"]  # fewest points first
    assert table[0][3] == "-"  # no rating without a finishing order


def test_out_naming_a_file_is_refused_before_playing(capsys, tmp_path):
    (tmp_path / "afile").write_text("x")
    code, _, err = tournament(capsys, tmp_path, "--out", str(tmp_path / "afile"))
    assert code == 2
    one_line_error(err, "--out", "is a file")
    assert not (tmp_path / "t.sqlite").exists()


def test_a_read_only_database_is_refused_and_left_clean(capsys, tmp_path, monkeypatch):
    db = tmp_path / "t.sqlite"
    assert tournament(capsys, tmp_path)[0] == 0
    for f in tmp_path.glob("t.sqlite-*"):
        f.unlink()
    db.chmod(0o444)
    if os.getuid() == 0:  # root writes anyway: judge by the mode bits, as for any other user
        real = os.access
        monkeypatch.setattr(os, "access", lambda p, mode, **kw: not (Path(p) == db and mode & os.W_OK)
                            and real(p, mode, **kw))
    code, _, err = tournament(capsys, tmp_path, "--games", "12", "--resume")
    assert code == 2
    one_line_error(err, "is read-only")
    assert not Path(f"{db}-wal").exists() and not Path(f"{db}-shm").exists()
    db.chmod(0o644)
    monkeypatch.undo()
    assert tournament(capsys, tmp_path, "--games", "12", "--resume")[0] == 0 and rows(db) == 12


def test_resume_with_a_changed_configuration_says_so(capsys, tmp_path):
    assert tournament(capsys, tmp_path)[0] == 0
    code, out, _ = tournament(capsys, tmp_path, "--seed", "9", "--resume")
    assert code == 0 and "note: " in out and "a new tournament was started beside its 1 other" in out


def test_two_tournaments_in_one_database_keep_their_own_leaderboards(capsys, tmp_path):
    assert tournament(capsys, tmp_path)[0] == 0
    assert tournament(capsys, tmp_path, "--seed", "9", "--resume")[0] == 0
    assert tournament(capsys, tmp_path)[0] == 0
    boards = sorted(p.name for p in tmp_path.glob("*_leaderboard.md"))
    assert len(boards) == 3 and "t_leaderboard.md" in boards  # the first, then one per configuration
    texts = {(tmp_path / b).read_text().split("configuration ")[1][:16] for b in boards if b != "t_leaderboard.md"}
    assert len(texts) == 2


def test_records_into_an_unwritable_folder_are_refused_before_playing(capsys, tmp_path):
    code, _, err = tournament(capsys, tmp_path, "--records", str(tmp_path / "no" / "such" / "r.jsonl"))
    assert code == 2
    one_line_error(err, "--records", "folder", "does not exist")
    assert not (tmp_path / "t.sqlite").exists()


def test_the_missing_games_of_a_huge_tournament_come_in_batches():
    from midnight_env.tournament.run import missing_games

    batches = missing_games(10**15, {1, 3}, 4)
    assert next(batches).tolist() == [0, 2, 4, 5] and next(batches).tolist() == [6, 7, 8, 9]


# ------------------------------------------------------------------------------------------------
# training


@pytest.mark.parametrize("algo", ["native", "maskable_ppo", "rllib"])
def test_a_bad_training_setting_leaves_no_run_folder(capsys, tmp_path, algo):
    runs = tmp_path / "runs"
    code, _, err = run_cli(capsys, "train", "--algo", algo, "--override", "bogus=1", "--run-dir", str(runs))
    assert code == 2
    one_line_error(err, "unknown setting 'bogus'")
    assert not runs.exists() or not any(runs.iterdir())


def test_a_malformed_training_config_is_one_line(capsys, tmp_path):
    config = tmp_path / "bad.yaml"
    config.write_text("a: [1\n")
    code, _, err = run_cli(capsys, "train", "--config", str(config), "--run-dir", str(tmp_path / "runs"))
    assert code == 2
    one_line_error(err, "bad.yaml is not valid YAML at line 2")


def test_a_kernel_directory_others_can_write_is_not_used(tmp_path, monkeypatch):
    from midnight_env.core import specialize

    shared = tmp_path / "kernels"
    shared.mkdir()
    shared.chmod(0o777)
    monkeypatch.setenv("MIDNIGHT_KERNEL_DIR", str(shared))
    monkeypatch.setattr(specialize, "_warned", False)
    with pytest.warns(UserWarning, match=r"writable by others \(mode drwxrwxrwx\).*only their owner may write"):
        assert specialize.specialized(Engine("hidden_castle", 2).rules) is None
    assert list(shared.iterdir()) == []  # nothing written there
