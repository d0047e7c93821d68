"""The card agent: each rule on a hand-built position where it decides, the card without it,
card files and their errors, and the card page kept in step with the code."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from midnight_agents.card import RULE_NAMES, THRESHOLDS, rule_sentences
from midnight_env import Engine
from midnight_env.arena.agent import Decisions
from midnight_env.arena.play import play_batch
from midnight_env.arena.registry import AgentError, list_agents, make_agent
from midnight_env.core.dice import agent_streams
from midnight_env.core.positions import make_position

ROOT = Path(__file__).resolve().parents[2]
MP, HC = Engine("midnight_party", 2), Engine("hidden_castle", 2)


def decide(spec: str, engine: Engine, state, seed: int = 0) -> str:
    """The agent's choice in game 0 of ``state``, in record notation."""
    agent = make_agent(spec)
    choice = int(agent.act(Decisions(engine, state, np.array([0]), agent_streams([seed])))[0])
    assert state.legal[0, choice] == 1
    return engine.layout.to_notation(choice, int(state.roll[0]))


def legal(engine: Engine, state) -> set[str]:
    return {engine.layout.to_notation(int(a), int(state.roll[0])) for a in np.flatnonzero(state.legal[0])}


def test_the_card_is_listed_with_its_options():
    names = dict(list_agents())
    assert "card" in names and "drop=K" in names["card"]
    out = subprocess.run([sys.executable, "-m", "midnight_env.cli", "agents"], capture_output=True, text=True)
    assert out.returncode == 0 and "\ncard " in out.stdout


def test_rule_1_places_on_the_highest_free_square_never_on_square_0():
    state = make_position(MP, phase="place")
    assert decide("card", MP, state) == "g27"
    state = make_position(MP, gallery={27: [1], 26: [0]}, phase="place")
    assert decide("card", MP, state) == "g25"
    picks = {decide("card:drop=1", MP, make_position(MP, phase="place"), seed) for seed in range(20)}
    assert len(picks) > 1  # without the rule: any free square


def test_rule_2_never_walks_onto_hugo():
    state = make_position(MP, gallery={8: [0], 9: [0], 3: [1]}, hugo="g12", roll=4)
    assert "g8>g12" in legal(MP, state)
    assert decide("card", MP, state) != "g8>g12"
    assert decide("card:drop=2", MP, state) == "g8>g12"  # trailing alone likes the square he stands on


def test_rule_3_takes_a_green_room():
    state = make_position(MP, gallery={5: [0], 24: [0], 14: [1]}, hugo="g26", roll=4)
    assert decide("card", MP, state) == "g5>r3"


def test_rule_4_moves_the_guest_in_danger_in_hidden_castle():
    # Hugo on 10 at speed 3: the guest on 14 is two moves away, the one on 24 five
    state = make_position(HC, gallery={14: [0], 24: [0], 2: [1]}, hugo="g10", roll=1)
    assert legal(HC, state) == {"g14>g15", "g24>g25"}
    assert decide("card", HC, state) == "g14>g15"
    assert decide("card:drop=4", HC, state) == "g24>g25"  # trail: the square farther from Hugo's reach


def test_rule_5_hides_when_hugo_comes_near_a_plain_room_before_a_red_one():
    state = make_position(MP, gallery={13: [0], 1: [1]}, hugo="g10", roll=2)
    assert {"g13>r5", "g13>g15"} <= legal(MP, state)
    assert decide("card", MP, state) == "g13>r5"
    assert decide("card:drop=5", MP, state) == "g13>g15"
    state = make_position(MP, gallery={19: [0], 1: [1]}, hugo="g14", roll=5)
    assert {"g19>r8", "g19>r9"} <= legal(MP, state)  # room 8 is red (door 20), room 9 plain (door 23)
    assert decide("card", MP, state) == "g19>r9"


def test_rule_5_waits_while_hugo_is_far_in_midnight_party():
    state = make_position(MP, gallery={20: [0], 3: [0], 1: [1]}, hugo="g24", roll=1)
    assert "g20>r8" in legal(MP, state)  # Hugo is 24 steps, eight moves, from the guest on 20
    assert decide("card", MP, state) != "g20>r8"


