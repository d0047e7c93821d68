"""Solving a set-up, and the solution: every state's key, value and optimal action, saved and loaded.

A solution directory holds two files:

``solution.npz``
    ``keys`` (n,) uint64, ascending: every position reachable from the start, as its key
    (``midnight_env.solve.keys``); ``values`` (n,) float64: each position's value (see below);
    ``best`` (n,) int16: the optimal action at a decision (an index of the action space,
    ``midnight_env.core.actions``), -1 at a roll or a finished game.
``solution.json``
    the set-up and the numbers: ``format`` (``midnight-solution/1``), ``variant``, ``players``,
    ``options`` (every rule option; ``max_turns`` as given but ignored), ``board`` (the board's
    definition when it is not the variant's own), ``objective``, ``value``, ``value_means``,
    ``start`` (``"set-up"``, or the key of the position solved from), ``states``, ``edges``,
    ``decisions``, ``components``, ``residual``, ``sweeps``, ``seconds``, ``memory_bytes``,
    ``key_layout`` (the fields of :class:`~midnight_env.solve.keys.KeyLayout`),
    ``engine_version``, ``tie_rule``, ``max_turns`` (a note: ignored).

Values: with the ``points`` objective a position's value is the points still to be booked from
there on under optimal play: seat 0's (one player, who minimises them), or seat 0's minus seat
1's (two players: seat 0 minimises, seat 1 maximises). Add the points booked so far for the
expected final result (:meth:`Solution.final_values`). With ``win`` it is seat 0's chance to win,
a tie counting 1/2 (seat 0 maximises, seat 1 minimises). ``value`` in the JSON is the start's, as
a final result: for one player seat 0's expected final spooky points (hidden_castle's starting
10 included), for two the expected final difference or the winning chance.

Ties between optimal actions: the lowest action index among the actions whose value is within
``TIE_TOLERANCE`` (1e-9) of the best. ``max_turns`` is ignored: the solver plays games to their
end, however long.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from midnight_env.core.board import ROOM_KINDS, Board, board_from_dict
from midnight_env.core.config import GameConfig, make_config
from midnight_env.core.engine import ENGINE_VERSION, Engine
from midnight_env.core.state import MOVE, OVER, PLACE, ROLL, GameState, empty_state
from midnight_env.infra import checks
from midnight_env.solve.graph import (
    BAD_KEY,
    REWARD_DIFFERENCE,
    REWARD_NONE,
    REWARD_SEAT0,
    SolveError,
    StateGraph,
    build_graph,
)
from midnight_env.solve.keys import (
    KeyedStates,
    KeyLayout,
    decode_games,
    encode_games,
    key_layout,
    terminal_outcomes,
)
from midnight_env.solve.layer_store import LayerStore, open_layer_store
from midnight_env.solve.values import (
    CHANCE,
    MAXIMISE,
    MINIMISE,
    TERMINAL,
    TIE_TOLERANCE,
    TIED_END,
    WON_END,
    bellman_residual,
    best_actions,
    iterate_values,
    strong_components,
)

FORMAT = "midnight-solution/1"
OBJECTIVES = ("points", "win")
MAX_TURNS_IGNORED = 10_000_000  # the solver's engine never truncates (the largest max_turns)
TOLERANCE = 1e-12  # a component's sweeps stop when no value moves by more
MAX_SWEEPS = 1_000_000
DEFAULT_MAX_STATES = 200_000_000  # where the available memory cannot be read
BYTES_PER_STATE = 80  # the solver's peak memory per state (BENCHMARKS.md: 72 at 15 M states)
TIE_RULE = f"lowest action index among actions within {TIE_TOLERANCE:g} of the best"


def set_up_config(variant: str | GameConfig | Engine = "midnight_party", num_players: int = 1,
                  **options: Any) -> GameConfig:
    """The set-up as a GameConfig: a variant name with a player count and rule options, a
    GameConfig, or an Engine's."""
    if isinstance(variant, (Engine, GameConfig)):
        if options:
            raise SolveError(f"rule options {', '.join(options)} given with a set-up that has its own: give "
                             "either a GameConfig (or an Engine) or a variant name with options")
        return variant.config if isinstance(variant, Engine) else variant
    return make_config(variant, num_players, **options)


