"""Tournaments: the balanced schedule, SQLite results that survive kill -9, refusals of bad input
and of databases that are not this tournament's, and the leaderboard files."""

from __future__ import annotations

import csv
import hashlib
import importlib.util
import json
import os
import signal
import sqlite3
import subprocess
import sys
from collections import Counter
from itertools import combinations
from pathlib import Path

import numpy as np
import pytest

from midnight_env import cli
from midnight_env.arena.registry import AgentError, list_agents
from midnight_env.core.records import replay_record
from midnight_env.tournament import (
    Schedule,
    TournamentError,
    leaderboard,
    make_tournament_config,
    points_interval,
    run_tournament,
)

ROOT = Path(__file__).resolve().parents[2]
FAST = ["random", "runner", "coward"]


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _count(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT COUNT(*) FROM games").fetchone()[0]


# -- schedule -------------------------------------------------------------------------------------

def test_schedule_is_balanced_over_a_cycle():
    config = make_tournament_config("midnight_party", 3, ["random", "runner", "coward", "expert", "placer"], seed=4)
    schedule = Schedule(config)
    deals = len(list(combinations(range(5), 3)))  # one cycle: every set of 3 of the 5 agents once
    lineups, seeds, deal = schedule.games(range(3 * deals))
    seats = Counter((int(a), s) for row in lineups for s, a in enumerate(row))
    assert set(seats.values()) == {deals * 3 // 5}  # every agent on every seat equally often
    meetings = Counter(frozenset(p) for row in lineups for p in combinations(row.tolist(), 2))
    assert len(meetings) == 10 and len(set(meetings.values())) == 1  # every pair equally often
    for d in range(deals):  # the copies of a deal: same seed, seats rotated
        rows, deal_seeds = lineups[3 * d: 3 * d + 3], seeds[3 * d: 3 * d + 3]
        assert len(set(deal_seeds.tolist())) == 1
        assert np.array_equal(rows[1], np.roll(rows[0], 1)) and np.array_equal(rows[2], np.roll(rows[0], 2))
    assert len(set(seeds.tolist())) == deals


def test_deal_seeds_are_derived_from_the_tournament_key_and_stay_what_they_were():
    from midnight_env.infra.seeds import SEED_LIMIT, derived_seed

    config = make_tournament_config("midnight_party", 3, FAST, seed=4)
    _, seeds, deals = Schedule(config).games(range(12))
    assert [derived_seed(config.key, "deal", int(d)) for d in deals] == seeds.tolist()
    assert all(0 <= s < SEED_LIMIT for s in seeds.tolist())
    # the derivation is part of every stored tournament's games: pinned, so that it cannot drift
    assert derived_seed("midnight", "deal", 0) == 1924228653102902723
    assert derived_seed("probe", 0, 1) != derived_seed("probe", 1, 0)


def test_schedule_depends_on_config_and_index_only():
    config = make_tournament_config("hidden_castle", 2, FAST, seed=1)
    full = Schedule(config).games(range(40))
    part = Schedule(config).games([37, 3, 20])
    for a, b in zip(full, part):
        assert np.array_equal(a[[37, 3, 20]], b)
    other = Schedule(make_tournament_config("hidden_castle", 2, FAST, seed=2)).games(range(40))
    assert not np.array_equal(full[1], other[1])


def test_identical_dice_in_the_copies_of_a_deal():
    from midnight_env.arena.play import play_batch
    from midnight_env.arena.registry import make_agent

    config = make_tournament_config("midnight_party", 2, ["random", "coward"], seed=3)
    lineups, seeds, _ = Schedule(config).games(range(2))
    engine = config.engine()
    res = play_batch(engine, [make_agent("random"), make_agent("coward")], lineups, seeds, record=True)
    faces = [[ev["face"] for ev in rec["events"] if ev["e"] == "roll"] for rec in res.records]
    short = min(len(f) for f in faces)
    assert faces[0][:short] == faces[1][:short]


# -- runs, results and leaderboard ----------------------------------------------------------------

def test_run_writes_every_game_once_and_the_leaderboard(tmp_path):
    config = make_tournament_config("hidden_castle", 3, FAST + ["expert"], seed=0)
    db = tmp_path / "t.sqlite"
    records = tmp_path / "games.jsonl"
    run = run_tournament(config, 24, db=db, batch_size=7, records=records, progress=False)
    assert run.played == 24 and run.results.num_games == 24
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT game_index, seed, variant, agents, points, ranks, engine_version, options "
                            "FROM games ORDER BY game_index").fetchall()
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("SELECT COUNT(*) FROM seats").fetchone()[0] == 24 * 3
    assert [r[0] for r in rows] == list(range(24))
    assert all(r[2] == "hidden_castle" and len(json.loads(r[3])) == 3 and r[6] for r in rows)
    assert json.loads(rows[0][7])["guests_per_player"] == 5
    standings = run.standings
    assert sorted(s.agent for s in standings) == sorted(config.agents)
    assert sum(s.games for s in standings) == 24 * 3
    assert [s.mu for s in standings] == sorted((s.mu for s in standings), reverse=True)  # ranked by the rating shown
    # the records replay and agree with the stored points
    lines = records.read_text().splitlines()
    assert len(lines) == 24
    for line, row in zip(lines, rows):
        rec = json.loads(line)
        replay_record(rec)
        assert rec["final_points"] == json.loads(row[4]) and rec["agents"] == json.loads(row[3])
    from midnight_env.tournament import write_leaderboard

    paths = write_leaderboard(standings, run.results, tmp_path / "out", "t", command="midnight tournament")
    assert "| rank | agent |" in paths["markdown"].read_text()
    with open(paths["csv"]) as f:
        assert len(list(csv.DictReader(f))) == 4
    assert paths["png"].read_bytes()[:4] == b"\x89PNG"


def test_the_printed_leaderboard_fits_80_columns_with_every_figure(tmp_path, capsys):
    long_names = ["random", "runner", "coward", "search:budget=40,residual=0.5,supply=0.25", "expert"]
    config = make_tournament_config("midnight_party", 4, long_names, seed=1)
    run = run_tournament(config, 20, db=tmp_path / "t.sqlite", batch_size=20, progress=False)
    from midnight_env.tournament import format_table, print_table

    printed = "a title\n" + format_table(run.standings, 80) + "\nlegend\n"  # what an 80-column terminal shows
    assert max(len(line) for line in printed.splitlines()) <= 80, printed
    rows = [line.split() for line in printed.splitlines()[4:] if line[:4].strip().isdigit()]
    assert [int(r[0]) for r in rows] == list(range(1, 6))
    for row, s in zip(rows, run.standings):  # every figure in full, in the order of the ratings
        assert [f"{s.games}", f"{s.mu:.2f}", "±", f"{1.96 * s.sigma:.2f}", f"{s.mean_points:.2f}", "±",
                f"{s.points_ci:.2f}", f"{s.win_rate:.3f}", f"{s.mean_rank:.3f}"] == row[-9:]
    lines = printed.splitlines()
    start = lines[3].index(" -") + 1  # the agent column, read from the rule under the header
    end = lines[3].index(" ", start)
    names = []
    for line in lines[4:-1]:  # the last line says what the ranks go by
        if line[:4].strip():
            names.append(line[start:end].strip())
        elif line[start:end].strip():
            names[-1] += line[start:end].strip()  # a wrapped name goes on
    assert names == [s.agent for s in run.standings] and sorted(names) == sorted(long_names)
    print_table(run.standings, "a title")  # a pipe: every name on its line, and what the ranks go by
    piped = capsys.readouterr().out
    assert all(any(name in line for line in piped.splitlines()) for name in long_names)
    assert "ranked by rating" in piped


def test_leaderboard_handles_ties_and_orders_by_strength(tmp_path):
    config = make_tournament_config("midnight_party", 4, ["random", "runner", "coward", "expert"])
    run = run_tournament(config, 48, db=tmp_path / "t.sqlite", batch_size=48, progress=False)
    ranked = {s.agent: s for s in run.standings}
    assert ranked["expert"].mu > ranked["random"].mu and ranked["coward"].mu > ranked["random"].mu
    assert ranked["random"].mean_points > ranked["expert"].mean_points
    again = leaderboard(run.results)
    assert [s.agent for s in again] == [s.agent for s in run.standings]


def test_shared_ranks_are_rated_as_ties():
    from midnight_env.tournament import Results

    config = make_tournament_config("midnight_party", 2, ["random", "coward", "runner"])
    lineups = np.array([[0, 1], [1, 0], [1, 2], [2, 1]] * 5)
    ranks = np.array([[1, 1], [1, 1], [1, 2], [2, 1]] * 5)  # random and coward always tie
    points = np.where(ranks == 1, 10, 20)
    results = Results(config, np.arange(20), np.arange(20) // 2, lineups, points, ranks)
    by = {s.agent: s for s in leaderboard(results)}
    assert by["random"].win_rate == 1.0 and by["coward"].win_rate == 1.0 and by["runner"].win_rate == 0.0
    assert by["coward"].mu > by["runner"].mu
    assert by["random"].mean_rank == 1.0 and by["runner"].mean_rank == 2.0


def test_clustered_interval_counts_deals_not_games():
    values = np.array([1.0, 1.0, 3.0, 3.0])
    mean, half = points_interval(values, np.array([0, 0, 1, 1]))
    assert mean == 2.0
    # two clusters with sums 2 and 6 around 4: se = sqrt(2 * (4 + 4)) / 4 = 1
    assert half == pytest.approx(1.96)


def test_interval_is_stratified_by_agent_set():
    # deals 0, 1 of one agent set, 2, 3 of another: totals 1, 3 and 11, 13
    values, deals, sets = np.array([1.0, 3.0, 11.0, 13.0]), np.arange(4), np.array([0, 0, 1, 1])
    mean, half = points_interval(values, deals, sets)
    assert mean == 7.0
    # within the sets: 2 * (1 + 1) each, se = sqrt(8) / 4; the spread between the sets is no noise
    assert half == pytest.approx(1.96 * np.sqrt(8) / 4)
    _, unstratified = points_interval(values, deals)  # 4/3 * (36 + 16 + 16 + 36), se = sqrt(138.7) / 4
    assert unstratified == pytest.approx(1.96 * np.sqrt(4 / 3 * 104) / 4)
    # a set dealt once has no measurable spread: the unstratified interval then
    three = points_interval(values[:3], deals[:3], sets[:3])[1]
    assert three == pytest.approx(points_interval(values[:3], deals[:3])[1])


def test_stratified_interval_covers_the_mean_at_its_level():
    """Simulated balanced tournaments: 6 agent sets far apart, 6 deals each of 2 copies sharing the
    deal's luck. The stratified interval holds the true mean about 95 % of the time; the
    unstratified one, counting the fixed spread between sets as noise, nearly always."""
    rng = np.random.default_rng(3)
    offsets = np.arange(6) * 8.0
    sets = np.repeat(np.arange(6), 12)
    deals = np.repeat(np.arange(36), 2)
    covered = np.zeros(2, int)
    for _ in range(1000):
        luck = np.repeat(rng.normal(0, 3, 36), 2) + rng.normal(0, 2, 72)
        values = offsets[sets] + luck
        for j, strata in enumerate((sets, None)):
            mean, half = points_interval(values, deals, strata)
            covered[j] += abs(mean - offsets.mean()) <= half
    assert 920 <= covered[0] <= 975
    assert covered[1] >= 995


def test_leaderboard_intervals_leave_out_the_spread_between_agent_sets():
    from midnight_env.tournament import Results

    config = make_tournament_config("midnight_party", 2, FAST, seed=0)
    # two cycles: every pair of agents in two deals of two seat-rotated copies
    lineups = np.array([pair[::(-1) ** c] for pair in combinations(range(3), 2) for _ in range(2) for c in range(2)])
    points = 10 * (lineups + 1) + 3 * (lineups[:, ::-1] + 1)  # fixed by the agent and its opponent
    ranks = np.where(points == points.min(axis=1, keepdims=True), 1, 2)
    results = Results(config, np.arange(12), np.arange(12) // 2, lineups, points, ranks)
    by = {s.agent: s for s in leaderboard(results)}
    assert by["random"].mean_points == 17.5 and by["coward"].mean_points == 34.5
    assert all(s.points_ci == 0 for s in by.values())  # the same points in every deal of a set
    first = [0, 1, 4, 5, 8, 9]  # one cycle: each set dealt once, its spread unmeasured
    one_cycle = Results(config, np.arange(6), np.arange(6) // 2, lineups[first], points[first], ranks[first])
    assert all(s.points_ci > 0 for s in leaderboard(one_cycle))


def test_extending_and_resuming_adds_only_missing_games(tmp_path):
    config = make_tournament_config("midnight_party", 2, FAST, seed=5)
    db = tmp_path / "t.sqlite"
    run_tournament(config, 10, db=db, batch_size=4, progress=False)
    with pytest.raises(TournamentError, match="already holds 10 of 16 games.*pass resume=True"):
        run_tournament(config, 16, db=db, progress=False)
    run = run_tournament(config, 16, db=db, resume=True, batch_size=4, progress=False)
    assert run.played == 6 and _count(db) == 16
    done = run_tournament(config, 16, db=db, progress=False)  # complete: nothing to play, no refusal
    assert done.played == 0 and done.results.num_games == 16


# The child process kills itself with SIGKILL from ``on_batch``, right after its second batch is
# committed: the interruption lands at a known point, and SIGKILL flushes and closes nothing.
KILLED_RUN = """
import os, signal, sys
from midnight_env.tournament import make_tournament_config, run_tournament

config = make_tournament_config("midnight_party", 3, ["random", "runner", "coward"], seed=9)
batches = []

def kill_after_two(chunk):
    batches.append(chunk)
    if len(batches) == 2:
        os.kill(os.getpid(), signal.SIGKILL)

run_tournament(config, int(sys.argv[2]), db=sys.argv[1], batch_size=4, progress=False, on_batch=kill_after_two)
"""


@pytest.mark.slow  # a child process that loads the engine
def test_kill_dash_nine_then_resume_loses_and_doubles_nothing(tmp_path, capsys):
    db = tmp_path / "killed.sqlite"
    games = 60
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    killed = subprocess.run([sys.executable, "-c", KILLED_RUN, str(db), str(games)], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=300)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert _count(db) == 8  # the two committed batches of 4, nothing of the third
    args = ["tournament", "--variant", "midnight_party", "--players", "3", "--agents", "random,runner,coward",
            "--games", str(games), "--seed", "9", "--batch-size", "4", "--db", str(db), "--out", str(tmp_path),
            "--no-progress"]
    assert cli.main(args) == 2  # unfinished: the command asks for consent
    assert "pass --resume to play the rest" in capsys.readouterr().err and _count(db) == 8
    assert cli.main(args + ["--resume"]) == 0
    assert f"played {games - 8} games" in capsys.readouterr().out
    # every game once, and the same games and leaderboard as an uninterrupted run
    config = make_tournament_config("midnight_party", 3, ["random", "runner", "coward"], seed=9)
    clean = run_tournament(config, games, db=tmp_path / "clean.sqlite", batch_size=64, progress=False)
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT game_index, seed, agents, points, ranks FROM games ORDER BY game_index").fetchall()
        assert conn.execute("SELECT COUNT(*) FROM seats").fetchone()[0] == games * 3
    with sqlite3.connect(tmp_path / "clean.sqlite") as conn:
        clean_rows = conn.execute("SELECT game_index, seed, agents, points, ranks FROM games "
                                  "ORDER BY game_index").fetchall()
    assert [r[0] for r in rows] == list(range(games))
    assert rows == clean_rows
    resumed = run_tournament(config, games, db=db, progress=False)  # complete: plays nothing, rates the file
    assert resumed.played == 0 and resumed.standings == clean.standings


# -- refusals -------------------------------------------------------------------------------------

def test_bad_agents_are_refused():
    with pytest.raises(AgentError, match="unknown agent 'nobody'"):
        make_tournament_config("midnight_party", 2, ["random", "nobody"])
    with pytest.raises(TournamentError, match="needs at least 4 agents, got 3"):
        make_tournament_config("midnight_party", 4, FAST)
    with pytest.raises(TournamentError, match="listed twice"):
        make_tournament_config("midnight_party", 2, ["random", "random", "coward"])


def test_other_configuration_is_refused_without_resume(tmp_path):
    db = tmp_path / "t.sqlite"
    first = make_tournament_config("midnight_party", 2, FAST, seed=1)
    run_tournament(first, 4, db=db, progress=False)
    other = make_tournament_config("midnight_party", 2, FAST, seed=2)
    before = _digest(db)
    with pytest.raises(TournamentError, match="another tournament configuration.*pass resume=True"):
        run_tournament(other, 4, db=db, progress=False)
    assert _digest(db) == before
    run_tournament(other, 4, db=db, resume=True, progress=False)  # consent: both live in the file
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT COUNT(DISTINCT config_hash) FROM games").fetchone()[0] == 2


@pytest.mark.parametrize("content", [b"not a database at all" * 100, b"SQLite format 3\x00" + b"\xff" * 3000],
                         ids=["text", "damaged-sqlite"])
def test_corrupt_database_is_refused_and_left_alone(tmp_path, content, capsys):
    db = tmp_path / "bad.sqlite"
    db.write_bytes(content)
    code = cli.main(["tournament", "--players", "2", "--agents", "random,coward", "--games", "2",
                     "--db", str(db), "--no-progress"])
    assert code == 2
    err = capsys.readouterr().err
    assert "bad.sqlite" in err and "nothing was changed" in err and "Traceback" not in err
    assert db.read_bytes() == content
    assert not (tmp_path / "bad.sqlite-wal").exists()


def test_foreign_sqlite_database_is_refused(tmp_path):
    db = tmp_path / "other.sqlite"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE accounts (id INTEGER)")
    before = _digest(db)
    config = make_tournament_config("midnight_party", 2, FAST)
    with pytest.raises(TournamentError, match="not a midnight tournament database"):
        run_tournament(config, 2, db=db, progress=False)
    assert _digest(db) == before


def test_library_errors_name_its_parameters(tmp_path):
    with pytest.raises(TournamentError, match=r"^seed=-1 is out of range: allowed are integers 0..2\*\*62-1$") as err:
        make_tournament_config("midnight_party", 2, FAST, seed=-1)
    assert err.value.parameter == "seed"
    config = make_tournament_config("midnight_party", 2, FAST)
    db = tmp_path / "t.sqlite"
    for kwargs, words, parameter in [
            ({"games": 0}, "games=0 is out of range: allowed are integers 1 or more", "games"),
            ({"games": 4, "batch_size": 0}, "batch_size=0 is out of range: allowed are integers 1 or more",
             "batch_size"),
            ({"games": 4, "records": tmp_path}, f"records={str(tmp_path)!r} is a directory, not a file", "records"),
            ({"games": 4, "db": tmp_path}, f"database {str(tmp_path)!r} is a directory, not a database file", "db")]:
        with pytest.raises(TournamentError) as err:
            run_tournament(config, **{"db": db, "progress": False, **kwargs})
        assert str(err.value) == words and err.value.parameter == parameter
    assert not db.exists()


def test_cli_words_the_library_errors_as_flags(tmp_path, capsys):
    db = tmp_path / "c.sqlite"
    base = ["tournament", "--players", "2", "--agents", "random,runner,coward", "--db", str(db), "--no-progress"]
    for extra, words in [(["--seed", "-1"], "--seed -1 is out of range: allowed are integers 0..2**62-1"),
                         (["--games", "0"], "--games 0 is out of range: allowed are integers 1 or more"),
                         (["--batch-size", "0"], "--batch-size 0 is out of range: allowed are integers 1 or more"),
                         (["--records", str(tmp_path)], f"--records {str(tmp_path)!r} is a directory, not a file")]:
        assert cli.main(base + ["--games", "4"] + extra) == 2
        assert f"midnight tournament: error: {words}\n" == capsys.readouterr().err
    assert not db.exists()
    assert cli.main(base + ["--games", "4", "--seed", "1"]) == 0
    capsys.readouterr()
    assert cli.main(base + ["--games", "4", "--seed", "2"]) == 2  # another configuration
    err = capsys.readouterr().err
    assert "holds another tournament configuration" in err and "pass --resume to add this tournament" in err
    assert "resume=True" not in err


def test_cli_errors_are_one_line(tmp_path, capsys):
    assert cli.main(["tournament", "--agents", "random,coward", "--db", str(tmp_path / "x.sqlite")]) == 2
    err = capsys.readouterr().err
    assert "needs at least 4 agents, got 2" in err and "Traceback" not in err
    assert not (tmp_path / "x.sqlite").exists()
    assert cli.main(["tournament", "--players", "2", "--agents", "random,ghost",
                     "--db", str(tmp_path / "x.sqlite")]) == 2
    assert "unknown agent 'ghost'" in capsys.readouterr().err


def test_cli_runs_and_writes_the_leaderboard(tmp_path, capsys):
    code = cli.main(["tournament", "--variant", "hidden_castle", "--players", "2", "--agents", "random,coward,runner",
                     "--games", "12", "--db", str(tmp_path / "r.sqlite"), "--no-progress", "--set", "max_turns=500"])
    assert code == 0
    out = capsys.readouterr().out
    assert "coward" in out and "written:" in out
    for name in ("r_leaderboard.md", "r_leaderboard.csv", "r_ratings.png"):
        assert (tmp_path / name).exists()


def test_default_games_complete_the_schedule_cycles():
    from midnight_env.tournament import default_games

    seven = make_tournament_config("midnight_party", 4, ["random", "runner", "coward", "green_hunter", "placer",
                                                          "expert", "search"])
    assert default_games(seven) == 1120  # 35 agent sets x 4 copies = 140 games a cycle, 8 cycles
    assert default_games(make_tournament_config("hidden_castle", 2, FAST)) == 1002  # 6 games a cycle


def test_no_arguments_run_the_default_tournament(monkeypatch, tmp_path):
    import midnight_env.commands.tournament as command
    from midnight_env.tournament import DEFAULT_DB, default_agents, default_games

    seen = {}

    class Stop(Exception):
        pass

    def fake_run(config, games, db, **kwargs):
        seen.update(config=config, games=games, db=db)
        raise Stop

    monkeypatch.setattr(command, "run_tournament", fake_run)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(Stop):
        cli.main(["tournament"])
    config = seen["config"]
    assert (config.variant, config.num_players) == ("midnight_party", 4)
    assert list(config.agents) == default_agents("midnight_party", 4)
    assert {"random", "coward", "expert", "search"} <= set(config.agents)
    assert seen["games"] == default_games(config) >= 1000 and seen["db"] == DEFAULT_DB


# -- `all`: every agent that can play the game ------------------------------------------------------

HAS_OPENSPIEL = importlib.util.find_spec("pyspiel") is not None


def test_all_takes_every_agent_that_can_play_the_game(monkeypatch, tmp_path):
    from midnight_env.arena.registry import DISTRIBUTION, agent_infos
    from midnight_env.tournament import SLOW_AGENTS, default_agents

    monkeypatch.setenv("MIDNIGHT_SOLUTIONS", str(tmp_path))  # no saved solution: optimal cannot play
    config = make_tournament_config("hidden_castle", 4, "all")
    # the heuristics and search, the two shipped models of hidden_castle with 4 players, and
    # openspiel_mcts where its package is installed: in the order `midnight agents` lists them
    # (agents other tests registered in this process, or plugins installed, may follow)
    built_in = {info.name for info in agent_infos() if info.source == DISTRIBUTION}
    assert [a for a in config.agents if a in built_in] == (
        ["random", "runner", "coward", "green_hunter", "placer", "expert", "card", "search", "ppo-hidden_castle-4p",
         "value-hidden_castle-4p"] + ["openspiel_mcts"] * HAS_OPENSPIEL)
    left = dict(config.left_out)
    assert left["value-midnight_party-4p"] == "it plays midnight_party 4 players"
    assert left["value-hidden_castle-2p"] == "it plays hidden_castle 2 players"
    assert left["ppo"] == "it plays the set-up of its model file (ppo:path=FILE.npz)"
    assert left["optimal"].startswith(f"it plays the saved solutions: none yet in {tmp_path}")
    assert not set(left) & set(config.agents)
    assert set(left) | set(config.agents) == {name for name, _ in list_agents()}  # each taken or left out
    # the default keeps its meaning: the same agents but the slow ones, and says nothing left out
    assert default_agents("hidden_castle", 4) == [a for a in config.agents if a not in SLOW_AGENTS]
    default = make_tournament_config("hidden_castle", 4)
    assert default.left_out == () and "openspiel_mcts" not in default.agents
    assert default.key == make_tournament_config("hidden_castle", 4, list(default.agents)).key  # a note only


def test_all_adds_to_the_agents_named_beside_it():
    config = make_tournament_config("midnight_party", 2, "expert,all,search:budget=60")
    assert config.agents[0] == "expert" and config.agents[-1] == "search:budget=60"
    assert config.agents.count("expert") == 1 and "search" in config.agents  # named once; a variant added
    assert "value-midnight_party-2p" in config.agents and "value-midnight_party-4p" not in config.agents
    model = ROOT / "agents" / "models" / "ppo-midnight_party-4p"
    named = make_tournament_config("midnight_party", 4, f"all,ppo:path={model}")
    assert "ppo" not in dict(named.left_out)  # named beside all: not reported as left out
    with pytest.raises(TournamentError, match="listed twice"):
        make_tournament_config("midnight_party", 2, "all,all")
    with pytest.raises(TournamentError, match="agent 'value-midnight_party-4p' cannot play hidden_castle"):
        make_tournament_config("hidden_castle", 4, "all,value-midnight_party-4p")  # named: still checked


def test_cli_all_names_the_agents_it_leaves_out(monkeypatch, tmp_path, capsys):
    import midnight_env.commands.tournament as command

    seen = {}

    class Stop(Exception):
        pass

    def fake_run(config, games, db, **kwargs):
        seen.update(config=config, games=games)
        raise Stop

    monkeypatch.setattr(command, "run_tournament", fake_run)
    monkeypatch.setenv("MIDNIGHT_SOLUTIONS", str(tmp_path))
    with pytest.raises(Stop):
        cli.main(["tournament", "--variant", "hidden_castle", "--players", "4", "--agents", "all", "--games", "8",
                  "--db", str(tmp_path / "t.sqlite"), "--no-progress"])
    assert {"value-hidden_castle-4p", "ppo-hidden_castle-4p"} <= set(seen["config"].agents)
    err = capsys.readouterr().err.splitlines()
    assert "midnight tournament: left out value-midnight_party-4p: it plays midnight_party 4 players" in err
    assert "midnight tournament: left out ppo-midnight_party-4p: it plays midnight_party 4 players" in err
    assert all(line.startswith("midnight tournament: left out ") for line in err)
    # ppo, optimal and value (they need a file), and every shipped model of another set-up
    shipped = [json.loads(m.read_text()) for m in (ROOT / "agents" / "models").glob("*.json")]
    others = [m for m in shipped if (m["variant"], m["num_players"]) != ("hidden_castle", 4)]
    assert len(err) == len(seen["config"].left_out) == 3 + len(others) + (not HAS_OPENSPIEL)


@pytest.mark.slow  # openspiel_mcts plays too (about 10 s)
def test_cli_all_plays_the_tournament(tmp_path, capsys):
    code = cli.main(["tournament", "--variant", "hidden_castle", "--players", "4", "--agents", "all", "--games", "8",
                     "--db", str(tmp_path / "t.sqlite"), "--out", str(tmp_path), "--no-progress"])
    out, err = capsys.readouterr()
    assert code == 0 and "played 8 games" in out and "value-hidden_castle-4p" in out
    assert "left out value-midnight_party-4p" in err and "Traceback" not in err
