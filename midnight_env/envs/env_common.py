"""What every environment of the package shares: its options and its observation space (forced
play is the engine's: ``Engine.play_forced``).

The PettingZoo env (``aec``), the single-agent Gymnasium env (``gym_env``), the vector env
(``vector``) and the SB3 adapter (``sb3_vec``) take the same environment options, with the same
defaults and the same checks: :class:`EnvOptions`. Rule options (``guests_per_player`` ...) are
the engine's (``midnight_env.core.config``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from gymnasium import spaces

from midnight_env.core.config import ConfigError
from midnight_env.core.engine import Engine
from midnight_env.core.observation import observation_layout
from midnight_env.infra import checks

REWARDS = ("points", "rank")
ILLEGAL_MODES = ("raise", "penalize")


@dataclass(frozen=True)
class EnvOptions:
    """The environment options besides the rules, checked when made (ConfigError names a bad one).

    reward: ``"points"`` (minus each change of a seat's spooky points) or ``"rank"`` (+1 .. -1 at
    the end); auto_forced: the env plays decisions with exactly one legal choice itself; illegal:
    ``"raise"`` an ActionError for a legal-but-wrong action, or ``"penalize"``: end the game with
    ``illegal_reward`` for the offender (None: as bad as the worst game, so a way out never pays);
    render_size: pixels of the ``rgb_array`` picture.
    """

    reward: str = "points"
    auto_forced: bool = False
    illegal: str = "raise"
    illegal_reward: float | None = None
    render_size: int = 640

    def __post_init__(self):
        if self.reward not in REWARDS:
            raise ConfigError(f"option reward={self.reward!r} is not allowed: allowed are {', '.join(REWARDS)}")
        if not isinstance(self.auto_forced, (bool, np.bool_)):
            raise ConfigError(f"option auto_forced={self.auto_forced!r} is not allowed: allowed are True, False")
        if self.illegal not in ILLEGAL_MODES:
            raise ConfigError(f"option illegal={self.illegal!r} is not allowed: allowed are "
                              f"{', '.join(ILLEGAL_MODES)}")
        reward = self.illegal_reward
        if reward is not None and (isinstance(reward, bool) or not isinstance(reward, (int, float, np.number))
                                   or not np.isfinite(reward)):
            raise ConfigError(f"option illegal_reward={reward!r} is not allowed: allowed are finite numbers or None")
        checks.integer("option render_size=", self.render_size, 64, error=ConfigError)

    def penalty(self, engine: Engine) -> float:
        """The reward of an illegal action with ``illegal="penalize"``: ``illegal_reward``, or by
        default as bad as the worst game: -1 for ranks, minus the most points a player can collect."""
        if self.illegal_reward is not None:
            return float(self.illegal_reward)
        if self.reward == "rank":
            return -1.0
        lay = observation_layout(engine)
        return -float(np.ceil(float(lay.high[lay.section("spooky")][0]) * lay.points_scale))


def check_render_mode(render_mode: str | None, allowed: list[str]) -> None:
    if render_mode is not None and render_mode not in allowed:
        raise ConfigError(f"render_mode={render_mode!r} is not allowed: allowed are None, "
                          f"{', '.join(map(repr, allowed))}")


def observation_space(engine: Engine) -> spaces.Dict:
    """The observation space of one game: ``{"observation": Box (D,), "action_mask": Box (A,) int8}``."""
    lay = observation_layout(engine)
    return spaces.Dict({
        "observation": spaces.Box(lay.low, lay.high, dtype=np.float32),
        "action_mask": spaces.Box(0, 1, (engine.num_actions,), dtype=np.int8),
    })
