"""The `midnight` command: simulate, replay, render, bench, and its errors for bad input."""

import json
import subprocess
import sys

import pytest

from midnight_env.cli import main


def run_cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_simulate_prints_a_summary_per_seat(capsys):
    code, out, _ = run_cli(capsys, "simulate", "--games", "40", "--players", "3", "--seed", "5", "--no-progress")
    assert code == 0
    lines = out.splitlines()
    seat_rows = [line for line in lines if line.strip().split(" ")[0] in {"0", "1", "2"}]
    assert len(seat_rows) == 3
    for row in seat_rows:
        _, agent, mean, half, win = row.split()
        assert agent == "random" and 0 < float(mean) < 200 and 0 <= float(win) <= 1
    assert "mean game length" in out and "games/s" in out


@pytest.mark.parametrize("variant", ["midnight_party", "hidden_castle"])
@pytest.mark.parametrize("players", [2, 5, 8])
def test_simulated_records_replay_cleanly(tmp_path, capsys, variant, players):
    path = tmp_path / "games.jsonl"
    code, _, _ = run_cli(capsys, "simulate", "--variant", variant, "--players", str(players), "--games", "6",
                         "--seed", "11", "--record", str(path), "--no-progress", "--batch-size", "4")
    assert code == 0
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(records) == 6 and [r["seed"] for r in records] == list(range(11, 17))
    code, out, _ = run_cli(capsys, "replay", str(path))
    assert code == 0 and "6 records replayed, all good" in out


def test_simulate_is_reproducible_and_independent_of_batch_size(tmp_path, capsys):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    run_cli(capsys, "simulate", "--games", "5", "--seed", "3", "--record", str(a), "--no-progress", "--batch-size", "5")
    run_cli(capsys, "simulate", "--games", "5", "--seed", "3", "--record", str(b), "--no-progress", "--batch-size", "2")
    assert a.read_text() == b.read_text()


def test_simulate_with_options_and_per_seat_agents(tmp_path, capsys):
    path = tmp_path / "g.jsonl"
    code, out, _ = run_cli(capsys, "simulate", "--players", "2", "--games", "3", "--agents", "random,random",
                           "--set", "rounds=1", "--set", "pass_rule=always", "--record", str(path), "--no-progress")
    assert code == 0
    rec = json.loads(path.read_text().splitlines()[0])
    assert rec["options"]["rounds"] == 1 and rec["options"]["pass_rule"] == "always"
    assert sum(ev["e"] == "round_end" for ev in rec["events"]) == 1


def test_replay_names_line_and_event_of_a_bad_record(tmp_path, capsys):
    path = tmp_path / "g.jsonl"
    run_cli(capsys, "simulate", "--games", "3", "--record", str(path), "--no-progress")
    lines = path.read_text().splitlines()
    rec = json.loads(lines[1])
    k = next(k for k, ev in enumerate(rec["events"]) if ev["e"] == "roll")
    rec["events"][k]["face"] = 3
    lines[1] = json.dumps(rec)
    path.write_text("\n".join(lines) + "\n")
    code, out, err = run_cli(capsys, "replay", str(path))
    assert code == 2  # bad input, as README promises
    assert f"line 2, event {k}" in err and "face 3" in err


def test_render_shows_every_step_of_a_game(capsys):
    code, out, _ = run_cli(capsys, "render", "--players", "2", "--seed", "1", "--no-color")
    assert code == 0
    assert out.count("--- player") > 20 and "rolled" in out and "game over" in out
    assert "\x1b[" not in out


def test_render_a_record(tmp_path, capsys):
    path = tmp_path / "g.jsonl"
    run_cli(capsys, "simulate", "--games", "2", "--variant", "hidden_castle", "--record", str(path), "--no-progress")
    code, out, _ = run_cli(capsys, "render", "--record", str(path), "--line", "2", "--no-color")
    rec = json.loads(path.read_text().splitlines()[1])
    assert code == 0 and f"game over: points {rec['final_points']}" in out


@pytest.mark.parametrize("argv, words", [
    (["simulate", "--variant", "monopoly"], ["monopoly", "midnight_party", "hidden_castle"]),
    (["simulate", "--players", "9"], ["9", "1..8"]),
    (["simulate", "--set", "speed=4"], ["speed", "guests_per_player"]),
    (["simulate", "--set", "rounds=0"], ["rounds", "0"]),
    (["simulate", "--variant", "hidden_castle", "--set", "pass_rule=always"], ["pass_rule", "hidden_castle"]),
    (["simulate", "--set", "pass_rule=never"], ["never", "last_guest", "always"]),
    (["simulate", "--agents", "alphazero"], ["alphazero", "random"]),
    (["simulate", "--agents", "random,random", "--players", "3"], ["2 agents", "3"]),
    (["simulate", "--games", "0"], ["--games", "0"]),
    (["replay", "/nonexistent/file.jsonl"], ["/nonexistent/file.jsonl"]),
])
def test_bad_input_is_one_clear_line_and_exit_2(capsys, argv, words):
    code, out, err = run_cli(capsys, *argv)
    assert code == 2
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    for word in words:
        assert word in err


def test_bad_json_line_in_a_record_file(tmp_path, capsys):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"format": "midnight-record/1"\n')
    code, _, err = run_cli(capsys, "replay", str(path))
    assert code == 2 and "line 1" in err and "JSON" in err


def test_the_installed_command_exits_without_traceback():
    proc = subprocess.run([sys.executable, "-m", "midnight_env.cli", "simulate", "--variant", "nope"],
                          capture_output=True, text=True)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and "nope" in proc.stderr


def test_bench_command_prints_decisions_per_second(capsys):
    code, out, _ = run_cli(capsys, "bench", "--batches", "1,8", "--decisions", "200", "--repeats", "1")
    assert code == 0
    rows = [line.split() for line in out.splitlines() if line.startswith(("midnight_party", "hidden_castle"))]
    assert len(rows) == 4 and all(float(r[-1].replace(",", "")) > 0 for r in rows)


def test_agent_spec_with_a_bare_path_loads_a_model_file():
    from pathlib import Path

    from midnight_env.arena.registry import make_agent

    path = Path(__file__).parents[2] / "agents" / "models" / "ppo-midnight_party-4p.npz"
    agent = make_agent(f"ppo:{path}")
    assert agent.name == f"ppo:{path}"


def test_a_reader_that_goes_away_gets_no_error_message():
    """``midnight agents | head -1``: the command stops quietly when its reader closes the pipe."""
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, "-m", "midnight_env.cli", "agents"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    proc.stdout.close()  # the reader is gone before the first line
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) in (141, 1) and err == "", err


def test_simulate_aligns_its_table_with_a_long_agent_spec(capsys):
    spec = "search:budget=40,residual=0.5,supply=0.25"
    code, out, _ = run_cli(capsys, "simulate", "--players", "2", "--games", "2", "--agents", f"{spec},random",
                           "--set", "rounds=1", "--no-progress")
    assert code == 0
    lines = out.splitlines()
    header = next(i for i, line in enumerate(lines) if line.lstrip().startswith("seat"))
    ends = {len(line) for line in lines[header:header + 3]}  # every row ends in the header's last column
    assert len(ends) == 1 and spec in lines[header + 1], lines[header:header + 3]
