"""The layered solver (``midnight solve --layered``): the layers never go back, and its values are
``solve``'s for every state; a stopped run resumes; the command's flags.

Tiny boards (midnight_env/solve/setups.py) keep every solve under a second or two; the real
set-ups it was made for are benchmarks (BENCHMARKS.md, "Exact solver")."""

from __future__ import annotations

import json

import numpy as np
import pytest

from midnight_env.cli import main
from midnight_env.core.board import board_from_dict
from midnight_env.core.config import make_config
from midnight_env.core.dice import HUGO
from midnight_env.core.engine import Engine
from midnight_env.core.positions import make_position
from midnight_env.core.state import OVER, PLACE
from midnight_env.solve import SolveError, load_solution, solve
from midnight_env.solve.layered import TERMINAL_RANK, key_ranks, solve_layered
from midnight_env.solve.setups import TINY_CASTLE, TINY_PARTY, TINY_PLAIN_CASTLE


def tiny(variant, players, board, **options):
    return make_config(variant, players, board=board_from_dict(board), **options)


SET_UPS = {  # both variants, one and two players, both objectives, several rounds
    "party-solo-g2-r2": (tiny("midnight_party", 1, TINY_PARTY, guests_per_player=2, rounds=2), "points"),
    "party-duo-g1-r2-win": (tiny("midnight_party", 2, TINY_PARTY, guests_per_player=1, rounds=2), "win"),
    "party-duo-g1-r2-points": (tiny("midnight_party", 2, TINY_PARTY, guests_per_player=1, rounds=2), "points"),
    "castle-solo-g2": (tiny("hidden_castle", 1, TINY_CASTLE, guests_per_player=2), "points"),
    "castle-duo-g1-win": (tiny("hidden_castle", 2, TINY_PLAIN_CASTLE, guests_per_player=1), "win"),
}


_SOLVED: dict = {}


def solved(name: str):
    """A tiny set-up solved whole (``solve``) and by layers, once per test session."""
    if name not in _SOLVED:
        config, objective = SET_UPS[name]
        _SOLVED[name] = solve(config, objective=objective), solve_layered(config, objective=objective)
    return _SOLVED[name]


@pytest.fixture(params=list(SET_UPS))
def both(request):
    return solved(request.param)


def test_no_transition_goes_back_a_layer(both):
    whole, layered = both
    g = whole.graph
    ranks = key_ranks(g.keys, g.layout, g.engine.rules)
    source = np.repeat(np.arange(g.num_states), np.diff(g.edge_start))
    assert (ranks[g.edge_to] >= ranks[source]).all()
    assert ((ranks == TERMINAL_RANK) == (g.phases == OVER)).all()
    # placing a guest always moves on a layer; so does Hugo's move in hidden_castle (his progress)
    placing = g.phases[source] == PLACE
    assert (ranks[g.edge_to[placing]] > ranks[source[placing]]).all()
    if g.engine.rules.castle:
        hugo = (g.phases[source] == 1) & (g.edge_label == HUGO)
        assert hugo.any() and (ranks[g.edge_to[hugo]] > ranks[source[hugo]]).all()
    assert layered.meta["layers"] == len(np.unique(ranks[ranks != TERMINAL_RANK])) > 1


def test_layered_values_are_the_whole_solvers_for_every_state(both):
    whole, layered = both
    sol = layered.solution()
    assert sol.num_states == whole.num_states == layered.num_states
    ids = whole.find(sol.keys)
    assert (ids >= 0).all() and len(np.unique(ids)) == whole.num_states
    assert np.abs(sol.values - whole.values[ids]).max() <= 1e-9
    assert (sol.best == whole.best[ids]).all()  # the same optimal actions, ties broken alike
    assert layered.value == pytest.approx(whole.value, abs=1e-9)
    for key in ("edges", "decisions"):
        assert layered.meta[key] == whole.meta[key]
    assert layered.meta["residual"] < 1e-9 and layered.meta["largest_layer"] < whole.num_states


def test_a_layered_solution_plays_like_the_whole(tmp_path):
    whole, layered = solved("castle-duo-g1-win")
    sol = layered.solution()
    loaded = load_solution(sol.save(tmp_path / "s"))
    start = whole.engine.new_games([0])
    assert loaded.values_of(start)[0] == pytest.approx(whole.values_of(start)[0], abs=1e-9)
    assert loaded.best_actions(start)[0] == whole.best_actions(start)[0]


def test_solving_from_a_position_by_layers():
    config = tiny("hidden_castle", 1, TINY_CASTLE, guests_per_player=2)
    position = make_position(Engine(config), gallery={2: [0], 4: [0]}, hugo="g1", clock="1:00", phase="roll",
                             spooky=[20])
    whole = solve(config, start=position)
    layered = solve_layered(config, start=position)
    assert layered.value == pytest.approx(whole.value, abs=1e-9) and layered.num_states == whole.num_states


def test_a_stopped_run_resumes_in_its_work_directory(tmp_path):
    config, objective = SET_UPS["party-duo-g1-r2-win"]
    work = tmp_path / "layers"
    with pytest.raises(SolveError, match="resume"):
        solve_layered(config, objective=objective, work_dir=work, max_seconds=0)  # stops after one layer
    progress = json.loads((work / "progress.json").read_text())
    assert len(progress["forward"]) == 1 and not progress["backward"]
    done = solve_layered(config, objective=objective, work_dir=work)
    assert done.value == pytest.approx(solve(config, objective=objective).value, abs=1e-9)
    assert done.meta["work_dir"] == str(work) and (work / "setup.json").is_file()
    assert solve_layered(config, objective=objective, work_dir=work).value == done.value  # all done: read back
    with pytest.raises(SolveError, match="another set-up"):
        solve_layered(config, objective="points", work_dir=work)


