"""midnight-env: the Midnight Party / Escape from the Hidden Castle rules engine and RL environments."""

import sys

from midnight_env import kernel_cache  # noqa: F401  (before any kernel runs: a damaged cache file recompiles)
from midnight_env.actions import ActionError, ActionLayout
from midnight_env.board import Board, BoardError, load_board
from midnight_env.config import VARIANTS, ConfigError, GameConfig, make_config
from midnight_env.dice import HUGO, agent_streams
from midnight_env.engine import ENGINE_VERSION, Engine
from midnight_env.state import MOVE, OVER, PLACE, ROLL, GameState

__version__ = "0.1.0"

# The environments load PettingZoo / Gymnasium / stable-baselines3: imported on first use (PEP 562),
# so that importing the engine stays free of them.
_LAZY = {
    "env": "midnight_env.aec",
    "raw_env": "midnight_env.aec",
    "SingleAgentEnv": "midnight_env.gym_env",
    "VectorEnv": "midnight_env.vector",
    "SeatVectorEnv": "midnight_env.seat_vector",
    "SB3VecEnv": "midnight_env.sb3_vec",
}

__all__ = ["ActionError", "ActionLayout", "Board", "BoardError", "load_board", "VARIANTS", "ConfigError", "GameConfig",
           "make_config", "HUGO", "agent_streams", "ENGINE_VERSION", "Engine", "MOVE", "OVER", "PLACE", "ROLL",
           "GameState", *_LAZY]


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'midnight_env' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


# The Gymnasium ids (midnight_env.registration), where gymnasium is loaded already: the engine
# itself never imports it (``import gymnasium, midnight_env`` is the usual order).
if "gymnasium" in sys.modules:
    from midnight_env import registration  # noqa: F401