def test_rule_6_never_passes_and_a_card_file_sets_when_to(tmp_path):
    state = make_position(MP, gallery={20: [0], 1: [1]}, hugo="g24", roll=1)
    assert "pass" in legal(MP, state)
    assert decide("card", MP, state) != "pass"
    card = tmp_path / "card.yaml"
    card.write_text("rules: [place, safe, green, danger, hide, pass, trail]\n"
                    "thresholds:\n  midnight_party: {pass_moves: 2}\n")
    assert decide(f"card:rules={card}", MP, state) == "pass"


def test_rule_7_trails_hugo():
    state = make_position(MP, gallery={3: [0], 20: [0], 1: [1]}, hugo="start", roll=4)
    assert decide("card", MP, state) == "g20>g24"  # the square Hugo needs the most steps to reach


def test_drop_takes_a_number_or_a_name_and_refuses_others():
    assert "green" not in make_agent("card:drop=3").card.rules
    assert set(make_agent("card:drop=green+pass").card.rules) == set(RULE_NAMES) - {"green", "pass"}
    with pytest.raises(ValueError, match=r"drop=11 is not allowed: allowed are the rule numbers 1-7"):
        make_agent("card:drop=11")


@pytest.mark.parametrize("text, words", [
    ("rules: [place, safe\n  bad: : :", "does not parse"),
    ("rules: [place, hunt]", "names rule 'hunt': allowed are place, safe"),
    ("[1, 2]", r"holds \[1, 2\]: allowed is a YAML or JSON mapping"),
    ("rules: [place]\nthresholds: {midnight_party: {hide_moves: many}}", "threshold midnight_party.hide_moves"),
])
def test_card_files_that_cannot_be_played_are_named(tmp_path, text, words):
    path = tmp_path / "card.yaml"
    path.write_text(text)
    with pytest.raises(ValueError, match=words):
        make_agent(f"card:rules={path}")


def test_a_bad_card_file_is_one_line_and_exit_2_through_the_cli(tmp_path):
    path = tmp_path / "card.json"
    path.write_text("{not json")
    command = ["simulate", "--players", "2", "--games", "1", "--agents", f"card:rules={path},expert"]
    out = subprocess.run([sys.executable, "-m", "midnight_env.cli", *command], capture_output=True, text=True)
    assert out.returncode == 2
    lines = [line for line in out.stderr.splitlines() if "card file" in line]
    assert len(lines) == 1 and "does not parse" in lines[0] and "allowed is" in lines[0]


def test_a_card_file_with_every_rule_plays_as_the_card(tmp_path):
    path = tmp_path / "card.json"
    path.write_text('{"rules": ["trail", "place", "safe", "green", "danger", "hide", "pass"]}')
    card, default = make_agent(f"card:rules={path}").card, make_agent("card").card
    assert card.rules == default.rules  # played in the card's order
    assert all(card.of(v) == default.of(v) for v in THRESHOLDS)


@pytest.mark.parametrize("variant", ["midnight_party", "hidden_castle"])
@pytest.mark.parametrize("players", [2, 4])
def test_the_card_plays_whole_games(variant, players):
    engine = Engine(variant, players)
    agents = [make_agent("card"), make_agent("card:drop=5"), make_agent("expert")]
    lineups = (np.arange(6)[:, None] + np.arange(players)[None, :]) % 3
    res = play_batch(engine, agents, lineups, np.arange(6))
    assert (res.state.phase == 3).all()


def test_the_card_page_states_the_rules_the_agent_plays():
    page = (ROOT / "docs" / "CARD.md").read_text(encoding="utf-8")
    for number, name, text in rule_sentences():
        assert f"{number}. **{name}.** {text}" in page
    assert set(THRESHOLDS) == {"midnight_party", "hidden_castle"}


def test_unknown_option_is_refused():
    with pytest.raises(AgentError, match="unknown option .depth.: card takes drop, rules"):
        make_agent("card:depth=2")