def check_set_up(config: GameConfig, objective: str) -> None:
    """SolveError unless the solver takes this set-up and objective."""
    checks.choice("objective", objective, OBJECTIVES, error=SolveError)
    if config.num_players > 2:
        raise SolveError(f"the solver takes 1 or 2 players (solo against Hugo, or two players with few guests), "
                         f"got {config.num_players}")
    if objective == "win" and config.num_players != 2:
        raise SolveError("objective win needs 2 players: a solo game is solved for its points (objective points)")


def solver_engine(config: GameConfig) -> Engine:
    """The set-up's rules with max_turns out of the way (the solver ignores it)."""
    options = dict(config.options, max_turns=MAX_TURNS_IGNORED)
    return Engine(GameConfig(config.variant, config.num_players, options, config.board, config.custom_board))


def seat_modes(num_players: int, objective: str) -> tuple[int, int]:
    """How seats 0 and 1 decide: points are minimised by seat 0, the win chance maximised."""
    if objective == "win":
        return MAXIMISE, MINIMISE
    return MINIMISE, MAXIMISE


def state_modes(graph: StateGraph, objective: str) -> np.ndarray:
    """How every state's value is made (``values``: TERMINAL, TIED_END, WON_END, CHANCE,
    MAXIMISE, MINIMISE)."""
    phases = graph.phases
    seat_mode = np.array(seat_modes(graph.engine.num_players, objective), np.int8)
    mode = seat_mode[graph.players.astype(np.int64)]
    mode[phases == ROLL] = CHANCE
    over = phases == OVER
    mode[over] = TERMINAL
    if objective == "win":
        outcome = terminal_outcomes(graph.keys[over])
        mode[over] = np.array([TERMINAL, TIED_END, WON_END], np.int8)[outcome]
    return mode


