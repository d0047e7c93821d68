"""Afterstate value networks: the model files, the value agent (one ply and search), the training's
targets, and the trainer with a tiny budget (that it learns is measured in BENCHMARKS_TRAIN.md)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
import yaml

from midnight_agents.model import (
    VALUE_FORMAT,
    ModelError,
    ValueModel,
    ensemble_model,
    load_model,
    model_meta,
    save_model,
)
from midnight_agents.value import ValueAgent, afterstate_values, relative_points
from midnight_env.arena.play import play_batch
from midnight_env.arena.registry import list_agents, make_agent
from midnight_env.core.engine import Engine
from midnight_env.core.observation import observation_size

torch = pytest.importorskip("torch")
from midnight_env.training import value as training  # noqa: E402  (needs torch)
from midnight_env.training.args import to_mapping  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
MODELS_DIR = ROOT / "agents" / "models"
SHIPPED = sorted(p.stem for p in MODELS_DIR.glob("value-*.json"))
# settings added to Args after a shipped value model was trained, at the value that keeps the old behaviour
NEWER_THAN_SHIPPED = {"learner_others": 1.0, "anneal_timesteps": 0,
                      "explore_end": -1.0, "greedy_targets": False, "weight_average": 0.0, "members": [],
                      "play": {}, "learner_seat": -1, "learner_records": False, "max_cpu_seconds": 0.0,
                      "init_member": -1, "resume": False, "restarts": 0.0, "frontier_size": 200_000}


def value_model(engine: Engine, tmp_path: Path, name: str = "v", seed: int = 0, hidden: int = 16) -> Path:
    """A random value network file for ``engine``'s game."""
    rng = np.random.default_rng(seed)
    d, n = observation_size(engine), engine.num_players
    weights = {"value.0.weight": rng.normal(0, 0.2, (hidden, d)), "value.0.bias": np.zeros(hidden),
               "value.1.weight": rng.normal(0, 1, (n, hidden)), "value.1.bias": np.ones(n)}
    save_model(tmp_path / name, weights, {**model_meta(engine), "format": VALUE_FORMAT, "points_scale": 10.0})
    return tmp_path / name


def test_value_model_round_trip_and_refusals(tmp_path):
    engine = Engine("midnight_party", 3)
    path = value_model(engine, tmp_path)
    model = load_model(path)
    assert isinstance(model, ValueModel) and model.points_scale == 10.0
    obs = np.random.default_rng(1).random((5, observation_size(engine)), np.float32)
    w = model.weights()
    want = (np.tanh(obs @ w["value.0.weight"].T + w["value.0.bias"]) @ w["value.1.weight"].T + w["value.1.bias"]) * 10
    assert np.allclose(model.points_to_come(obs), want, atol=1e-4)
    meta = json.loads(Path(f"{path}.json").read_text())
    Path(f"{path}.json").write_text(json.dumps({**meta, "points_scale": 0}))
    with pytest.raises(ModelError, match="points_scale 0"):
        ValueModel.load(path)
    Path(f"{path}.json").write_text(json.dumps({**meta, "num_players": 4}))
    with pytest.raises(ModelError, match="judges 3 players, its metadata says .* 4"):
        ValueModel.load(path)
    Path(f"{path}.json").write_text(json.dumps({**meta, "format": "midnight-ppo/9"}))
    with pytest.raises(ModelError, match="allowed are midnight-ppo/1, midnight-value/1"):
        load_model(path)
    with pytest.raises(ModelError, match="needs its model file"):
        make_agent("value")


def test_an_ensemble_predicts_its_members_mean_and_keeps_each_members_training(tmp_path):
    engine = Engine("midnight_party", 3)
    a, b, c = (ValueModel.load(value_model(engine, tmp_path, name, seed)) for name, seed in zip("abc", (1, 2, 3)))
    for model, seed in ((a, 1), (b, 2), (c, 3)):
        model.meta["training"] = {"seed": seed}
    obs = np.random.default_rng(4).random((6, observation_size(engine)), np.float32)
    pair = ensemble_model([a, b], {"seed": 9})
    assert pair.members == ["value", "member1.value"] and pair.num_parameters == a.num_parameters * 2
    assert np.allclose(pair.points_to_come(obs), (a.points_to_come(obs) + b.points_to_come(obs)) / 2, atol=1e-4)
    joined = make_agent(f"value:path={tmp_path / 'a.npz'}+{tmp_path / 'b.npz'}").model  # files joined by +
    assert np.allclose(joined.points_to_come(obs), pair.points_to_come(obs))
    # an ensemble joins another by its members: three networks, each with its own training
    save_model(tmp_path / "pair", pair.weights(), pair.meta)
    trio = ensemble_model([ValueModel.load(tmp_path / "pair"), c])
    assert [m["seed"] for m in trio.meta["members"]] == [1, 2, 3] and "training" not in trio.meta
    want = (a.points_to_come(obs) + b.points_to_come(obs) + c.points_to_come(obs)) / 3
    assert np.allclose(trio.points_to_come(obs), want, atol=1e-4)
    # the one-ply agent plays the mean: with a network and itself it chooses as the network alone
    state = engine.new_games(range(8))
    engine.roll_on(state)
    games, draws = np.arange(8), np.zeros(8)
    twice = ValueAgent(model=ensemble_model([a, a]))
    assert (twice.choose(engine, state, games, draws) == ValueAgent(model=a).choose(engine, state, games, draws)).all()


