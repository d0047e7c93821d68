"""A solved set-up's layers read from disk: what the ``optimal`` agent and ``midnight analyze``
use where the layers do not fit in memory together (``midnight_env.solve.layered`` solves them).

A position's **layer** is its :func:`~midnight_env.solve.ranks.key_rank`, read off its key alone (a
quantity the game never takes back: Hugo's progress in hidden_castle, the round and the guests
settled in midnight_party; the guests placed within them). Every layer of a solved work directory
holds its keys in ascending order with their values and optimal actions (``layers/R<rank>/sorted_keys.npy``,
``values.npy``, ``best.npy``). A :class:`LayerStore` opens them as numpy memory maps and finds
a position by binary search in its own layer, so a lookup reads a few pages of one file and memory
holds only what the page cache keeps.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from midnight_env.core.config import Rules
from midnight_env.infra import checks
from midnight_env.solve.graph import SolveError
from midnight_env.solve.keys import KeyLayout
from midnight_env.solve.ranks import TERMINAL_RANK, key_ranks, over_values, rank_name


class LayerColumn:
    """One array of every layer (``sorted_keys``, ``values`` or ``best``) indexed by state number:
    the layers in rank order, each in key order, then the finished positions. Only what is indexed
    is read from disk."""

    def __init__(self, parts: list[np.ndarray], offsets: np.ndarray):
        self.parts, self.offsets = parts, offsets  # offsets (parts + 1,): the first state of each part

    def __len__(self) -> int:
        return int(self.offsets[-1])

    @property
    def dtype(self) -> np.dtype:
        return self.parts[0].dtype

    def __getitem__(self, ids) -> np.ndarray:
        ids = np.asarray(ids, dtype=np.int64)
        if ids.ndim == 0:
            return self[ids[None]][0]
        checks.integers("state number", ids, 0, len(self) - 1, allowed=f"0 to {len(self) - 1}", error=IndexError)
        part = np.searchsorted(self.offsets, ids, side="right") - 1
        out = np.empty(len(ids), self.dtype)
        for j in np.unique(part):
            at = np.flatnonzero(part == j)
            out[at] = self.parts[j][ids[at] - self.offsets[j]]
        return out

    def __array__(self, dtype=None, copy=None):
        raise SolveError(f"the {len(self):,} states of a solution on disk are read a few at a time; this needs "
                         "them all in memory: join the layers with `midnight solve --layered --out DIR` where "
                         "memory holds them")


class LayerStore:
    """The solved layers of a work directory, opened as memory maps (module docstring)."""

    def __init__(self, directory: str | Path, layer_ranks: list[int], over_keys: list[int], objective: str,
                 states: int | None = None):
        self.directory = Path(directory)
        self.ranks = np.array(sorted(int(r) for r in layer_ranks), np.int64)
        over = np.array(sorted(int(k) for k in over_keys), np.uint64)
        columns: dict[str, list[np.ndarray]] = {}
        for name in ("sorted_keys", "values", "best"):
            parts = []
            for rank in self.ranks:
                path = self.directory / "layers" / rank_name(int(rank)) / f"{name}.npy"
                if not path.is_file():
                    raise ValueError(f"{path} is missing: the layers of {self.directory} are not all solved "
                                     "(run `midnight solve --layered --work-dir` on it again to finish them)")
                parts.append(np.load(path, mmap_mode="r"))
            columns[name] = parts
        sizes = [len(a) for a in columns["sorted_keys"]]
        for name in ("values", "best"):
            if [len(a) for a in columns[name]] != sizes:
                raise ValueError(f"{self.directory}: a layer's {name}.npy and sorted_keys.npy differ in length")
        best_type = columns["best"][0].dtype if sizes else np.int16
        columns["sorted_keys"].append(over)
        columns["values"].append(over_values(over, objective))
        columns["best"].append(np.full(len(over), -1, best_type))
        offsets = np.concatenate([[0], np.cumsum(sizes + [len(over)])]).astype(np.int64)
        if states is not None and offsets[-1] != states:
            raise ValueError(f"{self.directory}: its layers hold {int(offsets[-1]):,} states, its metadata says "
                             f"{states:,}")
        self.keys, self.values, self.best = (LayerColumn(columns[name], offsets)
                                             for name in ("sorted_keys", "values", "best"))

    def __len__(self) -> int:
        return len(self.keys)

    def find(self, keys: np.ndarray, layout: KeyLayout, rules: Rules) -> np.ndarray:
        """State numbers of ``keys`` (-1 for a key no layer holds: not a reachable position)."""
        keys = np.asarray(keys, dtype=np.uint64)
        ids = np.full(len(keys), -1, np.int64)
        ranks = key_ranks(keys, layout, rules)
        part = np.searchsorted(self.ranks, ranks)
        held_rank = self.ranks[np.minimum(part, len(self.ranks) - 1)] if len(self.ranks) else ranks + 1
        part[ranks == TERMINAL_RANK] = len(self.ranks)  # the finished positions' part is the last
        part[(ranks != TERMINAL_RANK) & (held_rank != ranks)] = -1  # a layer the solution does not have
        for j in np.unique(part[part >= 0]):
            at = np.flatnonzero(part == j)
            held = self.keys.parts[j]
            if not len(held):
                continue
            pos = np.minimum(np.searchsorted(held, keys[at]), len(held) - 1)
            found = held[pos] == keys[at]
            ids[at[found]] = self.keys.offsets[j] + pos[found]
        return ids


def open_layer_store(meta: dict[str, Any], directory: str | Path) -> LayerStore:
    """The layers a layered solution's metadata (``solution.json``: ``layer_ranks``,
    ``over_keys``, ``objective``, ``states``) names, in ``directory``."""
    return LayerStore(directory, meta["layer_ranks"], meta["over_keys"], meta["objective"], meta.get("states"))


__all__ = ["LayerColumn", "LayerStore", "open_layer_store"]
