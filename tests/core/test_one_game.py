"""One game at a time (issue 43): the batch-1 fast paths play the same games as the batch path.

``Engine.step`` / ``apply_action`` / ``random_actions`` of a batch of one run in one compiled call
on the state's handle (``core.one_game``); the PettingZoo env steps, rolls on and observes in one
call. Here both are compared bit for bit with the batch path (a batch of two, whose game 0 is the
same game), a whole game at a time, in both variants.
"""

from __future__ import annotations

import numpy as np
import pytest

import midnight_env
from midnight_env import Engine, agent_streams
from midnight_env.core.actions import ActionError
from midnight_env.core.observation import encode_observations
from midnight_env.core.state import OVER, StateError

CASES = [("midnight_party", 4, {}), ("hidden_castle", 4, {}), ("midnight_party", 2, {}), ("hidden_castle", 3, {}),
         ("midnight_party", 8, {"max_turns": 60})]


def same_game(one, batch) -> None:
    for name, a, b in zip(one._fields, one, batch):
        assert np.array_equal(a[0], b[0]), name


@pytest.mark.parametrize("variant, n, options", CASES)
def test_the_batch_of_one_plays_the_batch_paths_game(variant, n, options):
    eng = Engine(variant, n, **options)
    for seed in (0, 7, 123):
        one, batch = eng.new_games([seed]), eng.new_games([seed, seed + 1])
        rng_one, rng_batch = agent_streams([seed]), agent_streams([seed, seed + 1])
        turn = 0
        while one.phase[0] != OVER:
            a, b = eng.random_actions(one, rng_one), eng.random_actions(batch, rng_batch)
            assert a.shape == (1,) and a.dtype == np.int64 and a[0] == b[0]
            if turn % 3 == 2:  # apply_action, then the roll, as a search agent does
                eng.apply_action(one, a)
                eng.apply_action(batch, b)
                same_game(one, batch)
                eng.apply_roll(one)
                eng.apply_roll(batch)
            else:
                eng.step(one, a, check=turn % 2 == 0)
                eng.step(batch, b, check=turn % 2 == 0)
            same_game(one, batch)
            turn += 1
        assert rng_one[0] == rng_batch[0]
    assert eng._one is not None  # the fast path was taken


def test_the_fast_path_checks_as_the_batch_path():
    eng = Engine("midnight_party", 4)
    st = eng.new_games([3])
    eng.step(st, eng.random_actions(st, agent_streams([3])))
    before = st.copy()
    illegal = int(np.flatnonzero(st.legal[0] == 0)[0])
    with pytest.raises(ActionError, match=f"game 0: action {illegal} "):
        eng.step(st, np.array([illegal]))
    with pytest.raises(ActionError, match="out of range"):
        eng.step(st, np.array([eng.num_actions]))
    same_game(st, before)
    st.player[0] = 99  # edited by hand after the engine made its handle
    with pytest.raises(StateError, match=r"state.player\[0\] is 99"):
        eng.step(st, np.array([-1]))
    st.player[0] = before.player[0]
    copy = st.copy()  # another state: another handle
    eng.step(copy, eng.random_actions(copy, agent_streams([4])))
    same_game(st, before)


def env_trace(env, seed: int):
    """(agent, observation, mask, rewards, reward, termination, truncation, info) at every last() of
    a game of the PettingZoo ``env`` with random legal actions, and the actions."""
    env.reset(seed=seed)
    pick = np.random.default_rng(seed)
    trace, actions = [], []
    for agent in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        trace.append((agent, obs["observation"].copy(), obs["action_mask"].copy(), dict(env.rewards), reward,
                      term, trunc, {k: v for k, v in info.items() if k != "forced"}))
        if term or trunc:
            env.step(None)
        else:
            actions.append(int(pick.choice(np.flatnonzero(obs["action_mask"]))))
            env.step(actions[-1])
    return env.seed_used, trace, actions


