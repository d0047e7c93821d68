"""One game at a time: a decision in one compiled call, without unpacking the state every time.

Calling a compiled kernel from Python unpacks every array it is handed: a ``GameState`` is 20
arrays and the ``Rules`` 4 more, about 1.3 µs a call, more than the rules of a decision take.
For a batch of one (the PettingZoo and Gymnasium envs, search trees, ``midnight play``) that is
most of a step. Here the arrays of one state are gathered once into a handle (a numba
``StructRef`` holding the same arrays, not copies), which a kernel takes for a pointer:

- :class:`GameRef` (``make_game_ref``): a state, its rules and its limits, for ``Engine.step``
  and ``Engine.apply_action`` at batch 1 (``step_one``: the quick check of the state and the
  action's check in the same call as the step).
- :class:`EnvRef` (``make_env_ref``): a state, its rules and its observation layout, for the
  PettingZoo env (``env_step``: the action's check, the step, the mask and the observation of
  the seat to decide next, in one call; ``env_reset`` and ``env_observe`` likewise) and the
  Gymnasium single-agent env's observation (``env_observe``).

A handle holds its arrays (they live as long as it does) and sees every change made to them
through the state; the state's values are checked in the kernels as before. Each kernel only
takes the handle's fields and hands them to a worker compiled without reference counting
(``_WORK``, as the rules are, ``rules.py``): counting the references of the state's arrays in and
out of the rules and the encoder cost more than the observation (about 0.2 µs of a step's
1.1 µs, measured; BENCHMARKS.md). ``entry_point``
gives the compiled code of a kernel for a handle's types, callable without numba's dispatch: the
callers hand it only handles they made and arguments of the types it was compiled for.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np
from numba import njit, typeof
from numba.core import types
from numba.experimental import structref

from midnight_env.core.config import Rules
from midnight_env.core.observation import _float32_scaling_exact, encode_rows, observation_layout
from midnight_env.core.random_choice import _choose_in_bytes
from midnight_env.core.rules import advance_games, reset_game
from midnight_env.core.state import MOVE, OVER, PLACE, GameState, _games_fit, _shapes_fit

_WORK = dict(cache=True, _nrt=False)  # compile options of the workers: no reference counting


@structref.register
class GameRefType(types.StructRef):
    def preprocess_fields(self, fields):
        return tuple((name, types.unliteral(typ)) for name, typ in fields)


class GameRef(structref.StructRefProxy):
    """A batch-1 state with its rules and limits, for :func:`step_one`."""


structref.define_proxy(GameRef, GameRefType, ["s", "R", "lim", "act", "faces", "faces_out"])


@structref.register
class EnvRefType(types.StructRef):
    def preprocess_fields(self, fields):
        return tuple((name, types.unliteral(typ)) for name, typ in fields)


class EnvRef(structref.StructRefProxy):
    """A batch-1 state with its rules and observation layout, for :func:`env_step`."""


structref.define_proxy(EnvRef, EnvRefType, ["s", "R", "act", "faces", "faces_out", "off", "inv_guests",
                                            "inv_points", "exact32", "points"])


@njit(cache=True)
def make_game_ref(s, R, lim):
    """The handle of state ``s`` (a tuple of its fields), rules ``R`` (a tuple) and limits ``lim``."""
    return GameRef(GameState(*s), Rules(*R), lim, np.full(1, -1, np.int64), np.full(1, -1, np.int64),
                   np.full(1, -1, np.int8))


@njit(cache=True)
def step_one(g, action, check, auto_roll):
    """``Engine.step`` (``auto_roll``) or ``Engine.apply_action`` of game 0 of ``g`` with ``action``
    (-1: none). With ``check``: returns 1, changing nothing, where the state fails the quick
    check (``state._fits``), 2 where the action is out of range or not legal; else 0."""
    return _step_one(g.s, g.R, g.lim, g.act, g.faces, g.faces_out, action, check, auto_roll)


@njit(**_WORK)
def _step_one(s, R, lim, act, faces, faces_out, action, check, auto_roll):
    if check:
        if not _shapes_fit(s, lim[0], lim[1], lim[2], lim[3], lim[4], lim[9]) or not _games_fit(s, lim, 0, 1):
            return 1
        if action < -1 or action >= lim[9]:
            return 2
        if action >= 0 and not ((s.phase[0] == PLACE or s.phase[0] == MOVE) and s.legal[0, action] == 1):
            return 2
    act[0] = action
    advance_games(s, R, 0, 1, act, faces, auto_roll, faces_out)
    return 0


@njit(cache=True)
def random_one(g, rng, out):
    """``random_legal_actions`` of game 0 of ``g`` into ``out[0]``: the same choice from ``rng[0]``
    (the k-th legal entry, k = floor(u * n), by bytes rather than words: a mask of zeros and ones,
    as the engine keeps it)."""
    legal = g.s.legal
    out[0] = _choose_in_bytes(legal[0], 0, legal.shape[1], rng, 0)


@njit(cache=True)
def make_env_ref(s, R, off, inv_guests, inv_points):
    """The handle of the PettingZoo env's state ``s`` (a tuple), rules ``R`` (a tuple) and
    observation layout; with the encoder's float32 test answered once (``encode_rows``) and room
    for the points before a step."""
    state, R = GameState(*s), Rules(*R)
    exact32 = 1 if _float32_scaling_exact(R.guests, inv_guests) else 0
    return EnvRef(state, R, np.full(1, -1, np.int64), np.full(1, -1, np.int64), np.full(1, -1, np.int8), off,
                  inv_guests, inv_points, exact32, np.empty(state.spooky.shape[1], np.int32))


@njit(cache=True)
def env_step(g, action, obs, mask):
    """The PettingZoo env's step of game 0 of ``g``: -1, changing nothing, where ``action`` (in
    range) is not legal; else the decision, rolled on to the next one, with the observation of
    the seat to decide next in ``obs`` and its mask in ``mask``, and returns that seat + 8 where
    the game is over + 16 * (the seats whose spooky points changed, a bit each: seat p is 1 << p)."""
    return _env_step(g.s, g.R, g.act, g.faces, g.faces_out, g.off, g.inv_guests, g.inv_points, g.exact32, g.points,
                     action, obs, mask)


@njit(**_WORK)
def _env_step(s, R, act, faces, faces_out, off, inv_guests, inv_points, exact32, before, action, obs, mask):
    if not ((s.phase[0] == PLACE or s.phase[0] == MOVE) and s.legal[0, action] == 1):
        return -1
    n = s.spooky.shape[1]
    for p in range(n):
        before[p] = s.spooky[0, p]
    act[0] = action
    advance_games(s, R, 0, 1, act, faces, True, faces_out)
    _observe_row(s, R, off, inv_guests, inv_points, exact32, -1, obs)
    for a in range(mask.shape[0]):
        mask[a] = s.legal[0, a]
    result = np.int64(s.player[0])
    if s.phase[0] == OVER:
        result += 8
    for p in range(n):
        if s.spooky[0, p] != before[p]:
            result += np.int64(16) << p
    return result


@njit(cache=True)
def env_reset(g, seed, start_points, obs, mask):
    """Game 0 of ``g`` at set-up with ``seed`` (``Engine.new_games``' game: the same ``reset_game``),
    the first decision's observation and mask in ``obs`` and ``mask``; returns the seat to decide."""
    return _env_reset(g.s, g.R, g.off, g.inv_guests, g.inv_points, g.exact32, seed, start_points, obs, mask)


@njit(**_WORK)
def _env_reset(s, R, off, inv_guests, inv_points, exact32, seed, start_points, obs, mask):
    reset_game(s, R, 0, seed, start_points)
    _observe_row(s, R, off, inv_guests, inv_points, exact32, -1, obs)
    for a in range(mask.shape[0]):
        mask[a] = s.legal[0, a]
    return np.int64(s.player[0])


@njit(cache=True)
def env_observe(g, seat, obs):
    """Game 0 of ``g`` seen by ``seat``, into ``obs``."""
    _observe_row(g.s, g.R, g.off, g.inv_guests, g.inv_points, g.exact32, seat, obs)


@njit(**_WORK)
def _observe_row(s, R, off, inv_guests, inv_points, exact32, seat, obs):
    """Game 0 of ``s`` seen by ``seat`` (-1: its deciding seat) into the row ``obs``."""
    encode_rows(s.gallery, s.supply, s.room, s.stairs, s.spooky, s.hugo, s.clock, s.round, s.phase, s.roll,
                s.player, R, off, inv_guests, inv_points, None, None, seat, obs.reshape((1, obs.shape[0])), 0, 1,
                exact32)


class EnvKernels(NamedTuple):
    """The env kernels' compiled code (``entry_point``) for the handles of one engine's states."""

    make_ref: Callable
    reset: Callable
    step: Callable
    observe: Callable


def env_ref_args(engine, state: GameState) -> tuple:
    """``make_env_ref``'s arguments for ``state``, a batch of one of ``engine``'s game."""
    lay = observation_layout(engine)
    return tuple(state), engine._kernel_rules, lay.offsets, lay.inv_guests, lay.inv_points


def env_kernels(ref_args: tuple) -> EnvKernels:
    """The env kernels compiled for the types of ``ref_args`` (``env_ref_args``), which every state
    of one engine shares: compiled once, then called without numba's dispatch."""
    ref = make_env_ref(*ref_args)
    obs, mask = np.empty(1, np.float32), np.empty(1, np.int8)  # for their types, not their sizes
    return EnvKernels(entry_point(make_env_ref, *ref_args), entry_point(env_reset, ref, 0, 0, obs, mask),
                      entry_point(env_step, ref, 0, obs, mask), entry_point(env_observe, ref, 0, obs))


def entry_point(kernel, *args):
    """``kernel`` compiled for the types of ``args``, callable without numba's per-call type
    dispatch, which for a ``GameState`` (a tuple of 20 arrays) costs more than stepping a small
    batch; the dispatcher itself where numba lacks these internals. Only for arguments whose types
    never change (an env's or a handle's own arrays): the compiled code trusts them."""
    try:
        sig = tuple(typeof(a) for a in args)
        kernel.compile(sig)
        return kernel.overloads[sig].entry_point
    except Exception:  # a numba without these internals: the ordinary (slower) dispatcher
        return kernel


__all__ = ["GameRef", "EnvRef", "make_game_ref", "step_one", "random_one", "make_env_ref", "env_step", "env_reset",
           "env_observe", "EnvKernels", "env_ref_args", "env_kernels", "entry_point"]
