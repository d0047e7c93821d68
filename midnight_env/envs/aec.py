"""PettingZoo AEC environment of Midnight Party / Escape from the Hidden Castle.

``midnight_env.env(variant="midnight_party", num_players=4, render_mode=None, **options)``

=====================  ==========================================================================
Import                 ``from midnight_env import env, raw_env`` (or the versioned module
                       ``from midnight_env import midnight_v0``: ``midnight_v0.env()``)
Variants               ``midnight_party`` (classic, 3 rounds), ``hidden_castle`` (clock, expelling)
Agents                 ``player_0 … player_{N-1}``, N = ``num_players`` (1..8); seat 0 places first
Action space           ``Discrete(A)``: A = 509 (``midnight_party``), 409 (``hidden_castle``)
Observation space      ``Dict(observation=Box(D,) float32, action_mask=Box(A,) int8)``
Observation size D     ``midnight_party`` 149 / 253 / 461, ``hidden_castle`` 150 / 248 / 444
                       for 2 / 4 / 8 players (``observation_size(env.engine)``)
Rewards                ``reward="points"`` (default) or ``reward="rank"``
Render modes           ``"ansi"`` (text board), ``"rgb_array"`` (picture), ``"human"`` (prints the text)
=====================  ==========================================================================

**Agents and turns.** One agent decides at a time (``agent_selection``): the seat placing a
guest (set-up, and between ``midnight_party`` rounds) or the seat choosing a move for a number it
rolled. Rolls, Hugo's moves and void rolls happen inside ``step``; the next agent is whoever
decides next, not simply the next seat.

**Action space.** One fixed ``Discrete(A)`` per board (S = 28 gallery squares, R rooms;
``midnight_party`` R = 11, ``hidden_castle`` R = 9)::

    index                     meaning                                          notation
    0 .. S-1                  place a guest on gallery square s                 g<s>
    S + o*(1+R)               move the guest from origin o, walk the roll       <o>>g<t>
    S + o*(1+R) + 1 + q       move the guest from origin o into room q          <o>>r<q>
    A - 1                     pass (midnight_party, one guest left on gallery)  pass

Origins o: 0..S-1 gallery square o; S..S+R-1 room o-S and S+R the cellar (``hidden_castle``
only). ``env.action_to_notation(a)`` / ``env.notation_to_action("g14>r5")`` convert for the
current decision (a walk's destination square depends on the roll); ``env.describe_action(a)``
says it in words.

**Observation.** ``observation`` is the position seen by the observing agent: its own pieces
first, then the others clockwise (see ``midnight_env.core.observation`` for the exact layout and
``observation_names(env.engine)`` for the name of every index)::

    section     size        value
    gallery     N*S         guests of each player per gallery square, / guests per player G
    supply      N           guests waiting to be placed, / G
    room        R*N         one-hot: which (relative) player's guest is in room q
    stairs      N*(L+W)     guests per landing / step (+ wine cellar on midnight_party), / G
    hugo        T+S         one-hot: Hugo on his whole track (stairs, then gallery squares)
    rooms_open  1           1 once Hugo has stepped onto the gallery
    clock       7           hidden_castle only: one-hot 23:45 … 5:00
    speed       1           Hugo's steps per move / 7
    spooky      N           spooky points / scale (5*G*rounds, or 46 on hidden_castle)
    round       1           midnight_party only: round / rounds
    phase       2           one-hot: placing, moving
    roll        4           one-hot: the number being decided (1, 2, 4, 5)
    to_move     N           one-hot: the (relative) player deciding now
    seat        N           one-hot: the observer's seat

Values lie in about [0, 1] (spooky points of a bad game somewhat above 1; ``midnight_party``
points may go below 0 through the green rooms).

**Legal-action mask.** ``action_mask[a] = 1`` exactly for the legal choices of the agent to
decide; it is all zeros for every other agent and for everybody once the game is over. An
action outside the space, or not legal, raises :class:`ActionError` naming the action, its
meaning and the legal ones; with ``illegal="penalize"`` a legal-but-wrong action instead ends the
game, the offender receiving ``illegal_reward`` and the others 0 (PettingZoo's
``TerminateIllegalWrapper``; an action outside the space still raises).

**Arrays.** What the env hands out is never written again while anything else holds it: an
observation or mask kept (or a view of one, or the dict) stays as it was, and so does a
``game_state`` kept past ``reset()``. Where nothing but the env holds them any more, it reuses
them (the arrays of two steps ago, the last game's state), which saves allocating them a step.

**Rewards.** ``reward="points"``: after every step each agent receives minus the change of its
own spooky points (captures, red and green rooms, the wine cellar), so an episode's return is
minus the points the agent collected (``hidden_castle`` counts from the start value 10).
``reward="rank"``: 0 until the end, then +1 for the winners (fewest points), -1 for the last,
linearly by rank in between, ties sharing the better rank (``scoring.rank_rewards``). Every agent
receives its final reward through ``last()`` when it is selected after the end.

**Episode end.** ``midnight_party``: after the last round; ``hidden_castle``: when the clock
reaches 5:00 or a player reaches 46 points: every agent terminated. After ``max_turns`` rolls
(option, default 2000) every agent is truncated. ``infos[agent]`` then holds ``spooky_points``,
``rank`` and ``winner``. Each agent is stepped once with ``None`` to leave, as PettingZoo expects.

**Options.** Rule options of the variant (``guests_per_player``, ``rounds``, ``pass_rule``,
``hugo_slow_from_players``, ``max_turns``; RULES.md), plus ``reward``, ``auto_forced=True`` (the
env plays decisions with exactly one legal choice itself; ``infos[agent]["forced"]`` lists them as
``(seat, notation)``), ``illegal`` ("raise" or "penalize"), ``illegal_reward`` and ``render_size``
(pixels of the ``rgb_array`` picture). A bad option raises ``ConfigError`` at construction.

**Checks.** ``env()`` has PettingZoo's order and bounds checks built in (``step``/``last``/
``observe``/``render`` before ``reset`` raise :class:`OrderError`; actions are validated against
the space and the mask) at the cost of one attribute test, instead of the stock wrapper chain,
which forwards every attribute through ``__getattr__`` at every call and so costs more than a
step of the game itself (BENCHMARKS.md, PettingZoo ``env()``).
``raw_env()`` drops the order checks; actions are validated either way.

**Version history.**
- v0 (engine 1.0.0): first release.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv

from midnight_env.core.actions import ActionError
from midnight_env.core.config import CASTLE_START_POINTS
from midnight_env.core.engine import Engine, check_actions, play_forced
from midnight_env.core.observation import observation_layout
from midnight_env.core.one_game import env_kernels, env_ref_args
from midnight_env.core.scoring import rank_rewards, ranks
from midnight_env.core.state import OVER, empty_state
from midnight_env.envs.env_common import EnvOptions, check_render_mode, observation_space
from midnight_env.infra.seeds import SEED_LIMIT, check_seed, fresh_seed

ENV_VERSION = "0"  # bumped whenever the env's behaviour changes (the name says e.g. midnight_party_v0)
RENDER_MODES = ("human", "ansi", "rgb_array")
_FLOAT32, _INT8 = np.dtype(np.float32), np.dtype(np.int8)  # np.empty takes a dtype faster than a type
# references held to an object (``step`` reuses arrays nobody else holds); only where counts are exact,
# not on a free-threaded CPython, whose counts are split between threads
_refs = sys.getrefcount if getattr(sys, "_is_gil_enabled", lambda: True)() else (lambda obj: -1)


def _holders(state) -> tuple[int, ...]:
    """The references held to a state and to each of its arrays (``reset`` reuses a state only
    where they are what the env itself holds)."""
    return _refs(state), *map(_refs, state)


class OrderError(RuntimeError):
    """A method called out of order (``step`` before ``reset``)."""


class MidnightEnv(AECEnv):
    """The AEC env; build it with :func:`env` (with order checks) or :func:`raw_env`."""

    metadata = {"render_modes": list(RENDER_MODES), "name": f"midnight_party_v{ENV_VERSION}",
                "is_parallelizable": False, "render_fps": 2}

    def __init__(self, variant: str = "midnight_party", num_players: int = 4, render_mode: str | None = None,
                 reward: str = "points", auto_forced: bool = False, illegal: str = "raise",
                 illegal_reward: float | None = None, render_size: int = 640, checks: bool = True,
                 **options: Any):
        super().__init__()
        check_render_mode(render_mode, list(RENDER_MODES))
        self.options = EnvOptions(reward=reward, auto_forced=auto_forced, illegal=illegal,
                                  illegal_reward=illegal_reward, render_size=render_size)
        self.engine = Engine(variant, num_players, **options)
        self.layout = self.engine.layout
        self.render_mode = render_mode
        self.render_size = int(render_size)
        self.reward_mode = reward
        self.auto_forced = bool(auto_forced)
        self.illegal = illegal
        self.illegal_reward = self.options.penalty(self.engine)
        lay = observation_layout(self.engine)
        self._checks = bool(checks)
        self.metadata = dict(self.metadata, name=f"{variant}_v{ENV_VERSION}")

        n = self.engine.num_players
        self.possible_agents = [f"player_{p}" for p in range(n)]
        self.agent_name_mapping = {name: p for p, name in enumerate(self.possible_agents)}
        self.observation_spaces = {name: observation_space(self.engine) for name in self.possible_agents}
        self.action_spaces = {name: spaces.Discrete(self.engine.num_actions) for name in self.possible_agents}
        self.num_actions = self.engine.num_actions
        self.obs_size = lay.size

        self._has_reset = False
        self._live = False  # reset and not over: last() takes its short path
        self._fast = False  # live and no forced play: step() takes its short path
        self._seeder: np.random.Generator | None = None
        self.game_state = None  # the engine's GameState, a batch of one (``state()`` is PettingZoo's)
        self.seed_used: int | None = None
        self._ref = None  # the game's handle for the kernels (``core.one_game``), one per reset
        self._start_points = CASTLE_START_POINTS if self.engine.rules.castle else 0
        self._points_reward = reward == "points"
        # the bits of a step's code saying whose points changed, where they are paid at once
        self._paid_bits = ~15 if self._points_reward else 0
        self._all_seats = (1 << n) - 1
        self._no_rewards = dict.fromkeys(self.possible_agents, 0.0)
        # the (seat, agent) of every bit set in a number below 2**n (seats whose points changed)
        self._seats_named = [[(p, name) for p, name in enumerate(self.possible_agents) if bits >> p & 1]
                             for bits in range(1 << n)]
        self._kernels = None  # (make_ref, reset, step, observe): compiled once, for the types of the first game
        self._state_holders = ()  # _holders(game_state) when nothing but the env held it
        self._obs_agent = self._obs = None  # the deciding agent's observation, kept until it changes
        self._spare = None  # the observation before it (its arrays reused once nobody else holds them)
        self.agents: list[str] = []

    # -- spaces ------------------------------------------------------------------------------------
    def observation_space(self, agent: str) -> spaces.Dict:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Discrete:
        return self.action_spaces[agent]

    # -- reset -------------------------------------------------------------------------------------
    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        if seed is not None:
            game_seed = check_seed(seed)
            self._seeder = None  # later reset() calls continue from a generator seeded with it
        else:
            if self._seeder is None:
                last = self.seed_used
                self._seeder = np.random.default_rng(fresh_seed() if last is None else last)
            game_seed = int(self._seeder.integers(SEED_LIMIT))
        self.seed_used = game_seed
        # Engine.new_games([seed])'s game, reset by the same kernel through the game's handle, which
        # also shows the first decision. A caller may keep the last game's state: it is never written
        # again; the state is new, or the last one where nothing but this env holds it or its arrays
        s = self.game_state
        if s is None or _holders(s) != self._state_holders:
            s = self._new_state()
            self._state_holders = _holders(s)  # the env's own references (and the handle's): reused while that is all
        obs = np.empty(self.obs_size, _FLOAT32)
        mask = np.empty(self.num_actions, _INT8)
        seat = self._reset_kernel(self._ref, game_seed, self._start_points, obs, mask)

        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {name: {} for name in self.agents}
        self._over = False
        self._rewards_dirty = False
        self._first_to_leave = None
        self._points = self._spooky.tolist()  # as the rewards last saw them
        self._has_reset = True
        self._live = True
        self._fast = not self.auto_forced
        self.agent_selection = self._obs_agent = self.possible_agents[seat]
        self._obs = {"observation": obs, "action_mask": mask}
        self._spare = None
        forced = self._play_forced() if self.auto_forced else None
        if s.phase[0] == OVER:  # possible only with max_turns tiny and forced play
            self._finish()
            return
        if forced:
            self.agent_selection = self._obs_agent = self.possible_agents[s.player[0]]
        if forced is not None:
            self.infos[self.agent_selection]["forced"] = forced

    def _new_state(self):
        """A new state of one game and its handle (``core.one_game``)."""
        r = self.engine.rules
        s = empty_state(1, r.num_players, r.num_squares, r.num_rooms, r.num_places, r.guests, r.num_actions)
        ref_args = env_ref_args(self.engine, s)
        if self._kernels is None:  # the handle's and the state's types are the same after every reset
            self._kernels = env_kernels(ref_args)
        make_ref, self._reset_kernel, self._step_kernel, self._observe_kernel = self._kernels
        self._ref = make_ref(*ref_args)
        self.game_state = s
        self._spooky = s.spooky[0]  # the game's spooky points, seat by seat (a view)
        return s

    # -- stepping -------------------------------------------------------------------------------------
    def step(self, action) -> None:
        if not (self._fast and type(action) is int and 0 <= action < self.num_actions):
            self._step_long(action)
            return
        # one compiled call: the action's legality, the decision, the rolls to the next decision, its
        # observation and mask. A caller may keep what it was given, so it is never written again:
        # the arrays are fresh, or those of two steps ago where nothing else holds them (their dict
        # referenced by ``_spare`` alone, its two arrays by the dict alone); never the last step's,
        # which the caller may still hold
        spare = self._spare
        if (spare is not None and _refs(spare) == 3 and len(spare) == 2 and _refs(spare["observation"]) == 2
                and _refs(spare["action_mask"]) == 2):
            obs, mask = spare["observation"], spare["action_mask"]
        else:
            obs = np.empty(self.obs_size, _FLOAT32)
            mask = np.empty(self.num_actions, _INT8)
            spare = None
        code = self._step_kernel(self._ref, action, obs, mask)  # seat to decide + 8 over + 16 * seats that scored
        if code < 0:  # not legal: nothing changed
            self._illegal(action)
            return
        self._spare = self._obs
        self._obs = spare or {"observation": obs, "action_mask": mask}
        self._cumulative_rewards[self.agent_selection] = 0.0
        if code & self._paid_bits:
            self._pay_points(code >> 4)
        elif self._rewards_dirty:
            self.rewards.update(self._no_rewards)  # every agent is still in the game
            self._rewards_dirty = False
        if code & 8:
            self._finish()
        else:
            self.agent_selection = self._obs_agent = self.possible_agents[code & 7]

    def _step_long(self, action) -> None:
        """``step`` where its short path does not hold: the order checks, a finished agent leaving,
        an action to convert or refuse, or forced decisions to play after it (``auto_forced``)."""
        action = self._checked_action(action)  # an error, a finished agent leaving (None), or an index
        if action is None:
            return
        if self._fast:  # a live game without forced play: the index takes the short path
            self.step(action)
            return
        obs = np.empty(self.obs_size, _FLOAT32)
        mask = np.empty(self.num_actions, _INT8)
        code = self._step_kernel(self._ref, action, obs, mask)
        if code < 0:
            self._illegal(action)
            return
        self._obs = {"observation": obs, "action_mask": mask}
        forced = self._play_forced()  # into obs and mask
        if forced:
            s = self.game_state
            code = int(s.player[0]) + 8 * int(s.phase[0] == OVER) + (self._all_seats << 4)
        self._cumulative_rewards[self.agent_selection] = 0.0
        if code & self._paid_bits:
            self._pay_points(code >> 4)
        elif self._rewards_dirty:
            self.rewards.update(self._no_rewards)
            self._rewards_dirty = False
        if code & 8:
            self._finish()
            return
        self.agent_selection = self._obs_agent = nxt = self.possible_agents[code & 7]
        self.infos[nxt]["forced"] = forced

    def _checked_action(self, action) -> int | None:
        """``step``'s long path: the order checks, a finished agent leaving (None returned), or the
        action as an index in the space (ActionError names a wrong one)."""
        if self._checks and not self._has_reset:
            raise OrderError("step() called before reset(): call env.reset() first")
        agent = self.agent_selection
        if self._over:
            if not self.agents:
                raise OrderError("step() called after every agent has left the finished game: call env.reset() "
                                 "to play another")
            if action is not None:
                raise ActionError(f"{agent} is done (the game is over): the only valid action is None, "
                                  f"got {action!r}")
            self._leave()
            return None
        if isinstance(action, (int, np.integer)) and not isinstance(action, bool) and 0 <= action < self.num_actions:
            return int(action)
        return int(check_actions(self.engine, self.game_state, action, none=False, legality=False, single=True,
                                 where=lambda k: f"{agent}: ")[0])

    def _illegal(self, action: int) -> None:
        """An action in the space but not legal: ActionError, or with ``illegal="penalize"`` the end."""
        agent = self.agent_selection
        try:
            check_actions(self.engine, self.game_state, action, none=False, single=True, where=lambda k: f"{agent}: ")
        except ActionError as err:
            if self.illegal == "raise":
                raise
            self._penalize(agent, action, str(err))

    def _pay_points(self, seats: int) -> None:
        """``reward="points"``: every agent gets minus the change of its spooky points in the step;
        ``seats`` has a bit for each seat whose points may have changed (1 << seat), the others' are 0."""
        if self._rewards_dirty:
            self.rewards.update(self._no_rewards)
        now = self._spooky.tolist()
        before = self._points
        rewards, cumulative = self.rewards, self._cumulative_rewards
        for p, name in self._seats_named[seats]:
            r = float(before[p] - now[p])
            rewards[name] = r
            cumulative[name] += r
        self._points = now
        self._rewards_dirty = True

    def _play_forced(self) -> list[tuple[int, str]]:
        """Play decisions with exactly one legal choice (option ``auto_forced``; ``core.engine.play_forced``);
        the observation and mask of the next real decision replace ``self._obs``'s arrays' contents
        where any was played. Returns the (seat, notation) of each."""
        s = self.game_state
        obs, mask = self._obs["observation"], self._obs["action_mask"]
        played = []

        def seen(actions):
            played.append((int(s.player[0]), self.layout.to_notation(int(actions[0]), int(s.roll[0]))))

        play_forced(s, lambda actions: self._step_kernel(self._ref, int(actions[0]), obs, mask), seen=seen)
        return played

    def _leave(self) -> None:
        """A finished agent leaves (``step(None)``): PettingZoo's ``_was_dead_step`` for a game whose
        agents all end at once, as here. The first agent still there is selected next; once all
        have left, the first that left is selected again, as PettingZoo does."""
        agent = self.agent_selection
        del self.terminations[agent], self.truncations[agent], self.rewards[agent]
        del self._cumulative_rewards[agent], self.infos[agent]
        self.agents.remove(agent)
        if self._first_to_leave is None:
            self._first_to_leave = agent
        self.agent_selection = self.agents[0] if self.agents else self._first_to_leave
        self._clear_rewards()

    def _clear_rewards(self) -> None:
        for name in self.rewards:
            self.rewards[name] = 0.0
        self._rewards_dirty = False

    def _finish(self) -> None:
        """The game is over: final rewards, flags and infos for every agent."""
        s = self.game_state
        self._over = True
        self._live = self._fast = False
        truncated = bool(s.truncated[0])
        points = s.spooky[0:1]
        if self.reward_mode == "rank":
            for name, r in zip(self.possible_agents, rank_rewards(points)[0].tolist()):
                self.rewards[name] = r
                self._cumulative_rewards[name] += r
        for name, p, rank in zip(self.possible_agents, points[0].tolist(), ranks(points)[0].tolist()):
            self.terminations[name] = not truncated
            self.truncations[name] = truncated
            self.infos[name] = {"spooky_points": p, "rank": rank, "winner": rank == 1}
        self._obs_agent = None
        self.agent_selection = self.agents[0]

    def _penalize(self, agent: str, action: int, message: str) -> None:
        """``illegal="penalize"``: the game ends, the offender gets ``illegal_reward``, the others 0."""
        self._over = True
        self._live = self._fast = False
        self._cumulative_rewards[agent] = 0.0
        for name in self.agents:
            self.terminations[name] = True
            self.rewards[name] = 0.0
        self.rewards[agent] = self.illegal_reward
        self._cumulative_rewards[agent] += self.illegal_reward
        self._rewards_dirty = True
        self.infos[agent] = {"illegal_action": action, "message": message}
        self._obs_agent = None
        self.agent_selection = self.agents[0]

    # -- observing ---------------------------------------------------------------------------------
    def observe(self, agent: str) -> dict:
        if self._checks and not self._has_reset:
            raise OrderError("observe() called before reset(): call env.reset() first")
        if agent == self._obs_agent:
            return self._obs
        seat = self.agent_name_mapping.get(agent)
        if seat is None:
            raise KeyError(f"unknown agent {agent!r}: agents are {', '.join(self.possible_agents)}")
        s = self.game_state
        obs = np.empty(self.obs_size, _FLOAT32)
        self._observe_kernel(self._ref, seat, obs)
        deciding = not self._over and seat == s.player[0]
        mask = s.legal[0].copy() if deciding else np.zeros(self.num_actions, _INT8)
        result = {"observation": obs, "action_mask": mask}
        if deciding:
            self._obs_agent, self._obs = agent, result
        return result

    def last(self, observe: bool = True):
        if self._live:  # reset, not over: the deciding agent's observation is kept
            agent = self.agent_selection
            if observe:
                obs = self._obs if agent == self._obs_agent else self.observe(agent)
            else:
                obs = None
            return (obs, self._cumulative_rewards[agent], self.terminations[agent], self.truncations[agent],
                    self.infos[agent])
        if self._checks and not self._has_reset:
            raise OrderError("last() called before reset(): call env.reset() first")
        if not self.agents:
            raise OrderError("last() called after every agent has left the finished game: call env.reset() "
                             "to play another")
        agent = self.agent_selection
        return (self.observe(agent) if observe else None, self._cumulative_rewards[agent],
                self.terminations[agent], self.truncations[agent], self.infos[agent])

    # -- actions in words --------------------------------------------------------------------------
    def legal_actions(self) -> list[int]:
        """Legal action indices of the agent to decide (empty once the game is over)."""
        return [] if self._over else np.flatnonzero(self.game_state.legal[0]).tolist()

    def action_to_notation(self, action: int) -> str:
        """Record notation (``g14``, ``g3>r2``, ``cellar>g1``, ``pass``) of ``action`` for the current decision."""
        return self.layout.to_notation(int(action), int(self.game_state.roll[0]))

    def notation_to_action(self, text: str) -> int:
        """Action index of a record notation for the current decision (a walk needs the roll)."""
        return self.layout.from_notation(text, int(self.game_state.roll[0]))

    def describe_action(self, action: int) -> str:
        return self.layout.describe(int(action), int(self.game_state.roll[0]))

    # -- rendering ---------------------------------------------------------------------------------
    def render(self):
        if self._checks and not self._has_reset:
            raise OrderError("render() called before reset(): call env.reset() first")
        if self.render_mode is None:
            import gymnasium

            gymnasium.logger.warn("render() called without a render_mode: pass render_mode='ansi', "
                                  "'rgb_array' or 'human' to env()")
            return None
        from midnight_env.render import render_ansi, render_rgb  # drawing code only when drawing

        if self.render_mode == "rgb_array":
            return render_rgb(self.engine, self.game_state, 0, size=self.render_size)
        text = render_ansi(self.engine, self.game_state, 0, color=True)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        pass

    def __repr__(self) -> str:
        return f"<{self.metadata['name']} env, {self.engine.num_players} players, reward={self.reward_mode!r}>"


def env(variant: str = "midnight_party", num_players: int = 4, render_mode: str | None = None,
        **options: Any) -> MidnightEnv:
    """The AEC env with its order and bounds checks (see the module docstring)."""
    return MidnightEnv(variant, num_players, render_mode=render_mode, checks=True, **options)


def raw_env(variant: str = "midnight_party", num_players: int = 4, render_mode: str | None = None,
            **options: Any) -> MidnightEnv:
    """The AEC env without the order checks (actions are still validated)."""
    return MidnightEnv(variant, num_players, render_mode=render_mode, checks=False, **options)


__all__ = ["env", "raw_env", "MidnightEnv", "OrderError", "ENV_VERSION"]
