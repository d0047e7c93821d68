"""The die and the random streams: faces, odds and record names; splitmix64 streams per game.

The die has six faces: 1, 2, 4, 5 and Hugo twice (RULES.md section 4). The engine writes a face
as its number, Hugo as 0 (``HUGO``); records write ``"hugo"``. Every game carries its own dice
stream (splitmix64, seeded from the game's seed alone), so a game plays the same whatever batch
it runs in; agents get streams of their own from the same seeds (:func:`agent_streams`), which
never touch the dice.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
from numba import njit

from midnight_env.infra.seeds import check_seeds

HUGO = 0  # the Hugo face as the engine writes it
DIE_FACES = (1, 2, 4, 5, HUGO, HUGO)  # six equally likely faces
NUMBERS = (1, 2, 4, 5)  # the faces a player moves by
CHANCE_OUTCOMES = ((1, 1 / 6), (2, 1 / 6), (4, 1 / 6), (5, 1 / 6), (HUGO, 1 / 3))  # (face, probability)
HUGO_PROBABILITY = dict(CHANCE_OUTCOMES)[HUGO]  # per roll
NUMBER_PROBABILITY = sum(p for face, p in CHANCE_OUTCOMES if face != HUGO)  # a number is rolled (2/3)
FACE_NAMES = {1: 1, 2: 2, 4: 4, 5: 5, HUGO: "hugo"}  # face -> as records write it
FACES_BY_NAME = {name: face for face, name in FACE_NAMES.items()}

_DIE = np.array(DIE_FACES, dtype=np.int8)

# splitmix64 constants (uint64 throughout: mixing with int64 would promote to float)
GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_DICE_SALT = np.uint64(0x6D69646E69676874)  # "midnight": dice streams differ from agent streams


def face_name(face: int):
    """A face as records write it: 1, 2, 4, 5 or ``"hugo"``."""
    return FACE_NAMES[int(face)]


@njit(cache=True, inline="always")
def mix64(z):
    """splitmix64's finaliser: 64 well-mixed bits of ``z`` (a uint64 or an array of them)."""
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return z ^ (z >> np.uint64(31))


@njit(cache=True, inline="always")
def stream_start(seed):
    """Dice stream state of a game seeded ``seed``: depends on the seed alone, not on the batch."""
    return mix64(np.uint64(seed) ^ _DICE_SALT)


@njit(cache=True)
def seed_streams(seeds, out):
    for i in range(seeds.shape[0]):
        out[i] = stream_start(seeds[i])


@njit(cache=True, inline="always")
def next_random(rng, i):
    """Next 64 random bits of stream ``rng[i]`` (splitmix64)."""
    rng[i] += GOLDEN
    return mix64(rng[i])


@njit(cache=True, inline="always")
def draw_face(rng, i):
    """A die face for game ``i``: 1, 2, 4, 5 or HUGO (two faces of six)."""
    z = next_random(rng, i) >> np.uint64(32)
    return _DIE[np.int64((z * np.uint64(6)) >> np.uint64(32))]


@njit(cache=True)
def uniform_draws(rng, out):
    """One float in [0, 1) per stream."""
    for i in range(rng.shape[0]):
        out[i] = np.float64(next_random(rng, i) >> np.uint64(11)) * (1.0 / 9007199254740992.0)


def agent_streams(seeds: Iterable[int], stream: int = 1) -> np.ndarray:
    """Per-game uint64 random streams for agents, independent of the dice of the same seeds.
    Seeds as ``Engine.new_games`` takes them (``check_seeds``: ValueError naming the first bad one)."""
    seeds = check_seeds(seeds if isinstance(seeds, np.ndarray) else list(seeds))
    out = np.empty(len(seeds), np.uint64)
    seed_streams(seeds * 7919 + 104729 * stream, out)
    return out
