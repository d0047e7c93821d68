"""Many games stepped by one batched engine call: the environment for training at speed.

``VectorEnv(num_envs, variant, num_players, seed=s)`` holds ``B = num_envs`` games. At every step
each game has exactly one seat to decide (a placement or a move); ``step(actions)`` applies one
action per game, rolls the dice on, and returns the next decision of every game:

======================  ====================================================================
reset() -> obs, info     ``obs = {"observation": (B, D) float32, "action_mask": (B, A) int8}``,
                         each game seen by its deciding seat; ``info["agent"]`` (B,) deciding
                         seat, ``info["seed"]`` (B,) seed of each game
step(actions)            actions (B,) ints of ``Discrete(A)``; -1 leaves a game as it is
  -> obs, rewards,       rewards (B, N) float32 for every seat (absolute seat order);
     terminations,       terminations / truncations (B,) bool (truncation: ``max_turns``);
     truncations, info   info as after reset, plus the finished games (below)
autoreset                ``metadata["autoreset_mode"] = AutoresetMode.SAME_STEP``: a game that
                         ends in a step is restarted in that step, so ``obs`` already shows its
                         next game and every returned game has a decision to make
finished games           ``info["final_games"]`` (k,) their indices, ``info["final_observation"]``
                         (k, N, D) the terminal observation from every seat,
                         ``info["final_points"]`` (k, N) spooky points, ``info["final_ranks"]``
                         (k, N) ranks (1 = winner); their final rewards are in ``rewards``
seeds                    game i of ``VectorEnv(seed=s)`` is seeded ``s + i`` at the first reset;
                         its k-th restart (autoreset or a later ``reset()``) gets ``s + i + k*B``
======================  ====================================================================

This is the multi-seat form, for self-play: whichever seat decides is the agent, and rewards come
for every seat. Gymnasium's vector wrappers (``RecordEpisodeStatistics``, ``NormalizeReward``,
``DictInfoToList``) take one reward per game and per-game infos with ``_key`` masks: for a learner
in one seat against fixed opponents use :class:`~midnight_env.envs.seat_vector.SeatVectorEnv`.

Observation and action layout are those of the PettingZoo env (``midnight_env.env``); rewards:
``reward="points"`` minus the change of each seat's spooky points, ``reward="rank"`` the rank
reward at the end only (:func:`rank_rewards`). ``auto_forced=True`` plays decisions with exactly
one legal choice automatically (``info["forced"]`` counts them per game).

``copy=False`` returns the env's own buffers (observation, mask -- ``state.legal`` itself --,
rewards, flags and the arrays of ``info``): faster, but they change on the next step.
``advance(actions)`` is ``step`` without building observations and ``observations()`` builds
them, for drivers that let other policies move some seats in between (the SB3 adapter,
``midnight_env.envs.sb3_vec``); ``state`` is the engine's batch (read it, never write it). A game
depends only on its seed and its actions, never on the batch it runs in.

A step is one compiled call (checks, rules, rewards and observations in a pass over the batch, then
the finished games' results, final observations and restarts: ``midnight_env.core.vector_kernels``);
batches of ``midnight_env.infra.threads.PARALLEL_FROM`` games or more (1,024) may run it on all cores,
compiled for the env's rule set with its numbers as constants (``midnight_env.core.specialize``:
compiled the first time a rule set is used on a machine, then cached). Whether they do, the process
measures: threads where they are faster, one core on a machine busy with other work (the same games
either way; ``MIDNIGHT_PARALLEL_FROM`` fixes it: ``midnight_env.infra.threads``). Speeds and compile
times: BENCHMARKS.md. ``observation_space`` holds its bounds once, as read-only broadcast views
(``batched_space``), not once a game.
"""

from __future__ import annotations

from collections.abc import Sequence
from copy import deepcopy
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.spaces.box import array_short_repr
from gymnasium.vector import AutoresetMode

from midnight_env.core import specialize, vector_kernels
from midnight_env.core.actions import ActionError
from midnight_env.core.config import CASTLE_START_POINTS, ConfigError
from midnight_env.core.engine import Engine, check_actions
from midnight_env.core.observation import encode_deciding_parallel, encode_deciding_serial, observation_layout
from midnight_env.core.one_game import entry_point
from midnight_env.core.scoring import rank_rewards
from midnight_env.core.state import GameState
from midnight_env.envs.env_common import EnvOptions, observation_space
from midnight_env.infra import checks
from midnight_env.infra.seeds import check_seed, fresh_seed
from midnight_env.infra.threads import Site, task_size, threaded