@dataclass
class Solution(KeyedStates):
    """Every state of a solved set-up: keys, values and optimal actions (see the module docstring).

    States are numbered as in ``keys``: the order the solver found them (its ``graph`` then
    holds the transitions), or ascending keys for a loaded solution (no graph)."""

    config: GameConfig
    objective: str
    layout: KeyLayout
    keys: np.ndarray
    values: np.ndarray
    best: np.ndarray
    meta: dict[str, Any] = field(default_factory=dict)
    graph: StateGraph | None = None
    store: LayerStore | None = None  # a layered solution read from disk: keys, values, best are its columns
    _sorter: np.ndarray | None = field(default=None, repr=False)
    _sorted: np.ndarray | None = field(default=None, repr=False)
    _engine: Engine | None = field(default=None, repr=False)

    # -- the set-up --------------------------------------------------------------------------
    @property
    def engine(self) -> Engine:
        """An engine of the solved set-up (max_turns out of the way) for decoding positions."""
        if self._engine is None:
            self._engine = self.graph.engine if self.graph is not None else solver_engine(self.config)
        return self._engine

    @property
    def value(self) -> float:
        """The start's value as a final result (module docstring)."""
        return float(self.meta["value"])

    def describe(self) -> str:
        return describe_set_up(self.config, self.objective)

    def check_engine(self, engine: Engine) -> None:
        """ValueError naming every way ``engine``'s game differs from the solved one (max_turns
        aside)."""
        mine, theirs = self.config, engine.config
        wrong = []
        if theirs.variant != mine.variant:
            wrong.append(f"variant {mine.variant} (the game has {theirs.variant})")
        if theirs.num_players != mine.num_players:
            wrong.append(f"{mine.num_players} player(s) (the game has {theirs.num_players})")
        for k, v in mine.options.items():
            if k != "max_turns" and theirs.options.get(k) != v:
                wrong.append(f"{k}={v} (the game has {theirs.options.get(k)})")
        if not wrong and board_dict(theirs.board) != board_dict(mine.board):
            wrong.append(f"board {mine.board.name} (the game has board {theirs.board.name})")
        if wrong:
            raise ValueError(f"the solution {self.meta.get('source', '')!s} does not fit this game: it solves "
                             + ", ".join(wrong))

    # -- looking states up -------------------------------------------------------------------
    def encode(self, state: GameState) -> np.ndarray:
        """Keys of every game of ``state`` (a batch of this set-up's games)."""
        out = np.empty(state.batch_size, np.uint64)
        encode_games(state, self.engine.rules, self.layout, out)
        return out

    def find(self, keys: np.ndarray) -> np.ndarray:
        """State numbers of ``keys`` (-1 for a key that is not a reachable position)."""
        if self.store is not None:
            return self.store.find(keys, self.layout, self.engine.rules)
        if self._sorted is None:
            if np.all(self.keys[1:] > self.keys[:-1]):
                self._sorted = self.keys
            else:
                self._sorter = np.argsort(self.keys).astype(np.int64)
                self._sorted = self.keys[self._sorter]
        keys = np.asarray(keys, dtype=np.uint64)
        pos = np.minimum(np.searchsorted(self._sorted, keys), len(self._sorted) - 1)
        found = self._sorted[pos] == keys
        ids = pos if self._sorter is None else self._sorter[pos]
        return np.where(found, ids, -1).astype(np.int64)

    def state_ids(self, state: GameState, games=None) -> np.ndarray:
        """State numbers of the games of ``state`` (all, or ``games``); ValueError for a position
        the solution does not hold (a game of another set-up, or one built by hand)."""
        if games is not None:
            state = state.take(np.asarray(games))
        ids = self.find(self.encode(state))
        if (ids < 0).any():
            j = int(np.flatnonzero(ids < 0)[0])
            raise ValueError(f"game {j} is at a position the solution of {self.describe()} does not hold "
                             "(a game of another set-up, or a position not reachable from the start)")
        return ids

    def values_of(self, state: GameState, games=None) -> np.ndarray:
        """Each game's value from its position on (module docstring: points still to come, or
        seat 0's win chance)."""
        return self.values[self.state_ids(state, games)]

    def final_values(self, state: GameState, games=None) -> np.ndarray:
        """Each game's expected final result under optimal play: with the points objective
        the points booked so far plus those still to come (seat 0's, or seat 0's minus seat
        1's); with win, the win chance."""
        values = self.values_of(state, games)
        if self.objective == "win":
            return values
        spooky = state.spooky if games is None else state.spooky[np.asarray(games)]
        booked = spooky[:, 0] if self.config.num_players == 1 else spooky[:, 0] - spooky[:, 1]
        return booked + values

    def best_actions(self, state: GameState, games=None) -> np.ndarray:
        """The optimal action of each game (all at a decision)."""
        best = self.best[self.state_ids(state, games)].astype(np.int64)
        if (best < 0).any():
            j = int(np.flatnonzero(best < 0)[0])
            raise ValueError(f"game {j} is not at a decision (place or move): no action to choose")
        return best

    def action_values(self, state: GameState, games=None) -> np.ndarray:
        """(n, A) the value of every legal choice of each game (all at a decision; nan for the
        choices that are not legal): what it books at once plus the value of the position it
        leads to, so that the optimal action is the best of them (the lowest index among equals).
        For the points objective, seat 0's points still to come from before the choice; e.g.
        the value of every placement square at the start. Computed through the engine, so a
        loaded solution answers too."""
        sub = state.take(np.asarray(games)) if games is not None else state.copy()
        if not np.isin(sub.phase, (PLACE, MOVE)).all():
            j = int(np.flatnonzero(~np.isin(sub.phase, (PLACE, MOVE)))[0])
            raise ValueError(f"game {j} is not at a decision (place or move): no choices to value")
        parent, action = np.nonzero(sub.legal)
        after = sub.take(parent)
        self.engine.apply_action(after, action.astype(np.int64))
        booked = booked_points(after, self.objective) - booked_points(sub, self.objective)[parent]
        out = np.full(sub.legal.shape, np.nan)
        out[parent, action] = booked + self.values_of(after)
        return out

    def positions(self, ids) -> GameState:
        """The positions of states ``ids`` as a batch of games (legal masks filled in), e.g. to
        render or to ask an agent."""
        ids = np.atleast_1d(np.asarray(ids, dtype=np.int64))
        r = self.engine.rules
        state = empty_state(len(ids), r.num_players, r.num_squares, r.num_rooms, r.num_places, r.guests,
                            r.num_actions)
        decode_games(np.ascontiguousarray(self.keys[ids]), state, r, self.layout)
        self.engine.refresh_legal(state)
        return state

    @property
    def start(self) -> int:
        """State number of the position solved from: the game at set-up, or the given start."""
        if self.meta.get("start", "set-up") == "set-up":
            return int(self.state_ids(self.engine.new_games([0]))[0])
        return int(self.find(np.array([self.meta["start"]], np.uint64))[0])

    # -- saving -------------------------------------------------------------------------------
    def save(self, directory: str | Path) -> Path:
        """Write ``solution.npz`` and ``solution.json`` into ``directory`` (made if missing); a
        solution read from its layers on disk writes only ``solution.json``, naming where they are
        (``layers_dir``): a copy of them would double the disk."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        if self.store is not None:
            return save_layers_pointer(self.meta, self.store.directory, directory)
        order = np.argsort(self.keys, kind="stable")
        np.savez(directory / "solution.npz", keys=self.keys[order], values=self.values[order],
                 best=self.best[order])
        meta = {k: v for k, v in self.meta.items() if k != "source"}
        (directory / "solution.json").write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
        return directory


def save_layers_pointer(meta: dict[str, Any], layers_dir: str | Path, directory: str | Path) -> Path:
    """``directory/solution.json`` for a layered solution: its metadata and the absolute path of the
    work directory holding its layers (``layers_dir``), which :func:`load_solution` opens from disk.
    The work directory itself gets one too (``layers_dir`` "."), so that it can be moved whole."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    layers_dir = Path(layers_dir).resolve()
    keep = {k: v for k, v in meta.items() if k not in ("source", "layers_detail", "work_dir")}
    keep["layers_dir"] = "." if layers_dir == directory.resolve() else str(layers_dir)
    (directory / "solution.json").write_text(json.dumps(keep, indent=1) + "\n", encoding="utf-8")
    return directory


