"""The position of one game as plain Python values: what both drawings read.

Every game fact comes from the engine (Hugo's square and stair place, whether rooms are open,
Hugo's speed, the winners); nothing here applies a rule again. The words shared by the terminal
board and the picture (whose turn, where Hugo is, the clock's time) are written here once.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from midnight_env.core.config import CLOCK_TIMES
from midnight_env.core.state import MOVE, PLACE, ROLL
from midnight_env.infra import checks


@dataclass(frozen=True)
class Position:
    castle: bool  # hidden_castle rules
    num_players: int
    gallery: np.ndarray  # (N, S) guests per seat and square
    room: np.ndarray  # (R,) occupant seat, -1 empty
    stairs: np.ndarray  # (N, L+1) guests per seat and stair place (L: wine cellar)
    supply: np.ndarray  # (N,) guests still to place
    spooky: np.ndarray  # (N,)
    hugo_square: int  # gallery square, -1 off the gallery
    hugo_place: int  # stair place (0 = highest value), -1 off the stair places
    rooms_open: bool
    speed: int
    clock: int
    round: int
    rounds: int
    rolls: int
    phase: int
    player: int
    roll: int
    truncated: bool
    winners: tuple[int, ...]  # seats with the fewest spooky points (the winners once the game is over)

    @property
    def hugo_at_cellar_door(self) -> bool:
        return self.hugo_square < 0 and self.hugo_place < 0


def snapshot(engine, state, i: int) -> Position:
    """Game ``i`` of ``state`` as a :class:`Position`; the state is not changed."""
    i = checks.integer("game index i=", i, 0, state.batch_size - 1, allowed=f"0..{state.batch_size - 1}")
    if state.num_players != engine.num_players or state.gallery.shape[2] != engine.board.num_squares:
        raise ValueError(f"state of {state.num_players} players on {state.gallery.shape[2]} squares does not "
                         f"match the engine ({engine.num_players} players, {engine.board.num_squares} squares)")
    return Position(
        castle=engine.config.castle, num_players=engine.num_players,
        gallery=state.gallery[i].astype(np.int64), room=state.room[i].astype(np.int64),
        stairs=state.stairs[i].astype(np.int64), supply=state.supply[i].astype(np.int64),
        spooky=state.spooky[i].astype(np.int64), hugo_square=engine.hugo_square(state, i),
        hugo_place=engine.hugo_stair_place(state, i), rooms_open=engine.rooms_open(state, i),
        speed=engine.speed(state, i), clock=int(state.clock[i]), round=int(state.round[i]),
        rounds=engine.config.rounds, rolls=int(state.rolls[i]), phase=int(state.phase[i]),
        player=int(state.player[i]), roll=int(state.roll[i]), truncated=bool(state.truncated[i]),
        winners=tuple(engine.winners(state, i)))


def turn_text(pos: Position) -> str:
    """Whose turn it is and what is being decided, in words."""
    p = pos.player
    if pos.phase == PLACE:
        verb = "re-places" if pos.round > 1 else "places"
        return f"seat {p} {verb} a guest ({pos.supply[p]} left)"
    if pos.phase == ROLL:
        return f"seat {p} to roll the die"
    if pos.phase == MOVE:
        return f"seat {p} to move, roll {pos.roll}"
    win = pos.winners
    who = f"seat {win[0]} wins" if len(win) == 1 else "seats " + ", ".join(map(str, win)) + " share the win"
    return f"game over, {who}" + (" (stopped at max_turns)" if pos.truncated else "")


def hugo_text(board, pos: Position) -> str:
    """Where Hugo is, in words."""
    if pos.hugo_square >= 0:
        return f"Hugo on gallery square {pos.hugo_square}"
    if pos.hugo_at_cellar_door:
        return "Hugo at the cellar door"
    value = int(board.stair_values[pos.hugo_place])
    return f"Hugo on step +{value}" if pos.castle else f"Hugo on landing {value}"


def status_lines(board, pos: Position) -> list[str]:
    """The status the drawings show inside the ring: the clock (hidden_castle) or the round with
    Hugo's speed, where Hugo is, and the rolls made."""
    first = f"clock {clock_text(pos)}" if pos.castle else f"round {pos.round} of {pos.rounds}"
    return [f"{first}, Hugo speed {pos.speed}", hugo_text(board, pos) + ("" if pos.rooms_open else "; rooms locked"),
            f"rolls so far: {pos.rolls}"]


def clock_text(pos: Position) -> str:
    """The clock's time (hidden_castle)."""
    return CLOCK_TIMES[min(pos.clock, len(CLOCK_TIMES) - 1)]


__all__ = ["Position", "snapshot", "turn_text", "hugo_text", "status_lines", "clock_text"]
