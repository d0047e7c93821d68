"""The built-in agents: legal choices everywhere, reproducible games, and the behaviour each
rule promises on hand-built positions; the search equals a brute-force expectimax."""

from __future__ import annotations

import numpy as np
import pytest

from midnight_agents.evaluation import TAIL, capture_risk, evaluate, hugo_reach
from midnight_agents.expert import greedy_choices
from midnight_agents.search import SearchAgent
from midnight_env import Engine
from midnight_env.arena.agent import Decisions
from midnight_env.arena.play import play_batch
from midnight_env.arena.registry import AgentError, list_agents, make_agent
from midnight_env.core.dice import agent_streams
from midnight_env.core.positions import make_position
from midnight_env.core.state import MOVE, ROLL

BUILT_IN = ["random", "runner", "coward", "green_hunter", "placer", "expert"]
FAST_SEARCH = "search:budget=20"


def decide(agent_spec: str, engine: Engine, state, seed: int = 0) -> str:
    """The agent's choice in game 0 of ``state``, in record notation."""
    agent = make_agent(agent_spec)
    choice = int(agent.act(Decisions(engine, state, np.array([0]), agent_streams([seed])))[0])
    assert state.legal[0, choice] == 1
    return engine.layout.to_notation(choice, int(state.roll[0]))


def test_every_built_in_agent_is_registered_with_a_description():
    names = dict(list_agents())
    for name in BUILT_IN + ["search"]:
        assert name in names and len(names[name]) > 20


@pytest.mark.parametrize("variant", ["midnight_party", "hidden_castle"])
@pytest.mark.parametrize("players", range(1, 9))
def test_agents_make_legal_placements_and_moves(variant, players):
    # every agent holds a seat; play_batch checks every action against the legal mask
    engine = Engine(variant, players, max_turns=150)
    specs = BUILT_IN + ([FAST_SEARCH] if players in (1, 2, 5) else [])
    agents = [make_agent(s) for s in specs]
    games = 2 * len(specs)
    lineups = (np.arange(games)[:, None] + np.arange(players)[None, :]) % len(specs)
    res = play_batch(engine, agents, lineups, np.arange(games))
    assert (res.state.phase == 3).all()
    placements = engine.num_players * engine.config.guests
    assert (res.decisions >= placements).all()  # set-up placements were made by the agents


def test_classic_round_end_replacement_by_every_agent():
    engine = Engine("midnight_party", 3)
    agents = [make_agent(s) for s in BUILT_IN + [FAST_SEARCH]]
    lineups = (np.arange(7)[:, None] + np.arange(3)[None, :]) % 7
    res = play_batch(engine, agents, lineups, np.arange(7))
    assert (res.state.rounds_done == 3).all()


@pytest.mark.parametrize("spec", ["coward", "expert", FAST_SEARCH])
def test_games_are_reproducible_and_independent_of_the_batch(spec):
    engine = Engine("midnight_party", 3)
    agents = [make_agent(spec), make_agent("random")]
    lineups = np.array([[0, 1, 0], [1, 0, 0], [0, 0, 1], [0, 1, 1]])
    seeds = np.array([11, 12, 13, 14])
    together = play_batch(engine, agents, lineups, seeds)
    again = play_batch(engine, [make_agent(spec), make_agent("random")], lineups, seeds)
    alone = play_batch(engine, agents, lineups[2:3], seeds[2:3])
    assert np.array_equal(together.points, again.points)
    assert np.array_equal(together.points[2], alone.points[0])


def test_unknown_agent_and_bad_option_are_refused():
    with pytest.raises(AgentError, match="unknown agent 'nobody'"):
        make_agent("nobody")
    with pytest.raises(AgentError, match="bad option"):
        make_agent("expert:no_such_weight=1")
    with pytest.raises(ValueError, match="budget"):
        make_agent("search:budget=0")


# -- hand-built positions -----------------------------------------------------------------------

def test_coward_does_not_walk_onto_hugo_when_it_can_avoid_it():
    engine = Engine("midnight_party", 2)
    # Hugo on square 12; a 4 takes the guest on 8 onto him, the guest on 20 can walk safely
    state = make_position(engine, gallery={8: [0], 20: [0], 3: [1]}, hugo="g12", roll=4)
    assert "g8>g12" in {engine.layout.to_notation(a, 4) for a in np.flatnonzero(state.legal[0])}
    for spec in ("coward", "expert", FAST_SEARCH):
        assert decide(spec, engine, state) != "g8>g12"


