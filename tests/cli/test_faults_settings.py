"""Hostile input, second round (issue 39): settings out of range. Each case gets one line on stderr
naming the value and what is allowed, exit 2, no traceback, and nothing written: no run folder, no
exploit.json, no records. Each test here failed before its fix. The lines, as printed after
``midnight COMMAND: error:`` (N: what this machine's memory holds):

- ``simulate --games 1000000000000 --batch-size 1000000000000`` (a numpy MemoryError before):
  ``--batch-size 1000000000000 is out of range: allowed are 1 to N (games of about 2,920 bytes each
  in this machine's 24 GiB of memory)``; ``bench --batches 1,1000000000000`` says the same of
  ``--batches``. A huge ``--games`` in batches of a size that fits still plays.
- ``train --override 'hidden_sizes=[512, -3]'`` (torch's RuntimeError before), and each trainer's
  network setting (``net_arch`` for maskable_ppo): ``hidden_sizes=[512, -3]: width -3 is out of
  range: allowed are at most 16 widths, each a whole number 1..4096`` (rllib: ``1 to 16 widths``).
- ``train --config deep.yaml``, 5,000 ``[`` deep (a RecursionError of 3,000 lines before):
  ``config file .../deep.yaml is nested too deeply: allowed are settings nested a few levels deep
  (a list, a mapping of lists)``; an ``--override`` of ``train`` or ``exploit`` as deep: ``setting
  hidden_sizes='[[[[...' is nested too deeply: ...`` (the value cut to 80 characters).
- ``train --override total_timesteps=-5`` (trained 32.8k steps before): ``total_timesteps=-5 is out
  of range: allowed are 1 or more``; ``train --total-timesteps 0``: ``--total-timesteps 0 is out of
  range: allowed are 1 or more``; and the other counts and rates of every trainer, e.g.
  ``gamma=1.5 is out of range: allowed are numbers in [0, 1]``, ``learning_rate=-1.0 is out of
  range: allowed are 0 or more``, ``seat=7 is out of range: allowed are 'random' or a seat number 0
  to 3 (num_players 4)``.
- ``train --seed -1`` ("expected non-negative integer" before): ``--seed -1 is out of range: allowed
  are integers 0..999999999999 (native PPO's game seeds are seed*10**6 + game numbers, below
  2**62)``; each trainer has its range (value 0..99999999999, where 2**62-1 overflowed with a
  traceback; maskable_ppo 0..2**32-1 and rllib 0..2**31-1, numpy's legacy seeds).
- ``exploit --target expert --cpu-minutes 1 --override games_per_iteration=0`` (failed after a
  progress line and left exploit.json, so that the same command was refused until ``--resume``):
  ``games_per_iteration=0 is out of range: allowed are 1 or more``, every time.
- ``solve --games 5`` without ``--regret`` (ignored before): ``--games is for --regret: add --regret
  AGENTS (the agents that play them), or leave --games out``; ``--seed`` without ``--games``:
  ``--seed is for --games: add --games N (the games it seeds), or leave --seed out``.
"""

from __future__ import annotations

import pytest
from cli_helpers import one_line_error, run_cli

# small settings, so that a setting that slipped through trains for seconds, not hours, and fails the test
TINY = {
    "native": ["num_envs=2", "num_steps=4", "eval_games=2", "eval_every=0", "total_timesteps=8"],
    "maskable_ppo": ["num_envs=2", "n_steps=16", "batch_size=32", "eval_games=2", "eval_every=0",
                     "checkpoint_every=0", "total_timesteps=32"],
    "rllib": ["train_batch_size=16", "minibatch_size=8", "eval_games=2", "total_timesteps=16", "num_cpus=1"],
    "value": ["games_per_iteration=2", "batch_games=2", "eval_deals=1", "eval_every=0", "total_timesteps=8",
              "num_players=2", "hidden_sizes=8", "eval_field=runner", "league=runner"],
}


def train(capsys, tmp_path, algo: str, *extra: str):
    """``midnight train --algo ALGO`` with tiny settings and ``extra`` (flags, or overrides KEY=VALUE)."""
    pytest.importorskip("torch")
    argv = ["train", "--algo", algo, "--run-dir", tmp_path / "runs", "--no-progress"]
    for setting in TINY[algo]:
        argv += ["--override", setting]
    for item in extra:
        argv += ["--override", item] if "=" in item and not item.startswith("--") else [item]
    return run_cli(capsys, *argv)


def nothing_written(tmp_path) -> None:
    runs = tmp_path / "runs"
    assert not runs.exists() or not any(runs.iterdir()), list(runs.iterdir())


