"""The compiled step of a :class:`~midnight_env.envs.vector.VectorEnv` batch.

``vector_step_serial`` (``vector_step_parallel``: the same in tasks spread over threads) is one
pass over the batch that does everything a step returns: checks the actions, applies them and
rolls on (``rules.advance_games``), plays forced decisions, writes every seat's rewards, records
and restarts finished games and builds the observations. Like ``rules.py``, these kernels read
the board and player numbers from the batch's ``Rules`` ``R``, so that ``midnight_env.core.specialize``
can compile a copy of this module and of ``rules.py`` with those numbers as constants.
"""

from __future__ import annotations

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


@njit(cache=True)
def _play_forced_game(s, R, i, faces, faces_out, scratch):
    """Game ``i`` plays its decisions with exactly one legal choice (as ``play_forced`` does for a
    batch); returns how many."""
    played = 0
    while True:
        a = _only_legal_action(s.legal, i)
        if a < 0:
            return played
        scratch[i] = a
        advance_games(s, R, i, i + 1, scratch, faces, True, faces_out)
        played += 1


@njit(cache=True)
def _step_chunk(s, R, actions, faces, faces_out, scratch, auto_forced, points_rewards, off, inv_guests, inv_points,
                rewards, terminated, truncated, forced, obs, agent, lo, hi):
    """Games ``lo..hi-1`` of ``vector_step``, up to the restarts: games that ended stay at their
    final position (``_restart_ended`` records and restarts them)."""
    n = R.num_players
    for i in range(lo, hi):
        for p in range(n):
            rewards[i, p] = s.spooky[i, p]  # points before the step
    advance_games(s, R, lo, hi, actions, faces, True, faces_out)
    for i in range(lo, hi):
        forced[i] = _play_forced_game(s, R, i, faces, faces_out, scratch) if auto_forced else 0
        for p in range(n):
            rewards[i, p] = (rewards[i, p] - s.spooky[i, p]) if points_rewards else 0.0
        terminated[i] = truncated[i] = False
        if s.phase[i] == OVER:
            truncated[i] = s.truncated[i]
            terminated[i] = not s.truncated[i]
        agent[i] = s.player[i]
    if obs.shape[0] > 0:  # (a game that ended gets its row again when it restarts)
        encode_chunk(s, R, None, None, -1, off, inv_guests, inv_points, obs, lo, hi)


@njit(cache=True)
def _restart_ended(s, R, ended, faces, faces_out, scratch, auto_forced, off, inv_guests, inv_points, first_seed,
                   episode, seeds, start_points, forced, obs, agent, ended_obs, lo, hi):
    """The games ``ended[lo..hi-1]``: their final observation from every seat into ``ended_obs``
    (row e for ``ended[e]``), then the next game in their slot (autoreset) and its observation."""
    n = R.num_players
    b = seeds.shape[0]
    seats = np.arange(n)
    same_game = np.empty(n, np.int64)
    for e in range(lo, hi):
        i = ended[e]
        same_game[:] = i
        encode_chunk(s, R, same_game, seats, -1, off, inv_guests, inv_points, ended_obs[e], 0, n)
        episode[i] += 1
        seeds[i] = first_seed[i] + episode[i] * b
        reset_game(s, R, i, seeds[i], start_points)
        if auto_forced:
            forced[i] += _play_forced_game(s, R, i, faces, faces_out, scratch)
        agent[i] = s.player[i]
        if obs.shape[0] > 0:
            encode_chunk(s, R, None, None, -1, off, inv_guests, inv_points, obs, i, i + 1)


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
def vector_step_serial(s, R, actions, check, faces, faces_out, scratch, auto_forced, points_rewards, off, inv_guests,
                       inv_points, first_seed, episode, seeds, start_points, rewards, terminated, truncated,
                       forced, obs, agent, ended, ended_points, ended_ranks, ended_obs):
    """One step of every game of a VectorEnv. Returns ``(bad, k)``: with ``check``, ``bad`` is the
    first game whose action is neither -1 nor legal, and then nothing has changed; else ``bad`` is
    -1, and the step applied ``actions`` and rolled on; played forced decisions (``auto_forced``);
    wrote each seat's reward (B, N), each game's flags and deciding seat (``agent``) and, unless
    ``obs`` has no rows, the observation of every game's deciding seat (B, D); listed the ``k``
    games that ended, in order, with their final points and ranks (``_list_ended``) and their
    final observations from every seat (``ended_obs[:k]``, (k, N, D)); and restarted them with
    their next seeds (slot i's k-th game is seeded ``first_seed[i] + k*B``, written to
    ``seeds[i]``).

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
    _step_chunk(s, R, actions, faces, faces_out, scratch, auto_forced, points_rewards, off, inv_guests, inv_points,
                rewards, terminated, truncated, forced, obs, agent, 0, b)
    k = _list_ended(terminated, truncated, s.spooky, ended, ended_points, ended_ranks)
    _restart_ended(s, R, ended, faces, faces_out, scratch, auto_forced, off, inv_guests, inv_points, first_seed,
                   episode, seeds, start_points, forced, obs, agent, ended_obs, 0, k)
    return -1, k


@njit(cache=True, parallel=True)
def vector_step_parallel(s, R, actions, check, faces, faces_out, scratch, auto_forced, points_rewards, off, inv_guests,
                         inv_points, first_seed, episode, seeds, start_points, rewards, terminated, truncated,
                         forced, obs, agent, ended, ended_points, ended_ranks, ended_obs, size):
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
        _step_chunk(s, R, actions, faces, faces_out, scratch, auto_forced, points_rewards, off, inv_guests,
                    inv_points, rewards, terminated, truncated, forced, obs, agent, c * size,
                    min(b, (c + 1) * size))
    k = _list_ended(terminated, truncated, s.spooky, ended, ended_points, ended_ranks)
    for c in prange(chunks):
        _restart_ended(s, R, ended, faces, faces_out, scratch, auto_forced, off, inv_guests, inv_points, first_seed,
                       episode, seeds, start_points, forced, obs, agent, ended_obs, c * k // chunks,
                       (c + 1) * k // chunks)
    return -1, k
