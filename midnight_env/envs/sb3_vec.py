"""A stable-baselines3 ``VecEnv``: one learning seat per game against batched opponents.

``SB3VecEnv(num_envs, variant, num_players, opponents=["random"], seat=0, seed=s)`` is
:class:`~midnight_env.envs.seat_vector.SeatVectorEnv` in SB3's ``VecEnv`` API: ``num_envs`` games on one
batched engine. The learner holds ``seat`` in every game (or ``seat="random"``: a seat drawn from
each game's seed); after its actions the opponents (agents by spec or instance, one per other
seat clockwise from the learner, or a single one for all) decide every waiting game in one call
per agent until each game is back at the learner's decision. Masks come from
``env_method("action_masks")``, as sb3-contrib's MaskablePPO asks for them.

Observations are ``Box(D,) float32`` from the learner's view; rewards the learner's own
(``reward="points"`` or ``"rank"``, as :class:`~midnight_env.envs.vector.VectorEnv`); a finished game
is restarted at once (SB3's convention) with ``infos[i]["terminal_observation"]``,
``"TimeLimit.truncated"``, ``"spooky_points"`` and ``"rank"``. Game i is seeded like the vector
env's: ``seed + i``, then ``seed + i + k*num_envs`` for its k-th restart.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode
from stable_baselines3.common.vec_env import VecEnv

from midnight_env.envs.seat_vector import SeatVectorEnv


class SB3VecEnv(VecEnv):
    """See the module docstring."""

    def __init__(self, num_envs: int, variant: str = "midnight_party", num_players: int = 4,
                 opponents: Sequence[Any] | str = ("random",), seat: int | str = 0, seed: int | None = None,
                 reward: str = "points", auto_forced: bool = False, **options: Any):
        # SB3 restarts a finished game at once: SAME_STEP, the final observation in the info
        self.seat_env = SeatVectorEnv(num_envs, variant, num_players, opponents=opponents, seat=seat, seed=seed,
                                      reward=reward, auto_forced=auto_forced,
                                      autoreset_mode=AutoresetMode.SAME_STEP, **options)
        self.venv = self.seat_env.venv
        self.engine = self.seat_env.engine
        self.seat_option = self.seat_env.seat_option
        self.opponents = self.seat_env.opponents
        self.render_mode = None
        super().__init__(num_envs, self.seat_env.single_observation_space, self.seat_env.single_action_space)
        self._actions: np.ndarray | None = None

    @property
    def seats(self) -> np.ndarray:
        """(B,) the learner's seat in each game."""
        return self.seat_env.seats

    # -- VecEnv API ------------------------------------------------------------------------------
    def reset(self):
        seeds = None if any(s is None for s in self._seeds) else list(self._seeds)
        obs, info = self.seat_env.reset(seed=seeds)
        self._reset_seeds()
        self.reset_infos = [{"seat": int(s)} for s in info["seat"]]
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions).reshape(-1)

    def step_wait(self):
        obs, rewards, terminations, truncations, info = self.seat_env.step(self._actions)
        dones = terminations | truncations
        infos: list[dict] = [{} for _ in range(self.num_envs)]
        if dones.any():
            final = info["final_info"]
            for g in np.flatnonzero(dones):
                infos[g].update({
                    "terminal_observation": info["final_obs"][g],
                    "TimeLimit.truncated": bool(truncations[g]),
                    "spooky_points": int(final["spooky_points"][g]),
                    "rank": int(final["rank"][g]),
                    "seat": int(final["seat"][g]),
                })
        return obs, rewards, dones, infos

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
        self.seat_env.close()


__all__ = ["SB3VecEnv"]
