"""The research scripts run tiny (experiments/regret_table.py, experiments/exploitability.py,
experiments/interval_calibration.py), and
native PPO trains a one-player set-up whose checkpoints the regret table evaluates exactly.

The numbers they print for docs/RESEARCH.md come from full runs; here they run in seconds on the
smallest solved set-up, and what they compute is checked against values known independently:
random's exact regret on solo-mp-r1-g1 (tests/solve/test_solve.py pins the solver), a policy against
itself gaining exactly nothing on the same deals.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest
from experiment_scripts import load_script

from midnight_env.arena.registry import make_agent
from midnight_env.solve.policy import agent_policy, evaluate_policy
from midnight_env.solve.solution import solve


def table_rows(text: str) -> dict[str, list[str]]:
    rows = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| ") and not line.startswith("| agent"):
            rows[cells[0]] = cells[1:]
    return rows


def test_regret_table_is_exact_for_tie_breaking_agents_and_plays_search(tmp_path, capsys):
    script = load_script("regret_table")
    out = tmp_path / "table.md"
    assert script.main(["--setups", "solo-mp-r1-g1", "--agents", "random,runner,search:budget=100",
                        "--games", "40", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert out.read_text().strip() == text.strip()
    rows = table_rows(text)
    sol = solve("midnight_party", 1, rounds=1, guests_per_player=1)
    random_value = evaluate_policy(sol, agent_policy(sol, make_agent("random"), seats=[0])).value
    assert rows["random"][:3] == [f"{random_value:.4f}", f"{random_value - sol.value:.4f}", "exact"]
    assert rows["runner"][2] == "exact" and float(rows["runner"][1]) > 0
    assert rows["search:budget=100"][2] == "by play" and "±" in rows["search:budget=100"][1]
    assert "-2.9488" in text  # the optimum, as midnight solve reports it


def test_regret_table_counts_where_an_agent_leaves_the_optimum(capsys):
    assert load_script("regret_table").main(["--setups", "solo-mp-r1-g1", "--agents", "expert", "--mistakes"]) == 0
    out = capsys.readouterr().out
    assert "solo-mp-r1-g1: 3,361 decision states of seat 0" in out
    # the expert's commonest mistake: it enters a room where the optimum walks on towards a green one
    assert "expert: worse than optimal at 1,469; optimum / agent: walk / enter a room 1,123" in out


def test_regret_table_refuses_an_unknown_set_up(capsys):
    assert load_script("regret_table").main(["--setups", "solo-mp-r9-g9"]) == 2
    assert "solo-mp-r9-g9" in capsys.readouterr().err


def test_exploitability_of_an_agent_against_itself_is_exactly_nothing(tmp_path, capsys):
    script = load_script("exploitability")
    assert script.main(["--fields", "random", "--responders", "random,expert", "--deals", "3", "--batch", "5",
                        "--out", str(tmp_path / "x.md")]) == 0
    row = table_rows(capsys.readouterr().out)["random"]
    assert row[1] == "+0.00 ± 0.00"  # the same agent on the same deals: the same games
    assert float(row[2].split()[0]) > 0  # the expert beats random's seat by far
    assert row[3] == "expert"


@pytest.mark.slow
def test_native_ppo_trains_one_player_and_its_checkpoints_get_an_exact_regret(tmp_path, capsys):
    pytest.importorskip("torch")
    from midnight_env.training import native

    result = native.main(["--variant", "midnight_party", "--num-players", "1", "--options",
                          "rounds=1,guests_per_player=1", "--total-timesteps", "1024",
                          "--num-envs", "16", "--num-steps", "16", "--hidden-sizes", "16", "--opponents", "",
                          "--eval-every", "2", "--eval-games", "8", "--eval-opponents", "", "--run-dir",
                          str(tmp_path), "--check-actions", "true", "--progress", "false"])
    run = result["run_dir"]
    assert result["metrics"]["charts/illegal_actions"] == 0
    checkpoints = sorted((run / "checkpoints").glob("step*.npz"), key=lambda p: int(p.stem[4:]))
    assert [p.stem for p in checkpoints] == ["step512", "step1024"]
    capsys.readouterr()
    plot = tmp_path / "regret.png"
    script = load_script("regret_table")
    assert script.main(["--runs", str(run), "--references", "runner", "--plot", str(plot)]) == 0
    rows = table_rows(capsys.readouterr().out)
    sol = solve("midnight_party", 1, rounds=1, guests_per_player=1)
    greedy = make_agent(f"ppo:path={checkpoints[-1]}")
    exact = evaluate_policy(sol, agent_policy(sol, greedy, seats=[0]))
    assert rows["ppo step 1,024"][:3] == [f"{exact.value:.4f}", f"{exact.value - sol.value:.4f}", "exact"]
    assert rows["ppo step 1,024"][3] == "0.0%"  # greedy play: no draw at any decision
    assert plot.stat().st_size > 0 and np.isfinite(float(rows["runner"][1]))


@pytest.mark.slow
def test_value_run_on_one_player_gets_an_exact_regret_per_checkpoint(tmp_path, capsys):
    pytest.importorskip("torch")
    from midnight_env.training import value

    result = value.main(["--variant", "midnight_party", "--num-players", "1", "--options",
                         "rounds=1,guests_per_player=1", "--total-timesteps", "400", "--games-per-iteration", "40",
                         "--batch-games", "40", "--hidden-sizes", "16", "--league", "", "--self-play", "1.0",
                         "--eval-every", "2", "--eval-deals", "8", "--eval-field", "", "--run-dir", str(tmp_path),
                         "--progress", "false"])
    run = result["run_dir"]
    checkpoints = sorted((run / "checkpoints").glob("step*.npz"), key=lambda p: int(p.stem[4:]))
    assert checkpoints and (run / "model.npz").exists()
    capsys.readouterr()
    script = load_script("regret_table")
    assert script.main(["--runs", str(run), "--references", "runner"]) == 0
    rows = table_rows(capsys.readouterr().out)
    sol = solve("midnight_party", 1, rounds=1, guests_per_player=1)
    one_ply = make_agent(f"value:path={run / 'model.npz'}")
    exact = evaluate_policy(sol, agent_policy(sol, one_ply, seats=[0]))
    final = f"value step {result['steps']:,}"
    assert rows[final][:3] == [f"{exact.value:.4f}", f"{exact.value - sol.value:.4f}", "exact"]
    assert exact.value >= sol.value - 1e-9  # nothing beats the optimum
    assert len([r for r in rows if r.startswith("value step")]) == len(checkpoints) + (
        int(checkpoints[-1].stem[4:]) != result["steps"])
    assert script.exact_on_graph("value:path=x.npz") and script.exact_on_graph("value:path=x.npz,budget=0")
    assert not script.exact_on_graph("value:path=x.npz:budget=100")
    assert not script.exact_on_graph("value:path=x.npz,budget=100")
    # --exact-search: the network inside the search, on the graph; one own turn with every roll
    # exact samples no dice, so its draw only breaks ties, and play agrees with the graph's value
    assert script.exact_on_graph("value:path=x.npz,budget=100", exact_search=True)
    searched = f"value:path={run / 'model.npz'},budget=200,turns=1"
    assert script.main(["--setups", "solo-mp-r1-g1", "--agents", searched, "--exact-search", "--play-all",
                        "--games", "4000"]) == 0
    row = table_rows(capsys.readouterr().out)[searched]
    graph = evaluate_policy(sol, agent_policy(sol, make_agent(searched), seats=[0]))
    assert row[:3] == [f"{graph.value:.4f}", f"{graph.value - sol.value:.4f}", "on the graph (search)"]
    by_play, half = (float(x) for x in row[4].split(" ± "))
    assert abs(by_play - (graph.value - sol.value)) <= half + 0.05


def test_leaderboard_keeps_a_table_played_elsewhere_only_while_its_command_is_the_same():
    script = load_script("tournament_leaderboard")
    cmd = ["midnight", "tournament", "--variant", "midnight_party", "--players", "2", "--agents", "expert,search",
           "--games", "1000", "--seed", "2024", "--batch-size", "256", "--db", "here/a.sqlite", "--out", "here",
           "--no-progress"]
    played = ("`midnight tournament --variant midnight_party --players 2 --agents expert,search --games 1000 "
              "--seed 2024 --batch-size 256 --db elsewhere/a.sqlite --out elsewhere --no-progress`\n\n| table |")
    text = (f"# Leaderboard\n\n## midnight_party, 2 players, full field\n\n{played}\n\n"
            "## hidden_castle, 2 players, full field\n")
    sections = script.sections(text)
    assert sections["## midnight_party, 2 players, full field"] == played
    assert sections["## hidden_castle, 2 players, full field"] == ""
    assert script.same_games(played, cmd)  # another --db and --out: the same games
    other_agents = [w if w != "expert,search" else "expert,search,value-midnight_party-2p" for w in cmd]
    assert not script.same_games(played, other_agents)
    assert not script.same_games(played, [w if w != "2024" else "7" for w in cmd])
    assert not script.same_games("(not run yet)", cmd)


def test_leaderboard_summary_reads_each_table_and_judges_the_champions_forms_as_one():
    from midnight_env.tournament.report import markdown_table

    script = load_script("tournament_leaderboard")

    def standing(agent, points, ci):
        return script.Row(agent, points, ci)

    def table(*rows):  # a section as the page holds it, read back
        lines = ["| rank | agent | games | rating | ± 95% | mean points | ± 95% | win rate | mean rank |",
                 "|---:|:---|---:|---:|---:|---:|---:|---:|---:|"]
        lines += [f"| {i} | {r.agent} | 100 | 1.00 | 0.50 | {r.mean_points:.2f} | {r.points_ci:.2f} | 0.5 | 1.5 |"
                  for i, r in enumerate(rows, 1)]
        return "`midnight tournament ...`\n\n" + "\n".join(lines)

    champ = "value-midnight_party-2p"
    clear = script.table_rows(table(standing(f"{champ}:budget=1500", 20.0, 1.0), standing(champ, 21.5, 1.0),
                                    standing("search", 23.0, 1.0)))
    assert [r.agent for r in clear] == [f"{champ}:budget=1500", champ, "search"]
    # the one-ply form overlaps the searching one, but forms count as one player: clear of search
    assert script.summary_cells(clear, champ) == [f"`{champ}:budget=1500`", "20.00 ± 1.00", "`search`",
                                                  "23.00 ± 1.00", "**first, clear**"]
    close = script.table_rows(table(standing(champ, 20.0, 1.5), standing("search", 22.0, 1.0)))
    assert script.summary_cells(close, champ)[-1] == "first, overlapping"
    behind = script.table_rows(table(standing("search", 19.0, 1.0), standing(champ, 20.0, 1.0)))
    assert script.summary_cells(behind, champ)[-1] == "**not first**"
    assert script.summary_cells(behind, None)[-1] == "no champion"
    # the table markdown_table writes is the one read
    assert markdown_table([]).splitlines()[0].count("|") == 10


@pytest.mark.slow
def test_ship_checkpoint_records_where_the_run_stopped_and_how_to_reproduce_it(tmp_path, monkeypatch, capsys):
    pytest.importorskip("torch")
    import json

    import yaml

    from midnight_env.training import value

    run = value.main(["--num-players", "2", "--total-timesteps", "600", "--games-per-iteration", "6",
                      "--batch-games", "6", "--hidden-sizes", "8", "--league", "runner", "--eval-every", "1",
                      "--eval-deals", "1", "--eval-field", "runner", "--run-dir", str(tmp_path), "--progress",
                      "false"])["run_dir"]
    step = min(int(p.stem[4:]) for p in (run / "checkpoints").glob("step*.npz"))
    record = json.loads((run / "checkpoints" / f"step{step}.json").read_text())["training"]
    config = yaml.safe_load((run / "config.yaml").read_text())
    reproduce = tmp_path / "reproduce.yaml"
    reproduce.write_text(yaml.safe_dump({**config, "total_timesteps": step + 1}))
    script = load_script("ship_checkpoint")
    out = tmp_path / "models" / "value-midnight_party-2p"
    argv = ["ship_checkpoint", str(run), str(step), str(out), "--commit", record["git_commit"][:7],
            "--reproduce", str(reproduce)]
    monkeypatch.setattr(sys, "argv", argv)
    with pytest.raises(SystemExit, match=f"must have total_timesteps: {step} and anneal_timesteps: 600"):
        script.main()  # that config would not end the run at the checkpoint
    reproduce.write_text(yaml.safe_dump({**config, "total_timesteps": step, "anneal_timesteps": 600}))
    monkeypatch.setattr(sys, "argv", argv[:-3] + ["abcdef0"] + argv[-2:])
    with pytest.raises(SystemExit, match="was trained at commit"):
        script.main()  # another commit than the one the checkpoint records
    monkeypatch.setattr(sys, "argv", argv)
    script.main()
    shipped = json.loads(out.with_suffix(".json").read_text())["training"]
    assert {k: shipped[k] for k in record} == record  # the checkpoint's own record, kept
    assert shipped["stopped"].startswith(f"stopped by hand after iteration 1, at {step:,} of its 600")
    assert shipped["reproduce"]["command"] == f"midnight train --algo value --config {reproduce}"
    assert out.with_suffix(".npz").read_bytes() == (run / "checkpoints" / f"step{step}.npz").read_bytes()


def test_interval_calibration_splits_a_tournament_into_whole_cycles(tmp_path, capsys):
    from midnight_env.tournament import leaderboard, make_tournament_config, run_tournament
    from midnight_env.tournament.store import read_results

    db = tmp_path / "t.sqlite"
    config = make_tournament_config("midnight_party", 2, ["random", "runner", "coward"], seed=4)
    run_tournament(config, 48, db=db, batch_size=16, progress=False)  # 8 cycles of 6 games
    script = load_script("interval_calibration")
    assert script.main([str(db), "--replicates", "4"]) == 0
    out = capsys.readouterr().out
    assert "48 games in 4 replicates of 12" in out
    rows = {cells[0]: cells for cells in map(str.split, out.splitlines()) if cells and cells[0] in config.agents}
    assert set(rows) == {"random", "runner", "coward"}
    # the replicates are tournaments of their own: the means and stratified intervals their leaderboards give
    parts = script.replicates(read_results(db, config.key), 4)
    boards = [{s.agent: s for s in leaderboard(part)} for part in parts]
    for name, cells in rows.items():
        means = [b[name].mean_points for b in boards]
        assert float(cells[1]) == pytest.approx(np.mean(means), abs=0.005)
        assert float(cells[2]) == pytest.approx(np.var(means, ddof=1), abs=0.0005)
        assert float(cells[3]) == pytest.approx(np.mean([(b[name].points_ci / 1.96) ** 2 for b in boards]), abs=0.0005)
    assert script.main([str(db), "--replicates", "3"]) == 2  # 16 games: not whole cycles of 6
    assert "--replicates 3" in capsys.readouterr().err
    bad = tmp_path / "notes.txt"
    bad.write_text("not a database")
    assert script.main([str(bad)]) == 2
    assert "notes.txt" in capsys.readouterr().err


def test_fit_exact_values_sees_every_afterstate_apart_and_rates_the_fit_exactly(capsys):
    script = load_script("fit_exact_values")
    assert script.main(["--setup", "solo-mp-r1-g1", "--hidden", "16", "--epochs", "10"]) == 0
    out = capsys.readouterr().out.splitlines()
    # solo-mp-r1-g1 has 840 afterstates, and the observation tells every one of them apart
    assert out[0] == "solo-mp-r1-g1: 3,361 decision states, 840 afterstates, 840 distinct observations"
    errors = [float(line.split("error ")[1].split(" ")[0]) for line in out if line.startswith("epoch")]
    assert len(errors) == 5 and errors[-1] < errors[0]
    regret = float(out[-1].split("regret ")[1].split(" ")[0])
    assert regret >= 0.0  # exact on the graph: nothing plays better than the optimum


def test_fit_exact_values_refuses_a_set_up_that_is_not_solo(capsys):
    assert load_script("fit_exact_values").main(["--setup", "duo-mp-r1-g1-win"]) == 2
    assert "--setup 'duo-mp-r1-g1-win' is not allowed: allowed are the solo set-ups" in capsys.readouterr().err


def test_the_exploit_table_lists_finished_runs_with_their_search_gain(tmp_path):
    import json

    script = load_script("exploit_table")
    base = {"format": "midnight-exploit/1", "variant": "midnight_party", "players": 2,
            "options": {"guests_per_player": 1, "rounds": 1}, "target": "expert", "seat": 0,
            "overrides": {}, "gain": 2.25, "ci95": 0.18, "games": 2000, "train_cpu_minutes": 10.0,
            "env_steps": 3_800_000, "points_gain": 1.74, "points_gain_ci95": 0.13, "exact_gain": 2.438,
            "curve": [{"env_steps": 1, "cpu_minutes": 1.0, "gain": 2.0, "ci95": 0.3}]}
    runs = {"a-plain": {**base, "status": "done"},
            "b-searched": {**base, "status": "done", "search_gain": 2.03, "search_ci95": 0.19, "search_budget": 1500,
                           "overrides": {"init_model": "runs/x/model.npz"}, "exact_learner_gain": 2.3017},
            "c-training": {**base, "status": "training"}}
    for name, data in runs.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / "exploit.json").write_text(json.dumps(data))
    found = script.find_runs([str(tmp_path)])
    assert [r["name"] for r in found] == ["a-plain", "b-searched"]  # an unfinished run is left out
    rows = script.table(found).splitlines()[2:]
    assert "**+2.250 ± 0.180** (2,000 deals)" in rows[0] and "not measured" in rows[0] and "from scratch" in rows[0]
    assert "+2.03 ± 0.19 (budget 1,500)" in rows[1] and "from `x`" in rows[1]
    assert "| 2.438 (the learner's, exactly: +2.302) |" in rows[1]
    assert "| 2.438 |" in rows[0]
    script.plot(found, str(tmp_path / "curves.png"))
    assert (tmp_path / "curves.png").stat().st_size > 1000


def test_the_strong_field_holds_every_earlier_champion_of_the_set_up(monkeypatch):
    """A hardened champion takes its set-up's name; the networks it replaced keep playing in the strong
    field as value-<variant>-<N>p-v1, -v2 ... (oldest first), beside the PPO policy where there is one."""
    import midnight_env.arena.registry as registry

    script = load_script("tournament_leaderboard")
    names = ["expert", "value-hidden_castle-2p", "value-hidden_castle-2p-v2", "value-hidden_castle-2p-v10",
             "value-hidden_castle-2p-v1", "value-hidden_castle-2p-hardened", "value-hidden_castle-4p-v1"]
    monkeypatch.setattr(registry, "list_agents", lambda: [(n, "") for n in names])
    assert script.previous_champion("hidden_castle", 2) == ["value-hidden_castle-2p-v1", "value-hidden_castle-2p-v2",
                                                            "value-hidden_castle-2p-v10"]
    assert script.agents_for("hidden_castle", 2, "strong")[-3:] == script.previous_champion("hidden_castle", 2)
    names.append("ppo-hidden_castle-4p")
    assert script.previous_champion("hidden_castle", 4) == ["ppo-hidden_castle-4p", "value-hidden_castle-4p-v1"]


@pytest.mark.slow
def test_response_shortfall_sums_to_the_exact_gap_state_by_state(capsys):
    from midnight_env.solve.best_response import best_response

    script = load_script("response_shortfall")
    result = script.report("duo-mp-r1-g1-points", "expert", ["runner"], top=3)
    sol = solve("midnight_party", 2, "points", guests_per_player=1, rounds=1)
    exact = best_response(sol, "expert", 0, responders=["runner"])
    assert result["best_gain"] == pytest.approx(exact.gain, abs=1e-9)
    itself, runner = result["rows"]
    # the target itself in the seat falls short by the whole gain, the responder by what it leaves
    assert itself["gain"] == pytest.approx(0.0, abs=1e-9) and itself["shortfall"] == pytest.approx(exact.gain)
    assert runner["gain"] == pytest.approx(exact.responders[0].gain, abs=1e-9)
    for row in (itself, runner):
        # the performance-difference identity: visits times the loss at each state add up to the gap
        assert row["decomposed"] == pytest.approx(row["shortfall"], rel=1e-6)
        assert sum(b["share"] for b in row["bands"]) == pytest.approx(1.0)
        assert 0.0 <= row["alone"]["share"] <= 1.0 and row["wrong_visits"] < row["visits"]
        costs = [t["visits"] * t["loss"] for t in row["top"]]
        assert costs == sorted(costs, reverse=True) and len(costs) == 3
        assert all(t["loss"] > 0 for t in row["top"])
        # locked in: the states where the choice is also the best by the policy's own play after it
        own_best = [t for t in row["top"] if abs(sum(c["played"] * c["own_value"] for c in t["choices"])
                                                 - min(c["own_value"] for c in t["choices"])) <= 1e-9]
        assert sum(t["visits"] * t["loss"] for t in own_best) / row["shortfall"] - 1e-9 <= row["locked"] <= 1.0
        for t in row["top"]:  # each choice's values: by the best response's play after it, and the policy's own
            assert min(c["value"] for c in t["choices"]) < max(c["value"] for c in t["choices"])
            assert all(c["kind"] in ("place", "pass", "walk", "enter a room") for c in t["choices"])
    assert runner["shortfall"] > itself["shortfall"]  # runner is far weaker than expert's best response
    assert script.main(["--setup", "solo-mp-r1-g1", "--target", "expert"]) == 2
    err = capsys.readouterr().err
    assert "set-up 'solo-mp-r1-g1' is not a solved two-player set-up: allowed are duo-mp-r1-g1-win" in err


def test_the_whole_placement_at_best_worst_and_random_agrees_with_the_placement_values():
    from midnight_env.solve.optimal_play import placement_values

    script = load_script("optimal_hiding")
    sol = solve("midnight_party", 1, rounds=1, guests_per_player=2)
    whole = script.whole_placement(sol)
    first = placement_values(sol)
    # the second guest's values after each first square, through the engine (not the graph)
    second = {s: placement_values(sol, [s]) for s in range(len(first))}
    assert whole["best"] == pytest.approx(sol.value, abs=1e-9)
    assert whole["worst"] == pytest.approx(max(np.nanmax(v) for v in second.values()), abs=1e-9)
    assert whole["random"] == pytest.approx(np.mean([np.nanmean(v) for v in second.values()]), abs=1e-9)
    assert whole["worth"] > np.nanmax(first) - np.nanmin(first)  # more than the first square alone


def test_green_rooms_final_points_are_a_distribution_whose_mean_is_the_optimal_value():
    from midnight_env.solve.optimal_play import optimal_visits

    script = load_script("optimal_hiding")
    for sol in (solve("midnight_party", 1, rounds=1, guests_per_player=1), solve("hidden_castle", 1,
                                                                                  guests_per_player=1)):
        rooms = script.green_rooms(sol, optimal_visits(sol))
        final = rooms["final_points"]
        assert sum(final.values()) == pytest.approx(1, abs=1e-9)
        assert sum(k * p for k, p in final.items()) == pytest.approx(sol.value, abs=1e-9)
        assert 0 <= rooms["green_taken_share"] <= 1
    assert rooms["green_leaves"] > 0  # hidden_castle takes guests out of green rooms
    # one guest, one round of midnight_party: a green room entered is the game's end at -3, never left
    mp = solve("midnight_party", 1, rounds=1, guests_per_player=1)
    rooms = script.green_rooms(mp, optimal_visits(mp))
    assert rooms["green_entries"] == pytest.approx(rooms["final_points"][-3], abs=1e-9)
    assert rooms["green_leaves"] == 0
