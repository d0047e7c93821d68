"""The solved set-ups by name, as BENCHMARKS.md, docs/RESEARCH.md and the experiments name them.

``solo``: one player against Hugo (seat 0's expected final spooky points); ``duo``: two players,
with the objective last (``win``: seat 0's chance to win, ``points``: seat 0's points minus seat
1's); ``mp`` midnight_party with ``r`` rounds, ``hc`` hidden_castle, ``g`` guests per player.
One table, so that a name means the same game in every script that reports it.
"""

from __future__ import annotations

from typing import NamedTuple

from midnight_env.core.board import board_from_dict
from midnight_env.core.config import GameConfig, make_config

# a six-square board with a red, a green and a plain room and three steps: two players of
# hidden_castle keep both seats' points in the key, too many states on the real board
TINY_CASTLE = {"name": "tiny castle", "gallery_squares": 6, "arrow_square": 0,
               "rooms": [{"door": 1, "kind": "red"}, {"door": 3, "kind": "green"}, {"door": 4, "kind": "plain"}],
               "stairs": {"kind": "steps", "values": [10, 9, 8], "hugo_start": "cellar_door", "overflow": "top_step"}}
TINY_PLAIN_CASTLE = {**TINY_CASTLE, "name": "tiny plain castle",
                     "rooms": [{"door": d, "kind": "plain"} for d in (1, 3, 4)]}
# six squares, a plain room at every one, one landing worth 5: small enough to solve by hand
# (tests/solve/test_solve.py works its values out). Placed on 3, 4 or 5, a guest waits (passing) for
# Hugo's first move (he steps onto 0, 1, 2 and the rooms open); then a number takes it into a
# room (0 points), unless Hugo's next move (onto 3, 4, 5) comes first and captures it: 5 points
# with probability 1/3
TINY_PARTY = {"name": "tiny", "gallery_squares": 6, "arrow_square": 0,
              "rooms": [{"door": d, "kind": "plain"} for d in range(6)],
              "stairs": {"kind": "landings", "values": [5], "hugo_start": "top", "overflow": "wine_cellar",
                         "wine_cellar_value": 2}}


class SetUp(NamedTuple):
    variant: str
    players: int
    objective: str
    options: dict  # rule options for ``solve``; "board": a board definition (the tiny boards)

    def config(self) -> GameConfig:
        """The set-up's game (``solve(setup.config(), objective=setup.objective)``), its board
        definition, where it has one, made a Board."""
        options = dict(self.options)
        board = board_from_dict(options.pop("board")) if "board" in options else None
        return make_config(self.variant, self.players, board=board, **options)


def _mp(players: int, rounds: int, guests: int, objective: str = "points") -> SetUp:
    return SetUp("midnight_party", players, objective, {"guests_per_player": guests, "rounds": rounds})


def _hc(players: int, guests: int, objective: str = "points", board: dict | None = None) -> SetUp:
    return SetUp("hidden_castle", players, objective,
                 {"guests_per_player": guests, **({"board": board} if board else {})})


SET_UPS = {
    "solo-mp-r1-g1": _mp(1, 1, 1), "solo-mp-r1-g2": _mp(1, 1, 2), "solo-mp-r1-g3": _mp(1, 1, 3),
    "solo-mp-r1-g4": _mp(1, 1, 4), "solo-mp-r1-g5": _mp(1, 1, 5),
    "solo-mp-r3-g1": _mp(1, 3, 1), "solo-mp-r3-g2": _mp(1, 3, 2), "solo-mp-r3-g3": _mp(1, 3, 3),
    "solo-hc-g1": _hc(1, 1), "solo-hc-g2": _hc(1, 2),
    "duo-mp-r1-g1-win": _mp(2, 1, 1, "win"), "duo-mp-r1-g1-points": _mp(2, 1, 1),
    "duo-mp-r3-g1-win": _mp(2, 3, 1, "win"), "duo-mp-r3-g1-points": _mp(2, 3, 1),
    "duo-mp-r1-g2-win": _mp(2, 1, 2, "win"), "duo-mp-r1-g2-points": _mp(2, 1, 2),
    "duo-hc-tinyplain-g1-win": _hc(2, 1, "win", TINY_PLAIN_CASTLE),
    "duo-hc-tiny-g1-win": _hc(2, 1, "win", TINY_CASTLE),
}
