"""The PettingZoo AEC env and the observation encoder it shows."""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest
from pettingzoo.test import api_test, render_test, seed_test

import midnight_env
from midnight_env import ActionError, ConfigError, Engine, agent_streams
from midnight_env.core.observation import encode_observations, observation_layout, observation_names, observation_size
from midnight_env.core.state import OVER
from midnight_env.envs.aec import OrderError
from midnight_env.envs.vector import rank_rewards

VARIANTS = ("midnight_party", "hidden_castle")
PLAYERS = (2, 4, 8)
CONFIGS = [(v, n) for v in VARIANTS for n in PLAYERS]


# -- PettingZoo's own checkers --------------------------------------------------------------------


@pytest.mark.parametrize("variant,num_players", CONFIGS)
def test_api(variant, num_players):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "observation is a dict", which the mask convention needs
        api_test(midnight_env.env(variant, num_players), num_cycles=60)
        api_test(midnight_env.raw_env(variant, num_players), num_cycles=20)


@pytest.mark.parametrize("variant,num_players", CONFIGS)
def test_seed(variant, num_players):
    seed_test(lambda: midnight_env.env(variant, num_players), num_cycles=60)


@pytest.mark.parametrize("variant,num_players", CONFIGS)
def test_render(variant, num_players, capsys):
    render_test(lambda render_mode=None: midnight_env.env(variant, num_players, render_mode=render_mode,
                                                          render_size=128))
    env = midnight_env.env(variant, num_players, render_mode="ansi")
    env.reset(seed=1)
    assert "seat 0" in env.render()


# -- determinism ---------------------------------------------------------------------------------


def test_reset_with_seed_replays_identically(random_game):
    env = midnight_env.env("midnight_party", 4)
    first = random_game(env, seed=7)
    random_game(env, seed=8)  # something else in between
    again = random_game(env, seed=7)
    assert len(first) == len(again)
    for a, b in zip(first, again):
        assert a[0] == b[0] and a[2:] == b[2:]
        np.testing.assert_array_equal(a[1]["observation"], b[1]["observation"])
        np.testing.assert_array_equal(a[1]["action_mask"], b[1]["action_mask"])


def test_different_seed_gives_a_different_game(random_game):
    env = midnight_env.env("hidden_castle", 3)
    a = random_game(env, seed=1)
    b = random_game(env, seed=2)
    # same policy stream: only the dice differ, and they must show
    differs = len(a) != len(b) or any(
        not np.array_equal(x[1]["observation"], y[1]["observation"]) for x, y in zip(a, b))
    assert differs


def test_reset_without_seed_continues_the_seeded_stream():
    env1, env2 = midnight_env.env("midnight_party", 2), midnight_env.env("midnight_party", 2)
    env1.reset(seed=5)
    env2.reset(seed=5)
    env1.reset()
    env2.reset()
    assert env1.seed_used == env2.seed_used != 5


def test_env_plays_the_engine_game():
    """The env is the engine on a batch of one: same seed, same actions, same final position."""
    env = midnight_env.env("midnight_party", 4)
    eng = Engine("midnight_party", 4)
    actions = [a for _, a in _actions_of(env, seed=11)]
    state = eng.new_games([11])
    for a in actions:
        eng.step(state, [a])
    assert state.phase[0] == OVER
    assert state.equal(env.game_state)


def _actions_of(env, seed):
    env.reset(seed=seed)
    rng = np.random.default_rng(3)
    out = []
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        a = int(legal[rng.integers(len(legal))])
        out.append((agent, a))
        env.step(a)
    return out


# -- observations and masks ----------------------------------------------------------------------------


@pytest.mark.parametrize("variant,num_players", [("midnight_party", 4), ("hidden_castle", 2), ("hidden_castle", 8)])
def test_observations_in_space_with_exact_dtype_terminal_too(variant, num_players):
    env = midnight_env.env(variant, num_players)
    for seed in range(3):
        env.reset(seed=seed)
        terminal_checked = set()
        rng = np.random.default_rng(seed)
        for agent in env.agent_iter():
            space = env.observation_space(agent)
            for other in env.agents:  # every agent's view, not only the deciding one
                obs = env.observe(other)
                assert obs["observation"].dtype == np.float32 and obs["action_mask"].dtype == np.int8
                assert obs["observation"].shape == (env.obs_size,)
                assert space.contains(obs), (other, obs)
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                terminal_checked.add(agent)
                assert not obs["action_mask"].any()
                env.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[rng.integers(len(legal))]))
        assert terminal_checked == set(env.possible_agents)


