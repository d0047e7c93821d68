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
   own turn flow with the whole graph's expansion (``graph.explore``); a transition into a later
   layer keeps its target's key and adds it to that layer's seeds. The layer's keys and transitions are written to
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

import midnight_env.solve.solution as solution_module  # its memory_max_states(), looked up when called
from midnight_env.core.config import GameConfig, Rules
from midnight_env.core.engine import ENGINE_VERSION
from midnight_env.core.state import MOVE, ROLL, GameState
from midnight_env.solve.graph import REWARD_NONE, SolveError, explore
from midnight_env.solve.keys import KeyLayout, key_layout, key_phases, key_players
from midnight_env.solve.ranks import TERMINAL_RANK, key_rank, key_ranks, over_values, rank_name
from midnight_env.solve.solution import (
    MAX_SWEEPS,
    TOLERANCE,
    Solution,
    board_dict,
    booked_points,
    check_set_up,
    describe_set_up,
    load_solution,
    reward_mode,
    save_layers_pointer,
    seat_modes,
    set_up_config,
    solution_meta,
    solver_engine,
    start_key,
)
from midnight_env.solve.values import (
    CHANCE,
    FIXED,
    MAXIMISE,
    MINIMISE,
    TIE_TOLERANCE,
    bellman_residual,
    best_actions,
    iterate_in_place,
    strong_components,
)

FORMAT = "midnight-layers/1"
LAYER_BYTES_PER_STATE = 120  # peak memory per state of the layer in hand (BENCHMARKS.md)
DISK_MARGIN = 1 << 30  # stop (resumably) when a layer would leave less free disk than this


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


@dataclass
class _Clock:
    """The time a run started, and its ``max_seconds`` (None: no limit)."""

    started: float
    max_seconds: float | None

    def seconds(self) -> float:
        return time.perf_counter() - self.started

    def out_of_time(self) -> bool:
        return self.max_seconds is not None and self.seconds() > self.max_seconds


# ------------------------------------------------------------------------------------------------
# the forward pass: every layer's positions and transitions


def forward_layer(work: Work, engine, K: KeyLayout, rank: int, seeds: np.ndarray, reward_mode: int,
                  max_states: int) -> tuple[int, int, np.ndarray]:
    """Every position of layer ``rank`` reachable from ``seeds`` (its keys, sorted, unique) inside
    the layer, with their transitions (``graph.explore``, the whole solver's expansion), written to
    the layer's folder: ``keys`` (seeds first), ``count`` (each state's transitions), ``edge_to``
    (a state of the layer, or ``-1 - j`` for ``ext[j]``, a key of a later layer), ``edge_label``,
    ``edge_reward`` (not for the win objective), ``ext``. Returns (states, transitions, the keys of
    later layers it reaches, sorted, unique)."""
    layer = explore(engine, K, reward_mode, seeds, rank, max_states)
    n, n_edges = len(layer["keys"]), len(layer["edge_to"])
    count = np.diff(layer.pop("edge_start"))
    if n and count.max() >= 2**16:
        raise SolveError(f"a position of layer {rank} has {int(count.max())} transitions")
    _check_disk(work.root, 8 * n + 2 * n + 7 * n_edges + 8 * len(layer["ext"]))
    folder = work.layer_dir(rank)
    folder.mkdir(exist_ok=True)
    arrays = {"keys": layer["keys"], "count": count.astype(np.uint16), "edge_to": layer["edge_to"],
              "edge_label": layer["edge_label"], "ext": layer["ext"]}
    if reward_mode != REWARD_NONE:
        arrays["edge_reward"] = layer["edge_reward"]
    for name, a in arrays.items():
        _save(folder / f"{name}.npy", a)
    return n, n_edges, np.unique(layer["ext"])


def forward_pass(work: Work, engine, K: KeyLayout, reward_mode: int, max_layer_states: int, clock: _Clock,
                 say) -> None:
    """1. Forward (module docstring): every layer not yet expanded, in increasing rank, from its
    seeds; the keys of later layers it reaches become their seeds, the finished ones are noted."""
    prog = work.progress
    while True:
        ranks = work.seed_ranks()
        if not ranks:
            return
        rank = ranks[0]
        t0 = time.perf_counter()
        seeds, seed_paths = work.take_seeds(rank)
        n, n_edges, ext = forward_layer(work, engine, K, rank, seeds, reward_mode, max_layer_states)
        ext_ranks = key_ranks(ext, K, engine.rules)
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
        if clock.out_of_time():
            raise SolveError(f"stopped after {clock.seconds():.0f} s (max_seconds) in the forward "
                             f"pass: {len(prog['forward'])} layers, {total:,} states found; run again with the "
                             f"same work directory {work.root} to resume")


# ------------------------------------------------------------------------------------------------
# the backward pass: one layer's values


def layer_modes(keys: np.ndarray, K: KeyLayout, objective: str) -> np.ndarray:
    """How each position of a layer (none finished) makes its value (``values``' modes)."""
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
    sweeps, largest = iterate_in_place(members, comp_start, mode, inline, edge_start, edge_to, edge_label,
                                       edge_reward, no_weight, tolerance, max_sweeps, V, comp_of)
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