# ------------------------------------------------------------------------------------------------
# 7: batches that cannot fit in memory


def test_a_batch_that_cannot_fit_in_memory_is_refused(capsys, tmp_path):
    records = tmp_path / "r.jsonl"
    code, _, err = run_cli(capsys, "simulate", "--games", 10**12, "--batch-size", 10**12, "--record", records,
                           "--no-progress")
    assert code == 2
    one_line_error(err, "--batch-size 1000000000000 is out of range: allowed are 1 to ", "bytes each",
                   "GiB of memory")
    assert not records.exists()
    code, _, err = run_cli(capsys, "bench", "--batches", f"1,{10**12}")
    assert code == 2
    one_line_error(err, "--batches 1000000000000 is out of range: allowed are 1 to ")


def test_the_batch_limit_leaves_room_for_every_default_batch():
    from midnight_env import Engine
    from midnight_env.commands.common import check_batch_size

    for players in (1, 4, 8):  # simulate's default 1024, bench's 4096, a tournament's 256
        assert check_batch_size("--batch-size", 4096, Engine("midnight_party", players)) == 4096
        assert check_batch_size("--batch-size", 10**5, Engine("hidden_castle", players)) == 10**5


# ------------------------------------------------------------------------------------------------
# 8: network sizes


@pytest.mark.parametrize("algo, name", [("native", "hidden_sizes"), ("maskable_ppo", "net_arch"),
                                        ("rllib", "hidden_sizes"), ("value", "hidden_sizes")])
@pytest.mark.parametrize("widths, words", [("[512, -3]", "width -3 is out of range"),
                                           ("[100000]", "width 100000 is out of range")])
def test_network_sizes_out_of_range_are_refused_by_every_trainer(capsys, tmp_path, algo, name, widths, words):
    code, _, err = train(capsys, tmp_path, algo, f"{name}={widths}")
    assert code == 2
    one_line_error(err, f"{name}=", words, "each a whole number 1..4096")
    nothing_written(tmp_path)


# ------------------------------------------------------------------------------------------------
# 9: configs nested too deeply


def test_a_config_nested_too_deeply_is_one_line_naming_the_file(capsys, tmp_path):
    deep = tmp_path / "deep.yaml"
    deep.write_text("a: " + "[" * 5000 + "]" * 5000 + "\n")
    code, _, err = run_cli(capsys, "train", "--config", deep, "--run-dir", tmp_path / "runs")
    assert code == 2
    one_line_error(err, f"config file {deep} is nested too deeply: allowed are settings nested a few levels")
    nothing_written(tmp_path)


def test_an_override_nested_too_deeply_is_one_short_line(capsys, tmp_path):
    pytest.importorskip("torch")
    deep = "hidden_sizes=" + "[" * 5000 + "]" * 5000
    for command in (["train", "--run-dir", tmp_path / "runs"],
                    ["exploit", "--target", "runner", "--cpu-minutes", "1", "--run-dir", tmp_path / "runs" / "x"]):
        code, _, err = run_cli(capsys, *command, "--override", deep)
        assert code == 2
        one_line_error(err, "setting hidden_sizes='[[[[", "[... is nested too deeply")
        assert len(err) < 400
    nothing_written(tmp_path)


# ------------------------------------------------------------------------------------------------
# 10: counts and rates of every trainer


