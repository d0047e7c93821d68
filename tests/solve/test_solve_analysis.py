"""What optimal play looks like (``midnight_env.solve.optimal_play``): placement values, visits under
optimal play and the decision table, on set-ups small enough to check by hand."""

from __future__ import annotations

import matplotlib
import numpy as np
import pytest
from experiment_scripts import experiment

from midnight_env.core.board import board_from_dict
from midnight_env.core.config import make_config
from midnight_env.core.state import OVER, ROLL
from midnight_env.solve import solve
from midnight_env.solve.optimal_play import (
    INTO_PLAIN,
    PASS,
    WALK,
    best_placements,
    decision_table,
    optimal,
    optimal_visits,
    placement_values,
    policy_visits,
    shares,
)
from midnight_env.solve.setups import TINY_CASTLE, TINY_PARTY
from midnight_env.solve.values import FACE_PROBABILITY

matplotlib.use("Agg")


@pytest.fixture(scope="module")
def tiny():
    return solve(make_config("midnight_party", 1, board=board_from_dict(TINY_PARTY), guests_per_player=1, rounds=1))


@pytest.fixture(scope="module")
def castle():
    return solve(make_config("hidden_castle", 1, board=board_from_dict(TINY_CASTLE), guests_per_player=2))


@pytest.fixture(scope="module")
def solo():
    """Solo midnight_party, 2 guests, one round (the real board)."""
    return solve("midnight_party", 1, guests_per_player=2, rounds=1)


def test_placement_values_by_hand(tiny):
    values = placement_values(tiny)
    assert values[3:] == pytest.approx([5 / 3] * 3)
    assert (values[:3] > 5 / 3 + 0.5).all()  # Hugo's first move reaches 0..2
    assert tiny.value == pytest.approx(5 / 3)
    assert best_placements(tiny) == [3]  # the lowest of the tied squares (the tie rule)


def test_placement_values_are_the_start_action_values(solo):
    first = placement_values(solo)
    state = solo.engine.new_games([0])
    assert np.array_equal(first, solo.action_values(state)[0, :28], equal_nan=True)
    squares = best_placements(solo)
    assert len(squares) == 2
    assert first[squares[0]] == pytest.approx(solo.value, abs=1e-9) == np.nanmin(first)
    second = placement_values(solo, squares[:1])
    assert np.isnan(second[squares[0]]) and np.isfinite(np.delete(second, squares[0])).all()
    assert np.nanmin(second) == pytest.approx(solo.value, abs=1e-9)  # after an optimal first, the optimum


def test_placement_values_refuse_a_bad_placement(solo):
    with pytest.raises(ValueError, match="placed square 30"):
        placement_values(solo, [30])
    with pytest.raises(ValueError, match="placed square 600"):
        placement_values(solo, [600])
    with pytest.raises(ValueError, match="placed square 5"):
        placement_values(solo, [5, 5])
    with pytest.raises(ValueError, match="no guest is left"):
        placement_values(solo, [5, 6])


def edge_odds(solution):
    """Each transition's probability under optimal play."""
    g = solution.graph
    source = np.repeat(np.arange(solution.num_states), np.diff(g.edge_start))
    chance = (solution.phases == ROLL)[source]
    return source, np.where(chance, FACE_PROBABILITY[np.where(chance, g.edge_label, 0)],
                            (g.edge_label == solution.best[source]).astype(float))


@pytest.mark.parametrize("which", ["tiny", "castle", "solo"])
def test_visits_book_the_optimal_value(which, request):
    """Visits under optimal play: the game ends once, and the points they book on the way are
    the optimal value (the start's booked points aside)."""
    solution = request.getfixturevalue(which)
    visits = optimal_visits(solution)
    assert visits[solution.start] >= 1
    assert visits[solution.phases == OVER].sum() == pytest.approx(1, abs=1e-9)
    source, odds = edge_odds(solution)
    booked = float(solution.positions([solution.start]).spooky[0, 0])
    assert booked + (visits[source] * odds * solution.graph.edge_reward).sum() == pytest.approx(solution.value,
                                                                                            abs=1e-9)


@pytest.mark.parametrize("spec", ["random", "runner"])
def test_visits_of_a_policy_book_its_exact_value(spec, tiny):
    """Visits under an agent's policy (``policy_visits``): the game ends once, and the points
    booked on the way are the policy's exact value from the graph's own evaluation."""
    from midnight_env.arena.registry import make_agent
    from midnight_env.solve.policy import agent_policy, evaluate_policy

    solution = tiny
    policy = agent_policy(solution, make_agent(spec), seats=[0])
    visits = policy_visits(solution, policy.weight)
    assert visits[solution.phases == OVER].sum() == pytest.approx(1, abs=1e-9)
    g = solution.graph
    source = np.repeat(np.arange(solution.num_states), np.diff(g.edge_start))
    chance = (solution.phases == ROLL)[source]
    odds = np.where(chance, FACE_PROBABILITY[np.where(chance, g.edge_label, 0)], policy.weight)
    booked = float(solution.positions([solution.start]).spooky[0, 0])
    value = evaluate_policy(solution, policy).value
    assert booked + (visits[source] * odds * g.edge_reward).sum() == pytest.approx(value, abs=1e-9)
    assert value > solution.value  # (a policy that is not optimal books more: the check can tell them apart)