def test_a_model_file_sets_the_weight_of_the_others_it_plays_with_unless_told(tmp_path):
    engine = Engine("midnight_party", 3)
    path = value_model(engine, tmp_path)
    assert make_agent(f"value:path={path}.npz").others == 1.0  # no play in the file: the margin
    meta = json.loads(Path(f"{path}.json").read_text())
    Path(f"{path}.json").write_text(json.dumps({**meta, "play": {"others": 0}}))
    assert make_agent(f"value:path={path}.npz").others == 0.0
    assert make_agent(f"value:path={path}.npz,others=0.5").others == 0.5
    for bad in ({"budget": 600}, {"others": "none"}, [0]):
        Path(f"{path}.json").write_text(json.dumps({**meta, "play": bad}))
        with pytest.raises(ModelError, match=r"play .* is not allowed: allowed are numbers for others"):
            ValueModel.load(path)


def test_networks_of_other_games_cannot_join_an_ensemble(tmp_path):
    three = ValueModel.load(value_model(Engine("midnight_party", 3), tmp_path, "three"))
    four = ValueModel.load(value_model(Engine("midnight_party", 4), tmp_path, "four"))
    with pytest.raises(ModelError, match=r"four.npz cannot join an ensemble with .*three.npz: num_players 4 \("):
        ensemble_model([three, four])
    wide = ValueModel.load(value_model(Engine("midnight_party", 3), tmp_path, "wide", hidden=32))
    wide.meta["points_scale"] = 20.0
    with pytest.raises(ModelError, match="points_scale 20.0 \\(the first has 10.0\\)"):
        ensemble_model([three, wide])
    arrays = {**three.weights(), "member1.value.0.weight": np.zeros((16, 5)), "member1.value.0.bias": np.zeros(16),
              "member1.value.1.weight": np.zeros((3, 16)), "member1.value.1.bias": np.zeros(3)}
    with pytest.raises(ModelError, match="its member 1 reads 5 inputs"):
        ValueModel(arrays, three.meta, source="bad.npz")


def test_afterstate_values_are_the_others_mean_minus_own_expected_final_points(tmp_path):
    engine = Engine("hidden_castle", 3)
    model = ValueModel.load(value_model(engine, tmp_path))
    state = engine.new_games([5, 6])
    engine.roll_on(state)
    who = np.array([1, 2])
    from midnight_env.core.observation import encode_observations

    final = relative_points(engine, state, who) + model.points_to_come(encode_observations(engine, state, None, who))
    assert np.allclose(afterstate_values(engine, state, who, model), final[:, 1:].mean(1) - final[:, 0])
    assert np.allclose(afterstate_values(engine, state, who, model, others=0.0), -final[:, 0])
    state.phase[:] = 3  # OVER: the booked points alone
    booked = relative_points(engine, state, who)
    assert np.allclose(afterstate_values(engine, state, who, model), booked[:, 1:].mean(1) - booked[:, 0])


@pytest.mark.parametrize("spec", ["budget=0", "budget=600", "budget=600,turns=1,others=0.5"])
def test_value_agent_plays_legal_games_the_same_whatever_the_batch(tmp_path, spec):
    engine = Engine("midnight_party", 3)
    path = value_model(engine, tmp_path)
    agents = [make_agent(f"value:path={path},{spec}"), make_agent("expert")]
    lineups = np.array([[0, 1, 1], [1, 0, 1], [1, 1, 0]])
    first = play_batch(engine, agents, lineups, [3, 4, 5])
    second = play_batch(engine, agents, lineups[1:], [4, 5])
    assert not first.truncated.any()
    assert np.array_equal(first.points[1:], second.points)
    with pytest.raises(ModelError, match="does not fit this game"):
        play_batch(Engine("midnight_party", 4), agents[:1], np.zeros((1, 4), int), [0])


