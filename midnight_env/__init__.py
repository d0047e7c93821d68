"""midnight-env: the Midnight Party / Escape from the Hidden Castle rules engine and RL environments."""

from midnight_env.actions import ActionError, ActionLayout
from midnight_env.board import Board, BoardError, load_board
from midnight_env.config import VARIANTS, ConfigError, GameConfig, make_config
from midnight_env.engine import ENGINE_VERSION, Engine, agent_streams
from midnight_env.state import HUGO, MOVE, OVER, PLACE, ROLL, GameState

__version__ = "0.1.0"