def board_dict(board: Board) -> dict:
    """A board as the JSON definition ``board.board_from_dict`` reads."""
    data = {"name": board.name, "description": board.description, "gallery_squares": board.num_squares,
            "arrow_square": board.arrow_square,
            "rooms": [{"door": int(d), "kind": ROOM_KINDS[int(k)], "name": n}
                      for d, k, n in zip(board.door_square, board.room_kind, board.room_names)],
            "stairs": {"kind": board.stairs_kind, "values": [int(v) for v in board.stair_values],
                       "hugo_start": board.hugo_start, "overflow": board.overflow}}
    if board.overflow == "wine_cellar":
        data["stairs"]["wine_cellar_value"] = board.wine_cellar_value
    return data


def booked_points(state: GameState, objective: str) -> np.ndarray:
    """The part of each game's final result already booked: seat 0's points (one player) or
    seat 0's minus seat 1's (two) with the points objective, nothing with win."""
    if objective == "win":
        return np.zeros(state.batch_size)
    spooky = state.spooky.astype(np.float64)
    return spooky[:, 0] if spooky.shape[1] == 1 else spooky[:, 0] - spooky[:, 1]


def start_key(engine: Engine, layout: KeyLayout, start: GameState | None) -> np.uint64:
    """The key to solve from: the set-up's, or that of the game ``start`` (SolveError unless it
    is one game of this set-up at a roll or a decision)."""
    if start is None:
        start = engine.new_games([0])
    r = engine.rules
    if start.batch_size != 1 or start.gallery.shape[1:] != (r.num_players, r.num_squares) \
            or start.legal.shape[1] != r.num_actions or start.queue.shape[1] != r.num_players * r.guests:
        raise SolveError("start must be one game (a batch of one) of the solved set-up")
    if start.phase[0] == OVER:
        raise SolveError("start is a finished game: nothing to solve")
    out = np.empty(1, np.uint64)
    encode_games(start, r, layout, out)
    if out[0] == BAD_KEY:
        raise SolveError("start is not a position of this set-up (its guests or points do not fit)")
    return out[0]