def test_value_agent_at_budget_zero_takes_the_afterstate_its_network_values_most(tmp_path):
    engine = Engine("midnight_party", 2)
    agent = ValueAgent(value_model(engine, tmp_path))
    from midnight_agents.afterstates import expand
    from midnight_env.arena.agent import Decisions
    from midnight_env.core.dice import agent_streams

    state = engine.new_games(np.arange(8))
    engine.roll_on(state)
    games = np.arange(8)
    chosen = agent.act(Decisions(engine, state, games, agent_streams(np.arange(8))))
    children = expand(engine, state, games)
    values = afterstate_values(engine, children.state, state.player[children.parent].astype(np.int64), agent.model)
    for g in games:
        seg = slice(children.start[g], children.start[g + 1])
        best = children.action[seg][np.isclose(values[seg], values[seg].max())]
        assert chosen[g] in best


def moving_positions(engine: Engine, games: int, seat: int):
    """Positions of ``games`` deals where ``seat`` is about to move (guests placed by their first legal
    choice), and their indices."""
    from midnight_env.core.state import MOVE, PLACE

    state = engine.new_games(np.arange(games))
    for _ in range(200):
        placing = np.flatnonzero(state.phase == PLACE)
        if not len(placing):
            break
        engine.apply_action(state, np.argmax(state.legal, axis=1), check=False)
    engine.roll_on(state)
    return state, np.flatnonzero((state.phase == MOVE) & (state.player == seat))


class Spy:
    """An agent that notes whom it decides for and plays ``inner``'s choice."""

    name = "spy"

    def __init__(self, inner: str):
        self.inner, self.seats = make_agent(inner), []

    def act(self, decisions):
        assert decisions.moving.all()
        self.seats.extend(decisions.players.tolist())
        return self.inner.act(decisions)


def test_with_an_opponent_the_search_plays_the_others_by_that_agent(tmp_path):
    from midnight_env.arena.agent import Decisions
    from midnight_env.core.dice import agent_streams

    engine = Engine("midnight_party", 2)
    path = value_model(engine, tmp_path)
    state, games = moving_positions(engine, 24, seat=0)
    assert len(games) >= 4

    def values(agent):
        return agent.action_values(Decisions(engine, state, games, agent_streams(np.arange(24))))

    spy = Spy("expert")
    with_expert = values(ValueAgent(path, budget=300, opponent=spy))
    assert spy.seats and set(spy.seats) == {1}  # the other seat only, never the searcher's
    with_runner = values(ValueAgent(path, budget=300, opponent="runner"))
    own_network = values(ValueAgent(path, budget=300))
    assert np.array_equal(np.isnan(with_expert), np.isnan(with_runner))  # the same legal moves valued
    assert not np.allclose(with_expert, with_runner, equal_nan=True)  # whom it plays against matters
    assert not np.allclose(with_expert, own_network, equal_nan=True)


def test_a_random_opponent_in_the_search_judges_a_game_the_same_whatever_the_batch(tmp_path):
    from midnight_env.arena.agent import Decisions
    from midnight_env.core.dice import agent_streams

    engine = Engine("midnight_party", 2)
    agent = ValueAgent(value_model(engine, tmp_path), budget=300, opponent="random")
    state, games = moving_positions(engine, 24, seat=0)
    whole = agent.action_values(Decisions(engine, state, games, agent_streams(np.arange(24))))
    part = agent.action_values(Decisions(engine, state, games[-2:], agent_streams(np.arange(24))))
    # the same moves of the random opponent in the tree: equal up to the network's float32 rounding,
    # which depends on the batch's size (a different move would shift a value by far more)
    assert np.array_equal(np.isnan(whole[-2:]), np.isnan(part))
    assert np.allclose(whole[-2:], part, atol=1e-5, rtol=0, equal_nan=True)