def test_mask_is_the_engines_legal_set_and_zero_for_others():
    """Mask against an engine game run alongside with the same seed and actions."""
    env = midnight_env.env("hidden_castle", 4)
    eng = Engine("hidden_castle", 4)
    state = eng.new_games([21])
    env.reset(seed=21)
    rng = np.random.default_rng(0)
    steps = 0
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        assert agent == f"player_{state.player[0]}"
        np.testing.assert_array_equal(np.flatnonzero(obs["action_mask"]), eng.legal_actions(state))
        for other in env.agents:
            if other != agent:
                assert not env.observe(other)["action_mask"].any()
        legal = np.flatnonzero(obs["action_mask"])
        a = int(legal[rng.integers(len(legal))])
        env.step(a)
        eng.step(state, [a])
        steps += 1
    assert steps > 20 and state.phase[0] == OVER


def test_what_a_caller_keeps_is_never_written_again():
    """Every step's observation and mask, and every reset's state, are new arrays: the env's short
    paths write into the arrays they hand out, so a kept one must not be handed out again."""
    env = midnight_env.env("midnight_party", 3)
    env.reset(seed=4)
    first_state, kept = env.game_state, []
    for _ in range(40):
        obs = env.last()[0]
        assert env.observe(env.agent_selection) is obs  # the same decision: the same observation
        kept.append((obs, {key: value.copy() for key, value in obs.items()}))
        env.step(int(np.flatnonzero(obs["action_mask"])[0]))
    at_40 = first_state.copy()
    env.reset(seed=5)
    assert env.game_state is not first_state and first_state.equal(at_40)
    for _ in range(10):
        env.step(int(np.flatnonzero(env.last()[0]["action_mask"])[0]))
    assert first_state.equal(at_40)
    for obs, copy in kept:
        for key in copy:
            np.testing.assert_array_equal(obs[key], copy[key])


def test_what_nobody_else_holds_is_reused_and_what_a_caller_holds_is_not():
    """The short paths reuse the arrays of two steps ago, and the last game's state, only where
    nothing but the env holds them: a kept array or a view of one is never written again."""
    env = midnight_env.env("midnight_party", 4)
    env.reset(seed=7)
    seen = set()
    for _ in range(30):  # the caller drops each observation at its next last()
        obs = env.last()[0]
        seen.add(id(obs["observation"]))
        env.step(int(np.flatnonzero(obs["action_mask"])[0]))
    assert len(seen) <= 3  # the arrays come round again: no new ones a step
    kept = []
    for keep in ("observation", "action_mask"):  # now the caller keeps one array (a view of it) a step
        for _ in range(20):
            obs = env.last()[0]
            kept.append((obs[keep][:50], obs[keep][:50].copy()))
            env.step(int(np.flatnonzero(obs["action_mask"])[0]))
    for held, copy in kept:
        np.testing.assert_array_equal(held, copy)
    state = env.game_state
    env.reset(seed=8)
    assert env.game_state is not state  # the caller holds it
    del state
    state_id, spooky = id(env.game_state), env.game_state.spooky[0]
    before = spooky.copy()
    env.reset(seed=9)
    assert id(env.game_state) != state_id  # the caller holds one of its arrays (a view)
    np.testing.assert_array_equal(spooky, before)
    del spooky
    state_id = id(env.game_state)
    for _ in range(60):  # well into the game, then a reset on the same arrays
        obs = env.last()[0]
        if not obs["action_mask"].any():
            break
        env.step(int(np.flatnonzero(obs["action_mask"])[-1]))
    del obs
    env.reset(seed=10)
    assert id(env.game_state) == state_id  # nobody else: the same arrays, reset
    assert env.game_state.equal(Engine("midnight_party", 4).new_games([10]))  # as a new game's, every field