def memory_max_states() -> int:
    """How many states the memory available now holds (``BYTES_PER_STATE`` each, with a margin)."""
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            info = dict(line.split(":", 1) for line in f)
        available = int(info["MemAvailable"].split()[0]) * 1024
    except (OSError, KeyError, ValueError):
        return DEFAULT_MAX_STATES
    return max(1_000_000, int(0.8 * available / BYTES_PER_STATE))


def reward_mode(config: GameConfig, objective: str) -> int:
    if objective == "win":
        return REWARD_NONE
    return REWARD_SEAT0 if config.num_players == 1 else REWARD_DIFFERENCE


def solve(variant: str | GameConfig | Engine = "midnight_party", num_players: int = 1, objective: str = "points",
          *, start: GameState | None = None, tolerance: float = TOLERANCE, max_states: int | None = None,
          progress=None, **options: Any) -> Solution:
    """Solve a set-up exactly: every position reachable from the start, its value and optimal
    action (module docstring). ``variant`` may be a variant name (with ``num_players`` and rule
    ``options``), a GameConfig or an Engine (custom boards). ``start``: a game of the set-up (a
    batch of one, at a roll or a decision) to solve from instead of the set-up, e.g. an end game.
    ``max_states``: SolveError beyond this many states (default: what the memory available now
    holds). ``progress(stage, done, total)`` is called now and then. The returned solution
    keeps its state graph (``Solution.graph``) for policy evaluation
    (``midnight_env.solve.policy``)."""
    config = set_up_config(variant, num_players, **options)
    check_set_up(config, objective)
    engine = solver_engine(config)
    try:
        layout = key_layout(engine.rules, config.rounds, objective == "win")
    except ValueError as err:
        raise SolveError(str(err)) from None
    first = start_key(engine, layout, start)
    started = time.perf_counter()
    graph = build_graph(engine, layout, reward_mode(config, objective), max_states or memory_max_states(), first,
                        None if progress is None else (lambda n, x: progress("states", x, n)))
    enumerated = time.perf_counter()
    mode = state_modes(graph, objective)
    members, comp_start = strong_components(graph.edge_start, graph.edge_to)
    no_weight = np.zeros(0)
    V, sweeps, largest = iterate_values(members, comp_start, mode, graph.phases == MOVE, graph.edge_start,
                                        graph.edge_to, graph.edge_label, graph.edge_reward, no_weight, tolerance,
                                        MAX_SWEEPS)
    if sweeps < 0:
        raise SolveError(f"a component of the state graph did not settle within {MAX_SWEEPS:,} sweeps")
    components = len(comp_start) - 1
    biggest = int(np.diff(comp_start).max()) if components else 0
    del members, comp_start
    residual = bellman_residual(V, mode, graph.edge_start, graph.edge_to, graph.edge_label,
                                graph.edge_reward, no_weight)
    best = best_actions(V, mode, graph.edge_start, graph.edge_to, graph.edge_label, graph.edge_reward,
                        TIE_TOLERANCE)
    finished = time.perf_counter()
    value = float(V[0]) + booked_points(start if start is not None else engine.new_games([0]), objective)[0]
    meta = solution_meta(config, objective, layout, start, first, value=value, states=graph.num_states,
                         edges=graph.num_edges, decisions=int(((mode == MAXIMISE) | (mode == MINIMISE)).sum()),
                         components=components, largest_component=biggest, residual=residual, tolerance=tolerance,
                         sweeps=sweeps, most_sweeps=largest, seconds_states=enumerated - started,
                         seconds_values=finished - enumerated,
                         memory_bytes=graph.nbytes() + V.nbytes + best.nbytes + mode.nbytes)
    return Solution(config=config, objective=objective, layout=layout, keys=graph.keys, values=V, best=best,
                    meta=meta, graph=graph, _engine=engine)


