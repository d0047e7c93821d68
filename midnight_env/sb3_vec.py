"""A stable-baselines3 ``VecEnv``: one learning seat per game against batched opponents.

``SB3VecEnv(num_envs, variant, num_players, opponents=["random"], seat=0, seed=s)`` runs
``num_envs`` games on one :class:`~midnight_env.vector.VectorEnv`. The learner holds ``seat`` in
every game (or ``seat="random"``: a seat drawn from each game's seed); after its actions the
opponents (agents by spec or instance, one per other seat clockwise from the learner, or a
single one for all) decide every waiting game in one call per agent until each game is back at
the learner's decision. Masks come from ``env_method("action_masks")``, as sb3-contrib's
MaskablePPO asks for them.

Observations are ``Box(D,) float32`` from the learner's view; rewards the learner's own
(``reward="points"`` or ``"rank"``, as :class:`~midnight_env.vector.VectorEnv`); a finished game
is restarted at once (SB3's convention) with ``infos[i]["terminal_observation"]``,
``"TimeLimit.truncated"``, ``"spooky_points"`` and ``"rank"``. Game i is seeded like the vector
env's: ``seed + i``, then ``seed + i + k*num_envs`` for its k-th restart.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from stable_baselines3.common.vec_env import VecEnv

from midnight_env.agent import Decisions, decide
from midnight_env.dice import agent_streams
from midnight_env.gym_env import check_seat, make_opponents
from midnight_env.observation import observation_layout
from midnight_env.vector import VectorEnv


class SB3VecEnv(VecEnv):
    """See the module docstring."""

    def __init__(self, num_envs: int, variant: str = "midnight_party", num_players: int = 4,
                 opponents: Sequence[Any] | str = ("random",), seat: int | str = 0, seed: int | None = None,
                 reward: str = "points", auto_forced: bool = False, **options: Any):
        self.venv = VectorEnv(num_envs, variant, num_players, seed=seed, reward=reward, auto_forced=auto_forced,
                              **options)
        self.engine = self.venv.engine
        n = self.engine.num_players
        self.seat_option = check_seat(seat, n)
        self.opponents = make_opponents(opponents, n)
        self.render_mode = None
        # agent index per relative seat 1..N-1, so that each agent instance decides all its games at once
        self._agents = list({id(a): a for a in self.opponents}.values())
        self._agent_of = np.array([-1] + [self._agents.index(a) for a in self.opponents], np.int64)
        lay = observation_layout(self.engine)
        super().__init__(num_envs, spaces.Box(lay.low, lay.high, dtype=np.float32),
                         spaces.Discrete(self.engine.num_actions))
        self.seats = np.zeros(num_envs, np.int64)
        self._actions: np.ndarray | None = None
        self._obs: np.ndarray | None = None

    # -- VecEnv API ------------------------------------------------------------------------------
    def reset(self):
        seeds = None if any(s is None for s in self._seeds) else list(self._seeds)
        self.venv.reset(seed=seeds)
        self._reset_seeds()
        self._agent_rng = agent_streams(self.venv.seeds)
        self.seats = self._draw_seats(self.venv.seeds)
        done = np.zeros(self.num_envs, np.bool_)
        rewards = np.zeros(self.num_envs, np.float32)
        infos: list[dict] = [{} for _ in range(self.num_envs)]
        self._play_opponents(done, rewards, infos)
        self.reset_infos = [{"seat": int(s)} for s in self.seats]
        return self._learner_obs()

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions).reshape(-1)

    def step_wait(self):
        done = np.zeros(self.num_envs, np.bool_)
        rewards = np.zeros(self.num_envs, np.float32)
        infos: list[dict] = [{} for _ in range(self.num_envs)]
        self._absorb(self.venv.advance(self._actions), done, rewards, infos)
        self._play_opponents(done, rewards, infos)
        return self._learner_obs(), rewards, done, infos

    def action_masks(self) -> np.ndarray:
        """(B, A) bool legal actions of the learner in every game."""
        return self.venv.state.legal.astype(bool)

    def env_method(self, method_name: str, *method_args, indices=None, **method_kwargs) -> list:
        if method_name != "action_masks":
            raise AttributeError(f"SB3VecEnv has no per-game method {method_name!r}: only 'action_masks'")
        legal = self.venv.state.legal
        return [legal[i].astype(bool) for i in self._get_indices(indices)]

    def get_attr(self, attr_name: str, indices=None) -> list:
        if not hasattr(self, attr_name):
            raise AttributeError(f"SB3VecEnv has no attribute {attr_name!r}")
        return [getattr(self, attr_name) for _ in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices=None) -> None:
        setattr(self, attr_name, value)

    def env_is_wrapped(self, wrapper_class, indices=None) -> list[bool]:
        return [False for _ in self._get_indices(indices)]

    def close(self) -> None:
        self.venv.close()

    # -- internals --------------------------------------------------------------------------------
    def _draw_seats(self, seeds: np.ndarray) -> np.ndarray:
        if self.seat_option == "random":
            return (agent_streams(seeds, stream=2) % np.uint64(self.engine.num_players)).astype(np.int64)
        return np.full(len(seeds), self.seat_option, np.int64)

    def _play_opponents(self, done: np.ndarray, rewards: np.ndarray, infos: list[dict]) -> None:

        venv, n = self.venv, self.engine.num_players
        while True:
            rel = (venv.state.player.astype(np.int64) - self.seats) % n
            waiting = rel != 0
            if not waiting.any():
                return
            actions = np.full(self.num_envs, -1, np.int64)
            holder = self._agent_of[rel]
            for k, agent in enumerate(self._agents):
                games = np.flatnonzero(waiting & (holder == k))
                if len(games):
                    actions[games] = decide(agent, Decisions(self.engine, venv.state, games, self._agent_rng,
                                                                 venv.seeds))
            self._absorb(venv.advance(actions), done, rewards, infos)

    def _absorb(self, step, done: np.ndarray, rewards: np.ndarray, infos: list[dict]) -> None:
        """Add one vector step to the learner's rewards; close finished games, set up their next."""
        step_rewards, terminations, truncations, info = step
        live = ~done  # a game restarted within this call pays nothing more to the finished episode
        rewards[live] += step_rewards[np.flatnonzero(live), self.seats[live]]
        if "final_games" not in info:
            return
        ended = info["final_games"]
        for k, g in enumerate(ended):
            seat = self.seats[g]
            infos[g].update({
                "terminal_observation": info["final_observation"][k, seat],
                "TimeLimit.truncated": bool(truncations[g]),
                "spooky_points": int(info["final_points"][k, seat]),
                "rank": int(info["final_ranks"][k, seat]),
                "seat": int(seat),
            })
        done[ended] = True
        seeds = self.venv.seeds[ended]
        self._agent_rng[ended] = agent_streams(seeds)
        self.seats[ended] = self._draw_seats(seeds)

    def _learner_obs(self) -> np.ndarray:
        return self.venv.observations()["observation"]


__all__ = ["SB3VecEnv"]