def test_a_searching_opponent_in_the_search_is_asked_a_few_positions_at_a_time(tmp_path, monkeypatch):
    """A searching opponent searches every position of one call at once: asked for the whole tree
    in one call it ran out of 23 GB. It is asked in chunks of OPPONENT_POSITIONS over its budget,
    and its moves, so the values, are the same as in one call."""
    from midnight_agents import value as value_module
    from midnight_env.arena.agent import Decisions
    from midnight_env.core.dice import agent_streams

    class Searcher(Spy):
        budget = 40

        def __init__(self):
            super().__init__("search:budget=40")
            self.sizes = []

        def act(self, decisions):
            self.sizes.append(len(decisions))
            return super().act(decisions)

    engine = Engine("midnight_party", 2)
    path = value_model(engine, tmp_path)
    state, games = moving_positions(engine, 24, seat=0)

    def values(opponent):
        agent = ValueAgent(path, budget=300, opponent=opponent)
        return agent.action_values(Decisions(engine, state, games, agent_streams(np.arange(24))))

    whole_opponent = Searcher()
    whole = values(whole_opponent)
    monkeypatch.setattr(value_module, "OPPONENT_POSITIONS", 3 * Searcher.budget)
    chunked_opponent = Searcher()
    chunked = values(chunked_opponent)
    assert max(whole_opponent.sizes) > 3  # the tree asks for more positions than a chunk at once
    assert max(chunked_opponent.sizes) == 3 and sum(chunked_opponent.sizes) == sum(whole_opponent.sizes)
    assert np.array_equal(np.isnan(whole), np.isnan(chunked))
    assert np.allclose(whole, chunked, atol=1e-5, rtol=0, equal_nan=True)


def test_an_opponent_needs_a_search_and_a_known_agent(tmp_path):
    path = value_model(Engine("midnight_party", 2), tmp_path)
    with pytest.raises(ValueError, match="opponent= models the others inside the search: allowed only with budget"):
        ValueAgent(path, opponent="expert")
    with pytest.raises(ValueError, match="value option opponent='nobody': unknown agent 'nobody'"):
        ValueAgent(path, budget=10, opponent="nobody")
    spec = f"value:path={path},budget=50,opponent=search:budget=20"  # a spec with options of its own, no commas
    assert make_agent(spec).opponent.budget == 20


# -- training -------------------------------------------------------------------------------------

def test_td_lambda_one_targets_are_the_points_booked_to_the_end_and_lambda_zero_bootstraps(tmp_path):
    engine = Engine("midnight_party", 3)
    agents = [make_agent("expert")]
    lineups = np.zeros((3, 3), np.int64)
    seeds = np.array([1, 2, 3])
    obs, targets, steps = training.play_and_record(engine, agents, lineups, seeds, 10.0)
    assert len(obs) == len(targets) == steps
    res = play_batch(engine, agents, lineups, seeds)
    # the first afterstates are seat 0's first placements: nothing booked yet, so the target is
    # the final points, seat 0 first
    assert np.allclose(targets[:3] * 10, res.points)
    model = ValueModel.load(value_model(engine, tmp_path))
    _, same, _ = training.play_and_record(engine, agents, lineups, seeds, 10.0, model, 1.0)
    assert np.array_equal(same, targets)
    _, boot, _ = training.play_and_record(engine, agents, lineups, seeds, 10.0, model, 0.0)
    # lambda 0: the next afterstate (seat 1's placement, rows 3..5) as predicted, in seat 0's order
    nxt = model.points_to_come(obs[3:6].astype(np.float32)) / 10
    assert np.allclose(boot[:3], nxt[:, [2, 0, 1]], atol=1e-5)


def test_greedy_targets_stop_the_return_at_an_explored_move_and_value_the_greedy_one(tmp_path):
    from midnight_env.arena.agent import Decisions
    from midnight_env.core.dice import agent_streams
    from midnight_env.core.observation import encode_observations
    from midnight_env.core.state import MOVE, OVER, PLACE

    engine = Engine("midnight_party", 2)
    model = ValueModel.load(value_model(engine, tmp_path))
    seeds, lam = np.array([5]), 0.5

    def explorer():  # explores half its moves, the same ones on every call with this seed
        return training.Explorer(ValueAgent(model=model), 0.5, np.random.default_rng(9))

    def view(points, seat):  # seat's view: that seat first, then clockwise
        return np.roll(points, -seat)

    _, targets, steps = training.play_and_record(engine, [explorer()], np.zeros((1, 2), np.int64), seeds, 10.0,
                                                 model, lam, greedy_targets=True)
    # the same game step by step: each afterstate, and where the move was random, the greedy one's
    agent, state, rng = explorer(), engine.new_games(seeds), agent_streams(seeds)
    booked, greedy_after = [], []
    while state.phase[0] in (PLACE, MOVE):
        mover = int(state.player[0])
        action = agent.act(Decisions(engine, state, np.array([0]), rng, seeds))
        if agent.greedy[0] >= 0:
            alt = state.take(np.array([0]))
            engine.apply_action(alt, agent.greedy, check=False)
            seen = encode_observations(engine, alt, np.array([0]), np.array([mover])).astype(np.float16)
            come = 0.0 if alt.phase[0] == OVER else model.points_to_come(seen.astype(np.float32))[0]
            greedy_after.append(alt.spooky[0] + np.roll(come, mover))  # absolute seats
        else:
            greedy_after.append(None)
        engine.apply_action(state, action, check=False)
        booked.append((mover, state.spooky[0].astype(float)))
        engine.roll_on(state)
    assert steps == len(booked) and any(g is not None for g in greedy_after) and any(g is None for g in greedy_after)
    checked = 0
    for t in range(len(booked) - 1):
        if greedy_after[t + 1] is not None:  # the return stops at the explored move: lambda 0 there
            mover, points = booked[t]
            assert np.allclose(targets[t] * 10, view(greedy_after[t + 1] - points, mover), atol=1e-3)
            checked += 1
    assert checked > 0
    # without greedy targets the same games give other targets before explored moves
    _, plain, _ = training.play_and_record(engine, [explorer()], np.zeros((1, 2), np.int64), seeds, 10.0, model, lam)
    assert not np.allclose(plain, targets)


