"""``random_choice.random_legal_actions``: game i plays its k-th legal entry, k = floor(u * n) for its n
legal entries and the top 32 bits u of the next number of its stream.

The kernel reads a mask eight entries at a time; a plain reference (numpy and Python integers)
checks it on the masks that path treats apart: rows not aligned to 8 bytes, the buffer's odd last
bytes, rows too wide for one pass, empty rows, bool and int64 masks, strided views."""

from __future__ import annotations

import numpy as np
import pytest

from midnight_env.core.dice import agent_streams
from midnight_env.core.random_choice import random_legal_actions, random_legal_actions_parallel

MASK64 = (1 << 64) - 1


def next_random(state: int) -> tuple[int, int]:
    """splitmix64: (new stream state, 64 random bits)."""
    state = (state + 0x9E3779B97F4A7C15) & MASK64
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return state, z ^ (z >> 31)


def reference(legal: np.ndarray, rng: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    out = np.full(legal.shape[0], -1, np.int64)
    streams = rng.copy()
    for i, row in enumerate(legal):
        entries = np.flatnonzero(row)
        if len(entries):
            state, bits = next_random(int(streams[i]))
            streams[i] = state
            out[i] = entries[((bits >> 32) * len(entries)) >> 32]
    return out, streams


@pytest.mark.parametrize("width", [1, 7, 8, 9, 28, 409, 509, 2032, 2039, 2041, 2100])
@pytest.mark.parametrize("kind", ["int8", "bool", "int64", "strided"])
@pytest.mark.parametrize("kernel", [random_legal_actions, lambda legal, rng, out: random_legal_actions_parallel(
    legal, rng, out, 64)], ids=["serial", "threads"])  # tasks of 64 games: 200 games make four
def test_the_choice_is_the_reference_one(width, kind, kernel):
    gen = np.random.default_rng(width)
    for games in (1, 3, 65, 200):  # 200: several chunks of the threaded kernel
        for density in (0.0, 0.01, 0.3, 1.0):
            mask = gen.random((games, width)) < density
            mask[0] = False  # always one game without a legal entry
            if kind == "strided":
                legal = np.zeros((games, 2 * width), np.int8)[:, ::2]
                legal[:] = mask
            else:
                legal = mask.astype(kind)
            rng = agent_streams(range(width, width + games))
            want, want_streams = reference(legal, rng)
            out = np.full(games, -7, np.int64)
            kernel(legal, rng, out)
            assert out.tolist() == want.tolist(), f"{games} games, density {density}"
            assert rng.tolist() == want_streams.tolist(), "streams advance once per game with a choice"