def test_observation_names_and_point_of_view():
    eng = Engine("midnight_party", 4)
    names = observation_names(eng)
    assert len(names) == len(set(names)) == observation_size(eng) == 253
    assert observation_size(Engine("hidden_castle", 4)) == 248
    state = eng.new_games([0])
    eng.step(state, [5])  # seat 0 places on g5
    eng.step(state, [9])  # seat 1 places on g9, seat 2 is to place
    g = 1 / eng.config.guests
    seen_by_1 = dict(zip(names, encode_observations(eng, state, seats=1)[0]))
    assert seen_by_1["gallery[me,g9]"] == pytest.approx(g)
    assert seen_by_1["gallery[opp3,g5]"] == pytest.approx(g)  # seat 0 is three seats clockwise of seat 1
    assert seen_by_1["to_move=opp1"] == 1 and seen_by_1["seat=1"] == 1 and seen_by_1["phase=place"] == 1
    assert seen_by_1["hugo@landing 10"] == 1 and seen_by_1["rooms_open"] == 0
    assert seen_by_1["supply[me]"] == pytest.approx(3 * g) and seen_by_1["supply[opp1]"] == pytest.approx(4 * g)
    nonzero = {n for n, v in seen_by_1.items() if v != 0}
    assert nonzero == {"gallery[me,g9]", "gallery[opp3,g5]", "to_move=opp1", "seat=1", "phase=place",
                       "hugo@landing 10", "speed", "round"} | {f"supply[{r}]" for r in ("me", "opp1", "opp2", "opp3")}
    seen_by_2 = dict(zip(names, encode_observations(eng, state)[0]))  # default: the deciding seat, 2
    assert seen_by_2["gallery[opp2,g5]"] == pytest.approx(g) and seen_by_2["to_move=me"] == 1


@pytest.mark.parametrize("num_players, guests", [(4, 4), (2, 6), (3, 5), (5, 3), (2, 7)])
def test_counts_are_float32_of_the_float64_quotient(num_players, guests):
    """Guest counts are float32(c * (1/G)) to the bit, whether the encoder scales them in float32
    (where that is exact for every count 0..G, as for G = 4) or in float64 (G = 6: 5 * float32(1/6)
    rounds differently)."""
    from midnight_env.core.observation import _float32_scaling_exact

    assert _float32_scaling_exact(guests, 1 / guests) == all(
        np.float32(c) * np.float32(1 / guests) == np.float32(c * (1 / guests)) for c in range(guests + 1))
    eng = Engine("midnight_party", num_players, guests_per_player=guests)
    lay = observation_layout(eng)
    state = eng.new_games(range(16))
    rng = agent_streams(range(16))
    quotient = lambda counts: (counts * (1 / guests)).astype(np.float32)  # noqa: E731
    captured = shared = False
    for _ in range(40):  # placements, moves and captures
        for _ in range(5):
            eng.step(state, eng.random_actions(state, rng))
        obs = encode_observations(eng, state, seats=0)
        gallery = obs[:, lay.section("gallery")].reshape(16, num_players, -1)
        np.testing.assert_array_equal(gallery, quotient(state.gallery))
        stairs = obs[:, lay.section("stairs")].reshape(16, num_players, -1)
        np.testing.assert_array_equal(stairs, quotient(state.stairs))
        captured |= bool(state.stairs.any())
        shared |= bool((state.gallery > 1).any())
    assert captured and shared, "captured guests and squares with several guests were seen"


def test_observation_of_a_move_decision_hidden_castle():
    eng = Engine("hidden_castle", 2)
    lay = observation_layout(eng)
    names = observation_names(eng)
    state = eng.new_games([4])
    rng = np.random.default_rng(1)
    while state.phase[0] != 2 or state.hugo[0] < eng.rules.hugo_stairs:  # a move with rooms open
        legal = eng.legal_actions(state)
        eng.step(state, [legal[rng.integers(len(legal))]])
    obs = dict(zip(names, encode_observations(eng, state)[0]))
    assert obs["phase=move"] == 1 and obs[f"roll={state.roll[0]}"] == 1 and obs["rooms_open"] == 1
    assert obs[f"hugo@g{state.hugo[0] - eng.rules.hugo_stairs}"] == 1
    assert obs[f"clock={('23:45', '24:00', '1:00', '2:00', '3:00', '4:00', '5:00')[state.clock[0]]}"] == 1
    me = int(state.player[0])
    assert obs["spooky[me]"] == pytest.approx(state.spooky[0, me] / lay.points_scale)


def test_encode_observations_bad_input():
    eng = Engine("midnight_party", 2)
    state = eng.new_games(2)
    with pytest.raises(ValueError, match="seat 2 is out of range"):
        encode_observations(eng, state, seats=2)
    with pytest.raises(ValueError, match="game index 5"):
        encode_observations(eng, state, games=[5])


