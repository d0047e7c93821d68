"""Gymnasium single-agent env: one learning seat against opponent agents.

``SingleAgentEnv(variant, num_players, opponents=["random"], seat=0, **options)``

=====================  ==========================================================================
Action space           ``Discrete(A)``, the layout of the PettingZoo env (``midnight_env.env``)
Observation space      ``Box(D,) float32``: the learner's view (layout: ``midnight_env.core.observation``)
Legal actions          ``action_masks()`` (bool, as sb3-contrib's MaskablePPO expects) and
                       ``info["action_mask"]`` (int8)
Reward                 the learner's own: ``reward="points"`` minus the change of its spooky points
                       from one of its decisions to the next (opponents' turns and Hugo included),
                       ``reward="rank"`` +1 … -1 at the end only
Episode end            terminated at the game's end, truncated after ``max_turns`` rolls
=====================  ==========================================================================

Opponents are agents (``midnight_env.arena.registry``), given as specs (``"random"``,
``"search:budget=200"``) or instances: one for every other seat, listed clockwise from the learner
(the next seat to roll first), or a single one that takes every other seat. ``seat`` is the
learner's seat, or ``"random"`` for a seat drawn at every reset from the env's seeded generator.
``info`` holds ``seat``, ``action_mask`` and, at the end, ``spooky_points``, ``rank``, ``winner``.

Illegal actions: Gymnasium's contract is that every action of the space can be stepped
(``check_env`` samples actions without the mask), so the default here is ``illegal="penalize"``:
a legal-but-wrong action ends the episode with ``illegal_reward`` (as bad as the worst game).
``illegal="raise"`` raises ``ActionError`` naming the action, its meaning and the legal ones.
An action outside the space always raises.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from midnight_env.arena.agent import Agent, Decisions, decide
from midnight_env.arena.registry import make_agent
from midnight_env.core.actions import ActionError
from midnight_env.core.config import ConfigError
from midnight_env.core.dice import agent_streams
from midnight_env.core.engine import Engine, check_actions
from midnight_env.core.observation import observation_layout
from midnight_env.core.one_game import env_kernels, env_ref_args
from midnight_env.core.scoring import rank_rewards, ranks
from midnight_env.core.state import OVER
from midnight_env.envs.env_common import EnvOptions, check_render_mode
from midnight_env.infra import checks
from midnight_env.infra.seeds import SEED_LIMIT, check_seed


def _nobody(k: int) -> str:
    """The env has one game and one learner: its action messages name neither."""
    return ""


def make_opponents(opponents: Any, num_players: int) -> list:
    """One agent per relative seat 1..N-1 (clockwise from the learner) from specs or instances."""
    if isinstance(opponents, (str, Agent)):
        opponents = [opponents]
    opponents = list(opponents)
    others = num_players - 1
    if others == 0:  # a solo game against Hugo
        return []
    if len(opponents) == 1:
        opponents = opponents * others
    if len(opponents) != others:
        raise ConfigError(f"got {len(opponents)} opponents for {others} other seats: give one for every "
                          f"other seat (clockwise from the learner) or a single one for all")
    built: dict[str, Agent] = {}
    result = []
    for spec in opponents:
        if isinstance(spec, Agent):
            result.append(spec)
        elif isinstance(spec, str):
            if spec not in built:  # one instance per spec, so its games are decided in one call
                built[spec] = make_agent(spec)
            result.append(built[spec])
        else:
            raise ConfigError(f"opponent {spec!r} is neither an agent spec (str) nor an Agent "
                              "(midnight_env.arena.agent.Agent)")
    return result


def check_seat(seat: Any, num_players: int) -> int | str:
    if seat == "random":
        return seat
    return checks.integer("seat=", seat, 0, num_players - 1, allowed=f"0..{num_players - 1} or 'random'",
                          error=ConfigError)


class SingleAgentEnv(gymnasium.Env):
    """One learning seat of a game against opponent agents (see the module docstring)."""

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 2}

    def __init__(self, variant: str = "midnight_party", num_players: int = 4,
                 opponents: Sequence[Any] | str = ("random",), seat: int | str = 0,
                 render_mode: str | None = None, reward: str = "points", auto_forced: bool = False,
                 illegal: str = "penalize", illegal_reward: float | None = None, render_size: int = 640,
                 **options: Any):
        check_render_mode(render_mode, self.metadata["render_modes"])
        self.options = EnvOptions(reward=reward, auto_forced=auto_forced, illegal=illegal,
                                  illegal_reward=illegal_reward, render_size=render_size)
        self.engine = Engine(variant, num_players, **options)
        n = self.engine.num_players
        self.seat_option = check_seat(seat, n)
        self.opponents = make_opponents(opponents, n)
        self.reward_mode = reward
        self.auto_forced = bool(auto_forced)
        self.illegal = illegal
        self.illegal_reward = self.options.penalty(self.engine)
        self.render_mode = render_mode
        self.render_size = int(render_size)
        lay = observation_layout(self.engine)
        self.observation_space = spaces.Box(lay.low, lay.high, dtype=np.float32)
        self.action_space = spaces.Discrete(self.engine.num_actions)
        self.metadata = dict(self.metadata, name=f"{variant}_single_v0")
        self.game_state = None
        self.seat = self.seat_option if isinstance(self.seat_option, int) else 0
        self._games = np.zeros(1, np.int64)
        self._lay = lay
        self._ref_state = self._ref = None  # the game's handle for the observation (``core.one_game``), and its state
        self._kernels = None  # one_game.EnvKernels: compiled once, for the types of the first game

    # -- gymnasium API --------------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        if seed is not None:
            check_seed(seed)
        super().reset(seed=seed)  # seeds self.np_random: the source of game seeds and random seats
        game_seed = seed if seed is not None else int(self.np_random.integers(SEED_LIMIT))
        if self.seat_option == "random":
            self.seat = int(self.np_random.integers(self.engine.num_players))
        self.seed_used = game_seed
        self.game_state = self.engine.new_games([game_seed])
        self._agent_rng = agent_streams([game_seed])
        self._points = int(self.game_state.spooky[0, self.seat])
        self._over = False
        self._play_others()
        return self._observation(), self._info()

    def step(self, action):
        if self.game_state is None:
            raise RuntimeError("step() called before reset(): call env.reset() first")
        if self._over:
            raise RuntimeError("step() called after the episode ended: call env.reset() first")
        s = self.game_state
        if isinstance(action, (int, np.integer)) and not isinstance(action, bool) and 0 <= action < self.action_space.n:
            a = int(action)
        else:  # the check names what is wrong
            a = int(check_actions(self.engine, s, action, none=False, legality=False, single=True, where=_nobody)[0])
        if not s.legal[0, a]:
            try:
                check_actions(self.engine, s, a, none=False, single=True, where=_nobody)
            except ActionError as err:
                if self.illegal == "raise":
                    raise
                message = str(err)
            self._over = True
            info = self._info()
            info.update(illegal_action=a, message=message)
            return self._observation(), self.illegal_reward, True, False, info
        self.engine.step(s, np.array([a], np.int64), check=False)
        self._play_others()
        now = int(s.spooky[0, self.seat])
        reward = float(self._points - now) if self.reward_mode == "points" else 0.0
        self._points = now
        terminated = truncated = False
        if s.phase[0] == OVER:
            self._over = True
            truncated = bool(s.truncated[0])
            terminated = not truncated
            if self.reward_mode == "rank":
                reward = float(rank_rewards(s.spooky[0:1])[0, self.seat])
        return self._observation(), reward, terminated, truncated, self._info()

    def action_masks(self) -> np.ndarray:
        """(A,) bool legal actions of the learner (all False once the episode is over)."""
        if self.game_state is None:
            raise RuntimeError("action_masks() called before reset(): call env.reset() first")
        if self._over:
            return np.zeros(self.action_space.n, bool)
        return self.game_state.legal[0].astype(bool)

    def render(self):
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode: pass render_mode='ansi' or 'rgb_array'")
            return None
        from midnight_env.render import render_ansi, render_rgb

        if self.render_mode == "rgb_array":
            return render_rgb(self.engine, self.game_state, 0, size=self.render_size)
        return render_ansi(self.engine, self.game_state, 0, color=True)

    # -- actions in words ----------------------------------------------------------------------
    def action_to_notation(self, action: int) -> str:
        return self.engine.layout.to_notation(int(action), int(self.game_state.roll[0]))

    def notation_to_action(self, text: str) -> int:
        return self.engine.layout.from_notation(text, int(self.game_state.roll[0]))

    # -- internals -----------------------------------------------------------------------------
    def _play_others(self) -> None:
        """Let the opponents (and, with ``auto_forced``, the env) decide until the learner has a real choice."""

        s, n = self.game_state, self.engine.num_players
        while s.phase[0] != OVER:
            player = int(s.player[0])
            if player == self.seat:
                if not self.auto_forced or not self.engine.play_forced(s)[0]:
                    return
                continue
            agent = self.opponents[(player - self.seat) % n - 1]
            actions = decide(agent, Decisions(self.engine, s, self._games, self._agent_rng,
                                                np.array([self.seed_used])))
            self.engine.step(s, actions)  # checked: a bad opponent gets a clear error

    def _observation(self) -> np.ndarray:
        """The learner's view, by one compiled call on the game's handle (numba's dispatch of the
        batch encoder cost more than the rest of a learner's step with random opponents)."""
        s = self.game_state
        if self._ref_state is not s:  # a new game: its handle
            ref_args = env_ref_args(self.engine, s)
            if self._kernels is None:
                self._kernels = env_kernels(ref_args)
            self._ref, self._ref_state = self._kernels.make_ref(*ref_args), s
        obs = np.empty(self._lay.size, np.float32)
        self._kernels.observe(self._ref, self.seat, obs)
        return obs

    def _info(self) -> dict:
        s = self.game_state
        info = {"seat": self.seat,
                "action_mask": (s.legal[0].copy() if not self._over
                                else np.zeros(self.action_space.n, np.int8))}
        if s.phase[0] == OVER:
            rank = int(ranks(s.spooky[0:1])[0, self.seat])
            info.update(spooky_points=int(s.spooky[0, self.seat]), rank=rank, winner=rank == 1)
        return info


__all__ = ["SingleAgentEnv", "make_opponents"]