VECTOR_ENV_VERSION = "0"  # bumped whenever the vector env's behaviour changes
_INT64 = np.dtype(np.int64)  # (numpy's dtypes of native byte order are unique)
_STEP = Site("vector.step")  # serial or threaded step kernel, whichever this process measures faster
_ENCODE = Site("vector.observations")


def batched_box(space: spaces.Box, n: int) -> spaces.Box:
    """What ``gymnasium.vector.utils.batch_space(space, n)`` gives for a Box, its bounds held once:
    ``low``, ``high``, ``bounded_below`` and ``bounded_above`` are read-only broadcast views of the
    single space's (n, *shape), not n copies (``batch_space`` tiles them: 4.5 KB a game here)."""
    box = spaces.Box(space.low, space.high, dtype=space.dtype, seed=deepcopy(space.np_random))
    box._shape = (n, *space.shape)
    for name in ("low", "high", "bounded_below", "bounded_above"):
        setattr(box, name, np.broadcast_to(getattr(space, name), box._shape))
    box.low_repr, box.high_repr = array_short_repr(box.low), array_short_repr(box.high)
    return box


def batched_space(space: spaces.Dict, n: int) -> spaces.Dict:
    """``batch_space(space, n)`` of a Dict of Boxes (the observation space), bounds held once (``batched_box``)."""
    return spaces.Dict({key: batched_box(sub, n) for key, sub in space.spaces.items()},
                       seed=deepcopy(space.np_random))


