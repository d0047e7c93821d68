"""Many games with one learning seat each: the vector env in the form Gymnasium's wrappers expect.

``SeatVectorEnv(num_envs, variant, num_players, opponents=["random"], seat=0, seed=s)`` is
:class:`~midnight_env.envs.gym_env.SingleAgentEnv` batched: ``num_envs`` games on one
:class:`~midnight_env.envs.vector.VectorEnv`, the learner holding ``seat`` in every game (or
``seat="random"``: a seat drawn from each game's seed) and the opponents (agents by spec or
instance, one per other seat clockwise from the learner, or one for all) deciding every waiting
game in one call per agent until each game is back at the learner's decision.

======================  ====================================================================
observations             ``Box(D,) float32`` per game, the learner's view: (B, D)
actions                  (B,) ints of ``Discrete(A)``, the learner's; legal ones only
                         (``ActionError`` otherwise)
rewards                  (B,) float32, the learner's own (``reward="points"`` or ``"rank"``)
terminations,            (B,) bool; truncation: the ``max_turns`` rule option
truncations
info                     Gymnasium's vector form, every key with its ``_key`` mask:
                         ``seat``, ``action_mask`` (B, A) int8 (all zeros for a finished game);
                         at a game's end ``spooky_points``, ``rank``, ``winner``
``action_masks()``       (B, A) bool, as sb3-contrib's MaskablePPO asks for them
======================  ====================================================================

Autoreset: ``autoreset_mode=AutoresetMode.NEXT_STEP`` (the default, Gymnasium's own): a game
that ends in a step returns its terminal observation, and the next step restarts it, ignoring
that game's action (reward 0, the new game's observation and ``seat`` / ``action_mask``).
``AutoresetMode.SAME_STEP``: the game restarts within the step that ended it; ``obs`` already
shows the next game, and ``info["final_obs"]`` (an object array) and ``info["final_info"]``
(a dict of arrays) hold what the finished one returned, masked by ``_final_obs`` /
``_final_info``. Either way the returns are exactly those of Gymnasium's
``SyncVectorEnv([SingleAgentEnv(...)] * B, autoreset_mode=...)`` reset with the same seed, up
to each game's first end (their later games are seeded differently), on one batched engine.

Use this one for a learner against fixed opponents with Gymnasium's vector wrappers
(``RecordEpisodeStatistics``, ``NormalizeReward``, ``DictInfoToList`` ...), which take one reward
per game. :class:`~midnight_env.envs.vector.VectorEnv` is the multi-seat form, for self-play: whichever
seat decides is the agent, rewards are (B, N) for every seat, and its finished games' results
come as k rows. Seeds as the vector env's: game i of ``seed=s`` is seeded ``s + i``, its k-th
restart ``s + i + k*num_envs``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from midnight_env.arena.agent import Decisions, decide
from midnight_env.core.config import ConfigError
from midnight_env.core.dice import agent_streams
from midnight_env.core.engine import check_actions
from midnight_env.core.observation import observation_layout
from midnight_env.envs.gym_env import check_seat, make_opponents
from midnight_env.envs.vector import VectorEnv
from midnight_env.infra import checks

AUTORESET_MODES = (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP)


class SeatVectorEnv(gymnasium.vector.VectorEnv):
    """One learning seat per game against opponent agents (see the module docstring)."""

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}

    def __init__(self, num_envs: int, variant: str = "midnight_party", num_players: int = 4,
                 opponents: Sequence[Any] | str = ("random",), seat: int | str = 0, seed: int | None = None,
                 reward: str = "points", auto_forced: bool = False,
                 autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP, **options: Any):
        named = autoreset_mode.value if isinstance(autoreset_mode, AutoresetMode) else autoreset_mode
        mode = AutoresetMode(checks.choice("autoreset_mode=", named, [m.value for m in AUTORESET_MODES],
                                           error=ConfigError))
        # copy=False: every buffer the vector env hands out is read before its next step
        self.venv = VectorEnv(num_envs, variant, num_players, seed=seed, reward=reward, auto_forced=auto_forced,
                              copy=False, **options)
        self.engine = self.venv.engine
        n = self.engine.num_players
        self.num_envs = self.venv.num_envs
        self.seat_option = check_seat(seat, n)
        self.opponents = make_opponents(opponents, n)
        self.autoreset_mode = mode
        self.metadata = dict(self.metadata, autoreset_mode=mode, name=f"{variant}_seat_vector_v0")
        self.render_mode = None
        lay = observation_layout(self.engine)
        self.single_observation_space = spaces.Box(lay.low, lay.high, dtype=np.float32)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.single_action_space = spaces.Discrete(self.engine.num_actions)
        self.action_space = spaces.MultiDiscrete(np.full(self.num_envs, self.engine.num_actions))
        # agent index per relative seat 1..N-1, so that each agent instance decides all its games at once
        self._agents = list({id(a): a for a in self.opponents}.values())
        self._agent_of = np.array([-1] + [self._agents.index(a) for a in self.opponents], np.int64)
        self.seats = np.zeros(self.num_envs, np.int64)  # the learner's seat in each game
        self._agent_rng = np.zeros(self.num_envs, np.uint64)
        self._restart = np.zeros(self.num_envs, np.bool_)  # NEXT_STEP: ended last step, shown anew now

    @property
    def state(self):
        """The engine's batch (read it, never write it): every game waits for the learner."""
        return self.venv.state

    @property
    def seeds(self) -> np.ndarray:
        """(B,) seed of the game each slot is playing."""
        return self.venv.seeds

    # -- gymnasium API ---------------------------------------------------------------------------
    def reset(self, *, seed: int | Sequence[int] | None = None, options: dict | None = None):
        self.venv.reset(seed=seed)
        self._agent_rng = agent_streams(self.venv.seeds)
        self.seats = self._draw_seats(self.venv.seeds)
        self._restart[:] = False
        b = self.num_envs
        self._play_opponents(np.zeros(b, np.bool_), np.zeros(b, np.float32), None)
        info = self._decision_info(np.ones(b, np.bool_), {})
        return self._observations(), info

    def step(self, actions):
        if self.venv.state is None:
            raise RuntimeError("SeatVectorEnv.step() called before reset()")
        b = self.num_envs
        restart = self._restart.copy()  # NEXT_STEP: these games are shown anew, their actions ignored
        given = np.asarray(actions)
        if given.shape == (b,) and given.dtype.kind in "iu":
            given = np.where(restart, given.dtype.type(0), given)
        # -1 would leave a game waiting for the learner without a word: refused
        actions = check_actions(self.engine, self.venv.state, given, none=False, legality=False)
        actions = np.where(restart, -1, actions)
        ended = restart.copy()  # nothing after a game's end goes to its episode
        rewards = np.zeros(b, np.float32)
        results: dict[str, np.ndarray] = {}
        terminations = np.zeros(b, np.bool_)
        truncations = np.zeros(b, np.bool_)
        self._absorb(self.venv.advance(actions), ended, rewards, results, terminations, truncations)
        self._play_opponents(ended, rewards, (results, terminations, truncations))
        finished = terminations | truncations
        obs = self._observations()
        if self.autoreset_mode == AutoresetMode.NEXT_STEP:
            if finished.any():
                obs[finished] = results["obs"][finished]
            info = self._decision_info(~finished, self._end_info(finished, results))
            self._restart = finished
        else:
            info = self._decision_info(np.ones(b, np.bool_), {})
            if finished.any():
                final_obs = np.full(b, None, dtype=object)
                for i in np.flatnonzero(finished):
                    final_obs[i] = results["obs"][i]
                info.update(final_obs=final_obs, _final_obs=finished.copy(),
                            final_info=self._end_info(finished, results), _final_info=finished.copy())
        return obs, rewards, terminations, truncations, info

    def action_masks(self) -> np.ndarray:
        """(B, A) bool legal actions of the learner in every game (all False for a game that
        ended in the last step, with ``NEXT_STEP``: its next action is ignored)."""
        masks = self.venv.state.legal.astype(bool)
        masks[self._restart] = False
        return masks

    def close(self, **kwargs: Any) -> None:
        if hasattr(self, "venv"):  # not when the constructor refused its arguments
            self.venv.close()
        self.closed = True

    def __repr__(self) -> str:
        return (f"SeatVectorEnv({self.num_envs}, {self.engine.variant!r}, num_players={self.engine.num_players}, "
                f"seat={self.seat_option!r}, autoreset_mode={self.autoreset_mode.value!r})")

    # -- internals --------------------------------------------------------------------------------
    def _draw_seats(self, seeds: np.ndarray) -> np.ndarray:
        if self.seat_option == "random":
            return (agent_streams(seeds, stream=2) % np.uint64(self.engine.num_players)).astype(np.int64)
        return np.full(len(seeds), self.seat_option, np.int64)

    def _play_opponents(self, ended: np.ndarray, rewards: np.ndarray, results) -> None:
        """Let the opponents decide every game until each waits for the learner."""
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
            self._absorb(venv.advance(actions), ended, rewards, *(results or (None, None, None)))

    def _absorb(self, step, ended: np.ndarray, rewards: np.ndarray, results: dict | None,
                terminations: np.ndarray | None, truncations: np.ndarray | None) -> None:
        """Add one vector step to the learner's rewards; keep what finished games return, and set up
        their next game (its seat and the opponents' streams)."""
        step_rewards, _, step_truncations, info = step
        live = ~ended  # a game restarted within this call pays nothing more to the finished episode
        rewards[live] += step_rewards[np.flatnonzero(live), self.seats[live]]
        if "final_games" not in info:
            return
        games = info["final_games"].copy()
        if results is not None:  # (reset() discards them: no game ends before the learner's first decision)
            seats = self.seats[games]
            if not results:
                b, d = self.num_envs, self.single_observation_space.shape[0]
                results.update(obs=np.zeros((b, d), np.float32), seat=np.zeros(b, np.int64),
                               points=np.zeros(b, np.int64), rank=np.zeros(b, np.int64))
            results["obs"][games] = info["final_observation"][np.arange(len(games)), seats]
            results["seat"][games] = seats
            results["points"][games] = info["final_points"][np.arange(len(games)), seats]
            results["rank"][games] = info["final_ranks"][np.arange(len(games)), seats]
            truncated = step_truncations[games]
            truncations[games] = truncated
            terminations[games] = ~truncated
        ended[games] = True
        seeds = self.venv.seeds[games]
        self._agent_rng[games] = agent_streams(seeds)
        self.seats[games] = self._draw_seats(seeds)

    def _observations(self) -> np.ndarray:
        return self.venv.observations()["observation"].copy()

    def _decision_info(self, deciding: np.ndarray, info: dict) -> dict:
        """``seat`` and ``action_mask`` of every game: the learner's decision in the games
        ``deciding``; what ``info`` already holds (a finished game's) elsewhere."""
        seat = np.where(deciding, self.seats, info.get("seat", self.seats))
        mask = self.venv.state.legal.copy()
        mask[~deciding] = 0
        info.update(seat=seat, _seat=np.ones(self.num_envs, np.bool_), action_mask=mask,
                    _action_mask=np.ones(self.num_envs, np.bool_))
        return info

    def _end_info(self, finished: np.ndarray, results: dict) -> dict:
        """What a finished game's ``SingleAgentEnv.step`` info holds, in the vector form."""
        if not finished.any():
            return {}
        b = self.num_envs
        info = {"seat": results["seat"].copy(), "_seat": finished.copy(),
                "action_mask": np.zeros((b, self.engine.num_actions), np.int8), "_action_mask": finished.copy()}
        for key, value in (("spooky_points", results["points"]), ("rank", results["rank"]),
                           ("winner", results["rank"] == 1)):
            info[key] = np.where(finished, value, np.zeros_like(value))
            info[f"_{key}"] = finished.copy()
        return info


__all__ = ["SeatVectorEnv", "AUTORESET_MODES"]