@pytest.mark.slow
def test_value_training_runs_and_a_seed_decides_the_run(tmp_path):
    tiny = ["--total-timesteps", "3000", "--games-per-iteration", "24", "--batch-games", "12", "--hidden-sizes", "16",
            "--num-players", "3", "--eval-every", "2", "--eval-deals", "2", "--eval-field", "runner",
            "--snapshot-every", "1", "--league", "runner,snapshot", "--td-lambda", "0.7", "--progress", "false"]
    runs = [training.main(tiny + ["--run-dir", str(tmp_path / k), "--seed", "3"]) for k in ("a", "b")]
    a, b = (r.run_dir for r in runs)
    with np.load(a / "model.npz") as wa, np.load(b / "model.npz") as wb:
        assert all(np.array_equal(wa[k], wb[k]) for k in wa.files)
    from midnight_env.training.logger import read_metrics

    series = read_metrics(a / "metrics.csv")
    assert np.isfinite(series["losses/value_loss"][1]).all()
    assert "eval/points/runner" in series and "charts/cpu_minutes" in series
    meta = json.loads((a / "model.json").read_text())
    assert meta["format"] == VALUE_FORMAT and meta["training"]["algorithm"] == "value_iteration"
    for key in ("command", "seed", "cpu_time_s", "cpu_minutes", "env_steps", "git_commit"):
        assert meta["training"][key] not in (None, ""), key
    assert make_agent(f"value:path={a / 'model.npz'}").model.num_parameters > 0
    # a checkpoint carries the training so far, so that a run stopped by hand can still be shipped
    step = series["eval/points"][0][0]
    checkpoint = json.loads((a / "checkpoints" / f"step{step}.json").read_text())["training"]
    assert (checkpoint["env_steps"], checkpoint["seed"], checkpoint["config"]) == (step, 3, meta["training"]["config"])
    assert 0 < checkpoint["cpu_time_s"] <= meta["training"]["cpu_time_s"]


def test_fitting_lowers_the_error_on_the_records():
    engine = Engine("hidden_castle", 2)
    obs, targets, _ = training.play_and_record(engine, [make_agent("expert")], np.zeros((16, 2), np.int64),
                                               np.arange(16), 10.0)
    torch.manual_seed(0)
    net = training.Network(obs.shape[1], 2, [32])
    x, y = torch.from_numpy(obs), torch.from_numpy(targets)
    before = ((net(x.float()) - y) ** 2).mean().item()
    optimizer = torch.optim.Adam(net.parameters(), lr=3e-3)
    training.fit_values(net, optimizer, x, y, 20, 256, torch.Generator().manual_seed(0))
    assert ((net(x.float()) - y) ** 2).mean().item() < 0.5 * before


@pytest.mark.slow
def test_midnight_train_runs_the_value_trainer(tmp_path, capsys):
    from midnight_env.cli import main

    argv = ["train", "--algo", "value", "--total-timesteps", "500", "--seed", "2", "--run-dir", str(tmp_path),
            "--no-progress", "--override", "games_per_iteration=6", "--override", "hidden_sizes=8",
            "--override", "num_players=2", "--override", "eval_deals=1", "--override", "eval_field=runner"]
    assert main(argv) == 0
    assert "value-midnight_party-2p-s2: " in capsys.readouterr().out


def test_value_agents_are_listed():
    assert "value" in dict(list_agents())


@pytest.mark.parametrize("bad", [-0.5, 1.5])
def test_an_exploration_end_out_of_range_is_refused(bad):
    with pytest.raises(ValueError, match=rf"explore_end={bad} is out of range: allowed are -1"):
        training.train(training.load_config(overrides={"explore_end": bad}))


