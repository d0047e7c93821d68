"""Duplicate deals with one agent in every seat (midnight_env.training.evaluate): who sits where,
and that each game is the one the seed and line-up make, whatever else is in the batch."""

from __future__ import annotations

import numpy as np
import pytest

from midnight_env.arena.play import play_batch
from midnight_env.arena.registry import make_agent
from midnight_env.core.engine import Engine
from midnight_env.training.evaluate import play_every_seat, seat_lineups


def test_the_agent_takes_every_seat_of_a_deal_against_the_same_opponents():
    lineups = seat_lineups(4, 3, deals=2)
    assert lineups.shape == (8, 4)
    for d in range(2):
        rows = lineups[4 * d:4 * d + 4]
        for r, row in enumerate(rows):
            assert np.flatnonzero(row == 0).tolist() == [r]
            assert row[row != 0].tolist() == [1, 2, 3]  # the same opponents, in the same order


def test_a_small_field_is_cycled_and_a_single_agent_fills_every_other_seat():
    assert seat_lineups(4, 2, deals=1)[0].tolist() == [0, 1, 2, 1]
    assert seat_lineups(3, 1, deals=1).tolist() == [[0, 1, 1], [1, 0, 1], [1, 1, 0]]
    assert seat_lineups(1, 0, deals=2).tolist() == [[0], [0]]


def test_a_field_larger_than_the_seats_takes_turns_so_every_agent_plays_equally_often():
    lineups = seat_lineups(4, 8, deals=8)
    counts = np.bincount(lineups.ravel(), minlength=9)
    assert counts[0] == 32  # the agent: once per game
    assert counts[1:].tolist() == [12] * 8  # every field agent 3 deals x 4 seats
    assert seat_lineups(4, 8, deals=2)[[0, 4]].tolist() == [[0, 1, 2, 3], [0, 4, 5, 6]]


def test_a_game_with_other_seats_needs_a_field():
    with pytest.raises(ValueError, match="3 players need a field"):
        seat_lineups(3, 0, deals=1)


def test_each_seat_game_is_the_game_its_seed_and_line_up_make_alone():
    engine = Engine("midnight_party", 3)
    agent, field = make_agent("coward"), [make_agent("expert"), make_agent("runner")]
    seeds = [11, 12, 13]
    games = play_every_seat(engine, agent, field, seeds, batch=4)  # batches cut across deals
    points = games.agent_points()
    assert points.shape == (3, 3)
    for d, seed in enumerate(seeds):
        for r in range(3):
            row = games.lineups[3 * d + r]
            alone = play_batch(engine, [agent, *field], row[None, :], [seed])
            assert points[d, r] == alone.points[0, r]
            assert games.ranks[3 * d + r].tolist() == alone.ranks[0].tolist()
