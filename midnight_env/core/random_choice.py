"""A uniformly random legal choice per game, drawn from the game's own stream.

What the ``random`` agent plays, and what the benchmarks and the property tests step with.
Game i chooses its k-th legal entry, k = floor(u * n) for its n legal entries and 32 random bits
u of its stream, so a game chooses the same whatever batch it is in. A mask row is mostly zeros:
the rows are read as 64-bit words, eight entries at a time, with the bit tricks below.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from midnight_env.core.dice import next_random
from midnight_env.infra.threads import Site

# compile options of the helpers: no reference counting (they never allocate; see rules.py)
_RULE = dict(cache=True, _nrt=False)


_ALL_BYTES = np.uint64(0xFFFFFFFFFFFFFFFF)
_BYTE_ONES = np.uint64(0x0101010101010101)  # (x * _BYTE_ONES) >> 56: sum of x's bytes, if < 256
_EVEN_BYTES = np.uint64(0x00FF00FF00FF00FF)
_SHORT_ONES = np.uint64(0x0001000100010001)
_BYTE_BITS = np.uint64(0x0102040810204080)  # (x * _BYTE_BITS) >> 56: bit j = byte j, for bytes of 0 or 1
# _KTH_BIT[8 * bits + k]: position of the k-th set bit of the 8-bit value ``bits``
_KTH_BIT = np.array([[j for j in range(8) if b >> j & 1][k] if k < bin(b).count("1") else 0
                     for b in range(256) for k in range(8)], dtype=np.int8)


@njit(**_RULE)
def _byte_sum(x):
    """Sum of the eight bytes of ``x`` (each byte up to 255)."""
    pairs = (x & _EVEN_BYTES) + ((x >> np.uint64(8)) & _EVEN_BYTES)
    return np.int64((pairs * _SHORT_ONES) >> np.uint64(48))


@njit(**_RULE)
def _draw_below(rng, i, n):
    """A uniform integer in 0..n-1 from 32 random bits of stream ``rng[i]``."""
    return np.int64(((next_random(rng, i) >> np.uint64(32)) * np.uint64(n)) >> np.uint64(32))


@njit(**_RULE)
def _choose_in_bytes(flat, r0, r1, rng, i):
    """Uniform choice among the nonzero entries of ``flat[r0:r1]``: its offset from r0, or -1."""
    n = 0
    for a in range(r0, r1):
        n += flat[a]
    if n == 0:
        return -1
    k = _draw_below(rng, i, n)
    for a in range(r0, r1):
        if flat[a]:
            if k == 0:
                return a - r0
            k -= 1
    return -1


@njit(**_RULE)
def _row_words(r0, r1):
    """The words of ``words`` that hold the row ``flat[r0:r1]``: first and last index, and masks of
    the row's bytes in the first and the last."""
    head = _ALL_BYTES << np.uint64(8 * (r0 & 7))
    tail = _ALL_BYTES >> np.uint64(8 * (7 - ((r1 - 1) & 7)))
    return r0 >> 3, (r1 - 1) >> 3, head, tail


@njit(**_RULE)
def _count_in_words(words, r0, r1):
    """How many entries of ``flat[r0:r1]`` are set, read a word at a time (``words`` is the mask as
    uint64; the first and last word are masked to the row's bytes). For rows of at most 255
    words, so that a byte of the sum cannot overflow; entries must be 0 or 1."""
    first, last, head, tail = _row_words(r0, r1)
    if first == last:
        total = words[first] & head & tail
    else:
        total = (words[first] & head) + (words[last] & tail)
        for w in range(np.uint64(first + 1), np.uint64(last)):  # unsigned: vector code
            total += words[w]
    return _byte_sum(total)