class VectorEnv(gymnasium.vector.VectorEnv):
    """``num_envs`` games of one variant stepped together, every seat an agent (self-play; see the
    module docstring; one learning seat with Gymnasium's wrappers: ``SeatVectorEnv``)."""

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(self, num_envs: int, variant: str = "midnight_party", num_players: int = 4,
                 seed: int | None = None, reward: str = "points", auto_forced: bool = False,
                 copy: bool = True, check: bool = True, **options: Any):
        checks.integer("num_envs=", num_envs, 1, error=ConfigError)
        EnvOptions(reward=reward, auto_forced=auto_forced)  # checks them
        self.engine = Engine(variant, num_players, **options)
        self.num_envs = int(num_envs)
        self.num_players = self.engine.num_players
        self.num_actions = self.engine.num_actions
        self._layout = observation_layout(self.engine)
        self.obs_size = self._layout.size
        self.reward_mode = reward
        self.auto_forced = bool(auto_forced)
        self.copy = bool(copy)
        self.check = bool(check)
        self._init_seed = None if seed is None else check_seed(seed)
        self.metadata = dict(self.metadata, name=f"{variant}_vector_v{VECTOR_ENV_VERSION}")
        self.render_mode = None

        self.single_observation_space = observation_space(self.engine)
        self.observation_space = batched_space(self.single_observation_space, self.num_envs)
        self.single_action_space = spaces.Discrete(self.num_actions)
        self.action_space = spaces.MultiDiscrete(np.full(self.num_envs, self.num_actions))

        self.state: GameState | None = None
        self._first_seed = np.zeros(self.num_envs, np.int64)  # seed of each slot's first game
        self._episode = np.zeros(self.num_envs, np.int64)  # games each slot has started, minus one
        self._seeds = self._first_seed.copy()
        self._obs = np.empty((self.num_envs, self.obs_size), np.float32)
        self._forced = np.empty(self.num_envs, np.int64)
        self._faces = np.full(self.num_envs, -1, np.int64)  # no injected die faces: each game's own dice
        self._faces_out = np.full(self.num_envs, -1, np.int8)
        self._scratch = np.full(self.num_envs, -1, np.int64)  # forced actions, one game at a time
        self._no_obs = np.empty((0, self.obs_size), np.float32)  # advance(): no observations
        self._start_points = CASTLE_START_POINTS if self.engine.rules.castle else 0
        # what a step returns: the games that ended in it (first k rows), in order, with their results
        b, n = self.num_envs, self.num_players
        self._ended = np.empty(b, np.int64)
        self._ended_points = np.empty((b, n), np.int32)
        self._ended_ranks = np.empty((b, n), np.int64)
        self._ended_obs = np.empty((b, n, self.obs_size), np.float32)  # paged in as far as used
        self._agent = np.empty(b, np.int64)  # deciding seat of each game
        # rewards and flags, handed out as they are with copy=False
        self._rewards = np.empty((b, n), np.float32)
        self._terminations = np.empty(b, np.bool_)
        self._truncations = np.empty(b, np.bool_)
        lay = self._layout
        self._buffers = vector_kernels.StepBuffers(
            self.auto_forced, self.reward_mode == "points", self._start_points, self._faces, self._faces_out,
            self._scratch, lay.offsets, lay.inv_guests, lay.inv_points, self._first_seed, self._episode, self._seeds,
            self._agent, self._ended, self._ended_points, self._ended_ranks, self._ended_obs)
        self._outputs = vector_kernels.StepOutputs(self._rewards, self._terminations, self._truncations, self._forced,
                                                   self._obs)  # copy=False, observations built
        self._step_kernel = self._encode_kernel = None  # serial kernels
        self._step_threaded = self._encode_threaded = None  # threaded ones, for batches that may run them
        self._step_module = vector_kernels  # where the threaded step kernel comes from (or a ``specialize`` copy)
        self._threaded = False

    def _compile(self) -> None:
        """The step kernel and the encoder for this batch, called without per-call dispatch: the
        serial ones, and for a batch that may run threads (``infra.threads``) the threaded ones too;
        a ``Site`` then runs whichever this process measures faster (the same games either way)."""
        big = self._threaded = threaded(self.num_envs)
        lay = self._layout
        b = self.num_envs
        args = (self.state, self.engine.rules, self._scratch, True, self._buffers, self._outputs)
        encode_args = (self.state, self.engine.rules, lay.offsets, lay.inv_guests, lay.inv_points, self._obs)
        self._step_kernel = entry_point(vector_kernels.vector_step_serial, *args)
        self._encode_kernel = entry_point(encode_deciding_serial, *encode_args)
        self._step_threaded = self._encode_threaded = None
        self._step_module = vector_kernels
        if big:  # the threaded kernels, compiled for these rules where allowed (``specialize``)
            copy = specialize.specialized(self.engine.rules) if specialize.enabled(self.engine.rules) else None
            self._step_module = copy or vector_kernels
            self._step_threaded = entry_point(self._step_module.vector_step_parallel, *args, task_size(b))
            self._encode_threaded = entry_point(encode_deciding_parallel, *encode_args, task_size(b))

    def _prepare_kernels(self) -> None:
        """Threaded kernels compiled before a fork cannot run in the child (``engine.threaded``):
        there the env switches to the serial ones."""
        if self._threaded and not threaded(self.num_envs):
            self._compile()

    # -- seeds --------------------------------------------------------------------------------
    @property
    def seeds(self) -> np.ndarray:
        """(B,) seed of the game each slot is playing."""
        return self._seeds.copy()

    def _update_seeds(self) -> None:
        np.add(self._first_seed, self._episode * self.num_envs, out=self._seeds)  # in place: the kernel's buffer

    # -- reset / step ----------------------------------------------------------------------------
    def reset(self, *, seed: int | Sequence[int] | None = None, options: dict | None = None):
        b = self.num_envs
        if seed is not None:
            if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
                self._first_seed[:] = check_seed(seed) + np.arange(b, dtype=np.int64)
            else:
                seeds = list(seed)
                if len(seeds) != b:
                    raise ValueError(f"got {len(seeds)} seeds for {b} games: give one int or one seed per game")
                self._first_seed[:] = [check_seed(s, f"seed of game {i}") for i, s in enumerate(seeds)]
            self._episode[:] = 0
        elif self.state is None:
            base = self._init_seed if self._init_seed is not None else fresh_seed()
            self._first_seed[:] = base + np.arange(b, dtype=np.int64)
            self._episode[:] = 0
        else:
            self._episode += 1
        self._update_seeds()
        self.state = self.engine.new_games(self._seeds)
        if self._step_kernel is None:
            self._compile()
        forced = self.engine.play_forced(self.state, self._forced) if self.auto_forced else None
        obs = self.observations()
        return obs, self._info(forced)

    def step(self, actions):
        obs = np.empty_like(self._obs) if self.copy else self._obs
        rewards, terminations, truncations, info = self._advance(actions, obs)  # observations written
        mask = self.state.legal.copy() if self.copy else self.state.legal
        return {"observation": obs, "action_mask": mask}, rewards, terminations, truncations, info

    def advance(self, actions):
        """``step`` without building the observations: (rewards, terminations, truncations, info).

        For drivers that step some seats themselves before handing the games back (the SB3 adapter
        lets opponents move this way); ``observations()`` builds them when needed.
        """
        return self._advance(actions, self._no_obs)

    def _advance(self, actions, obs: np.ndarray):
        """``advance``, writing each game's observation into ``obs`` as its step ends (before
        restarts) unless ``obs`` has no rows."""
        if self.state is None:
            raise RuntimeError("VectorEnv.step() called before reset()")
        self._prepare_kernels()
        state, engine = self.state, self.engine
        if not (type(actions) is np.ndarray and actions.dtype is _INT64 and actions.shape == (self.num_envs,)):
            actions = check_actions(engine, state, actions, legality=False)  # the kernel checks legality
        actions = np.ascontiguousarray(actions)  # the kernel trusts this type
        if self.copy:
            b, n = self.num_envs, self.num_players
            rewards = np.empty((b, n), np.float32)
            terminations = np.empty(b, np.bool_)
            truncations = np.empty(b, np.bool_)
        else:
            rewards, terminations, truncations = self._rewards, self._terminations, self._truncations
        forced = np.empty(self.num_envs, np.int64) if self.auto_forced and self.copy else self._forced
        # check the actions, apply them and roll on, forced decisions, rewards, observations; then
        # the finished games recorded and restarted: one compiled call
        outputs = vector_kernels.StepOutputs(rewards, terminations, truncations, forced, obs)
        if self._threaded:
            bad, k = _STEP.run(self.num_envs, self._step_kernel, self._step_threaded, state, engine.rules, actions,
                               self.check, self._buffers, outputs)
        else:
            bad, k = self._step_kernel(state, engine.rules, actions, self.check, self._buffers, outputs)
        if bad >= 0:  # nothing has changed: the check names the action, its meaning and the legal ones
            check_actions(engine, state, actions)
            raise ActionError(engine.illegal_message(state, int(bad), int(actions[bad])))  # (the check raised)
        out = self._handed_out
        info = {"agent": out(self._agent), "seed": out(self._seeds)}
        if self.auto_forced:
            info["forced"] = forced
        if k:
            ended, points = out(self._ended[:k]), out(self._ended_points[:k])
            info.update(final_games=ended, final_observation=out(self._ended_obs[:k]), final_points=points,
                        final_ranks=out(self._ended_ranks[:k]))
            if self.reward_mode == "rank":
                rewards[ended] = rank_rewards(points)
        return rewards, terminations, truncations, info

    def observations(self) -> dict:
        """``{"observation": (B, D), "action_mask": (B, A)}`` of every game, seen by its deciding seat."""
        obs = np.empty_like(self._obs) if self.copy else self._obs
        lay = self._layout
        self._prepare_kernels()
        args = (self.state, self.engine.rules, lay.offsets, lay.inv_guests, lay.inv_points, obs)
        if self._threaded:
            _ENCODE.run(self.num_envs, self._encode_kernel, self._encode_threaded, *args)
        else:
            self._encode_kernel(*args)
        mask = self.state.legal.copy() if self.copy else self.state.legal
        return {"observation": obs, "action_mask": mask}

    def _handed_out(self, buffer: np.ndarray) -> np.ndarray:
        """``buffer`` itself with ``copy=False``, else a copy of it."""
        return buffer.copy() if self.copy else buffer

    def _info(self, forced: np.ndarray | None) -> dict:
        """The info of ``reset`` (``step`` builds its own from the kernel's buffers)."""
        info = {"agent": self.state.player.astype(np.int64), "seed": self._seeds.copy()}
        if forced is not None:
            info["forced"] = forced
        return info

    # -- helpers -------------------------------------------------------------------------------------
    def action_to_notation(self, action: int, game: int = 0) -> str:
        """Record notation (``g14>r5``) of ``action`` for the decision of game ``game``."""
        return self.engine.layout.to_notation(int(action), int(self.state.roll[game]))

    def notation_to_action(self, text: str, game: int = 0) -> int:
        return self.engine.layout.from_notation(text, int(self.state.roll[game]))

    def close(self, **kwargs: Any) -> None:
        self.state = None
        self.closed = True

    def __repr__(self) -> str:
        return (f"VectorEnv({self.num_envs}, {self.engine.variant!r}, num_players={self.num_players}, "
                f"reward={self.reward_mode!r})")


__all__ = ["VectorEnv", "VECTOR_ENV_VERSION"]