def engine_trace(variant: str, n: int, game_seed: int, actions, auto_forced: bool = False):
    """The decisions' part of the same trace built from the batch engine (a batch of two, game 0
    seeded as the env's game), playing ``actions`` (and forced decisions with ``auto_forced``)."""
    eng = Engine(variant, n)
    st = eng.new_games([game_seed, 0])
    names = [f"player_{p}" for p in range(n)]
    trace = []
    cumulative = dict.fromkeys(names, 0.0)
    rewards = dict.fromkeys(names, 0.0)
    points = st.spooky[0].copy()

    def play_forced():
        while st.phase[0] != OVER and st.legal[0].sum() == 1:
            eng.step(st, np.array([int(np.flatnonzero(st.legal[0])[0]), -1]))

    if auto_forced:
        play_forced()
    for a in actions:
        p = int(st.player[0])
        obs = encode_observations(eng, st, [0])[0]
        trace.append((names[p], obs, st.legal[0].copy(), dict(rewards), cumulative[names[p]], False, False, {}))
        cumulative[names[p]] = 0.0
        eng.step(st, np.array([a, -1]))
        if auto_forced:
            play_forced()
        change = (points - st.spooky[0]).astype(float)
        rewards = {name: float(change[q]) for q, name in enumerate(names)}
        for name in names:
            cumulative[name] += rewards[name]
        points = st.spooky[0].copy()
    assert st.phase[0] == OVER
    return trace, cumulative


@pytest.mark.parametrize("variant, n, auto_forced", [("midnight_party", 4, False), ("hidden_castle", 4, False),
                                                     ("midnight_party", 3, False), ("midnight_party", 4, True),
                                                     ("hidden_castle", 2, True)])
def test_the_env_observes_and_rewards_as_the_batch_engine(variant, n, auto_forced):
    env = midnight_env.env(variant, n, auto_forced=auto_forced)
    for seed in (1, 42):  # the second game on the first one's state and arrays, which nothing else holds
        game_seed, got, actions = env_trace(env, seed)
        want, cumulative = engine_trace(variant, n, game_seed, actions, auto_forced)
        decisions = [t for t in got if not (t[5] or t[6])]
        assert len(decisions) == len(want) == len(actions)
        for g, w in zip(decisions, want):
            assert g[0] == w[0]
            assert np.array_equal(g[1], w[1]) and g[1].dtype == np.float32
            assert np.array_equal(g[2], w[2]) and g[2].dtype == np.int8
            assert g[3] == w[3] and g[4] == w[4]
        finals = got[len(decisions):]
        assert len(finals) == n and all(t[5] or t[6] for t in finals)
        assert {t[0]: t[4] for t in finals} == cumulative  # every agent's last rewards


def test_one_games_action_is_checked_as_a_batchs():
    """``check_actions`` settles a good action of one game itself and leaves every other case to
    the batch path: the same array back, the same errors word for word as in a batch of two."""
    from midnight_env.core.engine import check_actions

    eng = Engine("midnight_party", 4)
    one, two = eng.new_games([5]), eng.new_games([5, 6])
    legal = int(np.flatnonzero(one.legal[0])[0])
    illegal = int(np.flatnonzero(one.legal[0] == 0)[0])
    given = np.array([legal], np.int64)
    assert check_actions(eng, one, given) is given
    assert check_actions(eng, one, given, games=np.array([0])) is given
    none = np.array([-1], np.int64)
    assert check_actions(eng, one, none) is none
    assert check_actions(eng, one, np.array([illegal], np.int64), legality=False)[0] == illegal
    for bad, kwargs in (([illegal], {}), ([-1], {"none": False}), ([eng.num_actions], {}), ([-2], {})):
        with pytest.raises(ActionError) as got:
            check_actions(eng, one, np.array(bad, np.int64), **kwargs)
        with pytest.raises(ActionError) as want:  # game 0 of a batch of two: the same words
            check_actions(eng, two, np.array(bad + [-1], np.int64), **kwargs) if kwargs.get("none", True) else \
                check_actions(eng, two, np.array(bad + [legal], np.int64), games=np.array([0, 0]), **kwargs)
        assert str(got.value) == str(want.value)
    with pytest.raises(ActionError, match="not allowed|integer|float"):
        check_actions(eng, one, np.array([1.0]))  # a float is refused, never converted