@njit(**_RULE)
def _kth_in_words(words, r0, r1, k):
    """Offset from r0 of the k-th set entry of ``flat[r0:r1]`` (there are more than k). Whole
    words are counted (four at a time inside the row) without testing them, so that the only
    unpredictable branch is the one that finds it; its byte by table."""
    first, last, head, tail = _row_words(r0, r1)
    w = first
    x = words[w] & head
    while w + 3 < last:  # four words at a time while all lie inside the row
        u = np.uint64(w)
        c = np.int64(((x + words[u + np.uint64(1)] + words[u + np.uint64(2)] + words[u + np.uint64(3)])
                      * _BYTE_ONES) >> np.uint64(56))
        if k < c:
            break
        k -= c
        w += 4
        x = words[np.uint64(w)]
    while True:  # the word holding the k-th legal entry: no test of x, one branch miss at the end
        if w == last:
            x &= tail
        c = np.int64((x * _BYTE_ONES) >> np.uint64(56))
        if k < c:
            break
        k -= c
        w += 1
        x = words[np.uint64(w)]
    bits = (x * _BYTE_BITS) >> np.uint64(56)  # bit j: byte j of x is set
    return w * 8 + _KTH_BIT[bits * np.uint64(8) + np.uint64(k)] - r0


@njit(**_RULE)
def _by_words(r0, r1, num_words):
    """Whether the row ``flat[r0:r1]`` is read by words: it is not empty, lies inside the mask's
    ``num_words`` whole words and spans at most 255 of them."""
    return r1 > r0 and (r1 - 1) >> 3 < num_words and ((r1 - 1) >> 3) - (r0 >> 3) < 255


@njit(cache=True)
def _choose_rows(legal, rng, out, lo, hi):
    """Rows ``lo..hi-1`` of ``random_legal_actions``."""
    width = legal.shape[1]
    if legal.itemsize != 1 or not legal.flags.c_contiguous:
        for i in range(lo, hi):
            out[i] = _choose_in_bytes(legal[i], 0, width, rng, i)
        return
    flat = np.ascontiguousarray(legal).reshape(-1).view(np.uint8)  # the mask itself, not a copy
    num_words = flat.size >> 3
    words = flat[: num_words * 8].view(np.uint64)
    r0 = lo * width
    next_count = _count_in_words(words, r0, r0 + width) if _by_words(r0, r0 + width, num_words) else 0
    for i in range(lo, hi):
        r0 = i * width
        r1 = r0 + width
        n = next_count
        # the next row is counted before this one is searched: its reads are under way when the
        # search's last branch, mispredicted, flushes what follows it (BENCHMARKS.md: pipelined)
        if i + 1 < hi and _by_words(r1, r1 + width, num_words):
            next_count = _count_in_words(words, r1, r1 + width)
        if not _by_words(r0, r1, num_words):  # an empty row, the last row when the buffer has
            out[i] = _choose_in_bytes(flat, r0, r1, rng, i)  # odd bytes, or a very wide row
        elif n == 0:
            out[i] = -1
        else:
            out[i] = _kth_in_words(words, r0, r1, _draw_below(rng, i, n))


@njit(cache=True)
def random_legal_actions(legal, rng, out):
    """Uniform random legal choice per game from per-game streams ``rng`` (-1 where none).

    ``legal`` is a (B, A) mask of zeros and ones (int8, uint8 or bool). Game i chooses its k-th
    legal entry, k = floor(u * n) for its n legal entries and 32 random bits u of its stream."""
    _choose_rows(legal, rng, out, 0, legal.shape[0])


@njit(cache=True, parallel=True)
def random_legal_actions_parallel(legal, rng, out, size):
    """``random_legal_actions`` with tasks of ``size`` games spread over threads (the same choices)."""
    b = legal.shape[0]
    for c in prange((b + size - 1) // size):
        _choose_rows(legal, rng, out, c * size, min(b, (c + 1) * size))


_CHOOSE = Site("random_choice")  # serial or threaded, whichever this process measures faster


def random_legal_choices(legal: np.ndarray, rng: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """(B,) a uniformly random legal entry of each row of the (B, A) mask ``legal`` (-1 for a row
    without any), drawn from per-row uint64 streams ``rng``; threaded for large batches."""
    out = np.empty(legal.shape[0], np.int64) if out is None else out
    _CHOOSE.run(legal.shape[0], random_legal_actions, random_legal_actions_parallel, legal, rng, out)
    return out
