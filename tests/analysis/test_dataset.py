"""``midnight dataset``: the solved and self-play exports, their refusals and the data card."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

from midnight_env.analysis.dataset import ACTIONS, DATA_CARD, DECISIONS
from midnight_env.cli import main
from midnight_env.core.state import MOVE, PLACE
from midnight_env.solve.optimal_play import optimal_visits
from midnight_env.solve.setups import SET_UPS
from midnight_env.solve.solution import solve


def read(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        return list(reader.fieldnames or []), list(reader)


@pytest.fixture(scope="module")
def solved(tmp_path_factory):
    out = tmp_path_factory.mktemp("solved") / "data"
    assert main(["dataset", "solved", "--set-up", "solo-mp-r1-g1", "--out", str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def selfplay(tmp_path_factory):
    out = tmp_path_factory.mktemp("selfplay") / "data"
    assert main(["dataset", "selfplay", "--variant", "midnight_party", "--players", "2", "--games", "2",
                 "--out", str(out)]) == 0
    return out


def test_solved_values_are_the_solutions(solved):
    setup = SET_UPS["solo-mp-r1-g1"]
    solution = solve(setup.config(), objective=setup.objective)
    visits = optimal_visits(solution)
    _, decisions = read(solved / DECISIONS)
    _, actions = read(solved / ACTIONS)
    ids = np.flatnonzero(np.isin(solution.phases, (PLACE, MOVE)))
    assert sorted(int(d["decision_id"]) for d in decisions) == ids.tolist()
    by_id = {int(d["decision_id"]): d for d in decisions}
    positions = solution.positions(ids)
    # one player: the value is minus the final points, booked plus still to come
    want = -(solution.values[ids] + positions.spooky[:, 0])
    for k, i in enumerate(ids):
        d = by_id[int(i)]
        assert float(d["value"]) == pytest.approx(want[k], abs=1e-9)
        assert float(d["visits"]) == pytest.approx(visits[i], abs=1e-12)
        assert float(d["visits"]) >= 0
        assert int(d["legal_actions"]) == int(positions.legal[k].sum())
    assert any(float(d["visits"]) > 0 for d in decisions)
    per = {}
    for a in actions:
        per.setdefault(int(a["decision_id"]), []).append(a)
    assert sum(len(v) for v in per.values()) == len(actions) == int(positions.legal.sum())
    for k, i in enumerate(ids):
        rows = per[int(i)]
        assert sorted(int(a["action"]) for a in rows) == np.flatnonzero(positions.legal[k]).tolist()
        choice = [a for a in rows if a["solver_choice"] == "1"]
        assert len(choice) == 1 and int(choice[0]["action"]) == solution.best[i]
        assert choice[0]["optimal"] == "1" and float(choice[0]["loss"]) == 0
        assert float(choice[0]["value"]) == pytest.approx(want[k], abs=1e-9)
        assert max(float(a["value"]) for a in rows) == pytest.approx(want[k], abs=1e-9)
        assert all(float(a["loss"]) >= 0 for a in rows)


def test_selfplay_rows_cover_every_legal_action(selfplay):
    _, decisions = read(selfplay / DECISIONS)
    _, actions = read(selfplay / ACTIONS)
    assert decisions and {d["game"] for d in decisions} == {"0", "1"}
    per = {}
    for a in actions:
        per.setdefault(a["decision_id"], []).append(a)
    assert set(per) == {d["decision_id"] for d in decisions}
    for d in decisions:
        rows = per[d["decision_id"]]
        assert int(d["legal_actions"]) == len(rows) >= 2
        assert len({a["action"] for a in rows}) == len(rows)
        chosen = [a for a in rows if a["chosen"] == "1"]
        assert len(chosen) == 1 and chosen[0]["action"] == d["chosen"]
        assert chosen[0]["notation"] == d["chosen_notation"]
        best = max(float(a["value"]) for a in rows)
        assert float(d["value"]) == pytest.approx(best)
        assert float(d["loss"]) == pytest.approx(best - float(chosen[0]["value"]), abs=1e-4)
        assert d["phase"] in ("place", "move") and (d["roll"] == "0") == (d["phase"] == "place")


@pytest.mark.parametrize("kind", ["solved", "selfplay"])
def test_data_card_lists_every_column(kind, solved, selfplay):
    folder = solved if kind == "solved" else selfplay
    card = (folder / DATA_CARD).read_text(encoding="utf-8")
    for name in (DECISIONS, ACTIONS):
        columns, rows = read(folder / name)
        for column in columns:
            assert f"`{column}`" in card, column
        assert f"`{name}`: {len(rows):,} rows" in card
    assert "engine version" in card and "code commit" in card and "Known limits" in card


@pytest.mark.parametrize("argv", [["solved", "--set-up", "solo-mp-r1-g1"],
                                  ["selfplay", "--games", "1"]])
def test_existing_folder_is_refused(tmp_path, capsys, argv):
    out = tmp_path / "there"
    out.mkdir()
    assert main(["dataset", *argv, "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"midnight dataset: error: --out {str(out)!r} exists: allowed is a new folder "
                   "(the data set is written whole)"]
    assert list(out.iterdir()) == [] and sorted(p.name for p in tmp_path.iterdir()) == ["there"]


def test_bad_set_up_and_variant_are_named(tmp_path, capsys):
    assert main(["dataset", "solved", "--set-up", "duo-mp-r1-g1-win", "--out", str(tmp_path / "a")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "allowed are" in err[0] and "duo-mp-r1-g1-points" in err[0]
    assert main(["dataset", "selfplay", "--variant", "nope", "--out", str(tmp_path / "b")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "allowed are" in err[0]
    assert list(tmp_path.iterdir()) == []
