"""The PettingZoo env in the form RLlib's PettingZoo route takes.

RLlib loads a PettingZoo AEC env through ``ray.rllib.env.wrappers.pettingzoo_env.PettingZooEnv``
(``register_env("midnight", lambda config: PettingZooEnv(aec_env))``). Three things stand between
:func:`midnight_env.env` and that route, and this module settles them:

- RLlib's models take no dict observation; its action-masking module
  (``ray.rllib.examples.rl_modules.classes.action_masking_rlm.ActionMaskingTorchRLModule``) takes
  exactly ``{"observations": Box(D,), "action_mask": Box(0, 1, (A,))}``. :class:`RLlibObservations`
  renames ``observation`` to ``observations``; the mask stays PettingZoo's int8 (the module takes
  its logarithm, which torch computes in floats);
- RLlib's env check (``check_multiagent_environments``, run by every env runner unless
  ``disable_env_checking``) steps one action sampled from the action space, without the mask.
  :func:`rllib_env` builds the env with ``illegal="penalize"``: such an action ends the game with the
  offender's ``illegal_reward`` (a bad outcome, never an exception, and never silently replaced by
  a legal one), so the check passes and a masked policy never meets it;
- the turns: one agent decides at a time and the next one is whoever decides next, which
  ``PettingZooEnv`` reports as an observation for that agent alone; every agent receives its
  final reward when the game ends.

``rllib_env(**config)`` is the env creator: ``register_env("midnight", rllib_env)`` with an
``env_config`` of the env's keywords (``variant``, ``num_players``, ``reward``, rule options).
Only :func:`rllib_env` imports ray; the wrapper itself is plain PettingZoo.
"""

from __future__ import annotations

from typing import Any

from gymnasium import spaces
from pettingzoo.utils.wrappers import BaseWrapper

from midnight_env.envs.aec import MidnightEnv, env


class RLlibObservations(BaseWrapper):
    """The AEC env with observations ``{"observations": (D,) float32, "action_mask": (A,) int8}``."""

    def __init__(self, aec_env: MidnightEnv):
        super().__init__(aec_env)
        inner = aec_env.observation_space(aec_env.possible_agents[0])
        self._space = spaces.Dict({"observations": inner["observation"], "action_mask": inner["action_mask"]})

    def observation_space(self, agent: str) -> spaces.Dict:
        return self._space

    def observe(self, agent: str) -> dict:
        obs = self.env.observe(agent)
        return {"observations": obs["observation"], "action_mask": obs["action_mask"]}


def rllib_aec_env(variant: str = "midnight_party", num_players: int = 4, illegal: str = "penalize",
                  **options: Any) -> RLlibObservations:
    """The AEC env (order checks on) wrapped for RLlib; ``illegal="penalize"`` by default (see above)."""
    return RLlibObservations(env(variant, num_players, illegal=illegal, **options))


def rllib_env(config: dict | None = None, **options: Any):
    """RLlib's ``PettingZooEnv`` of :func:`rllib_aec_env`: an env creator for ``register_env``.

    ``config`` is RLlib's ``env_config`` (an ``EnvContext``, a dict of the env's keywords);
    keywords may also be given directly.
    """
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv

    return PettingZooEnv(rllib_aec_env(**{**dict(config or {}), **options}))


__all__ = ["RLlibObservations", "rllib_aec_env", "rllib_env"]