@pytest.mark.parametrize("algo, extra, words", [
    ("native", ["total_timesteps=-5"], "total_timesteps=-5 is out of range: allowed are 1 or more"),
    ("native", ["--total-timesteps", "0"], "--total-timesteps 0 is out of range: allowed are 1 or more"),
    ("native", ["update_epochs=0"], "update_epochs=0 is out of range: allowed are 1 or more"),
    ("native", ["snapshot_every=0"], "snapshot_every=0 is out of range"),
    ("native", ["gamma=1.5"], "gamma=1.5 is out of range: allowed are numbers in [0, 1]"),
    ("native", ["learning_rate=-1"], "learning_rate=-1.0 is out of range: allowed are 0 or more"),
    ("native", ["max_grad_norm=0"], "max_grad_norm=0.0 is out of range: allowed are numbers above 0"),
    ("native", ["self_play=nan"], "self_play=nan is out of range"),
    ("maskable_ppo", ["gamma=2"], "gamma=2.0 is out of range: allowed are numbers in [0, 1]"),
    ("maskable_ppo", ["eval_games=0"], "eval_games=0 is out of range: allowed are 1 or more"),
    ("maskable_ppo", ["seat=7"], "seat=7 is out of range: allowed are 'random' or a seat number 0 to 3"),
    ("rllib", ["gae_lambda=-0.5"], "gae_lambda=-0.5 is out of range: allowed are numbers in [0, 1]"),
    ("rllib", ["learning_rate=-1"], "learning_rate=-1.0 is out of range: allowed are 0 or more"),
    ("value", ["games_per_iteration=0"], "games_per_iteration=0 is out of range: allowed are 1 or more"),
    ("value", ["batch_games=0"], "batch_games=0 is out of range: allowed are 1 or more"),
    ("value", ["replay=0"], "replay=0 is out of range: allowed are 1 or more"),
    ("value", ["points_scale=0"], "points_scale=0.0 is out of range: allowed are numbers above 0"),
    ("value", ["--total-timesteps", "-1"], "--total-timesteps -1 is out of range: allowed are 1 or more"),
])
def test_training_counts_and_rates_out_of_range_are_refused_before_training(capsys, tmp_path, algo, extra, words):
    code, _, err = train(capsys, tmp_path, algo, *extra)
    assert code == 2
    one_line_error(err, words)
    nothing_written(tmp_path)


# ------------------------------------------------------------------------------------------------
# 11: seeds


@pytest.mark.parametrize("algo, seed, allowed", [
    ("native", -1, "0..999999999999 (native PPO's game seeds are seed*10**6"),
    ("value", 2**62 - 1, "0..99999999999 (the value trainer's game seeds are seed*10**7"),
    ("maskable_ppo", 2**32, "0..4294967295 (stable-baselines3 seeds numpy's legacy generator"),
    ("rllib", 2**31, "0..2147483647"),
])
def test_a_training_seed_out_of_range_names_the_flag_and_the_trainers_range(capsys, tmp_path, algo, seed, allowed):
    code, _, err = train(capsys, tmp_path, algo, "--seed", str(seed))
    assert code == 2
    one_line_error(err, f"--seed {seed} is out of range: allowed are integers {allowed}")
    nothing_written(tmp_path)
    code, _, err = train(capsys, tmp_path, algo, f"seed={seed}")  # the setting, from an override or a config
    assert code == 2
    one_line_error(err, f"seed={seed} is out of range: allowed are integers {allowed}")
    nothing_written(tmp_path)


# ------------------------------------------------------------------------------------------------
# 12: exploit checks its learner's settings before writing


@pytest.mark.parametrize("setting, words", [
    ("games_per_iteration=0", "games_per_iteration=0 is out of range: allowed are 1 or more"),
    ("restarts=2", "restarts=2.0 is out of range: allowed are numbers in [0, 1)"),
    ("hidden_sizes=[512, -3]", "width -3 is out of range"),
])
def test_exploit_refuses_a_bad_learner_setting_before_writing_and_again(capsys, tmp_path, setting, words):
    pytest.importorskip("torch")
    run = tmp_path / "run"
    argv = ["exploit", "--players", "2", "--set", "guests_per_player=1", "--set", "rounds=1", "--target", "expert",
            "--cpu-minutes", "1", "--run-dir", run, "--no-progress", "--override", setting]
    for _ in range(2):  # the same command is refused for the same reason, not for a run folder left behind
        code, _, err = run_cli(capsys, *argv)
        assert code == 2
        one_line_error(err, words)
        assert not run.exists()


# ------------------------------------------------------------------------------------------------
# 13: solve's options without effect


@pytest.mark.parametrize("extra, words", [
    (["--games", "5"], "--games is for --regret: add --regret AGENTS"),
    (["--seed", "3"], "--seed is for --games: add --games N"),
    (["--regret", "random", "--seed", "3"], "--seed is for --games"),
])
def test_solve_refuses_games_and_seed_where_they_have_no_effect(capsys, extra, words):
    code, out, err = run_cli(capsys, "solve", "--players", "2", "--set", "guests_per_player=1", "--set", "rounds=1",
                             "--no-progress", *extra)
    assert code == 2 and out == ""
    one_line_error(err, words)


def test_a_tournament_batch_that_cannot_fit_in_memory_is_refused_before_the_database(capsys, tmp_path):
    db = tmp_path / "t.sqlite"
    code, _, err = run_cli(capsys, "tournament", "--games", "1000000000000", "--batch-size", "1000000000000",
                           "--db", str(db), "--no-progress")
    assert code == 2
    one_line_error(err, "--batch-size 1000000000000 is out of range: allowed are 1 to", "bytes")
    assert not db.exists()