def test_midnight_solve_layered_prints_the_same_value(capsys, tmp_path):
    game = ["solve", "--set", "guests_per_player=1", "--set", "rounds=1", "--no-progress"]
    assert main([*game, "--json"]) == 0
    whole = json.loads(capsys.readouterr().out)
    assert main([*game, "--json", "--layered", "--work-dir", str(tmp_path / "w"), "--out", str(tmp_path / "s")]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["value"] == pytest.approx(whole["value"], abs=1e-9) and out["states"] == whole["states"]
    assert out["solver"] == "layered" and out["layers"] > 1 and out["peak_bytes"] > 0 and out["saved"]
    assert main([*game, "--layered"]) == 0
    table = capsys.readouterr().out
    assert "layers" in table and "bytes per state" in table and f"{whole['value']:.6f}" in table


@pytest.mark.parametrize("argv,words", [
    (["--work-dir", "x"], ["--work-dir is for --layered"]),
    (["--time-limit", "5"], ["--time-limit is for --layered"]),
    (["--layered", "--check"], ["--check needs the whole state graph"]),
    (["--layered", "--regret", "random"], ["--regret needs the whole state graph"]),
    (["--layered", "--time-limit", "0"], ["--time-limit 0.0 is out of range"]),
])
def test_layered_bad_input_is_one_line_and_exit_2(capsys, argv, words):
    code = main(["solve", "--no-progress", "--set", "guests_per_player=1", *argv])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    for word in words:
        assert word in err


@pytest.mark.parametrize("name", list(SET_UPS))
def test_a_solved_work_directory_is_a_solution_read_from_disk(tmp_path, name):
    config, objective = SET_UPS[name]
    whole = solved(name)[0]
    work = tmp_path / "layers"
    solve_layered(config, objective=objective, work_dir=work)
    disk = load_solution(work)
    assert disk.store is not None and disk.num_states == whole.num_states
    ids = disk.find(whole.keys)  # every state of the whole solution, looked up layer by layer
    assert (ids >= 0).all() and len(np.unique(ids)) == whole.num_states
    assert np.array_equal(disk.keys[ids], whole.keys)
    np.testing.assert_allclose(disk.values[ids], whole.values, atol=1e-9)
    assert np.array_equal(disk.best[ids], whole.best)
    assert disk.find(np.array([whole.keys.max() + np.uint64(4)], np.uint64))[0] == -1  # no such position
    start = whole.engine.new_games([0])
    assert disk.values_of(start)[0] == pytest.approx(whole.values_of(start)[0], abs=1e-9)
    np.testing.assert_allclose(disk.action_values(start), whole.action_values(start), atol=1e-9)
    back = disk.positions(ids[:5])  # decoded from the keys read off disk
    assert np.array_equal(disk.encode(back), whole.keys[:5])
    with pytest.raises(SolveError, match="read a few at a time"):
        np.asarray(disk.keys)


def test_the_optimal_agent_plays_from_the_layers_on_disk(tmp_path):
    from midnight_env.arena.play import play_batch
    from midnight_env.arena.registry import make_agent

    config, objective = SET_UPS["castle-duo-g1-win"]
    whole = solved("castle-duo-g1-win")[0]
    work = tmp_path / "layers"
    solve_layered(config, objective=objective, work_dir=work)
    pointer = load_solution(work).save(tmp_path / "elsewhere")  # a solution.json naming the layers
    assert not (pointer / "solution.npz").exists()
    assert json.loads((pointer / "solution.json").read_text())["layers_dir"] == str(work.resolve())
    engine = Engine(config)
    results = {}
    for name, path in (("whole", whole.save(tmp_path / "whole")), ("disk", pointer)):
        agents = [make_agent(f"optimal:path={path}"), make_agent("expert")]
        lineups = np.array([[0, 1], [1, 0]] * 20)  # the solution in both seats
        results[name] = play_batch(engine, agents, lineups, np.arange(40)).points
    assert np.array_equal(results["whole"], results["disk"])


def test_a_layered_solution_whose_layers_are_gone_is_a_clear_error(tmp_path):
    config, objective = SET_UPS["castle-duo-g1-win"]
    work = tmp_path / "layers"
    solve_layered(config, objective=objective, work_dir=work)
    pointer = load_solution(work).save(tmp_path / "elsewhere")
    import shutil

    shutil.rmtree(work / "layers")
    with pytest.raises(ValueError, match="holds no layers"):
        load_solution(pointer)


def test_midnight_solve_layered_out_beyond_the_memory_names_the_layers(capsys, tmp_path, monkeypatch):
    import midnight_env.solve.solution as solution_module

    monkeypatch.setattr(solution_module, "memory_max_states", lambda: 10)  # nothing joins in memory
    game = ["solve", "--set", "guests_per_player=1", "--set", "rounds=1", "--no-progress", "--json", "--layered",
            "--work-dir", str(tmp_path / "w"), "--out", str(tmp_path / "s")]
    assert main(game) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["saved"] == [str(tmp_path / "s")] and not (tmp_path / "s" / "solution.npz").exists()
    disk = load_solution(tmp_path / "s")
    assert disk.store is not None and disk.value == pytest.approx(out["value"], abs=1e-12)