@pytest.mark.slow
def test_exploration_falls_linearly_to_its_end_share(tmp_path):
    tiny = ["--total-timesteps", "800", "--games-per-iteration", "8", "--batch-games", "8", "--hidden-sizes", "8",
            "--num-players", "2", "--eval-every", "0", "--eval-deals", "1", "--eval-field", "runner",
            "--league", "runner", "--explore", "0.5", "--explore-end", "0.1", "--progress", "false",
            "--run-dir", str(tmp_path)]
    from midnight_env.training.logger import read_metrics

    steps, shares = read_metrics(training.main(tiny).run_dir / "metrics.csv")["charts/explore"]
    assert shares[0] == 0.5 and np.all(np.diff(shares) < 0) and shares[-1] > 0.1
    assert np.allclose(shares[1:], 0.5 - 0.4 * np.minimum(1, np.asarray(steps[:-1]) / 800))


@pytest.mark.parametrize("name", sorted(training.RETIRED))
def test_a_deleted_setting_is_read_from_an_old_config_only_where_it_did_nothing(name, tmp_path):
    off, why = training.RETIRED[name]
    old = tmp_path / "old.yaml"  # an old run's config.yaml holds every setting of its day
    old.write_text(yaml.safe_dump({name: off, "games_per_iteration": 8}))
    assert training.load_config(old).games_per_iteration == 8 and not hasattr(training.load_config(old), name)
    on = 0.5 if isinstance(off, float) else off + 1
    with pytest.raises(ValueError, match=rf"setting {name}={on!r} was deleted \(.*commit [0-9a-f]{{7}}\): allowed "
                                         rf"is only {off!r}, which did nothing"):
        training.load_config(overrides={name: on})