def solution_meta(config: GameConfig, objective: str, layout: KeyLayout, start: GameState | None, first: np.uint64,
                  *, value: float, states: int, edges: int, decisions: int, components: int,
                  largest_component: int, residual: float, tolerance: float, sweeps: float, most_sweeps: int,
                  seconds_states: float, seconds_values: float, memory_bytes: int) -> dict[str, Any]:
    """A solution's metadata (``solution.json``, module docstring), as both solvers write it (the
    layered solver adds its layers' numbers after these): the set-up, solved from ``start`` (None:
    the set-up; else the game whose key is ``first``), and the numbers of the solve."""
    return {
        "format": FORMAT, "variant": config.variant, "players": config.num_players,
        "options": dict(config.options), "board": board_dict(config.board) if config.custom_board else None,
        "objective": objective, "value": float(value), "value_means": value_means(config, objective),
        "start": "set-up" if start is None else int(first),
        "states": int(states), "edges": int(edges), "decisions": int(decisions),
        "components": int(components), "largest_component": int(largest_component),
        "residual": float(residual), "tolerance": tolerance, "sweeps": round(float(sweeps), 3),
        "most_sweeps": int(most_sweeps),
        "seconds": round(seconds_states + seconds_values, 3), "seconds_states": round(seconds_states, 3),
        "seconds_values": round(seconds_values, 3), "memory_bytes": int(memory_bytes),
        "max_turns": "ignored: games are solved to their end", "tie_rule": TIE_RULE,
        "key_layout": layout._asdict(), "engine_version": ENGINE_VERSION,
    }


def describe_set_up(config: GameConfig, objective: str) -> str:
    """A solved set-up in words: variant, players, rule options (max_turns aside), board, objective."""
    opts = ", ".join(f"{k}={v}" for k, v in config.options.items() if k != "max_turns")
    board = f", board {config.board.name}" if config.custom_board else ""
    return f"{config.variant}, {config.num_players} player(s), {opts}{board}, objective {objective}"


def value_means(config: GameConfig, objective: str) -> str:
    if objective == "win":
        return "seat 0's chance to win (a tie counts 1/2) under optimal play of both seats"
    if config.num_players == 1:
        extra = ", the starting 10 included" if config.castle else ""
        return f"seat 0's expected final spooky points under optimal play{extra}"
    return ("expected final spooky points of seat 0 minus seat 1's under optimal play "
            "(seat 0 minimises, seat 1 maximises)")