def test_coward_moves_the_guest_most_at_risk_out_of_reach():
    engine = Engine("midnight_party", 2)
    # Hugo on 10 (speed 3): the guest on 12 is within his next move, the one on 22 is not
    state = make_position(engine, gallery={12: [0], 22: [0], 1: [1]}, hugo="g10", roll=5)
    assert decide("coward", engine, state) == "g12>g17" or decide("coward", engine, state).startswith("g12>r")
    assert decide("expert", engine, state).startswith("g12>")


def test_green_hunter_and_expert_take_an_exact_roll_into_a_green_room():
    engine = Engine("midnight_party", 2)
    # green room 3 (door 8) is exactly 4 steps from square 5 (3 to the door, 1 in); Hugo far away
    state = make_position(engine, gallery={5: [0], 24: [0], 14: [1]}, hugo="g26", roll=4)
    assert "g5>r3" in {engine.layout.to_notation(a, 4) for a in np.flatnonzero(state.legal[0])}
    assert decide("green_hunter", engine, state) == "g5>r3"
    assert decide("expert", engine, state) == "g5>r3"


def test_green_hunter_avoids_a_red_room():
    engine = Engine("midnight_party", 2)
    # a 1 from the library's door (20) enters the red library or walks on
    state = make_position(engine, gallery={20: [0], 1: [1]}, hugo="g5", roll=1)
    assert decide("green_hunter", engine, state) == "g20>g21"


def test_runner_enters_a_room_when_it_can():
    engine = Engine("midnight_party", 2)
    state = make_position(engine, gallery={15: [0], 26: [0], 1: [1]}, hugo="g5", roll=2)
    assert decide("runner", engine, state).endswith(("r6", "r7"))


def test_placements_follow_each_rule():
    engine = Engine("midnight_party", 2)
    state = make_position(engine, phase="place", player=0)  # empty gallery, Hugo on the stairs
    assert decide("coward", engine, state) == "g27"  # Hugo reaches it last
    hunter = int(decide("green_hunter", engine, state)[1:])
    steps = [(door - hunter) % 28 + 1 for door in (5, 8)]  # the green rooms' doors
    assert any(k in (1, 2, 4, 5) for k in steps)
    runner = int(decide("runner", engine, state)[1:])
    assert runner in set(engine.board.door_square.tolist())
    placer = int(decide("placer", engine, state)[1:])
    assert placer >= 20 and min((d - placer) % 28 for d in engine.board.door_square) <= 1


def test_expert_leaves_the_classic_pass_when_moving_is_worse():
    engine = Engine("midnight_party", 2)
    # the last guest stands just behind Hugo (safe for a lap); a 2 would put it right in front of him
    state = make_position(engine, gallery={9: [0], 1: [1]}, rooms={q: 1 for q in range(3, 8)}, hugo="g10", roll=2)
    assert "pass" in {engine.layout.to_notation(a, 2) for a in np.flatnonzero(state.legal[0])}
    assert decide("expert", engine, state) == "pass"


def test_castle_expert_expels_from_a_green_room():
    engine = Engine("hidden_castle", 2)
    # an exact 4 from square 17 enters green room 6 (door 20) and expels player 1's guest there
    state = make_position(engine, gallery={17: [0]}, rooms={6: 1}, hugo="g2", clock="1:00", roll=4)
    assert decide("expert", engine, state) == "g17>r6"


def test_hugo_reach_follows_the_castle_clock_and_stops_at_five():
    engine = Engine("hidden_castle", 2)
    reach = np.zeros(6, np.int64)
    start = make_position(engine, gallery={4: [0]}, hugo="cellar door", phase="roll")
    hugo_reach(start, engine.rules, 0, reach)
    assert reach.tolist() == [0, 3, 6, 9, 12, 15]  # 23:45 and 24:00 both move him 3
    late = make_position(engine, gallery={4: [0]}, hugo="g25", clock="4:00", phase="roll")
    hugo_reach(late, engine.rules, 0, reach)
    assert reach.tolist() == [0, 3, 3, 3, 3, 3]  # the game ends when he reaches the arrow square