def value_agents_built_by_training(monkeypatch, tmp_path, *options: str) -> list[dict]:
    """The keyword arguments of every ValueAgent a tiny training run with ``options`` builds."""
    built = []
    real = training.ValueAgent

    def spy(*args, **kwargs):
        built.append(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(training, "ValueAgent", spy)
    training.main(["--total-timesteps", "200", "--games-per-iteration", "4", "--batch-games", "4",
                   "--hidden-sizes", "8", "--num-players", "2", "--eval-deals", "1", "--eval-field", "runner",
                   "--progress", "false", "--run-dir", str(tmp_path), *options])
    return built


def test_learner_others_weighs_the_others_in_the_learner_its_snapshots_and_its_evaluation(tmp_path, monkeypatch):
    built = value_agents_built_by_training(monkeypatch, tmp_path, "--total-timesteps", "400", "--eval-every", "1",
                                           "--league", "runner,snapshot", "--snapshot-every", "1",
                                           "--learner-others", "0")
    assert len(built) >= 3 and {kw.get("others") for kw in built} == {0.0}
    with pytest.raises(ValueError, match=r"learner_others='x' is not a valid float: allowed are numbers"):
        training.train(training.load_config(overrides={"learner_others": "x"}))


def test_an_ensemble_config_trains_each_member_as_its_own_run_and_ships_their_mean(tmp_path):
    result = training.main(["--total-timesteps", "200", "--games-per-iteration", "4", "--batch-games", "4",
                            "--hidden-sizes", "8", "--num-players", "2", "--eval-deals", "1", "--eval-field", "runner",
                            "--league", "runner", "--progress", "false", "--run-dir", str(tmp_path),
                            "--members", "[{seed: 4}, {seed: 5, learner_others: 0}]", "--play", "{others: 0.5}"])
    members = [training.ValueModel.load(r.run_dir / "model") for r in result.members]
    assert [r.run_dir.name for r in result.members] == ["member0-s4", "member1-s5"]
    assert [m.meta["training"]["config"]["learner_others"] for m in members] == [1.0, 0.0]
    model = ValueModel.load(result.run_dir / "model")
    engine = Engine("midnight_party", 2)
    obs = np.random.default_rng(0).random((4, observation_size(engine)), np.float32)
    assert np.allclose(model.points_to_come(obs), np.mean([m.points_to_come(obs) for m in members], axis=0), atol=1e-4)
    trained = model.meta["training"]
    assert [m["seed"] for m in model.meta["members"]] == [4, 5] and trained["config"]["members"][1]["seed"] == 5
    assert trained["env_steps"] == sum(m.meta["training"]["env_steps"] for m in members) == result.steps
    assert trained["cpu_minutes"] >= 0 and trained["command"]
    assert model.meta["play"] == {"others": 0.5} and all("play" not in m.meta for m in members)
    ensemble = str(result.run_dir / "model")
    with pytest.raises(ModelError, match="is an ensemble of 2 networks: init_model starts from one network, "
                                         r"init_member=K picks it \(0 to 1\)"):
        training.train(training.load_config(overrides={"init_model": ensemble, "num_players": 2,
                                                       "run_dir": str(tmp_path / "next")}))
    with pytest.raises(ModelError, match="init_member 2 is out of range: model .* has 2 networks"):
        training.train(training.load_config(overrides={"init_model": ensemble, "init_member": 2, "num_players": 2,
                                                       "run_dir": str(tmp_path / "next")}))
    # init_member=1 starts from the second network: with no learning the result is that network
    frozen = training.train(training.load_config(overrides={
        "init_model": ensemble, "init_member": 1, "num_players": 2, "hidden_sizes": [8], "learning_rate": 0.0,
        "anneal_lr": False, "total_timesteps": 200, "games_per_iteration": 8, "batch_games": 8, "eval_every": 0,
        "run_dir": str(tmp_path / "next"), "weight_average": 0.0}))
    started = ValueModel.load(frozen.run_dir / "model")
    assert started.meta["training"]["init_model"]["member"] == 1
    assert started.meta["training"]["init_model"]["training"]["seed"] == 5  # member 1's own training
    assert np.allclose(started.points_to_come(obs), members[1].points_to_come(obs), atol=1e-6)


def test_a_wider_learner_starts_computing_exactly_the_narrower_networks_function():
    import torch

    torch.manual_seed(0)
    engine = Engine("midnight_party", 2)
    D = observation_size(engine)
    narrow, wide = training.Network(D, 2, [6, 4]), training.Network(D, 2, [16, 9])
    training.widen_into(wide, narrow.weights(), "narrow.npz", [16, 9])
    obs = torch.from_numpy(np.random.default_rng(1).random((32, D), np.float32))
    with torch.no_grad():
        assert np.allclose(wide(obs).numpy(), narrow(obs).numpy(), atol=1e-6)
        # the new units are live (fresh incoming weights), so training can use them
        assert wide.body[0].weight[6:].abs().sum() > 0 and wide.body[2].weight[:, 6:].abs().sum() == 0
    for hidden in ([4, 4], [16, 9, 3], [16]):
        with pytest.raises(ModelError, match=rf"model narrow.npz has hidden layers \[6, 4\], which do not fit "
                                             rf"hidden_sizes={re.escape(str(hidden))}: allowed are as many"):
            training.widen_into(training.Network(D, 2, hidden), narrow.weights(), "narrow.npz", hidden)


def test_training_refuses_a_play_option_a_model_cannot_hold(tmp_path):
    with pytest.raises(ValueError, match=r"play \{'budget': 600\} is not allowed: allowed are others"):
        training.train(training.load_config(overrides={"play": {"budget": 600}, "run_dir": str(tmp_path)}))


@pytest.mark.parametrize("key", ["run_dir", "members"])
def test_an_ensemble_member_may_not_change_where_it_is_written_or_nest(key):
    with pytest.raises(ValueError, match=f"members\\[1\\] changes {key}: a member may change every setting but"):
        training.train(training.load_config(overrides={"members": [{"seed": 1}, {key: "x"}]}))


def test_greedy_targets_without_bootstrapping_are_refused():
    with pytest.raises(ValueError, match=r"greedy_targets=true needs td_lambda below 1"):
        training.train(training.load_config(overrides={"greedy_targets": True, "td_lambda": 1.0}))


@pytest.mark.slow
def test_the_weight_average_is_the_exponential_average_of_the_live_networks_and_does_not_change_the_play(tmp_path):
    tiny = ["--total-timesteps", "2400", "--games-per-iteration", "8", "--batch-games", "8", "--hidden-sizes", "8",
            "--num-players", "2", "--eval-every", "1", "--eval-deals", "1", "--eval-field", "runner",
            "--league", "runner", "--td-lambda", "0.5", "--greedy-targets", "true", "--progress", "false"]
    live = training.main(tiny + ["--run-dir", str(tmp_path / "live")]).run_dir
    avg = training.main(tiny + ["--run-dir", str(tmp_path / "avg"), "--weight-average", "0.75"]).run_dir

    def weights(path):
        with np.load(path) as w:
            return {k: w[k] for k in w.files}

    iterates = [weights(p) for p in sorted((live / "checkpoints").glob("step*.npz"), key=lambda p: int(p.stem[4:]))]
    assert len(iterates) >= 3
    expected = dict(iterates[0])
    for w in iterates[1:]:
        expected = {k: 0.75 * expected[k] + 0.25 * w[k] for k in w}
    got = weights(avg / "model.npz")
    assert all(np.allclose(got[k], expected[k], atol=1e-6) for k in got)
    assert not all(np.allclose(got[k], iterates[-1][k]) for k in got)  # not the last live network
    # the live networks played and learned as without the average: the same metrics of training
    from midnight_env.training.logger import read_metrics

    a, b = (read_metrics(r / "metrics.csv")["losses/value_loss"][1] for r in (live, avg))
    assert np.allclose(a, b)


@pytest.mark.parametrize("bad", [-0.1, 1.0])
def test_a_weight_average_out_of_range_is_refused(bad):
    with pytest.raises(ValueError, match=rf"weight_average={bad} is out of range: allowed are numbers in \[0, 1\)"):
        training.train(training.load_config(overrides={"weight_average": bad}))


def test_a_learning_rate_horizon_below_zero_is_refused():
    with pytest.raises(ValueError, match=r"anneal_timesteps=-1 is out of range"):
        training.train(training.load_config(overrides={"anneal_timesteps": -1}))


# -- the shipped value models ----------------------------------------------------------------------


def test_value_models_are_shipped():
    assert {"value-midnight_party-4p", "value-hidden_castle-4p"} <= set(SHIPPED)


@pytest.mark.parametrize("name", SHIPPED)
def test_value_configs_reproduce_the_shipped_value_models(name):
    """configs/<name>.yaml holds every setting the model was trained with; a run stopped by hand is
    reproduced by its steps as total_timesteps and its planned total as the learning rate's horizon."""
    meta = json.loads((MODELS_DIR / f"{name}.json").read_text())
    trained = meta["training"]
    path = ROOT / "configs" / f"{name}.yaml"
    # an earlier champion renamed -v<k> when a successor took the name: its config kept as it ran
    was = meta.get("renamed", {}).get("from", name)
    assert trained["config"]["config"] == f"configs/{was}.yaml"
    mine = to_mapping(training.load_config(path))
    ignored = ("config", "progress")  # the file's name; the progress bar changes nothing learned
    assert ({k: v for k, v in mine.items() if k not in ignored}
            == {k: v for k, v in trained_settings(trained).items() if k not in ignored})
    # an ensemble: each network was trained with the settings the config gives its member
    assert len(meta.get("members", [None])) == max(len(mine["members"]), 1)
    for i, member in enumerate(meta.get("members", [])):
        want = training.member_settings(mine, i)
        got = trained_settings(member)
        assert {k: v for k, v in want.items() if k not in ignored} == {k: got[k] for k in want if k not in ignored}


def trained_settings(trained: dict) -> dict:
    """Every setting of a model's training record, those newer than it at the values that keep the
    old behaviour; a run stopped by hand as its steps and its planned total as the learning rate's horizon."""
    settings = {k: v for k, v in {**NEWER_THAN_SHIPPED, **trained["config"]}.items() if k not in training.RETIRED}
    if "stopped" in trained:
        settings["anneal_timesteps"] = settings["anneal_timesteps"] or settings["total_timesteps"]
        settings["total_timesteps"] = trained["env_steps"]
    return settings


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_value_model_is_listed_small_documented_and_plays_legal_games(name):
    assert name in dict(list_agents())
    assert (MODELS_DIR / f"{name}.npz").stat().st_size < 5_000_000
    meta = json.loads((MODELS_DIR / f"{name}.json").read_text())
    assert ("ensemble of" in dict(list_agents())[name]) == ("members" in meta)  # the listing says what it is
    trained = meta["training"]
    for key in ("algorithm", "command", "config", "seed", "env_steps", "cpu_minutes", "git_commit", "engine_version"):
        assert trained.get(key) not in (None, ""), key
    champion = f"value-{meta['variant']}-{meta['num_players']}p"
    assert trained["config"]["seed"] == trained["seed"]
    assert name == champion or (re.fullmatch(rf"{champion}-v\d+", name) and meta["renamed"]["from"] == champion
                                and meta["renamed"]["config"] == f"configs/{name}.yaml")
    engine = Engine(meta["variant"], meta["num_players"])
    n = meta["num_players"]
    lineups = np.array([[(seat + k) % 2 for seat in range(n)] for k in range(8)])
    res = play_batch(engine, [make_agent(name), make_agent("expert")], lineups, range(8))
    assert (res.decisions > 0).all() and not res.truncated.any()
