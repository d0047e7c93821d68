"""``midnight analyze``: every decision of a recorded game judged (midnight_env.analysis).

On solved set-ups of the real board (one guest a player, one round: solved in about a second) a
game in which a seat makes one deliberately bad choice: the analysis charges that choice exactly
the solution's value difference, worked out here from the positions it leads to, marks it by size,
and charges the optimal choices nothing. The search's values pick the move it plays; the default
evaluator is the strongest there is; bad input is one line and exit 2. Every loss carries its error
(the evaluator's measured accuracy in the decision's stage): a loss within CLEAR times it is not
marked, an evaluator not measured on the set-up marks nothing and says so; the placement book's
values come with the first guest of a set-up it covers."""

from __future__ import annotations

import json

import numpy as np
import pytest

from midnight_agents.book import load_book
from midnight_env.analysis import (
    BLUNDER,
    CLEAR,
    INACCURACY,
    MEASURED_ACCURACY,
    MISTAKE,
    AnalysisError,
    analyze_file,
    analyze_record,
    evaluator_for,
    format_analysis,
    mark_of,
)
from midnight_env.arena.agent import Agent, Decisions
from midnight_env.arena.play import play_batch
from midnight_env.arena.registry import make_agent
from midnight_env.cli import main
from midnight_env.core.dice import agent_streams
from midnight_env.core.engine import Engine
from midnight_env.core.state import GameState
from midnight_env.solve import solve

SMALL = {"guests_per_player": 1, "rounds": 1}
SMALL_ARGS = ["--set", "guests_per_player=1", "--set", "rounds=1"]


class BadAt(Agent):
    """Optimal play from ``solution``, but at the decisions numbered in ``bad`` (1, 2, ... in the
    game) the worst legal choice for the deciding seat."""

    name = "bad-at"

    def __init__(self, solution, bad: set[int]):
        self.solution, self.bad, self.count = solution, bad, 0

    def act(self, decisions: Decisions) -> np.ndarray:
        self.count += 1
        state, games = decisions.state, decisions.games
        if self.count not in self.bad:
            return self.solution.best_actions(state, games)
        values = self.solution.action_values(state, games)[0]  # seat 0's points (minus seat 1's) to come
        worst = np.nanargmax(values) if state.player[games[0]] == 0 else np.nanargmin(values)
        return np.array([worst])


def after(engine: Engine, state: GameState, action: int) -> GameState:
    out = state.copy()
    engine.apply_action(out, [action])
    return out


@pytest.fixture(scope="module")
def duo(tmp_path_factory):
    """Two players, one guest each, one round, solved for points and saved in a solution folder."""
    folder = tmp_path_factory.mktemp("solutions")
    sol = solve("midnight_party", 2, "points", **SMALL)
    from midnight_env.solve.solution import solution_name

    sol.save(folder / solution_name(sol.config, "points"))
    return sol, folder


@pytest.fixture(scope="module")
def duo_game(duo, tmp_path_factory):
    """A game of the duo set-up: both placements (decisions 1 and 2) the worst there is, the rest optimal."""
    sol, _ = duo
    engine = Engine("midnight_party", 2, **SMALL)
    rec = play_batch(engine, [BadAt(sol, {1, 2})], np.zeros((1, 2), np.int64), [2], record=True,
                     agent_names=["bad-at"]).records[0]
    path = tmp_path_factory.mktemp("records") / "duo.jsonl"
    path.write_text("{not json\n" + json.dumps(rec) + "\n", encoding="utf-8")
    return rec, path


