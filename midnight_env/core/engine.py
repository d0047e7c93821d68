"""The batch-first engine API: one rules set, many games.

>>> eng = Engine("midnight_party", num_players=4)
>>> state = eng.new_games(seeds=range(256))       # 256 games, game i seeded i
>>> while not state.done.all():
...     eng.step(state, eng.random_actions(state, rng))   # one decision per game, dice rolled on

A single game is a batch of one. Games are advanced in place; ``state.copy()`` is a cheap copy
(search agents), and each game carries its own dice stream, so game *i* seeded *s* plays the
same whatever batch it runs in. Dice are also explicit chance outcomes: ``chance_outcomes`` and
``apply_roll(state, faces)`` let records and search agents inject rolls. A state built, loaded or
edited by hand is checked where it enters (:meth:`Engine.check_state` says what is checked when).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
from numba import njit
from numba.core.errors import NumbaError

from midnight_env.core import rules as K
from midnight_env.core.actions import ActionError, ActionLayout
from midnight_env.core.config import CASTLE_START_POINTS, GameConfig, make_config
from midnight_env.core.dice import CHANCE_OUTCOMES, HUGO
from midnight_env.core.one_game import entry_point, make_game_ref, random_one, step_one
from midnight_env.core.random_choice import random_legal_choices
from midnight_env.core.scoring import ranks, winners
from midnight_env.core.state import (
    MOVE,
    PHASE_NAMES,
    PLACE,
    ROLL,
    GameState,
    StateError,
    check_layout,
    check_writable,
    empty_state,
    fault_message,
    fits_checker,
    kernel_fields,
    layout_checker,
    state_limits,
    threaded_fits_checker,
)
from midnight_env.core.vector_kernels import forced_actions
from midnight_env.infra import checks
from midnight_env.infra.seeds import check_seed, check_seeds
from midnight_env.infra.threads import Site

_INT64, _UINT64 = np.dtype(np.int64), np.dtype(np.uint64)  # (numpy's dtypes of native byte order are unique)
_DECIDING = (PLACE, MOVE)  # the phases in which a game has a decision to take
ENGINE_VERSION = "1.0.0"  # bumped whenever the rules' behaviour changes, never for a refactor
_STEP = Site("engine.step")  # serial or threaded step, whichever this process measures faster
_FITS = Site("engine.fits")  # the quick state check before a step, likewise


def _fits_threaded(fields, limits, size) -> bool:
    """The threaded quick check, compiled only once a batch may run it."""
    return threaded_fits_checker()(fields, limits, size)


def integer_values(values, what: str, allowed: str, error: type[ValueError] = ValueError) -> np.ndarray:
    """``values`` as a numpy array of integers (any shape, not converted), or ``error`` naming the
    dtype and the first values: a float, a bool or a string is refused, never rounded or cast
    (an empty list, float64 to numpy, is an empty int64 array)."""
    given = np.asarray(values)
    if given.size == 0 and given.dtype.kind not in "iu":
        return given.astype(np.int64)
    if given.dtype.kind not in "iu":
        raise error(f"{what} must be integers ({allowed}), got {given.dtype} "
                    f"{given.reshape(-1)[:3].tolist()}{'...' if given.size > 3 else ''}")
    return given


@njit(cache=True)
def _first_bad_action(phase, legal, actions, num_actions, low):
    """(k, 0) of the first action out of range (below ``low``: -1 where "none" is allowed, else 0),
    else (k, 1) of the first one that is not legal in its game k (given where no decision is due,
    or not in ``legal``), else (-1, 0)."""
    illegal = -1
    for k in range(actions.shape[0]):
        a = actions[k]
        if a < low or a >= num_actions:
            return k, 0
        if a >= 0 and illegal < 0:
            deciding = k < phase.shape[0] and (phase[k] == PLACE or phase[k] == MOVE)
            if not (deciding and k < legal.shape[0] and a < legal.shape[1] and legal[k, a] == 1):
                illegal = k
    return (illegal, 1) if illegal >= 0 else (-1, 0)


def play_forced(state: GameState, step, buffer: np.ndarray | None = None, seen=None) -> np.ndarray:
    """The one loop of forced play (the envs' ``auto_forced``): while a game of ``state`` has a
    decision with exactly one legal choice, ``step(actions)`` plays those choices (-1 in the other
    games), after showing them to ``seen(actions)`` where given; ``buffer`` (B,) int64 holds them.
    Returns how many each game played, (B,). The vector env's compiled step runs the same loop per
    game (``vector_kernels._play_forced_game``): a compiled kernel cannot call back into Python."""
    b = state.batch_size
    buffer = np.empty(b, np.int64) if buffer is None else buffer
    played = np.zeros(b, np.int64)
    while forced_actions(state.legal, buffer):
        played += buffer >= 0
        if seen is not None:
            seen(buffer)
        step(buffer)
    return played


def check_actions(engine: Engine, state: GameState, actions, *, games: np.ndarray | None = None,
                  none: bool = True, legality: bool = True, single: bool = False,
                  error: checks.Raiser = ActionError, who: str = "", where=None) -> np.ndarray:
    """The one check of the actions given to games (the engine, the envs and the arena call it,
    each with its exception type): ``actions`` as an int64 array, one integer per game of
    ``games`` (default: every game of ``state``), each in the action space or, with ``none``,
    -1 for no action, and with ``legality`` legal in its game; else ``error`` naming the first bad
    one. A float, a bool or a string is refused, never converted. ``single``: ``actions`` is the
    one action of a batch of one, a scalar (the single-game envs).

    ``who`` opens the messages about the array as a whole (``"agent 'x': "``); ``where(k)`` those
    about the k-th action (default ``"game {i}: "``), e.g. ``"player_2: "`` in the PettingZoo env.
    """
    b = state.batch_size if games is None else len(games)
    if b == 1 and not single and type(actions) is np.ndarray and actions.dtype == _INT64 and actions.shape == (1,):
        # one game's action (an agent's choice in a single-game env): settled here where it is good,
        # without the numpy and compiled calls below, which cost more than the step it guards
        a, i = int(actions[0]), 0 if games is None else int(games[0])
        if (none and a == -1) or (0 <= a < engine.num_actions and (
                not legality or (state.phase[i] in _DECIDING and state.legal[i, a] == 1))):
            return actions
    if single:
        actions = np.array([_in_range(engine, actions, _about(games, where, 0), none, error)], np.int64)
    given = integer_values(actions, f"{who}actions", "one per game, -1 for none" if none else "one per game",
                           error)
    if given.shape != (b,):
        raise error(f"{who}got actions of shape {given.shape} for {b} games: give one per game, shape ({b},)")
    if given.dtype.kind == "u" and given.size and given.max() > np.iinfo(np.int64).max:  # no wrap to -1
        k = int(np.argmax(given))
        _in_range(engine, int(given[k]), _about(games, where, k), none, error)
    actions = given.astype(np.int64, copy=False)
    low = -1 if none else 0
    if legality:
        phase, legal = (state.phase, state.legal) if games is None else (state.phase[games], state.legal[games])
        k = _first_bad_action(phase, legal, actions, engine.num_actions, low)[0]
    else:
        outside = (actions < low) | (actions >= engine.num_actions)
        k = int(np.argmax(outside)) if outside.any() else -1
    if k >= 0:
        about = _about(games, where, k)
        _in_range(engine, int(actions[k]), about, none, error)
        raise error(about + engine.why_illegal(state, k if games is None else int(games[k]), int(actions[k])))
    return actions


def _about(games, where, k: int) -> str:
    """How :func:`check_actions`'s messages open about the k-th action: ``where(k)``, or ``"game {i}: "``."""
    return f"game {k if games is None else int(games[k])}: " if where is None else where(k)


def _in_range(engine: Engine, action, about: str, none: bool, error: checks.Raiser) -> int:
    """``action`` as an int if it is one of the action space (or -1, with ``none``), else ``error``
    naming it after ``about`` (``"game 3: "``)."""
    last = engine.num_actions - 1
    return checks.integer(f"{about}action", action, -1 if none else 0, last, error=error,
                          allowed=f"0..{last}, or -1 for none" if none else f"0..{last}")


class Engine:
    """Rules of one variant, player count and options, applied to batches of games."""

    def __init__(self, variant: str | GameConfig = "midnight_party", num_players: int = 4, **options: Any):
        self.config = variant if isinstance(variant, GameConfig) else make_config(variant, num_players, **options)
        self.rules = self.config.rules()
        self._kernel_rules = tuple(self.rules)  # for the kernels (see _run)
        self.layout = ActionLayout(self.config.board)
        self._no_actions: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self._limits = state_limits(self.rules)  # what a state of these rules holds (``check_state``)

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
        self._reset(s, np.arange(b), seeds)
        return s

    def reset_games(self, state: GameState, games, seeds) -> None:
        """Put games ``games`` of ``state`` back at set-up, seeded ``seeds`` (one per game), in
        place: the same games as ``new_games(seeds)``, without building a new batch (restarts).
        Checks the state's dtypes and shapes (the games it resets are overwritten), the game
        indices and the seeds as ``new_games`` does (ValueError naming the first bad one)."""
        self._check_layout(state)  # the kernel writes every field of these games
        b = state.batch_size
        games = integer_values(games, "game indices", f"0..{b - 1}").reshape(-1)
        checks.integers("game index", games, 0, b - 1, allowed=f"0..{b - 1}")  # the kernel trusts its indices
        seeds = check_seeds(seeds)
        if seeds.shape != games.shape:
            raise ValueError(f"got {seeds.size} seeds for {games.size} games: give one seed per game")
        self._reset(state, games.astype(np.int64), seeds)

    def _reset(self, state: GameState, games: np.ndarray, seeds: np.ndarray) -> None:
        K.reset_games(tuple(state), self._kernel_rules, games, np.ascontiguousarray(seeds),
                      CASTLE_START_POINTS if self.rules.castle else 0)

    # -- advancing ---------------------------------------------------------------------------
    def _run(self, state: GameState, actions, faces, auto_roll: bool, faces_out=None, fields=None) -> None:
        b = state.batch_size
        no_actions, no_faces_out = self._scratch(b)
        # plain tuples: numba dispatches them several times faster than namedtuples
        if actions is not None and not isinstance(actions, np.ndarray):  # a list from a caller that skipped checks
            actions = np.asarray(actions, dtype=np.int64)
        args = (tuple(state) if fields is None else fields, self._kernel_rules,
                no_actions if actions is None else actions, no_actions if faces is None else faces, auto_roll,
                no_faces_out if faces_out is None else faces_out)
        try:
            _STEP.run(b, K.step_serial, K.step_parallel, *args)  # the one measured faster (infra.threads)
        except NumbaError:  # an older numba lets a read-only field past the quick check; the kernel cannot take it
            check_writable(state)
            raise

    def _scratch(self, b: int) -> tuple[np.ndarray, np.ndarray]:
        """(b,) -1 actions (no decision, no die face) and a faces-out buffer nobody reads."""
        if b not in self._no_actions:
            self._no_actions[b] = (np.full(b, -1, np.int64), np.full(b, -1, np.int8))
        return self._no_actions[b]

    def step(self, state: GameState, actions, check: bool = True) -> None:
        """Apply one decision per deciding game (-1: none), then roll on until the next decision.

        Games at a ROLL (as left by :meth:`apply_action`) are rolled on too; finished games stay.
        ``check=False`` skips :meth:`check_actions` and the quick check of the state (see
        :meth:`check_state`): for callers whose states and actions are right by construction
        (the envs, an agent's search on copies of legal positions), as an int64 array of one
        action per game; a wrong action then plays a wrong game without a word.
        """
        self._advance(state, actions, check, True)

    def apply_action(self, state: GameState, actions, check: bool = True) -> None:
        """Apply decisions only; games stop at their next roll (a chance node) or decision.
        ``check``: as for :meth:`step`."""
        self._advance(state, actions, check, False)

    def _advance(self, state: GameState, actions, check: bool, auto_roll: bool) -> None:
        """:meth:`step` (``auto_roll``) and :meth:`apply_action`: a batch of one in one compiled
        call (``core.one_game``), else checked as asked and run by the batch kernels."""
        one = self._one
        if one is None or one[0] is not state:
            one = self._one_handle(state)
        if (one is not None and type(actions) is np.ndarray and actions.dtype is _INT64 and actions.shape == (1,)
                and one[2](one[1], actions[0], check, auto_roll) == 0):
            return
        if check:
            fields = self._fields(state)
            actions = self.check_actions(state, actions)
        else:
            fields = None
        self._run(state, actions, None, auto_roll, fields=fields)

    def apply_roll(self, state: GameState, faces=None, check: bool = True) -> np.ndarray:
        """Resolve one roll in every game at ROLL: with the given faces (integers 1, 2, 4, 5, HUGO=0;
        -1 to skip a game; one per game or one for all) or, when ``faces`` is None, from each
        game's dice stream. Returns the faces rolled (-1 for games that did not roll). ``check``:
        the quick check of the state, as for :meth:`step` (the faces are always checked)."""
        fields = self._fields(state) if check else None
        b = state.batch_size
        if faces is None:
            faces = np.where(state.phase == ROLL, -2, -1).astype(np.int64)
        else:
            given = integer_values(faces, "die faces", "1, 2, 4, 5 or 0 for Hugo; -1 to skip a game")
            if given.ndim > 1 or given.size not in (1, b):
                raise ValueError(f"got die faces of shape {given.shape} for a batch of {b} games: give one per "
                                 f"game, shape ({b},), or one for all")
            faces = np.broadcast_to(given.reshape(-1), (b,))
            bad = ~np.isin(faces, (-1, 1, 2, 4, 5, HUGO))
            if bad.any():
                j = int(np.flatnonzero(bad)[0])
                raise ValueError(f"die face {faces[j]} for game {j} is not a face: allowed are 1, 2, 4, 5, 0 (Hugo)")
            faces = np.where(state.phase == ROLL, faces.astype(np.int64), -1)
        faces_out = np.full(b, -1, np.int8)
        self._run(state, None, faces, False, faces_out, fields=fields)
        return faces_out

    def roll_on(self, state: GameState, check: bool = True) -> None:
        """Roll every game at ROLL on (dice streams) until a decision or the end. ``check``: the
        quick check of the state, as for :meth:`step`."""
        self._run(state, None, None, True, fields=self._fields(state) if check else None)

    def refresh_legal(self, state: GameState) -> None:
        """Recompute ``state.legal`` from the position (after building or editing a state by hand),
        once :meth:`check_state` found nothing wrong with the rest."""
        self.check_state(state, legal=False)
        check_writable(state)
        K.refresh_legal(tuple(state), self._kernel_rules)

    # -- checks and queries ------------------------------------------------------------------------
    def check_state(self, state: GameState, legal: bool = True) -> None:
        """StateError (a ValueError) naming the first field of ``state`` that no game of this engine
        holds, the game and what is allowed (``state.player[0] is 99: allowed are seats 0..2``).

        What: ``state`` is a GameState of numpy arrays of the engine's dtypes and shapes; every
        value is in range: phase, the seats (player, first_roller, rooms, the placing order), the
        roll (1, 2, 4 or 5 in phase move, else 0), Hugo's track, the clock (midnight_party: 0),
        round and rounds_done (up to the rounds), rolls (up to max_turns), truncated (finished
        games only), queue_pos and queue_len; the guests: every count 0..guests_per_player, each
        player's guests on the gallery, in rooms, on the stairs and in supply add up to
        guests_per_player (at most that once the game is over), in phase place the supply agrees
        with the placing order and the player is the next in it; hidden_castle points are never
        below 0; and with ``legal``, ``state.legal`` is the mask the position gives (see
        :meth:`refresh_legal`) and every decision has a legal choice. The dice stream ``rng``
        may hold anything.

        When: a state the engine made and advanced is right by construction; a state from
        elsewhere (built, loaded or edited by hand) is checked where it enters:

        - ``check_state``: all of the above; call it on a state from outside before using it.
        - ``refresh_legal``: all but ``legal``, which it recomputes.
        - ``step``, ``apply_action``, ``apply_roll`` and ``roll_on`` (unless ``check=False``): a
          quick check of what the compiled rules index with, in one pass over the batch: dtypes
          and shapes, every range above, no count below 0 and at most players * guests guests on
          a game's gallery and stairs; a state that fails it is then named by this full check.
          Left to ``check_state`` there: each player's own guest count, the supply against the
          placing order, hidden_castle points and ``legal`` (an edited mask plays a wrong game
          without a word). ``check=False`` skips the quick check too, for callers whose states
          are the engine's own (the envs, search agents).
        - ``reset_games``: dtypes and shapes (the games it resets are overwritten).
        """
        check_layout(state, self._limits)
        message = fault_message(state, self._limits)
        if message is not None:
            raise StateError(message)
        if legal:
            self._check_legal(state)

    def _check_legal(self, state: GameState) -> None:
        """StateError unless ``state.legal`` is the mask of each game's position, with a legal
        choice at every decision (the rest of the state checked already)."""
        fields = kernel_fields(state)
        mask = np.zeros_like(fields[-1])
        K.refresh_legal(fields[:-1] + (mask,), self._kernel_rules)
        wrong = np.argwhere(state.legal != mask)
        if len(wrong):
            i, a = (int(x) for x in wrong[0])
            try:
                meaning = self.layout.describe(a, int(state.roll[i]))
            except ActionError:
                meaning = "not an action"
            allowed = int(mask[i, a])
            raise StateError(f"state.legal[{i}, {a}] is {int(state.legal[i, a])}: allowed is {allowed}, as action "
                             f"{a} ({meaning}) is {'' if allowed else 'not '}legal in game {i}'s position "
                             "(after editing a position, call Engine.refresh_legal)")
        stuck = np.isin(state.phase, (PLACE, MOVE)) & ~mask.any(axis=1)
        if stuck.any():
            i = int(np.flatnonzero(stuck)[0])
            phase, roll = int(state.phase[i]), int(state.roll[i])
            raise StateError(f"game {i}: phase {PHASE_NAMES[phase]}, but player {int(state.player[i])} has no legal "
                             f"choice{f' with roll {roll}' if phase == MOVE else ''}: allowed are decisions with a "
                             "legal choice (a roll without a legal move is void: phase roll)")

    def _check_layout(self, state: GameState) -> None:
        """StateError unless ``state`` has the engine's dtypes and shapes and is writable (compiled
        for the usual case; ``check_layout`` names what is wrong)."""
        if isinstance(state, GameState):
            try:
                if layout_checker()(tuple(state), self._limits):
                    check_writable(state)  # (an older numba passes a read-only array as a writable one)
                    return
            except TypeError:  # not arrays of the engine's dtypes, dimensions and layout: the full check tells
                pass
        check_layout(state, self._limits)
        check_writable(state)

    def _fields(self, state: GameState) -> tuple:
        """The fields of ``state`` for the kernels, once the quick check of :meth:`check_state`
        passed (else the full check names what is wrong)."""
        if isinstance(state, GameState):
            fields = tuple(state)
            try:
                b = fields[0].shape[0]
                # a read-only field goes to the full check, never to a compiled one: numba 0.59 then
                # types later writable states as read-only too (no matching definition)
                if all(a.flags.writeable for a in fields) and _FITS.run(b, fits_checker(), _fits_threaded, fields,
                                                                         self._limits):
                    return fields
            except (TypeError, AttributeError, IndexError):  # not arrays of the engine's dtypes, dimensions and
                pass  # layout (a read-only or a strided one): the full check tells
        self.check_state(state, legal=False)
        check_writable(state)
        return tuple(state)  # strided arrays: the kernels take them too

    def check_actions(self, state: GameState, actions) -> np.ndarray:
        """Actions as an int64 array, or ActionError naming the first bad one: one integer per game
        of the batch (a float, a bool, a string or another shape is refused, never converted),
        each -1 (no action) or legal in its game (:func:`check_actions`)."""
        return check_actions(self, state, actions)

    def play_forced(self, state: GameState, buffer: np.ndarray | None = None) -> np.ndarray:
        """Play every decision with exactly one legal choice until none is left (:func:`play_forced`);
        (B,) count per game."""
        return play_forced(state, lambda actions: self.step(state, actions, check=False), buffer)

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
        one = self._one
        if (one is not None and one[0] is state and type(rng) is np.ndarray and rng.dtype is _UINT64
                and rng.shape == (1,) and rng.flags.writeable):  # a batch of one: one compiled call
            out = np.empty(1, np.int64)
            one[3](one[1], rng, out)
            return out
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

    # -- one game at a time ------------------------------------------------------------------------
    # (state, its handle, step_one and random_one compiled for it): the last batch of one stepped,
    # which ``step``, ``apply_action`` and ``random_actions`` advance in one compiled call each
    _one: tuple | None = None
    _ones: tuple = ()  # the last few ``_one`` (states stepped in turn: two envs on one engine)
    _one_seen: tuple = ()  # the last few states stepped once (a second step gives them a handle)

    def _one_handle(self, state: GameState) -> tuple | None:
        """``_one`` for ``state``, a batch of one of this engine's dtypes and shapes as writable
        contiguous arrays (kept for the next call: its arrays stay the same), else None. The
        compiled calls check the state's values as ``_fields`` does, the action as
        ``check_actions`` does, and change nothing where one fails: the batch path then says what.
        A state is given a handle at its second step: a search that steps each of many copies
        once keeps the batch path, which costs less than making a handle."""
        for one in self._ones:
            if one[0] is state:
                self._one = one
                return one
        if not any(seen is state for seen in self._one_seen):
            self._one_seen = (state,) + self._one_seen[:3]
            return None
        if type(state) is not GameState:
            return None
        fields = tuple(state)
        try:
            if fields[0].shape != (1,) or not layout_checker()(fields, self._limits):
                return None
        except (TypeError, AttributeError, IndexError):  # not arrays of the engine's dtypes and layout
            return None
        handle = make_game_ref(fields, self._kernel_rules, self._limits)
        kernels = self.__dict__.get("_one_kernels")
        if kernels is None:  # the handle's types are the same for every state of this engine
            kernels = self._one_kernels = (entry_point(step_one, handle, 0, True, True),
                                           entry_point(random_one, handle, np.zeros(1, np.uint64),
                                                       np.zeros(1, np.int64)))
        one = self._one = (state, handle) + kernels
        self._ones = (one,) + self._ones[:3]
        return one

    def __getstate__(self) -> dict:
        """The engine without its batch-of-one handles and their compiled entry points (made again
        on use): pickles and copies hold the rules only."""
        return {k: v for k, v in self.__dict__.items() if k not in ("_one", "_ones", "_one_seen", "_one_kernels")}


__all__ = ["Engine", "ENGINE_VERSION"]
