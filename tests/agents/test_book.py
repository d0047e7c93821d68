"""The placement book as the champions read it (midnight_agents.book, issue 41 item 2): the loader, the
shipped copy, and ``value-...:book=`` placing the first guest by it."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from experiment_scripts import load_script

from midnight_agents.book import SHIPPED_BOOK, BookError, book_entry, book_setups, load_book
from midnight_env import cli
from midnight_env.arena.agent import Decisions
from midnight_env.arena.registry import list_agents, make_agent
from midnight_env.core.dice import agent_streams
from midnight_env.core.engine import Engine
from midnight_env.core.state import PLACE

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
DOCS_BOOK = ROOT / "docs" / "placement_book.json"
CHAMPION = "value-midnight_party-2p"


def hand_book(tmp_path: Path, best: int, variant: str = "midnight_party", players: int = 2) -> Path:
    """A book of one set-up whose best square is ``best``."""
    path = tmp_path / f"book-{variant}-{players}-{best}.json"
    values = [0.0] * 28
    values[best] = 1.0
    path.write_text(json.dumps({"about": "hand-made", f"{variant}_{players}p": {
        "variant": variant, "players": players, "options": {}, "values": values, "half_widths": [0.1] * 28,
        "rollouts": [10] * 28, "best": best}}))
    return path


def choices(agent, engine: Engine, state, seeds: np.ndarray) -> np.ndarray:
    return np.asarray(agent.act(Decisions(engine, state, np.arange(len(seeds)), agent_streams(seeds), seeds)))


def test_the_shipped_copy_is_the_docs_book_and_is_installed_as_package_data():
    assert json.loads(SHIPPED_BOOK.read_text()) == json.loads(DOCS_BOOK.read_text()), \
        "refresh it: cp docs/placement_book.json agents/models/placement/placement_book.json"
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    assert "placement/*.json" in data["midnight_agents.models"]


def test_the_loader_finds_each_covered_set_up_with_default_options_only():
    book = load_book()
    assert "about" in book and load_book("shipped") is book
    assert set(book_setups()) == {f"{v} {n} players" for v in ("midnight_party", "hidden_castle") for n in (2, 3, 4, 6)}
    for variant in ("midnight_party", "hidden_castle"):
        for players in (2, 3, 4, 6):
            entry = book_entry(variant, players)
            assert entry["variant"] == variant and entry["players"] == players
            assert len(entry["values"]) == len(entry["half_widths"]) == 28 and 0 <= entry["best"] < 28
    assert book_entry("midnight_party", 2, {"guests_per_player": 6, "rounds": 3}) is book_entry("midnight_party", 2)
    assert book_entry("midnight_party", 5) is None
    assert book_entry("midnight_party", 2, {"guests_per_player": 3}) is None
    assert book_entry("no_such_variant", 2) is None


def test_a_book_that_cannot_be_read_is_refused_in_one_line(tmp_path):
    (tmp_path / "bad.json").write_text("{not json")
    (tmp_path / "empty.json").write_text("{}")
    for name in ("missing.json", "bad.json", "empty.json"):
        with pytest.raises(BookError) as err:
            load_book(tmp_path / name)
        assert "\n" not in str(err.value) and name in str(err.value)


def test_the_option_places_the_games_first_guest_on_the_book_square_and_nothing_else(tmp_path):
    engine = Engine("midnight_party", 2)
    seeds = np.arange(6)
    plain, booked = make_agent(CHAMPION), make_agent(f"{CHAMPION}:book={hand_book(tmp_path, 5)}")
    searching = make_agent(f"{CHAMPION}:budget=30,book={hand_book(tmp_path, 5)}")
    state = engine.new_games(seeds)
    assert (state.phase == PLACE).all() and (state.player == 0).all()
    own = choices(plain, engine, state, seeds)
    assert (own != 5).all()  # the network's own square is another one
    assert (choices(booked, engine, state, seeds) == 5).all()  # the game's first guest: the book's square
    assert (choices(searching, engine, state, seeds) == 5).all()  # inside the search too
    engine.step(state, np.full(len(seeds), 3))  # seat 0's first guest on square 3
    assert (state.player == 1).all()
    # seat 1's first guest, square 5 free: not the position the book values, the network's choice
    assert (choices(booked, engine, state, seeds) == choices(plain, engine, state, seeds)).all()
    engine.step(state, np.full(len(seeds), 7))
    assert (state.player == 0).all() and (state.phase == PLACE).all()
    second = choices(plain, engine, state, seeds)  # seat 0's second guest: the network's, not the book's
    assert (second != 5).all() and (choices(booked, engine, state, seeds) == second).all()


def test_a_set_up_the_book_does_not_cover_is_refused_in_one_line(tmp_path, capsys):
    four = hand_book(tmp_path, 5, players=4)
    with pytest.raises(ValueError) as err:
        make_agent(f"{CHAMPION}:book={four}")
    assert str(err.value) == (f"value option book={four}: the placement book {four} does not cover "
                              "midnight_party 2 players: allowed are midnight_party 4 players")
    code = cli.main(["simulate", "--variant", "midnight_party", "--players", "2", "--games", "1", "--no-progress",
                     "--agents", f"{CHAMPION}:book={four}"])
    out, err = capsys.readouterr()
    assert code == 2 and err.count("\n") == 1 and "does not cover midnight_party 2 players" in err
    bad = hand_book(tmp_path, 5)
    bad.write_text(bad.read_text().replace('"best": 5', '"best": 28'))
    with pytest.raises(ValueError, match="^value option book=.*: best square 28 is not allowed: allowed are 0..27$"):
        make_agent(f"{CHAMPION}:book={bad}")
    with pytest.raises(ValueError, match="value option book=.*missing.json: placement book .* cannot be read"):
        make_agent(f"{CHAMPION}:book={tmp_path / 'missing.json'}")


def test_the_shipped_book_plays_a_legal_game_and_is_documented():
    engine = Engine("midnight_party", 2)
    agent = make_agent(f"{CHAMPION}:book=shipped")
    assert agent.book_square == book_entry("midnight_party", 2)["best"]
    described = dict(list_agents())
    assert "book=shipped" in described["value"] and "book=shipped" in described[CHAMPION]
    from midnight_env.arena.play import play_batch

    result = play_batch(engine, [agent, make_agent(CHAMPION)], np.array([[0, 1], [1, 0]]), [1, 2])
    assert result.points.shape == (2, 2)


def test_the_gain_experiment_runs_tiny_and_a_seat_that_never_uses_the_book_gains_exactly_nothing():

    module = load_script("book_gain")
    result = module.gain_of_book("midnight_party", 2, deals=3, seed=0, batch=8)
    assert result["games"] == 9 and len(result["seats"]) == 2
    assert result["seats"][1]["gain"] == 0 and result["seats"][1]["games_differ"] == 0  # seat 1 plays as without
    engine, seeds = Engine("midnight_party", 2), np.arange(1)
    opening = choices(make_agent(CHAMPION), engine, engine.new_games(seeds), seeds)[0]  # the network's square
    moved = opening != book_entry("midnight_party", 2)["best"]
    assert result["seats"][0]["games_differ"] == moved  # seat 0's game differs where the book moves its first guest
    assert "| midnight_party 2 players | 3 |" in module.row(result)
