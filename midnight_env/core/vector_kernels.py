"""The compiled step of a :class:`~midnight_env.envs.vector.VectorEnv` batch.

``vector_step_serial`` (``vector_step_parallel``: the same in tasks spread over threads) is one
pass over the batch that does everything a step returns: checks the actions, applies them and
rolls on (``rules.advance_games``), plays forced decisions, writes every seat's rewards, records
and restarts finished games and builds the observations. Like ``rules.py``, these kernels read
the board and player numbers from the batch's ``Rules`` ``R``, so that ``midnight_env.core.specialize``
can compile a copy of this module and of ``rules.py`` with those numbers as constants. What a
step reads and writes besides the state, the rules and the actions travels as two named records:
:class:`StepBuffers`, built once by the env, and :class:`StepOutputs`, the arrays a step returns.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit, prange

from midnight_env.core.config import Rules
from midnight_env.core.observation import encode_chunk
from midnight_env.core.rules import advance_games, reset_game
from midnight_env.core.scoring import seat_rank
from midnight_env.core.state import MOVE, OVER, PLACE, GameState


@njit(cache=True, inline="always")
def _only_legal_action(legal, i):
    """The only legal action of game ``i``, or -1 when it has none or several."""
    found = -1
    for a in range(legal.shape[1]):
        if legal[i, a]:
            if found >= 0:
                return -1
            found = a
    return found


@njit(cache=True)
def forced_actions(legal, out):
    """The only legal action of each game that has exactly one (-1 elsewhere); returns how many."""
    count = 0
    for i in range(legal.shape[0]):
        out[i] = _only_legal_action(legal, i)
        count += out[i] >= 0
    return count


@njit(cache=True)
def _first_bad_in(actions, legal, phase, num_actions, lo, hi):
    """First game of ``lo..hi-1`` whose action is neither -1 (none) nor legal, or -1."""
    for i in range(lo, hi):
        a = actions[i]
        if a == -1:
            continue
        if a < -1 or a >= num_actions or (phase[i] != PLACE and phase[i] != MOVE) or legal[i, a] == 0:
            return i
    return -1


class StepBuffers(NamedTuple):
    """The env's settings and buffers that ``vector_step_serial`` reads and writes besides the
    state, the rules and the actions: built once (``VectorEnv.__init__``), its arrays written in
    place. B games, N seats, D observation values."""

    auto_forced: bool  # the env plays decisions with exactly one legal choice itself
    points_rewards: bool  # rewards are minus each seat's change of spooky points (else 0: ranks come at the end)
    start_points: int  # spooky points of every seat at a game's start (CASTLE_START_POINTS or 0)
    faces: np.ndarray  # (B,) int64 die faces to inject: -1, each game's own dice
    faces_out: np.ndarray  # (B,) int8 faces rolled (``rules.advance_games``; not read here)
    scratch: np.ndarray  # (B,) int64 one game's forced action at a time (the others: -1)
    offsets: np.ndarray  # the observation layout's section offsets (``observation_layout``)
    inv_guests: float  # its scale of guest counts
    inv_points: float  # its scale of points
    first_seed: np.ndarray  # (B,) int64 seed of each slot's first game
    episode: np.ndarray  # (B,) int64 games each slot has started, minus one
    seeds: np.ndarray  # (B,) int64 seed of the game each slot plays: first_seed + episode * B
    agent: np.ndarray  # (B,) int64 deciding seat of each game
    ended: np.ndarray  # (B,) int64 the games that ended in the step, in order (first k rows)
    ended_points: np.ndarray  # (B, N) int32 their final spooky points
    ended_ranks: np.ndarray  # (B, N) int64 their ranks (1 = winner)
    ended_obs: np.ndarray  # (B, N, D) float32 their final observation from every seat


class StepOutputs(NamedTuple):
    """What a step returns per game, written by ``vector_step_serial`` (the env's own buffers, or
    fresh arrays each step with ``copy=True``)."""

    rewards: np.ndarray  # (B, N) float32 every seat's reward
    terminated: np.ndarray  # (B,) bool the game ended
    truncated: np.ndarray  # (B,) bool the game was cut at ``max_turns``
    forced: np.ndarray  # (B,) int64 forced decisions played (with ``auto_forced``)
    obs: np.ndarray  # (B, D) float32 the deciding seat's observation, or (0, D): none built


@njit(cache=True)
def _play_forced_game(s, R, i, buf):
    """Game ``i`` plays its decisions with exactly one legal choice (``core.engine.play_forced``
    for a game in a compiled step, which cannot call back into Python); returns how many."""
    played = 0
    while True:
        a = _only_legal_action(s.legal, i)
        if a < 0:
            return played
        buf.scratch[i] = a
        advance_games(s, R, i, i + 1, buf.scratch, buf.faces, True, buf.faces_out)
        played += 1


@njit(cache=True)
def _step_chunk(s, R, actions, buf, out, lo, hi):
    """Games ``lo..hi-1`` of ``vector_step``, up to the restarts: games that ended stay at their
    final position (``_restart_ended`` records and restarts them)."""
    n = R.num_players
    rewards = out.rewards
    for i in range(lo, hi):
        for p in range(n):
            rewards[i, p] = s.spooky[i, p]  # points before the step
    advance_games(s, R, lo, hi, actions, buf.faces, True, buf.faces_out)
    for i in range(lo, hi):
        out.forced[i] = _play_forced_game(s, R, i, buf) if buf.auto_forced else 0
        for p in range(n):
            rewards[i, p] = (rewards[i, p] - s.spooky[i, p]) if buf.points_rewards else 0.0
        out.terminated[i] = out.truncated[i] = False
        if s.phase[i] == OVER:
            out.truncated[i] = s.truncated[i]
            out.terminated[i] = not s.truncated[i]
        buf.agent[i] = s.player[i]
    if out.obs.shape[0] > 0:  # (a game that ended gets its row again when it restarts)
        encode_chunk(s, R, None, None, -1, buf.offsets, buf.inv_guests, buf.inv_points, out.obs, lo, hi)


@njit(cache=True)
def _restart_ended(s, R, buf, out, lo, hi):
    """The games ``buf.ended[lo..hi-1]``: their final observation from every seat into
    ``buf.ended_obs`` (row e for ``ended[e]``), then the next game in their slot (autoreset) and
    its observation."""
    n = R.num_players
    b = buf.seeds.shape[0]
    seats = np.arange(n)
    same_game = np.empty(n, np.int64)
    for e in range(lo, hi):
        i = buf.ended[e]
        same_game[:] = i
        encode_chunk(s, R, same_game, seats, -1, buf.offsets, buf.inv_guests, buf.inv_points, buf.ended_obs[e], 0, n)
        buf.episode[i] += 1
        buf.seeds[i] = buf.first_seed[i] + buf.episode[i] * b
        reset_game(s, R, i, buf.seeds[i], buf.start_points)
        if buf.auto_forced:
            out.forced[i] += _play_forced_game(s, R, i, buf)
        buf.agent[i] = s.player[i]
        if out.obs.shape[0] > 0:
            encode_chunk(s, R, None, None, -1, buf.offsets, buf.inv_guests, buf.inv_points, out.obs, i, i + 1)


@njit(cache=True)
def _list_ended(terminated, truncated, spooky, ended, ended_points, ended_ranks):
    """The games that ended, in order, into the first rows of ``ended`` (their indices),
    ``ended_points`` and ``ended_ranks`` (``scoring.seat_rank``), from ``spooky``, which they still
    hold (they restart after this); returns how many."""
    k = 0
    n = spooky.shape[1]
    for i in range(terminated.shape[0]):
        if terminated[i] or truncated[i]:
            ended[k] = i
            for p in range(n):
                ended_points[k, p] = spooky[i, p]
                ended_ranks[k, p] = seat_rank(spooky, i, p)
            k += 1
    return k


@njit(cache=True)
def vector_step_serial(s, R, actions, check, buf, out):
    """One step of every game of a VectorEnv. Returns ``(bad, k)``: with ``check``, ``bad`` is the
    first game whose action is neither -1 nor legal, and then nothing has changed; else ``bad`` is
    -1, and the step applied ``actions`` and rolled on; played forced decisions (``auto_forced``);
    wrote each seat's reward (B, N), each game's flags and deciding seat (``agent``) and, unless
    ``out.obs`` has no rows, the observation of every game's deciding seat (B, D); listed the ``k``
    games that ended, in order, with their final points and ranks (``_list_ended``) and their
    final observations from every seat (``ended_obs[:k]``, (k, N, D)); and restarted them with
    their next seeds (slot i's k-th game is seeded ``first_seed[i] + k*B``, written to
    ``seeds[i]``). ``buf``: :class:`StepBuffers`; ``out``: :class:`StepOutputs`.

    Everything a step returns is written here, and Python around it only hands the buffers out:
    right after a pass over the batch has flushed the caches, a numpy call there (ranks, gathers,
    copies) costs more than the work it does. The final observations are written in their place
    in ``ended_obs`` once the games that ended are listed, rather than per slot into a (B, N, D)
    buffer and gathered from there: a second copy, through a buffer far larger than the few rows
    a step uses. The measurements behind both: BENCHMARKS.md, VectorEnv, "What changed"."""
    s = GameState(*s)
    R = Rules(*R)
    b = actions.shape[0]
    if check:
        bad = _first_bad_in(actions, s.legal, s.phase, R.num_actions, 0, b)
        if bad >= 0:
            return bad, 0
    _step_chunk(s, R, actions, buf, out, 0, b)
    k = _list_ended(out.terminated, out.truncated, s.spooky, buf.ended, buf.ended_points, buf.ended_ranks)
    _restart_ended(s, R, buf, out, 0, k)
    return -1, k


@njit(cache=True, parallel=True)
def vector_step_parallel(s, R, actions, check, buf, out, size):
    """``vector_step_serial`` in tasks of ``size`` games spread over threads (the games that
    ended: in as many tasks)."""
    s = GameState(*s)
    R = Rules(*R)
    b = actions.shape[0]
    chunks = (b + size - 1) // size
    if check:
        first_bad = np.empty(chunks, np.int64)
        for c in prange(chunks):
            first_bad[c] = _first_bad_in(actions, s.legal, s.phase, R.num_actions, c * size, min(b, (c + 1) * size))
        for c in range(chunks):
            if first_bad[c] >= 0:
                return first_bad[c], 0
    for c in prange(chunks):
        _step_chunk(s, R, actions, buf, out, c * size, min(b, (c + 1) * size))
    k = _list_ended(out.terminated, out.truncated, s.spooky, buf.ended, buf.ended_points, buf.ended_ranks)
    for c in prange(chunks):
        _restart_ended(s, R, buf, out, c * k // chunks, (c + 1) * k // chunks)
    return -1, k