# -- rewards ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("variant", VARIANTS)
def test_points_rewards_through_last_sum_to_minus_points(variant):
    env = midnight_env.env(variant, 4)
    start = 10 if variant == "hidden_castle" else 0
    for seed in range(3):
        env.reset(seed=seed)
        total = dict.fromkeys(env.possible_agents, 0.0)
        final_info = {}
        rng = np.random.default_rng(seed)
        for agent in env.agent_iter():
            obs, reward, term, trunc, info = env.last()
            total[agent] += reward
            if term or trunc:
                final_info[agent] = info
                env.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[rng.integers(len(legal))]))
        for agent in env.possible_agents:
            assert total[agent] == -(final_info[agent]["spooky_points"] - start)


def test_rank_rewards_values():
    got = rank_rewards(np.array([[3, 10, 7, 20], [5, 5, 9, 12], [1, 5, 9, 9], [4, 4, 4, 4]]))
    want = [[1, -1 / 3, 1 / 3, -1], [1, 1, -1 / 3, -1], [1, 1 / 3, -1, -1], [1, 1, 1, 1]]
    np.testing.assert_allclose(got, want, rtol=1e-6)
    np.testing.assert_array_equal(rank_rewards(np.array([[7, 3]])), [[-1, 1]])
    np.testing.assert_array_equal(rank_rewards(np.array([[7]])), [[1]])


def test_rank_reward_comes_at_the_end_only_to_every_agent():
    env = midnight_env.env("hidden_castle", 4, reward="rank")
    env.reset(seed=3)
    rng = np.random.default_rng(0)
    final = {}
    for agent in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        if term or trunc:
            final[agent] = (reward, info["spooky_points"])
            env.step(None)
            continue
        assert reward == 0
        legal = np.flatnonzero(obs["action_mask"])
        env.step(int(legal[rng.integers(len(legal))]))
    agents = env.possible_agents
    points = np.array([[final[a][1] for a in agents]])
    np.testing.assert_allclose([final[a][0] for a in agents], rank_rewards(points)[0])


def test_truncation_at_max_turns(random_game):
    env = midnight_env.env("midnight_party", 2, max_turns=10)
    seen = random_game(env, seed=0)
    ends = [s for s in seen if s[3] or s[4]]
    assert len(ends) == 2 and all(s[4] and not s[3] for s in ends)
    assert env.game_state.rolls[0] == 10


# -- options -----------------------------------------------------------------------------------------


def test_auto_forced_plays_single_choices():
    # 2 x 14 guests fill the gallery: the last placement has one free square left
    plain = midnight_env.env("midnight_party", 2, guests_per_player=14)
    auto = midnight_env.env("midnight_party", 2, guests_per_player=14, auto_forced=True)
    plain.reset(seed=3)
    auto.reset(seed=3)
    rng = np.random.default_rng(0)
    placed = []
    for _ in range(27):
        legal = np.flatnonzero(plain.last()[0]["action_mask"])
        a = int(legal[rng.integers(len(legal))])
        plain.step(a)
        auto.step(a)
        placed.append(a)
    free = (set(range(28)) - set(placed)).pop()
    assert plain.agent_selection == "player_1"
    assert np.flatnonzero(plain.last()[0]["action_mask"]).tolist() == [free]  # a forced decision
    plain.step(free)
    assert auto.last()[4]["forced"] == [(1, f"g{free}")]  # the env made it and says so
    assert auto.game_state.equal(plain.game_state)
    for _agent in auto.agent_iter():  # no decision with one choice is ever shown
        obs, _, term, trunc, info = auto.last()
        if term or trunc:
            auto.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        assert len(legal) >= 2
        auto.step(int(legal[rng.integers(len(legal))]))


def test_bad_options_raise_at_construction():
    with pytest.raises(ConfigError, match="reward='money'"):
        midnight_env.env(reward="money")
    with pytest.raises(ConfigError, match="auto_forced='yes'"):
        midnight_env.env(auto_forced="yes")
    with pytest.raises(ConfigError, match="render_mode='video'"):
        midnight_env.env(render_mode="video")
    with pytest.raises(ConfigError, match="illegal='ignore'"):
        midnight_env.env(illegal="ignore")
    with pytest.raises(ConfigError, match="unknown option 'speed'"):
        midnight_env.env(speed=4)
    with pytest.raises(ConfigError, match="num_players=9"):
        midnight_env.env(num_players=9)
    with pytest.raises(ConfigError, match="rounds"):
        midnight_env.env("hidden_castle", rounds=2)


# -- bad actions and order ---------------------------------------------------------------------------