def load_solution(directory: str | Path) -> Solution:
    """A solution saved by :meth:`Solution.save` (ValueError naming the file when it is not one)."""
    directory = Path(directory)
    meta_path, arrays_path = directory / "solution.json", directory / "solution.npz"
    layered = meta_path.is_file() and not arrays_path.is_file() and '"layers_dir"' in meta_path.read_text(
        encoding="utf-8", errors="replace")
    for path in (meta_path,) if layered else (meta_path, arrays_path):
        if not path.is_file():
            raise ValueError(f"{directory} is not a solution directory: {path.name} is missing "
                             "(write one with `midnight solve --out DIR`)")
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise ValueError(f"{meta_path}: not valid JSON ({err})") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise ValueError(f"{meta_path}: not a solution (format {FORMAT} expected)")
    board = board_from_dict(meta["board"], str(meta_path)) if meta.get("board") else None
    config = make_config(meta["variant"], meta["players"], board=board, **meta["options"])
    layout = KeyLayout(**meta["key_layout"])
    engine = solver_engine(config)
    expected = key_layout(engine.rules, config.rounds, meta["objective"] == "win")
    if layout != expected:
        raise ValueError(f"{meta_path}: its key layout is not this version's for the set-up: solve it again")
    meta["source"] = str(directory)
    if layered:  # the layers on disk, looked up there (layer_store)
        layers_dir = directory / meta["layers_dir"]  # (an absolute path stays itself)
        if not (layers_dir / "layers").is_dir():
            raise ValueError(f"{meta_path}: its layers_dir {layers_dir} holds no layers/ (moved or deleted? "
                             "solve it again with `midnight solve --layered --work-dir DIR`)")
        for key in ("layer_ranks", "over_keys"):
            if key not in meta:
                raise ValueError(f"{meta_path}: a layered solution names its {key}: this one does not")
        store = open_layer_store(meta, layers_dir)
        return Solution(config=config, objective=meta["objective"], layout=layout, keys=store.keys,
                        values=store.values, best=store.best, meta=meta, store=store, _engine=engine)
    with np.load(arrays_path) as arrays:
        keys, values, best = arrays["keys"], arrays["values"], arrays["best"]
    if not (len(keys) == len(values) == len(best) == meta["states"]):
        raise ValueError(f"{arrays_path}: holds {len(keys)} states, its metadata says {meta['states']}")
    return Solution(config=config, objective=meta["objective"], layout=layout, keys=keys, values=values, best=best,
                    meta=meta, _engine=engine)


def solution_folder() -> Path:
    """Where ``midnight solve --save`` writes solutions and the ``optimal`` agent looks for them:
    ``MIDNIGHT_SOLUTIONS``, else ``midnight_env/solutions`` in the user's cache directory."""
    if os.environ.get("MIDNIGHT_SOLUTIONS"):
        return Path(os.environ["MIDNIGHT_SOLUTIONS"])
    cache = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(cache) / "midnight_env" / "solutions"


def solution_name(config: GameConfig, objective: str) -> str:
    """A folder name for a set-up's solution: variant, players, options (max_turns aside), objective."""
    opts = "-".join(f"{k}={v}" for k, v in sorted(config.options.items()) if k != "max_turns")
    board = f"-board={config.board.name}" if config.custom_board else ""
    return f"{config.variant}-{config.num_players}p-{opts}{board}-{objective}"


def saved_solutions(folder: str | Path | None = None) -> list[dict[str, Any]]:
    """The metadata (``solution.json``) of every solution saved in ``folder`` (default
    :func:`solution_folder`), by folder name, ``source`` set to its folder; only the JSON is read,
    and a folder holding no solution of this format is passed over."""
    folder = Path(folder) if folder is not None else solution_folder()
    found = []
    for meta_path in sorted(folder.glob("*/solution.json")) if folder.is_dir() else []:
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            continue
        if isinstance(meta, dict) and meta.get("format") == FORMAT:
            found.append({**meta, "source": str(meta_path.parent)})
    return found


def find_solution(engine: Engine, objective: str | None = None, folder: str | Path | None = None) -> Solution:
    """The saved solution of ``engine``'s set-up in ``folder`` (default :func:`solution_folder`),
    for ``objective`` (default: points for one player, win for two); ValueError naming the
    folder and the set-up when there is none."""
    folder = Path(folder) if folder is not None else solution_folder()
    if objective is None:
        objective = "points" if engine.num_players == 1 else "win"
    checks.choice("objective", objective, OBJECTIVES)
    name = solution_name(engine.config, objective)
    path = folder / name
    if not (path / "solution.json").is_file():
        raise ValueError(f"no solution of {engine.variant} with {engine.num_players} player(s) and these options "
                         f"for objective {objective} in {folder} (looked for {name}): solve it with `midnight solve "
                         "... --save`, or give one with optimal:path=DIR")
    solution = load_solution(path)
    solution.check_engine(engine)
    return solution


__all__ = ["Solution", "solve", "load_solution", "solution_folder", "saved_solutions", "find_solution", "SolveError",
           "OBJECTIVES", "FORMAT"]
