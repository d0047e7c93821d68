"""midnight-env: the Midnight Party / Escape from the Hidden Castle rules engine and RL environments."""

import sys

# isort: off
from midnight_env.infra import kernel_cache  # noqa: F401  (before any kernel runs: a damaged cache file recompiles)
# isort: on
from midnight_env import _old_paths
from midnight_env.core.actions import ActionError, ActionLayout
from midnight_env.core.board import Board, BoardError, load_board
from midnight_env.core.config import VARIANTS, ConfigError, GameConfig, make_config
from midnight_env.core.dice import HUGO, agent_streams
from midnight_env.core.engine import ENGINE_VERSION, Engine
from midnight_env.core.state import MOVE, OVER, PLACE, ROLL, GameState

__version__ = "0.1.0"

# The modules moved into the layer packages (docs/ARCHITECTURE.md) still import by their old names
# (``midnight_env.records``, ``midnight_env.positions`` ...), as the same module objects.
_old_paths.install()

# The environments load PettingZoo / Gymnasium / stable-baselines3: imported on first use (PEP 562),
# so that importing the engine stays free of them.
_LAZY = {
    "env": "midnight_env.envs.aec",
    "raw_env": "midnight_env.envs.aec",
    "SingleAgentEnv": "midnight_env.envs.gym_env",
    "VectorEnv": "midnight_env.envs.vector",
    "SeatVectorEnv": "midnight_env.envs.seat_vector",
    "SB3VecEnv": "midnight_env.envs.sb3_vec",
    "midnight_v0": "midnight_env.envs",  # the versioned PettingZoo module (PettingZoo's naming)
}

__all__ = ["ActionError", "ActionLayout", "Board", "BoardError", "load_board", "VARIANTS", "ConfigError", "GameConfig",
           "make_config", "HUGO", "agent_streams", "ENGINE_VERSION", "Engine", "MOVE", "OVER", "PLACE", "ROLL",
           "GameState", *_LAZY]


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        module = importlib.import_module(_LAZY[name])
        # midnight_v0 is a module of the envs package, the rest are names of their modules
        value = importlib.import_module(f"{_LAZY[name]}.{name}") if name == "midnight_v0" else getattr(module, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'midnight_env' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


# The Gymnasium ids (midnight_env.envs.registration), where gymnasium is loaded already: the engine
# itself never imports it (``import gymnasium, midnight_env`` is the usual order).
if "gymnasium" in sys.modules:
    from midnight_env.envs import registration  # noqa: F401