def backward_pass(work: Work, rules: Rules, K: KeyLayout, objective: str, tolerance: float, clock: _Clock,
                  say) -> None:
    """2. Backward (module docstring): the values of every layer not yet solved, from the last
    layer to the first."""
    prog = work.progress
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
        if clock.out_of_time() and len(prog["backward"]) < len(prog["forward"]):
            raise SolveError(f"stopped after {clock.seconds():.0f} s (max_seconds) in the backward "
                             f"pass: {len(prog['backward'])} of {len(prog['forward'])} layers solved; run again "
                             f"with the same work directory {work.root} to resume")


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
        return describe_set_up(self.config, self.objective)

    def on_disk(self):
        """The solution read from its layers in ``work_dir`` (``Solution.store``): a few disk reads
        a position, whatever the size."""
        if self.work_dir is None:
            raise SolveError("the layers were solved in a temporary directory, now gone: solve with a work directory")
        return load_solution(self.work_dir)

    def solution(self):
        """Every layer in one ``Solution`` (keys ascending; no graph): 18 bytes a state, SolveError
        where the memory available now does not hold them (:meth:`on_disk` reads them from disk)."""
        if self._solution is not None:
            return self._solution
        if self.work_dir is None:
            raise SolveError("the layers were solved in a temporary directory, now gone: solve with a work directory")
        if 40 * self.num_states > 80 * solution_module.memory_max_states():  # (it counts 80 bytes a state)
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
    if max_layer_states is None:
        max_layer_states = max(1_000_000, solution_module.memory_max_states() * 80 // LAYER_BYTES_PER_STATE)
    temporary = tempfile.TemporaryDirectory(prefix="midnight-layers-") if work_dir is None else None
    root = Path(temporary.name if temporary is not None else work_dir)
    clock = _Clock(time.perf_counter(), max_seconds)
    say = log or (lambda line: None)
    try:
        work = Work(root, _setup_identity(config, objective, first, tolerance))
        if not work.progress["forward"] and not list((root / "seeds").glob("*.npy")):
            work.add_seeds(int(key_ranks(np.array([first], np.uint64), K, rules)[0]), 0, np.array([first], np.uint64))
        forward_pass(work, engine, K, reward_mode(config, objective), max_layer_states, clock, say)
        backward_pass(work, rules, K, objective, tolerance, clock, say)
        start_value = float(_lookup(work, rules, K, objective, np.array([first], np.uint64))[0])
        value = start_value + booked_points(start if start is not None else engine.new_games([0]), objective)[0]
        kept = root if temporary is None else None  # the work directory, where it outlives the run
        meta = layered_meta(work, config, objective, K, start, first, value, tolerance, work_dir=kept)
        result = LayeredSolution(config=config, objective=objective, layout=K, meta=meta, work_dir=kept)
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


def layered_meta(work: Work, config: GameConfig, objective: str, K: KeyLayout, start: GameState | None,
                 first: np.uint64, value: float, tolerance: float, work_dir: Path | None) -> dict[str, Any]:
    """The solution's metadata (``solution.solution_meta``, as the whole solver's) from the solved
    layers' numbers, then the layers': how many, the largest, peak memory, disk, each layer's."""
    prog = work.progress
    layer_ranks = sorted(int(r) for r in prog["forward"])
    back = [prog["backward"][str(r)] for r in layer_ranks]
    over = len(prog["over_keys"])
    states = sum(b["states"] for b in back) + over
    meta = solution_meta(
        config, objective, K, start, first, value=value, states=states, edges=sum(b["edges"] for b in back),
        decisions=sum(b["decisions"] for b in back), components=sum(b["components"] for b in back) + over,
        largest_component=max([b["largest_component"] for b in back] + [1]),
        residual=max([b["residual"] for b in back] + [0.0]), tolerance=tolerance,
        sweeps=(sum(b["swept"] for b in back) + over) / max(states, 1),
        most_sweeps=max([b["most_sweeps"] for b in back] + [0]), seconds_states=prog["seconds_states"],
        seconds_values=prog["seconds_values"], memory_bytes=max([b["memory_bytes"] for b in back] + [0]))
    detail = [{"rank": r, **{k: prog["forward"][str(r)][k] for k in ("seeds", "seconds")},
               **{k: b[k] for k in ("states", "edges", "components", "largest_component", "residual",
                                    "most_sweeps", "memory_bytes")},
               "seconds_values": b["seconds"]} for r, b in zip(layer_ranks, back)]
    meta.update(solver="layered", layers=len(layer_ranks), largest_layer=max([b["states"] for b in back] + [0]),
                peak_bytes=peak_rss_bytes(), disk_bytes=work.disk_bytes(),
                work_dir=None if work_dir is None else str(work_dir), layer_ranks=layer_ranks,
                over_keys=prog["over_keys"], layers_detail=detail)
    return meta


__all__ = ["solve_layered", "LayeredSolution", "key_rank", "key_ranks", "TERMINAL_RANK"]
