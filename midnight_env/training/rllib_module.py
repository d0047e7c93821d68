"""The RLModule RLlib trains here: its default PPO network, with illegal actions masked out.

The env's observation is ``{"observations": (D,), "action_mask": (A,)}`` (:mod:`midnight_env.envs.rllib`).
The network (RLlib's default PPO module: an actor and a critic MLP, or one shared, and linear
``pi`` and ``vf`` heads) reads ``observations`` only; the mask pushes the logits of illegal actions
to the float minimum, so they get no probability when sampling, no weight in the loss, and the
value function never sees the mask. RLlib ships an example module of this kind on a base class it
has deprecated; this one stands on the current one (``DefaultPPOTorchRLModule``). Its network is
what the project's model format holds (:func:`midnight_env.training.export.rllib_weights`).

Imports ray and torch: loaded by :mod:`midnight_env.training.rllib_ppo` when a run starts.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import torch
from ray.rllib.algorithms.ppo.torch.default_ppo_torch_rl_module import DefaultPPOTorchRLModule
from ray.rllib.core.columns import Columns
from ray.rllib.utils.torch_utils import FLOAT_MIN


class MaskedPPOModule(DefaultPPOTorchRLModule):
    """RLlib's default PPO network on ``obs["observations"]``, its logits masked by ``obs["action_mask"]``."""

    def __init__(self, *, observation_space: gym.Space | None = None, **kwargs: Any):
        if not (isinstance(observation_space, gym.spaces.Dict)
                and set(observation_space.spaces) == {"observations", "action_mask"}):
            raise ValueError(f"MaskedPPOModule needs the observation space Dict(observations, action_mask) of "
                             f"midnight_env.envs.rllib, got {observation_space!r}")
        self.observation_space_with_mask = observation_space
        super().__init__(observation_space=observation_space["observations"], **kwargs)  # the network's input

    def setup(self) -> None:
        super().setup()
        self.observation_space = self.observation_space_with_mask  # what RLlib checks the env's against

    @staticmethod
    def _split(batch: dict) -> tuple[torch.Tensor | None, dict]:
        """(the mask, the batch with the bare observations); the given batch is left as it is."""
        obs = batch[Columns.OBS]
        if not isinstance(obs, dict):
            return None, batch
        return obs["action_mask"], {**batch, Columns.OBS: obs["observations"]}

    @staticmethod
    def _masked(out: dict, mask: torch.Tensor | None) -> dict:
        if mask is not None:
            out[Columns.ACTION_DIST_INPUTS] = out[Columns.ACTION_DIST_INPUTS] + torch.clamp(
                torch.log(mask.float()), min=FLOAT_MIN)
        return out

    def _forward(self, batch: dict, **kwargs: Any) -> dict:
        mask, batch = self._split(batch)
        return self._masked(super()._forward(batch, **kwargs), mask)

    def _forward_train(self, batch: dict, **kwargs: Any) -> dict:
        mask, batch = self._split(batch)
        return self._masked(super()._forward_train(batch, **kwargs), mask)

    def compute_values(self, batch: dict, embeddings: Any = None) -> torch.Tensor:
        return super().compute_values(self._split(batch)[1], embeddings)


__all__ = ["MaskedPPOModule"]
