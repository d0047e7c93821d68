"""Every adapter of the engine to an RL library (docs/ARCHITECTURE.md).

- ``aec`` (``midnight_v0``): the PettingZoo AEC env and its environment card;
- ``gym_env``, ``vector``, ``sb3_vec``: Gymnasium's single-agent and vector envs, SB3's ``VecEnv``;
- ``seat_vector``: one learning seat per game for Gymnasium's vector wrappers;
- ``rllib``, ``openspiel``: RLlib's PettingZoo route and the OpenSpiel games;
- ``env_common``: what every env shares; ``registration``: the Gymnasium ids.

The ids are registered when this package is first imported (any env module imports it), where
Gymnasium is installed: the OpenSpiel bridge needs none of it.
"""

from importlib.util import find_spec

if find_spec("gymnasium") is not None:
    from midnight_env.envs import registration  # noqa: F401