def test_capture_risk_is_the_binomial_tail():
    # three rolls with Hugo at speed 3: a guest 4-6 steps ahead needs two Hugo faces
    reach = np.array([0, 3, 6, 9, 12])
    assert capture_risk(reach, TAIL, 3, 5) == pytest.approx(3 * (1 / 3) ** 2 * (2 / 3) + (1 / 3) ** 3)
    assert capture_risk(reach, TAIL, 3, 2) == pytest.approx(1 - (2 / 3) ** 3)
    assert capture_risk(reach, TAIL, 3, 10) == 0.0


def test_evaluation_prefers_a_guest_out_of_hugos_reach():
    engine = Engine("midnight_party", 2)
    near = make_position(engine, gallery={12: [0], 1: [1]}, hugo="g10", phase="roll", player=1)
    far = make_position(engine, gallery={25: [0], 1: [1]}, hugo="g10", phase="roll", player=1)
    assert evaluate(engine, far, [0])[0] > evaluate(engine, near, [0])[0]


# -- the search -------------------------------------------------------------------------------

def _reference(engine, state, me, turns, leaf):
    """Brute-force expectimax: all faces, expert opponents; leaves after the searcher's own move
    (leaf "move") or when it is about to roll (leaf "roll"), at a round end or the game's end."""
    done = turns == 0 if leaf == "move" else (state.player[0] == me and turns <= 1)
    if state.phase[0] != ROLL or done:
        return evaluate(engine, state, [me])[0]
    own = state.player[0] == me
    left = turns - (1 if own else 0)
    total = 0.0
    for face, p in engine.chance_outcomes():
        child = state.copy()
        engine.apply_roll(child, [face])
        if child.phase[0] == MOVE and child.player[0] == me:
            best = -np.inf
            for a in np.flatnonzero(child.legal[0]):
                after = child.copy()
                engine.apply_action(after, [a])
                best = max(best, _reference(engine, after, me, left, leaf))
            total += p * best
            continue
        if child.phase[0] == MOVE:
            engine.apply_action(child, greedy_choices(engine, child, np.array([0]), np.zeros(1)))
        total += p * _reference(engine, child, me, left, leaf)
    return total


@pytest.mark.parametrize("variant,players,turns,leaf", [("midnight_party", 3, 1, "roll"),
                                                        ("hidden_castle", 2, 2, "roll"),
                                                        ("midnight_party", 2, 1, "move")])
def test_search_equals_brute_force_expectimax(variant, players, turns, leaf):
    engine = Engine(variant, players)
    state = make_position(engine, gallery={6: [0], 13: [0], 18: [1], 24: [players - 1]}, hugo="g3", roll=4)
    values: list = []
    SearchAgent(budget=10**9, turns=turns, leaf=leaf).search(engine, state, np.array([0]), np.zeros(1), values)
    want = []
    for a in np.flatnonzero(state.legal[0]):
        after = state.copy()
        engine.apply_action(after, [a])
        want.append(_reference(engine, after, 0, turns, leaf))
    assert np.allclose(values[0], want)


def test_search_budget_counts_the_positions_the_expert_looks_at_too():
    agent = SearchAgent()
    # 4 players, one root move: each other player's sampled roll is 1 position plus, 2 times in
    # 3, the expert's look at about 6 moves (5); the searcher's first roll 24 positions; its
    # second roll one sampled face (6) or all five (24) below each of those 24
    one, two, two_exact = agent.tree_size(np.ones(3), 4, np.array([1, 2, 2]), 0, np.array([False, False, True]))
    assert (one, two, two_exact) == (3 * 5 + 24, 39 + 24 * (3 * 5 + 6), 39 + 24 * (3 * 5 + 24))
    # Hugo and one number per other player's roll: 2 faces, 1 + (1 + 6) positions each
    assert agent.tree_size(1, 4, 1, 1, True) == 8 + 2 * 8 + 4 * 8 + 8 * 24