def test_a_bad_choice_loses_the_solutions_value_difference_and_the_optimal_ones_nothing(duo, duo_game, monkeypatch):
    sol, folder = duo
    rec, path = duo_game
    monkeypatch.setenv("MIDNIGHT_SOLUTIONS", str(folder))
    analysis = analyze_file(path, 2)
    assert analysis.evaluator.spec == "optimal" and analysis.evaluator.exact
    first, second, *rest = analysis.decisions
    # worked out from the solution's values of the positions the placements lead to (seat 0's
    # points minus seat 1's still to come; nothing is booked by a placement): seat 0 minimises them
    engine = Engine("midnight_party", 2, **SMALL)
    start = engine.new_games([0])
    squares = np.flatnonzero(start.legal[0])
    d = np.array([sol.values_of(after(engine, start, a))[0] for a in squares])
    assert first.seat == 0 and first.chosen == f"g{squares[d.argmax()]}" and first.best == f"g{squares[d.argmin()]}"
    assert first.loss == pytest.approx(d.max() - d.min(), abs=1e-9) and first.loss > MISTAKE
    assert first.mark == mark_of(first.loss)
    # seat 1 maximises them, from where seat 0's bad placement left the game
    placed = after(engine, start, int(first.chosen[1:]))
    squares1 = np.flatnonzero(placed.legal[0])
    d1 = np.array([sol.values_of(after(engine, placed, a))[0] for a in squares1])
    assert second.seat == 1 and second.chosen == f"g{squares1[d1.argmin()]}"
    assert second.loss == pytest.approx(d1.max() - d1.min(), abs=1e-9) and second.mark == mark_of(second.loss)
    assert second.best_value == pytest.approx(d1.max(), abs=1e-9)  # seat 1's margin: seat 0's points minus its own
    assert rest and all(j.loss == 0 and j.mark is None and j.best == j.chosen for j in rest)
    seats = analysis.seats()
    assert seats[0]["loss"] == pytest.approx(first.loss, abs=1e-4)
    assert seats[1]["loss"] == pytest.approx(second.loss, abs=1e-4)


