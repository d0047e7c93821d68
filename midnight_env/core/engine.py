"""The batch-first engine API: one rules set, many games.

>>> eng = Engine("midnight_party", num_players=4)
>>> state = eng.new_games(seeds=range(256))       # 256 games, game i seeded i
>>> while not state.done.all():
...     eng.step(state, eng.random_actions(state, rng))   # one decision per game, dice rolled on

A single game is a batch of one. Games are advanced in place; ``state.copy()`` is a cheap copy
(search agents), and each game carries its own dice stream, so game *i* seeded *s* plays the
same whatever batch it runs in. Dice are also explicit chance outcomes: ``chance_outcomes`` and
``apply_roll(state, faces)`` let records and search agents inject rolls.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from midnight_env.core import rules as K
from midnight_env.core.actions import ActionError, ActionLayout
from midnight_env.core.config import CASTLE_START_POINTS, GameConfig, make_config
from midnight_env.core.dice import CHANCE_OUTCOMES, HUGO
from midnight_env.core.random_choice import random_legal_choices
from midnight_env.core.scoring import ranks, winners
from midnight_env.core.state import MOVE, PHASE_NAMES, PLACE, ROLL, GameState, empty_state
from midnight_env.infra.seeds import check_seed, check_seeds
from midnight_env.infra.threads import task_size, threaded

ENGINE_VERSION = "1.0.0"  # bumped whenever the rules' behaviour changes, never for a refactor


class Engine:
    """Rules of one variant, player count and options, applied to batches of games."""

    def __init__(self, variant: str | GameConfig = "midnight_party", num_players: int = 4, **options: Any):
        self.config = variant if isinstance(variant, GameConfig) else make_config(variant, num_players, **options)
        self.rules = self.config.rules()
        self._kernel_rules = tuple(self.rules)  # for the kernels (see _run)
        self.layout = ActionLayout(self.config.board)
        self._no_actions: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    # -- description ------------------------------------------------------------------------
    @property
    def variant(self) -> str:
        return self.config.variant

    @property
    def num_players(self) -> int:
        return self.config.num_players

    @property
    def num_actions(self) -> int:
        return self.rules.num_actions

    @property
    def board(self):
        return self.config.board

    @staticmethod
    def chance_outcomes() -> tuple[tuple[int, float], ...]:
        """Die faces (1, 2, 4, 5, HUGO=0) with their probabilities."""
        return CHANCE_OUTCOMES

    def __repr__(self) -> str:
        return f"Engine({self.variant!r}, num_players={self.num_players}, options={self.config.options})"

    # -- new games ------------------------------------------------------------------------
    def new_games(self, seeds: Iterable[int] | int) -> GameState:
        """Games at set-up (seat 0 places first), one per seed; an int ``n`` means seeds 0..n-1."""
        if isinstance(seeds, (int, np.integer)) and not isinstance(seeds, (bool, np.bool_)):
            seeds = np.arange(check_seed(seeds, "number of games"))
        elif not isinstance(seeds, np.ndarray):
            seeds = list(seeds) if isinstance(seeds, Iterable) and not isinstance(seeds, str) else [seeds]
        seeds = check_seeds(seeds)
        r = self.rules
        b = len(seeds)
        s = empty_state(b, r.num_players, r.num_squares, r.num_rooms, r.num_places, r.guests, r.num_actions)
        self.reset_games(s, np.arange(b), seeds)
        return s

    def reset_games(self, state: GameState, games, seeds) -> None:
        """Put games ``games`` of ``state`` back at set-up, seeded ``seeds`` (one per game), in
        place: the same games as ``new_games(seeds)``, without building a new batch (restarts)."""
        games = np.asarray(games, dtype=np.int64).reshape(-1)
        b = state.batch_size
        if games.size and (games.min() < 0 or games.max() >= b):  # the kernel trusts its indices
            bad = games[(games < 0) | (games >= b)][0]
            raise ValueError(f"game index {bad} is out of range: allowed are 0..{b - 1}")
        seeds = np.asarray(seeds, dtype=np.int64).reshape(-1)
        if seeds.shape != games.shape:
            raise ValueError(f"got {seeds.size} seeds for {games.size} games: give one seed per game")
        K.reset_games(tuple(state), self._kernel_rules, games, np.ascontiguousarray(seeds),
                      CASTLE_START_POINTS if self.rules.castle else 0)

    # -- advancing ---------------------------------------------------------------------------
    def _run(self, state: GameState, actions, faces, auto_roll: bool, faces_out=None) -> None:
        b = state.batch_size
        no_actions, no_faces_out = self._scratch(b)
        # plain tuples: numba dispatches them several times faster than namedtuples
        if actions is not None and not isinstance(actions, np.ndarray):  # a list from a caller that skipped checks
            actions = np.asarray(actions, dtype=np.int64)
        args = (tuple(state), self._kernel_rules, no_actions if actions is None else actions,
                no_actions if faces is None else faces, auto_roll, no_faces_out if faces_out is None else faces_out)
        if threaded(b):
            K.step_parallel(*args, task_size(b))
        else:
            K.step_serial(*args)

    def _scratch(self, b: int) -> tuple[np.ndarray, np.ndarray]:
        """(b,) -1 actions (no decision, no die face) and a faces-out buffer nobody reads."""
        if b not in self._no_actions:
            self._no_actions[b] = (np.full(b, -1, np.int64), np.full(b, -1, np.int8))
        return self._no_actions[b]

    def step(self, state: GameState, actions, check: bool = True) -> None:
        """Apply one decision per deciding game (-1: none), then roll on until the next decision.

        Games at a ROLL (as left by :meth:`apply_action`) are rolled on too; finished games stay.
        ``check=False`` skips :meth:`check_actions`: for callers whose actions are right by
        construction (an agent's search on copies of legal positions), as an int64 array of one
        action per game; a wrong action then plays a wrong game without a word.
        """
        actions = self.check_actions(state, actions) if check else actions
        self._run(state, actions, None, True)

    def apply_action(self, state: GameState, actions, check: bool = True) -> None:
        """Apply decisions only; games stop at their next roll (a chance node) or decision.
        ``check``: as for :meth:`step`."""
        actions = self.check_actions(state, actions) if check else actions
        self._run(state, actions, None, False)

    def apply_roll(self, state: GameState, faces=None) -> np.ndarray:
        """Resolve one roll in every game at ROLL: with the given faces (1, 2, 4, 5, HUGO=0; -1 to
        skip a game) or, when ``faces`` is None, from each game's dice stream. Returns the faces
        rolled (-1 for games that did not roll)."""
        b = state.batch_size
        if faces is None:
            faces = np.where(state.phase == ROLL, -2, -1).astype(np.int64)
        else:
            faces = np.broadcast_to(np.asarray(faces, dtype=np.int64), (b,))
            bad = ~np.isin(faces, (-1, 1, 2, 4, 5, HUGO))
            if bad.any():
                j = int(np.flatnonzero(bad)[0])
                raise ValueError(f"die face {faces[j]} for game {j} is not a face: allowed are 1, 2, 4, 5, 0 (Hugo)")
            faces = np.where(state.phase == ROLL, faces, -1)
        faces_out = np.full(b, -1, np.int8)
        self._run(state, None, faces, False, faces_out)
        return faces_out

    def roll_on(self, state: GameState) -> None:
        """Roll every game at ROLL on (dice streams) until a decision or the end."""
        self._run(state, None, None, True)

    def refresh_legal(self, state: GameState) -> None:
        """Recompute ``state.legal`` from the position (after building or editing a state by hand)."""
        K.refresh_legal(tuple(state), self._kernel_rules)

    # -- checks and queries ------------------------------------------------------------------------
    def check_actions(self, state: GameState, actions) -> np.ndarray:
        """Actions as an int64 array, or ActionError naming the first bad one: one integer per game
        of the batch (a float, a bool, a string or another shape is refused, never converted),
        each -1 (no action) or legal in its game."""
        given = np.asarray(actions)
        b = state.batch_size
        if given.dtype.kind not in "iu":
            raise ActionError(f"actions must be integers (one per game, -1 for none), got {given.dtype} "
                              f"{given.reshape(-1)[:3].tolist()}{'...' if given.size > 3 else ''}")
        if given.shape != (b,):
            raise ActionError(f"got actions of shape {given.shape} for a batch of {b} games: give one per game, "
                              f"shape ({b},)")
        if given.dtype.kind == "u" and given.size and given.max() > np.iinfo(np.int64).max:
            j = int(np.argmax(given))
            raise ActionError(f"game {j}: action {given[j]} is out of range: allowed are 0..{self.num_actions - 1}, "
                              "or -1 for none")
        actions = given.astype(np.int64, copy=False)
        bad_range = (actions < -1) | (actions >= self.num_actions)
        if bad_range.any():
            j = int(np.flatnonzero(bad_range)[0])
            raise ActionError(f"game {j}: action {actions[j]} is out of range: allowed are 0..{self.num_actions - 1}, "
                              "or -1 for none")
        deciding = (state.phase == PLACE) | (state.phase == MOVE)
        given_one = actions >= 0
        safe = np.where(given_one, actions, 0)
        ok = ~given_one | (deciding & (state.legal[np.arange(b), safe] == 1))
        if not ok.all():
            j = int(np.flatnonzero(~ok)[0])
            raise ActionError(self.illegal_message(state, j, int(actions[j])))
        return actions

    def legal_notations(self, state: GameState, i: int = 0) -> list[str]:
        """Record notation (RECORDS.md) of every legal choice of game ``i``, in action order."""
        roll = int(state.roll[i])
        return [self.layout.to_notation(int(a), roll) for a in np.flatnonzero(state.legal[i])]

    def why_illegal(self, state: GameState, i: int, action: int) -> str:
        """Why ``action`` is not legal in game ``i``, in words, with the legal choices."""
        phase = int(state.phase[i])
        if phase not in (PLACE, MOVE):
            return f"no decision is due (phase {PHASE_NAMES[phase]}), got action {action}"
        roll = int(state.roll[i])
        try:
            meaning = self.layout.describe(action, roll)
        except ActionError:
            meaning = "not an action"
        return (f"action {action} ({meaning}) is not legal for player {state.player[i]}"
                + (f" with roll {roll}" if phase == MOVE else "")
                + f"; legal: {', '.join(self.legal_notations(state, i))}")

    def illegal_message(self, state: GameState, i: int, action: int) -> str:
        return f"game {i}: {self.why_illegal(state, i, action)}"

    def legal_actions(self, state: GameState, i: int = 0) -> np.ndarray:
        return np.flatnonzero(state.legal[i])

    def random_actions(self, state: GameState, rng: np.ndarray) -> np.ndarray:
        """Uniform legal choices from per-game uint64 streams ``rng`` (-1 where none is due)."""
        return random_legal_choices(state.legal, rng)

    def winners(self, state: GameState, i: int = 0) -> list[int]:
        """Seats of game ``i`` with the fewest points (``scoring.winners``)."""
        return winners(state.spooky[i])

    def ranks(self, state: GameState) -> np.ndarray:
        """(B, N) finishing rank per seat, 1 = fewest points; ties share the better rank."""
        return ranks(state.spooky)

    def hugo_square(self, state: GameState, i: int = 0) -> int:
        """Gallery square Hugo stands on in game ``i``, or -1 while he is on the stairs."""
        return int(K.hugo_square(state.hugo, self.rules, i))

    def hugo_stair_place(self, state: GameState, i: int = 0) -> int:
        """Stair place Hugo stands on in game ``i`` (0 = the highest value); -1 off them (cellar door, gallery)."""
        return int(K.hugo_stair_place(state.hugo, self.rules, i))

    def rooms_open(self, state: GameState, i: int = 0) -> bool:
        """Whether rooms may be entered in game ``i``: not while Hugo is on the stairs."""
        return bool(K.rooms_open(state.hugo, self.rules, i))

    def speed(self, state: GameState, i: int = 0) -> int:
        """Hugo's steps per move in game ``i`` (hidden_castle: by the clock)."""
        return int(K.hugo_speed(state.clock, self.rules, i))


__all__ = ["Engine", "ENGINE_VERSION"]
