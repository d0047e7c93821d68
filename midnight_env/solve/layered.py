"""Solving by layers: set-ups whose state graph does not fit in memory, one layer at a time.

Some quantities of a position never go back along any transition. They cut the state graph
into **layers** (a position's layer is its :func:`key_rank`), and every transition leads into
the same layer or a later one, so the values of a layer depend on its own and later layers
only: the way strong solutions of dice race games are computed (the Royal Game of Ur, solved by
value iteration layer by layer). The rank, from the key alone:

- **hidden_castle**: Hugo's **progress**, the steps he has walked since the start, read off his
  place and the clock. Hugo only walks forward (3 to 7 steps a move), the clock moves on when
  he steps onto the arrow square and never goes back, and nothing in the rules moves him back
  to the stairs; a move of Hugo is a roll's HUGO face, the only transition that changes the
  progress, and it always raises it. Within one progress, the **guests placed** (a guest leaves
  the supply for the gallery and never returns to it: a captured guest goes to the cellar).
- **midnight_party**: the **round**; within it the guests **settled** in a room or on the
  stairs (rooms and stairs are no origins in midnight_party: a guest there stays until the
  round ends; a capture puts guests on the stairs), and the guests placed. Hugo walks round the
  gallery for ever there, so his place is no layer.
- A finished game is in a last layer of its own (:data:`TERMINAL_RANK`).

Within a layer, guests circle between Hugo's moves, so layers have cycles; these are solved as
:func:`~midnight_env.solve.solution.solve` solves the whole graph (strongly connected
components, Gauss-Seidel sweeps, each roll settled against its own loops), with the positions
of later layers as fixed values. The values equal ``solve``'s (to the tolerance; the tests
compare every state) and so does the start's.

Two passes over the layers, every layer's arrays on disk in a work directory between them:

1. **Forward**, from the start's layer in increasing rank: a layer's positions are the
   positions of that layer reached from earlier layers (its seeds, written by those layers)
   and everything reachable from them inside the layer, found breadth-first by the engine's
   own turn flow as in ``graph.build_graph``; a transition into a later layer keeps its target's
   key and adds it to that layer's seeds. The layer's keys and transitions are written to
   ``layers/R<rank>/`` and leave memory.
2. **Backward**, from the last layer to the first: a layer's transitions are read back, the
   targets in later layers looked up (``np.searchsorted`` on the sorted keys of their layer, a
   numpy memmap) and their values held fixed, the layer's values iterated, and its sorted keys,
   values and optimal actions written (``sorted_keys.npy``, ``values.npy``, ``best.npy``); its
   transitions are deleted.

So memory holds one layer (and the few keys of the next ones it reaches), disk the rest. The
work directory keeps ``progress.json``: a run that stops (``max_seconds``, full disk, killed)
resumes where it stopped when started again with the same work directory and set-up.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numba import njit

from midnight_env.core.config import GameConfig, Rules
from midnight_env.core.engine import ENGINE_VERSION
from midnight_env.core.state import MOVE, ROLL, GameState, empty_state
from midnight_env.solve.graph import (
    FACES,
    REWARD_NONE,
    SolveError,
    _find,
    _rehash,
    successors,
)
from midnight_env.solve.keys import KeyLayout, key_layout, key_phases, key_players
from midnight_env.solve.layer_store import TERMINAL_RANK, key_rank, key_ranks, over_values, rank_name
from midnight_env.solve.values import (
    CHANCE,
    FIXED,
    MAXIMISE,
    MINIMISE,
    TIE_TOLERANCE,
    _iterate,
    bellman_residual,
    best_actions,
    strong_components,
)

FORMAT = "midnight-layers/1"
LAYER_BYTES_PER_STATE = 120  # peak memory per state of the layer in hand (BENCHMARKS.md)
DISK_MARGIN = 1 << 30  # stop (resumably) when a layer would leave less free disk than this


# ------------------------------------------------------------------------------------------------
# the forward pass: one layer's positions and transitions

BAD_SUCCESSOR, BACKWARD_EDGE = 1, 2


@njit(cache=True)
def _expand_layer(s_fields, rules_fields, K, rank, keys, n, x, table, edge_start, edge_to, edge_label, edge_reward,
                  n_edges, ext, n_ext, reward_mode, actions, faces, faces_out):
    """``graph._expand`` inside layer ``rank``: a successor of the same layer is found in (or
    added to) the layer's hash table; one of a later layer is kept in ``ext`` and its transition
    points there as ``-1 - j``. Returns (x, n, n_edges, n_ext, bad, why): ``bad`` the first state
    with a successor that has no key or lies in an earlier layer (-1: none)."""
    s = GameState(*s_fields)
    R = Rules(*rules_fields)
    mask = table.shape[0] - 1
    room = R.num_actions + FACES.shape[0]
    out_key = np.empty(room, np.uint64)
    out_label = np.empty(room, np.int64)
    out_reward = np.empty(room, np.int64)
    while x < n:
        if n + room > keys.shape[0] or n + room > table.shape[0] // 2 or n_edges + room > edge_to.shape[0] \
                or n_ext + room > ext.shape[0]:
            break
        edge_start[x] = n_edges
        m = successors(keys[x], s, R, K, reward_mode, actions, faces, faces_out, out_key, out_label, out_reward)
        if m < 0:
            return x, n, n_edges, n_ext, x, BAD_SUCCESSOR
        for i in range(m):
            key = out_key[i]
            r = key_rank(key, K, R.hugo_stairs, R.arrow)
            if r == rank:
                h = _find(key, keys, table, mask)
                j = table[h]
                if j < 0:
                    j = n
                    keys[n] = key
                    table[h] = n
                    n += 1
                edge_to[n_edges] = j
            elif r > rank:
                ext[n_ext] = key
                edge_to[n_edges] = -1 - n_ext
                n_ext += 1
            else:
                return x, n, n_edges, n_ext, x, BACKWARD_EDGE
            edge_label[n_edges] = out_label[i]
            edge_reward[n_edges] = out_reward[i]
            n_edges += 1
        x += 1
    edge_start[x] = n_edges
    return x, n, n_edges, n_ext, -1, 0


def _grow(a: np.ndarray, size: int) -> np.ndarray:
    a.resize(size, refcheck=False)
    return a


def forward_layer(engine, K: KeyLayout, rank: int, seeds: np.ndarray, reward_mode: int,
                  max_states: int) -> dict[str, np.ndarray]:
    """Every position of layer ``rank`` reachable from ``seeds`` (its keys, sorted, unique)
    inside the layer, with their transitions: ``keys`` (seeds first), ``edge_start``,
    ``edge_to`` (a state of the layer, or ``-1 - j`` for ``ext[j]``, a key of a later layer),
    ``edge_label``, ``edge_reward``, ``ext``."""
    r = engine.rules
    room = r.num_actions + len(FACES)
    cap = max(1 << 16, 2 * len(seeds) + room)
    keys = np.zeros(cap, np.uint64)
    keys[:len(seeds)] = seeds
    edge_start = np.zeros(cap + 1, np.int64)
    table = np.full(1 << int(2 * cap - 1).bit_length(), -1, np.int32)
    _rehash(keys, len(seeds), table)
    edge_cap = 4 * cap
    edge_to = np.zeros(edge_cap, np.int32)
    edge_label = np.zeros(edge_cap, np.int16)
    edge_reward = np.zeros(edge_cap, np.int8)
    ext = np.zeros(cap, np.uint64)
    n, x, n_edges, n_ext = len(seeds), 0, 0, 0
    s = empty_state(2, r.num_players, r.num_squares, r.num_rooms, r.num_places, r.guests, r.num_actions)
    rules_fields = tuple(r)
    scratch = (np.full(2, -1, np.int64), np.full(2, -1, np.int64), np.full(2, -1, np.int8))
    while True:
        x, n, n_edges, n_ext, bad, why = _expand_layer(tuple(s), rules_fields, K, np.int64(rank), keys, n, x, table,
                                                       edge_start, edge_to, edge_label, edge_reward, n_edges, ext,
                                                       n_ext, reward_mode, *scratch)
        if bad >= 0:
            what = "a successor the key layout or the rewards cannot hold" if why == BAD_SUCCESSOR else \
                "a successor in an earlier layer (the layer's quantity went back)"
            raise SolveError(f"state {int(keys[bad]):#x} of layer {rank} has {what}")
        if x >= n:
            break
        if n + room > max_states:
            raise SolveError(f"layer {rank} has more than {max_states:,} states: too large for the memory here")
        if n + room > len(keys):
            cap = len(keys) + len(keys) // 4
            keys = _grow(keys, cap)
            edge_start = _grow(edge_start, cap + 1)
        if n + room > len(table) // 2:
            table = np.full(2 * len(table), -1, np.int32)
            _rehash(keys, n, table)
        if n_edges + room > len(edge_to):
            edge_cap = len(edge_to) + len(edge_to) // 4
            edge_to, edge_label, edge_reward = (_grow(a, edge_cap) for a in (edge_to, edge_label, edge_reward))
        if n_ext + room > len(ext):
            ext = _grow(ext, len(ext) + len(ext) // 4)
    del table
    if n >= 2**31 - 1 or n_ext >= 2**31 - 1:
        raise SolveError(f"layer {rank}: {n:,} states do not fit the graph's 32-bit state numbers")
    keys.resize(n, refcheck=False)
    edge_start.resize(n + 1, refcheck=False)
    for a in (edge_to, edge_label, edge_reward):
        a.resize(n_edges, refcheck=False)
    ext.resize(n_ext, refcheck=False)
    return {"keys": keys, "edge_start": edge_start, "edge_to": edge_to, "edge_label": edge_label,
            "edge_reward": edge_reward, "ext": ext}


# ------------------------------------------------------------------------------------------------
# the work directory


class Work:
    """A work directory: ``setup.json`` (what is solved), ``progress.json`` (the layers done),
    ``seeds/`` (keys reached in layers not yet expanded), ``layers/R<rank>/`` (a layer's arrays)."""

    def __init__(self, root: Path, setup: dict):
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        (root / "seeds").mkdir(exist_ok=True)
        (root / "layers").mkdir(exist_ok=True)
        setup_path = root / "setup.json"
        if setup_path.is_file():
            held = json.loads(setup_path.read_text(encoding="utf-8"))
            if held != setup:
                raise SolveError(f"{root} holds the layers of another set-up ({held.get('describe')}): give "
                                 "another --work-dir, or empty this one")
        else:
            _write_json(setup_path, setup)
        progress_path = root / "progress.json"
        self.progress = json.loads(progress_path.read_text(encoding="utf-8")) if progress_path.is_file() else \
            {"format": FORMAT, "forward": {}, "backward": {}, "over_keys": [], "seconds_states": 0.0,
             "seconds_values": 0.0}

    def save_progress(self) -> None:
        _write_json(self.root / "progress.json", self.progress)

    def layer_dir(self, rank: int) -> Path:
        return self.root / "layers" / rank_name(rank)

    def add_seeds(self, rank: int, source: int, keys: np.ndarray) -> None:
        _save(self.root / "seeds" / f"{rank_name(rank)}-from{source:012d}.npy", keys)

    def seed_ranks(self) -> list[int]:
        ranks = {int(p.name[1:13]) for p in (self.root / "seeds").glob("R*-from*.npy")}
        return sorted(r for r in ranks if str(r) not in self.progress["forward"])

    def take_seeds(self, rank: int) -> tuple[np.ndarray, list[Path]]:
        paths = sorted((self.root / "seeds").glob(f"{rank_name(rank)}-from*.npy"))
        return np.unique(np.concatenate([np.load(p) for p in paths])), paths

    def disk_bytes(self) -> int:
        return sum(p.stat().st_size for p in self.root.rglob("*") if p.is_file())


def _write_json(path: Path, data: dict) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def _save(path: Path, array: np.ndarray) -> None:
    """np.save, atomically (a run killed while writing leaves no half file under the name)."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f:
        np.save(f, array)
    os.replace(tmp, path)


def _check_disk(root: Path, needed: int) -> None:
    free = shutil.disk_usage(root).free
    if free < needed + DISK_MARGIN:
        raise SolveError(f"the disk of {root} has {free / 2**30:.1f} GiB free, the next layer needs about "
                         f"{needed / 2**30:.1f} GiB: free some and run again with the same work directory (it resumes)")


def peak_rss_bytes() -> int:
    """The process's peak resident memory so far (``getrusage``)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


# ------------------------------------------------------------------------------------------------
# the backward pass: one layer's values


def layer_modes(keys: np.ndarray, K: KeyLayout, objective: str) -> np.ndarray:
    """How each position of a layer (none finished) makes its value (``values``' modes)."""
    from midnight_env.solve.solution import seat_modes

    seat_mode = np.array(seat_modes(K.num_players, objective), np.int8)
    mode = seat_mode[key_players(keys, K).astype(np.int64)]
    mode[key_phases(keys) == ROLL] = CHANCE
    return mode


def _lookup(work: Work, rules: Rules, K: KeyLayout, objective: str, keys: np.ndarray) -> np.ndarray:
    """Values of ``keys`` (sorted, unique, all in solved later layers or finished)."""
    ranks = key_ranks(keys, K, rules)
    values = np.empty(len(keys))
    for rank in np.unique(ranks):
        at = np.flatnonzero(ranks == rank)
        if rank == TERMINAL_RANK:
            values[at] = over_values(keys[at], objective)
            continue
        folder = work.layer_dir(int(rank))
        held = np.load(folder / "sorted_keys.npy", mmap_mode="r")
        pos = np.minimum(np.searchsorted(held, keys[at]), len(held) - 1)
        if not (held[pos] == keys[at]).all():
            raise SolveError(f"a transition leads to a position layer {rank} does not hold: the work directory "
                             f"{work.root} is damaged (empty it and solve again)")
        values[at] = np.load(folder / "values.npy", mmap_mode="r")[pos]
    return values


@njit(cache=True)
def _renumber(order, count, edge_to, edge_label, edge_reward, ghost_of, n, m):
    """The layer's transitions with its states renumbered: new state k is old state ``order[k]``;
    a transition out of the layer (``-1 - j``) goes to ghost state ``n + ghost_of[j]``. Returns
    (edge_start (n+m+1: ghosts have no transitions), edge_to, edge_label, edge_reward)."""
    old_start = np.empty(n + 1, np.int64)
    old_start[0] = 0
    for x in range(n):
        old_start[x + 1] = old_start[x] + count[x]
    new_of = np.empty(n, np.int32)
    for k in range(n):
        new_of[order[k]] = k
    start = np.empty(n + m + 1, np.int64)
    start[0] = 0
    for k in range(n):
        start[k + 1] = start[k] + count[order[k]]
    for k in range(n, n + m):
        start[k + 1] = start[n]
    to = np.empty_like(edge_to)
    label = np.empty_like(edge_label)
    reward = np.empty_like(edge_reward)
    for k in range(n):
        o = order[k]
        j = start[k]
        for e in range(old_start[o], old_start[o + 1]):
            t = edge_to[e]
            to[j] = new_of[t] if t >= 0 else n + ghost_of[-1 - t]
            label[j] = edge_label[e]
            reward[j] = edge_reward[e]
            j += 1
    return start, to, label, reward


def backward_layer(work: Work, rules: Rules, K: KeyLayout, objective: str, rank: int, tolerance: float,
                   max_sweeps: int) -> dict[str, Any]:
    """Values of layer ``rank`` from its transitions (on disk) and its later layers' values:
    writes its sorted keys, values and optimal actions and deletes its transitions.

    The layer's states are numbered in key order for this (and the later layers' states it
    reaches after them, also in key order): a position's successors then mostly lie near it
    (the points, in the key's high bits, rarely change), so the sweeps read memory close by;
    on the real board's two-player hidden_castle this halves Tarjan's and the sweeps' time and
    takes 25 sweeps where the order found took 32 (BENCHMARKS.md)."""
    folder = work.layer_dir(rank)
    keys = np.load(folder / "keys.npy")
    n = len(keys)
    order = np.argsort(keys)
    keys = keys[order]
    ext = np.load(folder / "ext.npy")
    ghosts, ghost_of = np.unique(ext, return_inverse=True)
    del ext
    m = len(ghosts)
    reward_path = folder / "edge_reward.npy"
    edge_to = np.load(folder / "edge_to.npy")
    edge_reward = np.load(reward_path) if reward_path.is_file() else np.zeros(len(edge_to), np.int8)
    edge_start, edge_to, edge_label, edge_reward = _renumber(
        order, np.load(folder / "count.npy"), edge_to, np.load(folder / "edge_label.npy"), edge_reward,
        ghost_of.astype(np.int32), n, m)
    del order, ghost_of
    mode = np.empty(n + m, np.int8)
    mode[:n] = layer_modes(keys, K, objective)
    mode[n:] = FIXED
    V = np.zeros(n + m)
    V[n:] = _lookup(work, rules, K, objective, ghosts)
    inline = np.zeros(n + m, np.bool_)
    inline[:n] = key_phases(keys) == MOVE
    members, comp_start = strong_components(edge_start, edge_to)
    comp_of = np.empty(n + m, np.int32)
    no_weight = np.zeros(0)
    sweeps, largest = _iterate(members, comp_start, mode, inline, edge_start, edge_to, edge_label, edge_reward,
                               no_weight, tolerance, max_sweeps, V, comp_of)
    if sweeps < 0:
        raise SolveError(f"a component of layer {rank} did not settle within {max_sweeps:,} sweeps")
    sizes = np.diff(comp_start)
    memory = sum(a.nbytes for a in (keys, edge_to, edge_label, edge_reward, ghosts, edge_start, mode, V, inline,
                                    members, comp_start, comp_of))  # held during the sweeps
    del members, comp_of, inline
    residual = bellman_residual(V, mode, edge_start, edge_to, edge_label, edge_reward, no_weight)
    best = best_actions(V, mode, edge_start, edge_to, edge_label, edge_reward, TIE_TOLERANCE)[:n]
    decisions = int(((mode[:n] == MAXIMISE) | (mode[:n] == MINIMISE)).sum())
    _save(folder / "values.npy", V[:n])
    _save(folder / "best.npy", best)
    _save(folder / "sorted_keys.npy", keys)
    stats = {"states": n, "edges": len(edge_to), "decisions": decisions, "components": len(sizes) - m,
             "largest_component": int(sizes.max()) if len(sizes) else 0, "residual": float(residual),
             "swept": float(sweeps) * (n + m) - m, "most_sweeps": int(largest), "memory_bytes": int(memory)}
    _write_json(folder / "solved.json", stats)  # marks the layer solved (a run killed after it resumes past it)
    for name in ("keys", "count", "edge_to", "edge_label", "edge_reward", "ext"):
        (folder / f"{name}.npy").unlink(missing_ok=True)
    return stats


# ------------------------------------------------------------------------------------------------
# the solver


@dataclass
class LayeredSolution:
    """The outcome of :func:`solve_layered`: the set-up's value and numbers (``meta``, as
    ``Solution.meta`` plus the layers'), every layer's sorted keys, values and optimal actions in
    ``work_dir``; :meth:`solution` makes them one in-memory ``Solution`` where memory allows."""

    config: GameConfig
    objective: str
    layout: KeyLayout
    meta: dict[str, Any]
    work_dir: Path | None
    _solution: Any = field(default=None, repr=False)

    @property
    def value(self) -> float:
        return float(self.meta["value"])

    @property
    def num_states(self) -> int:
        return int(self.meta["states"])

    def describe(self) -> str:
        opts = ", ".join(f"{k}={v}" for k, v in self.config.options.items() if k != "max_turns")
        board = f", board {self.config.board.name}" if self.config.custom_board else ""
        return f"{self.config.variant}, {self.config.num_players} player(s), {opts}{board}, objective {self.objective}"

    def on_disk(self):
        """The solution read from its layers in ``work_dir`` (``Solution.store``): a few disk reads
        a position, whatever the size."""
        from midnight_env.solve.solution import load_solution

        if self.work_dir is None:
            raise SolveError("the layers were solved in a temporary directory, now gone: solve with a work directory")
        return load_solution(self.work_dir)

    def solution(self):
        """Every layer in one ``Solution`` (keys ascending; no graph): 18 bytes a state, SolveError
        where the memory available now does not hold them (:meth:`on_disk` reads them from disk)."""
        if self._solution is not None:
            return self._solution
        from midnight_env.solve.solution import Solution, memory_max_states, solver_engine

        if self.work_dir is None:
            raise SolveError("the layers were solved in a temporary directory, now gone: solve with a work directory")
        if 40 * self.num_states > 80 * memory_max_states():  # (memory_max_states counts 80 bytes a state)
            raise SolveError(f"{self.num_states:,} states do not fit in the memory available for one solution "
                             "(18 bytes a state, and sorting): use the layers in the work directory")
        done = self.meta["layer_ranks"]
        parts = [[np.load(self.work_dir / "layers" / rank_name(r) / f"{name}.npy") for r in done]
                 for name in ("sorted_keys", "values", "best")]
        over = np.array(self.meta["over_keys"], np.uint64)
        keys = np.concatenate(parts[0] + [over])
        values = np.concatenate(parts[1] + [over_values(over, self.objective)])
        best = np.concatenate(parts[2] + [np.full(len(over), -1, np.int16)])
        order = np.argsort(keys, kind="stable")
        meta = {k: v for k, v in self.meta.items() if k not in ("layer_ranks", "over_keys", "layers_detail")}
        self._solution = Solution(config=self.config, objective=self.objective, layout=self.layout, keys=keys[order],
                                  values=values[order], best=best[order], meta=meta,
                                  _engine=solver_engine(self.config))
        return self._solution


def _setup_identity(config: GameConfig, objective: str, first: np.uint64, tolerance: float) -> dict:
    from midnight_env.solve.solution import board_dict

    return {"format": FORMAT, "variant": config.variant, "players": config.num_players,
            "options": {k: v for k, v in config.options.items() if k != "max_turns"},
            "board": board_dict(config.board), "objective": objective, "start": int(first),
            "tolerance": tolerance, "engine_version": ENGINE_VERSION,
            "describe": f"{config.variant}, {config.num_players} player(s), "
                        + ", ".join(f"{k}={v}" for k, v in config.options.items() if k != "max_turns")
                        + f", objective {objective}"}


def solve_layered(variant: str | GameConfig = "midnight_party", num_players: int = 1, objective: str = "points",
                  *, start: GameState | None = None, tolerance: float | None = None,
                  work_dir: str | Path | None = None, max_layer_states: int | None = None,
                  max_seconds: float | None = None, log=None, **options: Any) -> LayeredSolution:
    """Solve a set-up layer by layer (module docstring), to the values :func:`solve` finds.

    ``work_dir``: where the layers are kept (made if missing; a directory of the same set-up
    resumes); default a temporary directory, deleted at the end after the layers were joined
    into one in-memory solution (``LayeredSolution.solution()``). ``max_layer_states``: SolveError
    beyond this many states in one layer (default: what the memory available holds).
    ``max_seconds``: stop with a SolveError after the layer that passes this many seconds (the
    work directory resumes). ``log(line)`` is called after every layer."""
    from midnight_env.solve.solution import (
        MAX_SWEEPS,
        TIE_RULE,
        TOLERANCE,
        booked_points,
        check_set_up,
        memory_max_states,
        reward_mode,
        save_layers_pointer,
        set_up_config,
        solver_engine,
        start_key,
        value_means,
    )

    tolerance = TOLERANCE if tolerance is None else tolerance
    config = set_up_config(variant, num_players, **options)
    check_set_up(config, objective)
    engine = solver_engine(config)
    rules = engine.rules
    try:
        K = key_layout(rules, config.rounds, objective == "win")
    except ValueError as err:
        raise SolveError(str(err)) from None
    first = start_key(engine, K, start)
    mode = reward_mode(config, objective)
    if max_layer_states is None:
        max_layer_states = max(1_000_000, memory_max_states() * 80 // LAYER_BYTES_PER_STATE)
    temporary = tempfile.TemporaryDirectory(prefix="midnight-layers-") if work_dir is None else None
    root = Path(temporary.name if temporary is not None else work_dir)
    started = time.perf_counter()
    say = log or (lambda line: None)
    try:
        work = Work(root, _setup_identity(config, objective, first, tolerance))
        prog = work.progress
        if not prog["forward"] and not list((root / "seeds").glob("*.npy")):
            work.add_seeds(int(key_ranks(np.array([first], np.uint64), K, rules)[0]), 0, np.array([first], np.uint64))

        def out_of_time() -> bool:
            return max_seconds is not None and time.perf_counter() - started > max_seconds

        # 1. forward: the layers' positions and transitions, in increasing rank
        while True:
            ranks = work.seed_ranks()
            if not ranks:
                break
            rank = ranks[0]
            t0 = time.perf_counter()
            seeds, seed_paths = work.take_seeds(rank)
            layer = forward_layer(engine, K, rank, seeds, mode, max_layer_states)
            n, n_edges = len(layer["keys"]), len(layer["edge_to"])
            count = np.diff(layer.pop("edge_start"))
            if n and count.max() >= 2**16:
                raise SolveError(f"a position of layer {rank} has {int(count.max())} transitions")
            _check_disk(root, 8 * n + 2 * n + 7 * n_edges + 8 * len(layer["ext"]))
            folder = work.layer_dir(rank)
            folder.mkdir(exist_ok=True)
            arrays = {"keys": layer["keys"], "count": count.astype(np.uint16), "edge_to": layer["edge_to"],
                      "edge_label": layer["edge_label"], "ext": layer["ext"]}
            if mode != REWARD_NONE:
                arrays["edge_reward"] = layer["edge_reward"]
            for name, a in arrays.items():
                _save(folder / f"{name}.npy", a)
            ext = np.unique(layer["ext"])
            del layer, arrays, count
            ext_ranks = key_ranks(ext, K, rules)
            over = set(prog["over_keys"]) | {int(k) for k in ext[ext_ranks == TERMINAL_RANK]}
            for r in np.unique(ext_ranks[ext_ranks != TERMINAL_RANK]):
                work.add_seeds(int(r), rank, ext[ext_ranks == r])
            seconds = time.perf_counter() - t0
            prog["forward"][str(rank)] = {"states": n, "edges": n_edges, "seeds": len(seeds), "seconds": seconds}
            prog["over_keys"] = sorted(over)
            prog["seconds_states"] += seconds
            work.save_progress()
            for p in seed_paths:
                p.unlink()
            total = sum(v["states"] for v in prog["forward"].values())
            say(f"forward layer {rank}: {n:,} states ({len(seeds):,} seeds), {n_edges:,} transitions, "
                f"{seconds:.1f} s; {len(prog['forward'])} layers, {total:,} states so far; "
                f"peak memory {peak_rss_bytes() / 2**20:,.0f} MiB")
            if out_of_time():
                raise SolveError(f"stopped after {time.perf_counter() - started:.0f} s (max_seconds) in the forward "
                                 f"pass: {len(prog['forward'])} layers, {total:,} states found; run again with the "
                                 f"same work directory {root} to resume")

        # 2. backward: the values, from the last layer to the first
        for rank in sorted((int(r) for r in prog["forward"]), reverse=True):
            if str(rank) in prog["backward"]:
                continue
            t0 = time.perf_counter()
            solved = work.layer_dir(rank) / "solved.json"
            if solved.is_file():  # solved by a run killed before it noted so
                stats = json.loads(solved.read_text(encoding="utf-8"))
            else:
                stats = backward_layer(work, rules, K, objective, rank, tolerance, MAX_SWEEPS)
            stats["seconds"] = time.perf_counter() - t0
            prog["backward"][str(rank)] = stats
            prog["seconds_values"] += stats["seconds"]
            work.save_progress()
            done = sum(prog["backward"][r]["states"] for r in prog["backward"])
            say(f"backward layer {rank}: {stats['states']:,} states, {stats['components']:,} components (largest "
                f"{stats['largest_component']:,}), residual {stats['residual']:.1g}, {stats['seconds']:.1f} s; "
                f"{len(prog['backward'])} of {len(prog['forward'])} layers, {done:,} states solved; "
                f"peak memory {peak_rss_bytes() / 2**20:,.0f} MiB")
            if out_of_time() and len(prog["backward"]) < len(prog["forward"]):
                raise SolveError(f"stopped after {time.perf_counter() - started:.0f} s (max_seconds) in the backward "
                                 f"pass: {len(prog['backward'])} of {len(prog['forward'])} layers solved; run again "
                                 f"with the same work directory {root} to resume")

        # the numbers
        layer_ranks = sorted(int(r) for r in prog["forward"])
        back = prog["backward"]
        states = sum(back[str(r)]["states"] for r in layer_ranks) + len(prog["over_keys"])
        start_value = float(_lookup(work, rules, K, objective, np.array([first], np.uint64))[0])
        value = start_value + booked_points(start if start is not None else engine.new_games([0]), objective)[0]
        detail = [{"rank": r, **{k: prog["forward"][str(r)][k] for k in ("seeds", "seconds")},
                   **{k: back[str(r)][k] for k in ("states", "edges", "components", "largest_component", "residual",
                                                  "most_sweeps", "memory_bytes")},
                   "seconds_values": back[str(r)]["seconds"]} for r in layer_ranks]
        seconds_states, seconds_values = prog["seconds_states"], prog["seconds_values"]
        meta = {
            "format": "midnight-solution/1", "variant": config.variant, "players": config.num_players,
            "options": dict(config.options), "board": None, "objective": objective, "value": float(value),
            "value_means": value_means(config, objective), "start": "set-up" if start is None else int(first),
            "states": states, "edges": sum(back[str(r)]["edges"] for r in layer_ranks),
            "decisions": sum(back[str(r)]["decisions"] for r in layer_ranks),
            "components": sum(back[str(r)]["components"] for r in layer_ranks) + len(prog["over_keys"]),
            "largest_component": max([back[str(r)]["largest_component"] for r in layer_ranks] + [1]),
            "residual": max([back[str(r)]["residual"] for r in layer_ranks] + [0.0]), "tolerance": tolerance,
            "sweeps": round((sum(back[str(r)]["swept"] for r in layer_ranks) + len(prog["over_keys"]))
                            / max(states, 1), 3),
            "most_sweeps": max([back[str(r)]["most_sweeps"] for r in layer_ranks] + [0]),
            "seconds": round(seconds_states + seconds_values, 3), "seconds_states": round(seconds_states, 3),
            "seconds_values": round(seconds_values, 3),
            "memory_bytes": max([back[str(r)]["memory_bytes"] for r in layer_ranks] + [0]),
            "max_turns": "ignored: games are solved to their end", "tie_rule": TIE_RULE,
            "key_layout": K._asdict(), "engine_version": ENGINE_VERSION,
            "solver": "layered", "layers": len(layer_ranks),
            "largest_layer": max([back[str(r)]["states"] for r in layer_ranks] + [0]),
            "peak_bytes": peak_rss_bytes(), "disk_bytes": work.disk_bytes(),
            "work_dir": None if temporary is not None else str(root),
            "layer_ranks": layer_ranks, "over_keys": prog["over_keys"], "layers_detail": detail,
        }
        if config.custom_board:
            from midnight_env.solve.solution import board_dict

            meta["board"] = board_dict(config.board)
        result = LayeredSolution(config=config, objective=objective, layout=K, meta=meta,
                                 work_dir=None if temporary is not None else root)
        if temporary is not None:
            result.work_dir = root
            result.solution()
            result.work_dir = None
        else:  # the work directory is a solution the optimal agent can play (read from disk)
            save_layers_pointer(meta, root, root)
        return result
    finally:
        if temporary is not None:
            temporary.cleanup()


__all__ = ["solve_layered", "LayeredSolution", "key_rank", "key_ranks", "TERMINAL_RANK"]
