"""Game seeds: one range everywhere, checked once.

A game is fixed by its seed and its decisions (the dice stream starts from the seed alone). Seeds
are integers 0..2**62-1: sums like ``seed + game index`` and ``seed + k * batch`` (the vector env's
restarts) then stay inside int64, the engine's seed type, for any realistic run.
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

from midnight_env.infra import checks

SEED_LIMIT = 2**62  # seeds are 0..SEED_LIMIT-1
SEED_RANGE = "integers 0..2**62-1"  # the allowed seeds in words, for error messages


def check_seed(seed: Any, what: str = "seed") -> int:
    """``seed`` as a Python int, or ValueError naming it and the allowed range."""
    return checks.integer(what, seed, 0, SEED_LIMIT - 1, allowed=SEED_RANGE)


def check_seeds(seeds: Any, what: str = "seed") -> np.ndarray:
    """Seeds as a 1-D int64 array, or ValueError naming the first bad one (a float, a bool, one out
    of range)."""
    values = np.asarray(seeds)
    if values.dtype == object or values.dtype.kind not in "iu":
        flat = values.reshape(-1)
        for k, seed in enumerate(flat.tolist()):
            check_seed(seed, f"{what}[{k}]" if flat.size > 1 else what)
        if values.dtype.kind not in "iu" and flat.size:  # e.g. a float array of whole numbers
            raise ValueError(f"{what}s of dtype {values.dtype} are not allowed: allowed are {SEED_RANGE}")
    values = values.reshape(-1)
    bad = (values < 0) | (values >= SEED_LIMIT) if values.dtype.kind == "i" else values >= SEED_LIMIT
    if bad.any():  # the first seed outside, named by its place
        k = int(np.flatnonzero(bad)[0])
        check_seed(int(values[k]), f"{what}[{k}]" if values.size > 1 else what)
    return values.astype(np.int64)


def fresh_seed() -> int:
    """A random seed for callers that gave none (from the operating system's entropy)."""
    return int(np.random.SeedSequence().generate_state(1, np.uint64)[0] >> np.uint64(2))


def derived_seed(*parts: Any) -> int:
    """A game seed fixed by ``parts`` (their text joined by "/"), e.g. a tournament's key and a
    deal number: the same parts give the same seed on any machine and in any order of play, and
    different labels ("deal", "probe", ...) give independent ones (BLAKE2b, 62 bits)."""
    digest = hashlib.blake2b("/".join(str(p) for p in parts).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") >> 2  # 62 bits: a seed below SEED_LIMIT