def test_the_command_marks_the_bad_choices_and_json_has_every_value(duo, duo_game, monkeypatch, capsys):
    _, folder = duo
    rec, path = duo_game
    monkeypatch.setenv("MIDNIGHT_SOLUTIONS", str(folder))
    assert main(["analyze", str(path), "--line", "2"]) == 0
    out = capsys.readouterr().out
    assert "evaluator optimal" in out and "seat" in out
    marked = [line for line in out.splitlines() if line.rstrip().endswith(("inaccuracy", "mistake", "blunder"))]
    assert len(marked) == 2 and marked[0].split()[:3] == ["1", "0", "0"]
    assert main(["analyze", str(path), "--line", "2", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {"format", "source", "variant", "num_players", "options", "evaluator", "thresholds", "decisions", "seats",
            "seconds"} <= set(data)
    assert data["thresholds"] == {"inaccuracy": INACCURACY, "mistake": MISTAKE, "blunder": BLUNDER}
    first = data["decisions"][0]
    assert {"decision", "event", "seat", "phase", "stage", "roll", "chosen", "best", "loss", "loss_error", "mark",
            "forced", "chosen_value", "best_value", "values", "book"} <= set(first)
    assert first["stage"] == "placement" and first["loss_error"] == 0  # the exact solution: no error
    assert data["evaluator"]["accuracy"]["measured"] and data["evaluator"]["accuracy"]["exact"]
    assert data["marking"]["clear"] == CLEAR
    assert first["phase"] == "place" and first["roll"] is None and len(first["values"]) == 28
    assert first["values"][first["chosen"]] == pytest.approx(first["best_value"] - first["loss"], abs=1e-3)
    assert {"seat", "agent", "decisions", "judged", "loss", "inaccuracies", "mistakes", "blunders",
            "final_points"} <= set(data["seats"][0])


def test_a_solo_game_played_optimally_loses_nothing(tmp_path, monkeypatch):
    sol = solve("midnight_party", 1, "points", **SMALL)
    engine = Engine("midnight_party", 1, **SMALL)
    rec = play_batch(engine, [BadAt(sol, set())], np.zeros((1, 1), np.int64), [5], record=True).records[0]
    (tmp_path / "solo.jsonl").write_text(json.dumps(rec) + "\n", encoding="utf-8")
    analysis = analyze_file(tmp_path / "solo.jsonl", evaluator=f"optimal:path={sol.save(tmp_path / 'sol')}")
    assert all(d.loss == 0 for d in analysis.decisions)
    # a value is minus the expected final points: at the start the solution's value, negated
    assert analysis.decisions[0].best_value == pytest.approx(-sol.value, abs=1e-9)


def test_the_search_values_pick_the_move_it_plays():
    engine = Engine("midnight_party", 4)
    rec = play_batch(engine, [make_agent("expert")], np.zeros((1, 4), np.int64), [2], record=True).records[0]
    from midnight_env.analysis.judge import decision_positions

    state, _, _ = decision_positions(engine, rec)
    state = state.take(np.arange(0, state.batch_size, 4))  # placements and moves
    n = state.batch_size
    for spec in ("search:budget=200", "value-midnight_party-4p:budget=200", "value-midnight_party-4p"):
        agent = make_agent(spec)
        values = agent.action_values(Decisions(engine, state, np.arange(n), agent_streams(np.arange(n))))
        played = agent.act(Decisions(engine, state, np.arange(n), agent_streams(np.arange(n))))
        assert np.array_equal(np.isnan(values), ~state.legal.astype(bool)), spec
        best = np.nanmax(values, axis=1)
        assert np.allclose(values[np.arange(n), played], best, atol=1e-9), spec


def test_the_default_evaluator_is_the_strongest_there_is(duo, monkeypatch, tmp_path):
    _, folder = duo
    monkeypatch.setenv("MIDNIGHT_SOLUTIONS", str(folder))
    assert evaluator_for(Engine("midnight_party", 2, **SMALL)).spec == "optimal"
    assert evaluator_for(Engine("midnight_party", 4)).spec == "value-midnight_party-4p:budget=1500"
    assert evaluator_for(Engine("hidden_castle", 4)).spec == "value-hidden_castle-4p:budget=1500"
    assert evaluator_for(Engine("midnight_party", 5)).spec == "search"  # no champion shipped for 5 players
    assert evaluator_for(Engine("midnight_party", 4, guests_per_player=2)).spec == "search"  # the champion's
    monkeypatch.setenv("MIDNIGHT_SOLUTIONS", str(tmp_path))  # no solution here: the champion     # set-up differs
    assert evaluator_for(Engine("midnight_party", 2, **SMALL)).spec == "search"


@pytest.mark.parametrize("argv,words", [
    (["--evaluator", "optimal"], ["evaluator 'optimal' cannot judge midnight_party 4 players", "no solution",
                                  "allowed are optimal", "search"]),
    (["--evaluator", "value-hidden_castle-4p"], ["evaluator 'value-hidden_castle-4p' cannot judge midnight_party 4",
                                                 "allowed are"]),
    (["--evaluator", "expert"], ["evaluator 'expert' values no actions", "allowed are"]),
    (["--evaluator", "optimal:objective=win"], ["objective 'win' is not allowed"]),
    (["--evaluator", "nobody"], ["evaluator 'nobody'", "unknown agent"]),
    (["--line", "2"], ["line 2: not valid JSON"]),
    (["--line", "3"], ["line 3: a record must be a JSON object"]),
    (["--line", "4"], ["line 4: missing field 'variant'"]),
    (["--line", "9"], ["has no record on line 9", "its last record is on line 4"]),
    (["--line", "0"], ["line 0 is out of range"]),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, monkeypatch, capsys, argv, words):
    monkeypatch.setenv("MIDNIGHT_SOLUTIONS", str(tmp_path))
    engine = Engine("midnight_party", 4)
    rec = play_batch(engine, [make_agent("random")], np.zeros((1, 4), np.int64), [1], record=True).records[0]
    path = tmp_path / "games.jsonl"
    path.write_text(json.dumps(rec) + '\n{"format": \n[1, 2]\n{"format": "midnight-record/1"}\n', encoding="utf-8")
    code = main(["analyze", str(path), *argv])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    for word in words:
        assert word in err, err


def test_a_record_of_another_set_up_than_the_solution_is_refused(duo, duo_game, tmp_path):
    sol, folder = duo
    _, path = duo_game
    solo = solve("midnight_party", 1, "points", **SMALL).save(tmp_path / "solo")
    with pytest.raises(AnalysisError, match="cannot judge midnight_party 2 players.*it solves 1 player"):
        analyze_file(path, 2, evaluator=f"optimal:path={solo}")


def test_a_layered_work_directory_judges_a_game_as_the_whole_solution_does(duo, duo_game, tmp_path):
    """A set-up solved by layers (``midnight solve --layered --work-dir DIR``) is judged from its
    layers on disk: every decision's values as the whole solution's."""
    from midnight_env.solve.layered import solve_layered

    sol, _ = duo
    _, path = duo_game
    work = tmp_path / "layers"
    solve_layered("midnight_party", 2, objective="points", work_dir=work, **SMALL)
    whole = analyze_file(path, 2, evaluator=f"optimal:path={sol.save(tmp_path / 'whole')}")
    disk = analyze_file(path, 2, evaluator=f"optimal:path={work}")
    assert len(disk.decisions) == len(whole.decisions) > 2
    for a, b in zip(disk.decisions, whole.decisions):
        assert (a.chosen, a.best, a.mark) == (b.chosen, b.best, b.mark)
        assert a.loss == pytest.approx(b.loss, abs=1e-9)
        assert (a.values is None) == (b.values is None)  # None: a forced decision
        if b.values is not None:
            assert a.values.keys() == b.values.keys()
            np.testing.assert_allclose(list(a.values.values()), list(b.values.values()), atol=1e-9)


# ------------------------------------------------------------------------------------------------
# a loss's error, the marks, the placement book

STAGE_FIGURES = ("loss_error", "loss_bias", "loss_bias_half_width", "loss_mae", "noise_rms", "positions", "pairs")


def _measured(error: dict[str, float]) -> dict:
    """A MEASURED_ACCURACY entry whose loss error per stage is ``error``."""
    return {"command": "made up for a test", "rollouts": 8, "source_games": 1,
            "stages": {stage: {"loss_error": e, "loss_bias": 0.0, "loss_bias_half_width": 0.1, "loss_mae": e,
                               "noise_rms": 0.1, "positions": 3, "pairs": 9} for stage, e in error.items()}}


def test_the_default_real_size_evaluators_carry_their_measured_accuracy():
    for variant, players in (("midnight_party", 2), ("hidden_castle", 2), ("midnight_party", 4),
                             ("hidden_castle", 4)):
        ev = evaluator_for(Engine(variant, players))
        assert ev.measured is not None and ev.measured is MEASURED_ACCURACY[ev.spec], ev.spec
        assert ev.accuracy.startswith("measured against") and "truth" in ev.measured["command"]
        assert f"--variant {variant} --players {players}" in ev.measured["command"]
        for stage in ("placement", "early", "middle", "late"):
            figures = ev.measured["stages"][stage]
            assert set(STAGE_FIGURES) <= set(figures) and figures["positions"] >= 1
            assert figures["loss_error"] > 0 and ev.loss_error(stage) == figures["loss_error"]
        view = ev.accuracy_view()
        assert view["measured"] and not view["exact"] and view["stages"].keys() == ev.measured["stages"].keys()
    assert evaluator_for(Engine("midnight_party", 3)).measured is None  # no measurement of three players yet


def test_a_loss_within_its_error_is_not_marked(duo, duo_game, monkeypatch):
    """The duo game's bad placements lose more than a mistake's points: marked where the error is
    small, not where the loss is within CLEAR times it; the other stages' decisions keep their marks."""
    _, folder = duo
    rec, _ = duo_game
    monkeypatch.setenv("MIDNIGHT_SOLUTIONS", str(folder))
    exact = analyze_record(rec, evaluator="optimal")
    first = exact.decisions[0]
    assert first.mark is not None and first.loss > MISTAKE
    spec = "search:budget=30"
    plain = analyze_record(rec, evaluator=spec)
    assert plain.evaluator.measured is None
    for within in (False, True):
        error = first.loss / CLEAR if within else 0.05  # loss == CLEAR x error: not clearly beyond it
        monkeypatch.setitem(MEASURED_ACCURACY, spec, _measured({"placement": error, "early": 0.05, "middle": 0.05,
                                                                 "late": 0.05}))
        analysis = analyze_record(rec, evaluator=spec)
        for d in analysis.decisions:
            assert d.loss_error == (0.0 if d.forced else error if d.stage == "placement" else 0.05)
            assert d.mark == mark_of(d.loss, d.loss_error)
            if d.loss <= CLEAR * d.loss_error:
                assert d.mark is None
        placements = [d for d in analysis.decisions if d.stage == "placement"]
        big = [d for d in placements if d.loss > CLEAR * 0.05 and d.loss >= INACCURACY]
        assert big, "the bad placements lose points by the search's values too"
        if within:
            assert all(d.mark is None for d in placements if d.loss <= first.loss)
        else:
            assert all(d.mark is not None for d in big)
        data = analysis.as_dict()
        assert data["evaluator"]["accuracy"]["measured"] and data["evaluator"]["accuracy"]["stages"]["placement"][
            "loss_error"] == error
        for d in data["decisions"]:
            assert d["loss_error"] is not None and (d["mark"] is None or d["loss"] > CLEAR * d["loss_error"])
    assert mark_of(BLUNDER + 1, (BLUNDER + 1) / CLEAR) is None and mark_of(BLUNDER + 1, 0.1) == "blunder"
    assert mark_of(BLUNDER + 1, None) is None and mark_of(BLUNDER + 1, 0.0) == "blunder"


def test_an_evaluator_not_measured_on_the_set_up_says_so_and_marks_nothing(duo, duo_game, monkeypatch, capsys):
    _, folder = duo
    _, path = duo_game
    monkeypatch.setenv("MIDNIGHT_SOLUTIONS", str(folder))
    analysis = analyze_file(path, 2, evaluator="search:budget=30")
    assert any(d.loss >= MISTAKE for d in analysis.decisions)  # it would have been marked by size alone
    assert all(d.mark is None for d in analysis.decisions)
    assert all(d.loss_error is None for d in analysis.decisions if not d.forced)
    accuracy = analysis.as_dict()["evaluator"]["accuracy"]
    assert accuracy["measured"] is False and accuracy["about"].startswith("not measured") and "stages" not in accuracy
    assert all(s["inaccuracies"] == s["mistakes"] == s["blunders"] == 0 for s in analysis.seats())
    text = format_analysis(analysis)
    assert "accuracy: not measured" in text and "nothing is marked" in text
    assert main(["analyze", str(path), "--line", "2", "--evaluator", "search:budget=30", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["evaluator"]["accuracy"]["measured"] is False
    assert all(d["loss_error"] is None and d["mark"] is None for d in data["decisions"] if not d["forced"])


def test_the_placement_book_values_the_first_guest_of_a_set_up_it_covers(tmp_path, capsys):
    book = load_book()["midnight_party_2p"]
    engine = Engine("midnight_party", 2)
    rec = play_batch(engine, [make_agent("random")], np.zeros((1, 2), np.int64), [4], record=True).records[0]
    analysis = analyze_record(rec, evaluator="value-midnight_party-2p")
    first, *rest = analysis.decisions
    assert first.seat == 0 and first.stage == "placement" and first.book is not None
    assert all(d.book is None for d in rest)  # the book values seat 0's first guest only
    square = int(first.chosen[1:])
    assert first.book["chosen"] == {"square": first.chosen, "value": pytest.approx(book["values"][square], abs=1e-4),
                                    "half_width": pytest.approx(book["half_widths"][square], abs=1e-4),
                                    "rollouts": book["rollouts"][square]}
    best = first.book["best"]
    assert best["square"] == f"g{book['best']}"
    assert best["value"] == pytest.approx(book["values"][book["best"]], abs=1e-4)
    assert best["half_width"] > 0 and best["rollouts"] == book["rollouts"][book["best"]]
    assert first.book["best_over_runner_up"]["runner_up"] == f"g{book['runner_up']}"
    assert analysis.as_dict()["decisions"][0]["book"] == first.book
    path = tmp_path / "g.jsonl"
    path.write_text(json.dumps(rec) + "\n", encoding="utf-8")
    assert main(["analyze", str(path), "--evaluator", "value-midnight_party-2p"]) == 0
    out = capsys.readouterr().out
    assert f"placement book, decision 1 (seat 0's first guest, margin): chosen {first.chosen} " in out
    assert f"best g{book['best']} {book['values'][book['best']]:+.2f} ± {book['half_widths'][book['best']]:.2f}" in out
    # a set-up the book does not cover: no book values
    small = Engine("midnight_party", 2, **SMALL)
    rec = play_batch(small, [make_agent("random")], np.zeros((1, 2), np.int64), [4], record=True).records[0]
    assert all(d.book is None for d in analyze_record(rec, evaluator="search:budget=10").decisions)
