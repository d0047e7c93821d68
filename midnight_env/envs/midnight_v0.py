"""The PettingZoo AEC env, version 0 (PettingZoo's naming: ``from midnight_env import midnight_v0``).

The environment card, and the version history, are in :mod:`midnight_env.envs.aec`.
"""

from midnight_env.envs.aec import env, raw_env

__all__ = ["env", "raw_env"]