def test_decision_table_by_hand(tiny):
    """The guest waits while Hugo is on the stairs (a pass is optimal, no room is open) and
    hides at its first number once he is on the gallery: 2 decisions per game before, 2/3 after."""
    table = decision_table(tiny)
    stairs = table.hugo_on_stairs
    assert stairs.any() and (~stairs).any()
    assert optimal(table, PASS)[stairs].all() and not table.can_room[stairs].any()
    assert (table.best_kind[stairs] != INTO_PLAIN).all()
    assert (table.best_kind[~stairs] == INTO_PLAIN).all() and not optimal(table, PASS)[~stairs].any()
    assert table.weight[stairs].sum() == pytest.approx(2)
    assert table.weight[~stairs].sum() == pytest.approx(2 / 3)
    assert (table.hugo_moves[~stairs] == 1).all()  # Hugo on 2, the guest on 3..5: his next move
    assert set(table.roll.tolist()) == {1, 2, 4, 5}
    # ties: a walk that keeps the guest on 3..5 is as good as a pass, and the solution walks
    tied = stairs & optimal(table, WALK) & optimal(table, PASS)
    assert tied.any() and (table.best_kind[tied] == WALK).all()


def test_decision_table_of_every_position(tiny):
    reached = decision_table(tiny)
    every = decision_table(tiny, np.ones(tiny.num_states), only_reached=False)
    assert len(every) > len(reached) and (every.weight == 1).all()
    assert set(reached.state.tolist()) <= set(every.state.tolist())


def test_decision_table_hidden_castle(castle):
    table = decision_table(castle)
    assert len(table) and table.clock.max() >= 1
    assert (table.on_gallery + table.in_rooms <= 2).all()
    # a red room is open to a guest at some decision, and the optimal choice is always legal
    assert table.can_red.any() and table.can_leave.any()
    for k in range(len(table)):
        assert (table.optimal_kinds[k] >> table.best_kind[k]) & 1


def test_shares_weigh_by_visits(tiny):
    table = decision_table(tiny)
    everyone = np.ones(len(table), bool)
    (row,) = shares(table, everyone, table.hugo_on_stairs)
    assert row.group is None and row.positions == len(table)
    assert row.per_game == pytest.approx(8 / 3) and row.share == pytest.approx(2 / (8 / 3))
    by = shares(table, everyone, table.best_kind == INTO_PLAIN, table.hugo_on_stairs)
    assert [r.group for r in by] == [False, True]
    assert [r.share for r in by] == pytest.approx([1.0, 0.0])


def test_placement_picture(solo, tmp_path):
    from midnight_env.render.heatmap import draw_square_values, placement_figure

    first = placement_values(solo)
    fig = placement_figure(solo.engine.board, [("first", first, ()), ("second", placement_values(solo, [8]), (8,))])
    assert len([ax for ax in fig.axes if ax.get_title()]) == 2
    fig.savefig(tmp_path / "p.png")
    assert (tmp_path / "p.png").stat().st_size > 10_000
    with pytest.raises(ValueError, match="one number per gallery square"):
        draw_square_values(fig.axes[0], solo.engine.board, first[:5])


# slow: solves three set-ups and draws their figures (10-20 s)
@pytest.mark.slow
def test_the_experiment_script_runs(tmp_path, capsys):
    """Smoke test of experiments/optimal_hiding.py on its quick set-ups (one guest, both variants)."""
    import json

    with experiment("optimal_hiding") as module:
        module.main(["--quick", "--figures", str(tmp_path), "--json", str(tmp_path / "r.json")])
        out = capsys.readouterr().out
        module.main(["--from-json", str(tmp_path / "r.json"), "--figures", str(tmp_path / "again")])
        again = capsys.readouterr().out
    tables = out[out.index("### Placement"):out.index("Figures:")]
    assert again[again.index("### Placement"):again.index("Figures:")] == tables  # the same from the saved numbers
    assert len(list((tmp_path / "again").glob("*.png"))) == 3
    assert "| solo-mp-r1-g1 | 4,202 | -2.949 | 27 |" in out
    assert sorted(p.name for p in tmp_path.glob("*.png")) == ["optimal_decisions.png", "placement_hidden_castle.png",
                                                              "placement_midnight_party.png"]
    results = json.loads((tmp_path / "r.json").read_text())
    assert [r["name"] for r in results] == ["solo-mp-r1-g1", "solo-hc-g1"]
    assert min(results[0]["placement"]["first"]) == pytest.approx(results[0]["value"])
