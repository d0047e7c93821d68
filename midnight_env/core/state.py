"""The game state: a fixed-shape struct of numpy arrays with a leading game axis ``B``.

A single game is a batch of one. Shapes use N players, S gallery squares, R rooms, L stair
places (landings or steps), G guests per player and A actions (see ``actions.py``). The state
holds the per-game dice stream, so copying a state copies its future dice too, and a state is
plain data: it can be copied, sliced, compared, hashed (``key``) and enumerated.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

# phase: what happens next in a game
PLACE = 0  # `player` places a guest (decision)
ROLL = 1  # `player` rolls the die (chance)
MOVE = 2  # `player` chooses a move for `roll` (decision)
OVER = 3  # the game has ended
PHASE_NAMES = ("place", "roll", "move", "over")  # indexed by phase


class GameState(NamedTuple):
    phase: np.ndarray  # (B,) int8 PLACE / ROLL / MOVE / OVER
    player: np.ndarray  # (B,) int8 seat to place, roll or move
    roll: np.ndarray  # (B,) int8 number being decided in MOVE (1, 2, 4, 5), else 0
    gallery: np.ndarray  # (B, N, S) int8 guests of seat p on gallery square s
    room: np.ndarray  # (B, R) int8 seat of the guest in room q, -1 empty
    stairs: np.ndarray  # (B, N, L+1) int8 guests of seat p on stair place l: l=0 highest value
    #                       (landing 10 / step +10) ... l=L-1 lowest; l=L the wine cellar
    supply: np.ndarray  # (B, N) int8 guests of seat p waiting to be placed
    hugo: np.ndarray  # (B,) int16 Hugo's track: 0..T-1 the stairs (midnight_party landing 10..3;
    #                    hidden_castle cellar door, step +10..+3), T+s gallery square s
    clock: np.ndarray  # (B,) int8 hidden_castle clock 0=23:45 1=24:00 2=1:00 ... 5=4:00 6=5:00
    spooky: np.ndarray  # (B, N) int32 spooky points
    round: np.ndarray  # (B,) int8 current round, from 1
    rounds_done: np.ndarray  # (B,) int8 rounds finished (round_end events so far)
    rolls: np.ndarray  # (B,) int32 rolls made so far (max_turns counts these)
    queue: np.ndarray  # (B, N*G) int8 seats in placing order (set-up or re-placement)
    queue_pos: np.ndarray  # (B,) int16 next entry of `queue`
    queue_len: np.ndarray  # (B,) int16 entries in `queue`
    first_roller: np.ndarray  # (B,) int8 seat that rolls first once placement is done
    truncated: np.ndarray  # (B,) bool game stopped at max_turns
    rng: np.ndarray  # (B,) uint64 dice stream (splitmix64 state) of each game
    legal: np.ndarray  # (B, A) int8 legal choices of `player` (all 0 in ROLL and OVER)

    @property
    def batch_size(self) -> int:
        return self.phase.shape[0]

    @property
    def num_players(self) -> int:
        return self.gallery.shape[1]

    @property
    def done(self) -> np.ndarray:
        return self.phase == OVER

    def copy(self) -> GameState:
        return GameState(*(a.copy() for a in self))

    def take(self, index) -> GameState:
        """The games at ``index`` (an int, a slice or an index array) as a new batch (copied)."""
        if isinstance(index, (int, np.integer)):
            index = slice(int(index), int(index) + 1)
        return GameState(*(np.array(a[index]) for a in self))

    def put(self, index, other: GameState) -> None:
        """Write the games of ``other`` into positions ``index`` of this batch."""
        for mine, theirs in zip(self, other):
            mine[index] = theirs

    @staticmethod
    def concatenate(states: list[GameState]) -> GameState:
        return GameState(*(np.concatenate(parts) for parts in zip(*states)))

    def key(self, i: int = 0) -> bytes:
        """Bytes identifying game ``i``'s position (dice stream excluded): for tables and tests."""
        return b"".join(a[i].tobytes() for name, a in zip(self._fields, self) if name not in ("rng", "legal"))

    def equal(self, other: GameState) -> bool:
        return all(np.array_equal(a, b) for a, b in zip(self, other))


def empty_state(batch: int, num_players: int, num_squares: int, num_rooms: int, num_places: int,
                guests: int, num_actions: int) -> GameState:
    n = num_players
    return GameState(
        phase=np.zeros(batch, np.int8),
        player=np.zeros(batch, np.int8),
        roll=np.zeros(batch, np.int8),
        gallery=np.zeros((batch, n, num_squares), np.int8),
        room=np.full((batch, num_rooms), -1, np.int8),
        stairs=np.zeros((batch, n, num_places + 1), np.int8),
        supply=np.zeros((batch, n), np.int8),
        hugo=np.zeros(batch, np.int16),
        clock=np.zeros(batch, np.int8),
        spooky=np.zeros((batch, n), np.int32),
        round=np.ones(batch, np.int8),
        rounds_done=np.zeros(batch, np.int8),
        rolls=np.zeros(batch, np.int32),
        queue=np.zeros((batch, n * guests), np.int8),
        queue_pos=np.zeros(batch, np.int16),
        queue_len=np.zeros(batch, np.int16),
        first_roller=np.zeros(batch, np.int8),
        truncated=np.zeros(batch, np.bool_),
        rng=np.zeros(batch, np.uint64),
        legal=np.zeros((batch, num_actions), np.int8),
    )