def test_out_of_space_and_illegal_actions_raise_clear_errors():
    env = midnight_env.env("midnight_party", 4)
    env.reset(seed=0)
    with pytest.raises(ActionError, match=r"player_0: action 509 is out of range: allowed are 0..508$"):
        env.step(509)
    with pytest.raises(ActionError, match="action -1 is out of range"):
        env.step(-1)
    with pytest.raises(ActionError, match="player_0: action 2.5 is not a whole number: allowed are 0..508"):
        env.step(2.5)
    with pytest.raises(ActionError, match="action None is not an integer"):
        env.step(None)
    env.step(np.int32(6))  # numpy integers are fine
    with pytest.raises(ActionError) as err:
        env.step(6)  # square 6 is taken now
    text = str(err.value)
    assert "player_1" in text and "action 6" in text and "place a guest on gallery square 6" in text
    assert "legal: g0, g1" in text and "g6," not in text
    with pytest.raises(ActionError, match="move from g0, walk"):
        env.step(28)  # a move while placing
    env.step(7)  # the env is unharmed by the rejected actions
    assert env.agent_selection == "player_2"


def test_penalize_mode_ends_the_game_and_pays_the_offender():
    env = midnight_env.env("midnight_party", 3, illegal="penalize", illegal_reward=-5)
    env.reset(seed=0)
    env.step(3)
    env.step(3)  # player_1 places on a taken square
    results = {}
    for agent in env.agent_iter():
        _, reward, term, trunc, info = env.last()
        assert term and not trunc
        results[agent] = (reward, info)
        env.step(None)
    assert results["player_1"][0] == -5 and results["player_1"][1]["illegal_action"] == 3
    assert results["player_0"][0] == 0 and results["player_2"][0] == 0
    with pytest.raises(ActionError, match="out of range"):  # outside the space still raises
        env.reset(seed=0)
        env.step(10_000)


def test_default_penalty_is_worse_than_any_game():
    env = midnight_env.env("midnight_party", 4, illegal="penalize")
    assert env.illegal_reward <= -(10 * 4 + 2) * 3  # every guest on landing 10 and both red rooms, each round


def test_order_errors_and_dead_agents():
    env = midnight_env.env("midnight_party", 2, max_turns=1)
    with pytest.raises(OrderError, match="before reset"):
        env.step(0)
    with pytest.raises(OrderError, match="before reset"):
        env.last()
    env.reset(seed=0)
    while not env.truncations[env.agent_selection]:  # 12 placements, then one roll ends it
        env.step(int(np.flatnonzero(env.last()[0]["action_mask"])[0]))
    with pytest.raises(ActionError, match="only valid action is None"):
        env.step(0)
    env.step(None)
    env.step(None)
    assert env.agents == []
    env.reset(seed=1)
    assert env.agents == ["player_0", "player_1"] and not any(env.truncations.values())


def test_notation_helpers_round_trip():
    env = midnight_env.env("hidden_castle", 3)
    env.reset(seed=2)
    rng = np.random.default_rng(0)
    checked = 0
    for _agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        for a in env.legal_actions():
            assert env.notation_to_action(env.action_to_notation(a)) == a
            checked += 1
        legal = env.legal_actions()
        env.step(legal[rng.integers(len(legal))])
    assert checked > 100
    env.reset(seed=2)
    assert env.action_to_notation(14) == "g14" and env.notation_to_action("g14") == 14
    assert env.describe_action(14) == "place a guest on gallery square 14"


@pytest.mark.parametrize("variant", ["midnight_party", "hidden_castle"])
def test_a_choice_kind_tells_a_walk_from_entering_a_room(variant):
    layout = midnight_env.Engine(variant, 2).layout
    assert layout.choice_kind(layout.place(5)) == "place"
    assert layout.choice_kind(layout.pass_action) == "pass"
    assert layout.choice_kind(layout.move(7, 0)) == "walk"
    assert layout.choice_kind(layout.move(7, 1)) == "enter a room"
    assert layout.choice_kind(layout.move(layout.room_origin(0), layout.num_rooms)) == "enter a room"
    with pytest.raises(ActionError, match=f"action {layout.num_actions} is out of range"):
        layout.choice_kind(layout.num_actions)


def test_importing_the_engine_does_not_import_the_env_libraries():
    code = ("import sys, midnight_env; midnight_env.Engine('midnight_party', 2); "
            "assert 'pettingzoo' not in sys.modules and 'gymnasium' not in sys.modules; "
            "midnight_env.env; assert 'pettingzoo' in sys.modules; "
            "from midnight_env import midnight_v0; import midnight_env.envs.aec; "
            "assert midnight_v0.env is midnight_env.env and callable(midnight_env.env); "
            "midnight_v0.env('hidden_castle', 2); print('ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "ok"