def test_search_budget_buys_depth_first():
    # default budget, 4 players: with 2 moves a second own turn fits (2 * 543 <= 1500); with 6
    # only one, then Hugo and one number per other player's roll (6 * 248); with 12, sampled dice
    plan = SearchAgent(budget=1500).plan(np.array([2, 6, 12]), 4, 2)
    assert plan.turns.tolist() == [2, 1, 1]
    assert plan.numbers.tolist() == [0, 1, 0]
    assert plan.samples.tolist() == [1, 1, 1500 // (12 * 39)]
    # four times the budget: a second own turn with 6 moves, its second roll exact (6 * 975)
    plan = SearchAgent(budget=6000).plan(np.array([2, 6, 12]), 4, 2)
    assert plan.turns.tolist() == [2, 2, 1]
    assert plan.own_exact[:2].tolist() == [True, True]
    assert plan.samples.tolist() == [6000 // (2 * 975), 1, 1]
    # no deeper than asked, and exact (every face of every roll) when everything fits
    plan = SearchAgent(budget=10**9).plan(np.array([6]), 4, 2)
    assert (plan.turns[0], plan.numbers[0], plan.samples[0], plan.own_exact[0]) == (2, 4, 1, True)


def test_search_takes_a_second_own_turn_in_hidden_castle_only_where_the_others_rolls_branch():
    # a second own turn followed through sampled faces of the others' rolls costs strength in
    # hidden_castle and pays once they branch on Hugo and a number (BENCHMARKS.md)
    classic, castle = Engine("midnight_party", 2), Engine("hidden_castle", 2)
    default = SearchAgent()
    assert default.max_turns(classic) == default.max_turns(castle) == 2
    assert (default.second_turn_numbers(classic), default.second_turn_numbers(castle)) == (0, 1)
    told = make_agent("search:turns=2")  # turns given: the old depth-first plan, whatever the numbers
    assert told.second_turn_numbers(castle) == 0
    assert make_agent("value-hidden_castle-4p:budget=6000").second_turn_numbers(castle) == 1

    def plan(agent, engine, moves):
        return agent.plan(np.array([moves]), 2, agent.max_turns(engine), agent.second_turn_numbers(engine))

    # 2 players, 2 moves, the default budget: a second turn with sampled dice fits (2 * 293) and
    # is taken in midnight_party; in hidden_castle Hugo and a number would cost 2 * 1016: one turn
    assert (plan(default, classic, 2).turns[0], plan(default, classic, 2).numbers[0]) == (2, 0)
    assert plan(default, castle, 2).turns[0] == 1
    assert (plan(told, castle, 2).turns[0], plan(told, castle, 2).numbers[0]) == (2, 0)
    # so at the default budget hidden_castle's search stays one turn deep (one move is not searched)
    for players in (2, 3, 4, 6):
        assert (default.plan(np.arange(2, 40), players, 2, 1).turns == 1).all()
    # four times the budget: the second turn fits with Hugo and a number (5 * 1016 <= 6000), not
    # with 6 moves; told turns=2, the same budget buys the second turn's own roll exact instead
    four = SearchAgent(budget=6000)
    assert (plan(four, castle, 5).turns[0], plan(four, castle, 5).numbers[0]) == (2, 1)
    assert plan(four, castle, 6).turns[0] == 1
    told_four = make_agent("search:budget=6000,turns=2")
    p = plan(told_four, castle, 5)
    assert (p.turns[0], p.numbers[0], p.own_exact[0]) == (2, 0, True)
    # 3 moves: its second roll exact fits with sampled faces of the other's (3 * 725), not with
    # Hugo and a number (3 * 2744); the number comes first
    p = plan(four, castle, 3)
    assert (p.turns[0], p.numbers[0], p.own_exact[0]) == (2, 1, False)


@pytest.mark.parametrize("variant,players,spec", [("hidden_castle", 6, "search:budget=150"),
                                                  ("midnight_party", 3, "search:budget=900")])
def test_search_with_sampled_sequences_plays_legal_reproducible_games(variant, players, spec):
    engine = Engine(variant, players)
    agents = [make_agent(spec), make_agent("expert")]
    lineups = np.array([[0] + [1] * (players - 1), [1, 1, 0] + [1] * (players - 3)])
    first = play_batch(engine, agents, lineups, [3, 4])
    second = play_batch(engine, agents, lineups[1:], [4])
    assert np.array_equal(first.points[1], second.points[0])


def test_castle_expert_forced_out_of_a_room_takes_the_safest_way():
    engine = Engine("hidden_castle", 2)
    # no guest on the gallery: player 0 must leave room 4 (door 16); a 4 reaches free room 5
    # (door 17) or walks to square 19, four steps ahead of Hugo on 15
    state = make_position(engine, rooms={4: 0, 0: 1}, gallery={3: [1]}, hugo="g15", clock="1:00", roll=4)
    legal = {engine.layout.to_notation(a, 4) for a in np.flatnonzero(state.legal[0])}
    assert {"r4>r5", "r4>g19"} <= legal
    assert decide("expert", engine, state) == "r4>r5"
