"""Afterstate values by approximate policy iteration in a league, cleanrl style: the whole algorithm here.

The network (the ``midnight-value/1`` model of :mod:`midnight_agents.model`) reads the position
right after a player's decision, seen by that player, and predicts the spooky points every
player will still book. Playing it means taking the legal choice whose afterstate it values most
(:class:`midnight_agents.value.ValueAgent`), so each network is a policy, and a network fitted to
that policy's games values a better policy still: TD-Gammon's loop with Monte Carlo targets.

One iteration:

1. **play** ``games_per_iteration`` games, ``batch_games`` at a time. Every seat is the learner
   (the current network, with an ``explore`` share of uniformly random legal moves) with
   probability ``self_play``, else an agent drawn from ``league``: agent specs, and ``snapshot``
   for a frozen past network (one of the last ``pool_size``, taken every ``snapshot_every``
   iterations). Each game has one learner at least.
2. **record** every decision's afterstate seen by the player who decided, and, once the game is
   over, what each player booked after it (the target, divided by ``points_scale``). The league's
   decisions are data too: the value of a position does not care who reached it. With
   ``greedy_targets`` a return stops at a random move of the learner and values its greedy move
   instead, so that exploring does not bias the values of the greedy play.
3. **fit** the network to the last ``replay`` iterations' records (``epochs`` passes, Adam, mean
   squared error). With ``weight_average`` a moving average of the fitted networks is the one
   evaluated and shipped.

Every ``eval_every`` iterations the one-ply player is measured against the strong field
(``eval_field``: ``search``, ``expert``, the previous champion): duplicate deals, the learner in
every seat once with the same dice, the field in the other seats; its mean points and the
field's, against env steps (decisions in training games, every seat's) and the CPU time so far.

    midnight train --algo value --config configs/value-midnight_party-4p.yaml

Writes ``runs/<exp_name>-s<seed>/`` like the PPO trainer (config.yaml, metrics.csv, checkpoints/,
model.npz/.json, learning_curve.png); ``save_model: PATH`` writes the final model there too.
With ``members`` the run is an ensemble: one such run per member in its ``members/``, and the
model saved averages their networks' values (:func:`train_ensemble`).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if "torch" not in sys.modules:  # see native.py: torch's OpenMP threads must not spin
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np
import torch
import torch.nn as nn
from torch.optim.swa_utils import AveragedModel, get_ema_multi_avg_fn
from tqdm import tqdm

from midnight_agents.model import (
    PLAY_OPTIONS,
    VALUE_FORMAT,
    ModelError,
    ValueModel,
    ensemble_model,
    model_meta,
    save_model,
)
from midnight_agents.value import ValueAgent
from midnight_env.arena.agent import Agent, Decisions
from midnight_env.arena.registry import make_agent
from midnight_env.core.config import make_config
from midnight_env.core.dice import agent_streams
from midnight_env.core.engine import Engine
from midnight_env.core.observation import encode_observations, observation_size
from midnight_env.core.state import MOVE, OVER, PLACE, GameState
from midnight_env.training.args import (
    check_counts,
    check_numbers,
    check_seed_below,
    check_widths,
    from_mapping,
    load_yaml,
    parse_args,
    to_mapping,
)
from midnight_env.training.evaluate import mean_ci, play_every_seat
from midnight_env.training.export import linear_weights
from midnight_env.training.frontier import Frontier
from midnight_env.training.logger import MetricLogger, plot_learning_curve
from midnight_env.training.runs import code_version, make_run_dir, training_metadata, write_config

SNAPSHOT = "snapshot"  # league entry: a frozen past network
RESUME_FILE = "resume.pt"  # in checkpoints/: what a resumed run continues from
RESUME_FORMAT = "midnight-value-resume/1"
RESUMABLE = {"resume", "progress", "total_timesteps", "max_seconds", "max_cpu_seconds", "config"}  # may change

# this trainer's seeds: below the limit (check_seed_below), and why
SEEDS = (10**11, "the value trainer's game seeds are seed*10**7 + game numbers, below 2**62")


@dataclass
class Args:
    config: str = ""
    """YAML file of settings (these field names); flags given on the command line override it"""
    exp_name: str = ""
    """name of the run (default value-<variant>-<N>p); its folder is <run_dir>/<exp_name>-s<seed>"""
    run_dir: str = "runs"
    """folder that receives the run folders"""
    resume: bool = False
    """continue the run in <run_dir>/<exp_name>-s<seed> from its last checkpoint (checkpoints/resume.pt:
    the network, optimizer, replay, snapshots, random streams, steps and CPU time so far) instead of
    starting a new folder; the budgets (total_timesteps, max_seconds, max_cpu_seconds) may change,
    nothing else. A folder without a checkpoint starts from the beginning there"""
    seed: int = 1
    """seed of torch, of the line-ups, of the exploration and of the games"""
    threads: int = 1
    """torch CPU threads (torch.set_num_threads)"""
    variant: str = "midnight_party"
    """rule set: midnight_party or hidden_castle"""
    num_players: int = 4
    """players per game"""
    options: dict = field(default_factory=dict)
    """rule options passed to the engine"""
    total_timesteps: int = 20_000_000
    """env steps to train for (decisions in training games, every seat's)"""
    max_seconds: float = 0.0
    """stop after this many seconds of training (0: no limit)"""
    max_cpu_seconds: float = 0.0
    """stop after this many CPU-seconds of the process (time.process_time: every thread's, the
    evaluations' included; a resumed run counts its time before), 0: no limit. With a limit the
    learning rate's and the exploration's schedules end where it or total_timesteps comes first"""
    games_per_iteration: int = 2000
    """training games played per iteration"""
    batch_games: int = 500
    """games played at once"""
    hidden_sizes: list[int] = field(default_factory=lambda: [256, 128])
    """widths of the tanh layers; the output layer is linear, one output per player"""
    points_scale: float = 10.0
    """the network's outputs times this are spooky points"""
    learning_rate: float = 5e-4
    """Adam learning rate"""
    anneal_lr: bool = True
    """decay the learning rate linearly to a tenth over the run"""
    anneal_timesteps: int = 0
    """env steps over which the learning rate decays (0: total_timesteps); a run stopped early is
    reproduced by its steps as total_timesteps and the schedule it trained with here"""
    minibatch: int = 1024
    """records per gradient step"""
    epochs: int = 1
    """passes over the replayed records per iteration"""
    replay: int = 4
    """iterations whose records are fitted (the newest ones)"""
    td_lambda: float = 1.0
    """targets: lambda-returns along each game's afterstates, bootstrapped from the network that
    played (1: the points booked to the end of the game, Monte Carlo)"""
    keep: float = 1.0
    """share of the records kept (a game's consecutive afterstates are much alike)"""
    explore: float = 0.05
    """share of the learner's decisions made uniformly at random among the legal ones"""
    explore_end: float = -1.0
    """the share at the end of the run, reached linearly from explore over total_timesteps (-1:
    explore throughout); a large share early finds what one ply never tries, a small one late
    fits the values of the greedy play that is shipped"""
    weight_average: float = 0.0
    """decay per iteration of an exponential moving average of the network's weights (0: none): the
    averaged network is the one evaluated, checkpointed and shipped, the live one plays and learns.
    One ply turns small value errors into wrong choices; the average smooths the scatter between
    successive fits (torch.optim.swa_utils.AveragedModel)"""
    greedy_targets: bool = False
    """where the learner explored, its targets take the greedy move's afterstate instead and the
    return stops there (Watkins' Q(lambda); needs td_lambda < 1): exploration that lasts to the end
    of the run does not bias the values of the greedy play that is shipped"""
    openings: float = 0.0
    """exploring starts: the share of training games that open with a number of decisions, drawn
    uniformly from 1 to opening_length, made uniformly at random by every seat and not fitted (0:
    none). The games go on from positions the agents' own play seldom reaches: a best response to a
    near-optimal target loses most of what it misses in rare endgame positions of its own seat
    (docs/RESEARCH.md, "Where the rest lies")"""
    opening_length: int = 20
    """the most decisions of such an opening (a one-round duo game lasts about 20)"""
    rare_fit: float = 0.0
    """weight of a record in the minibatches, its afterstate's count in the replay to the power
    -rare_fit (0: every record alike; 1: every distinct afterstate alike). A best response to a
    near-optimal target misses most in positions its play seldom reaches; where the game is small
    enough that afterstates repeat, this fits them as well as the common ones, and the common ones
    less (at 1 too little: docs/RESEARCH.md); at real size nearly every afterstate is new, and it
    changes little"""
    restarts: float = 0.0
    """share of each iteration's training games that start not at set-up but at a position where
    the learner decided in an earlier training game, drawn with weight 1 / how often training met
    it, with fresh dice (Go-Explore's return to rare positions: training/frontier.py); 0: none.
    The positions are kept in memory only (a resumed run meets them again from the start)"""
    frontier_size: int = 200_000
    """the most positions kept for restarts (the first met; about 1 kB each)"""
    learner_budget: int = 0
    """the learner's search budget while it plays the training games (0: its best afterstate, one
    ply; above 0: the search of the value agent, a better policy whose games are fitted: slower)"""
    learner_turns: int = 0
    """own turns of that search (0: the search's default, as ``search`` plays without ``turns``)"""
    learner_others: float = 1.0
    """weight of the others' points in the learner's choices (the value agent's ``others``), in
    training, in its snapshots and in its evaluation: 1 plays for the margin over the others, 0 for
    its own points alone (the tournaments' measure)"""
    self_play: float = 0.6
    """probability that a seat is held by the learner (else by an agent drawn from the league)"""
    league: list[str] = field(default_factory=lambda: ["expert", SNAPSHOT])
    """agents of the other seats: agent specs, 'snapshot' for a frozen past network"""
    learner_seat: int = -1
    """the seat the learner holds in every training game, the other seats as self_play and the league
    draw them (-1: the learner in any seat, one at least per game). With a league of one agent and
    self_play 0: a best response to that agent in that seat (``midnight exploit``)"""
    learner_records: bool = False
    """fit only the records of the learner's own decisions (a best response: the league's decisions
    are another policy's, whose values the learner does not play by)"""
    snapshot_every: int = 10
    """iterations between snapshots added to the league"""
    pool_size: int = 4
    """snapshots kept (the oldest is replaced)"""
    init_model: str = ""
    """start from this value model (NAME.npz), not a fresh network: its hidden layers as many as
    hidden_sizes, each as wide or narrower (a wider learner computes its function at the start)"""
    init_member: int = -1
    """the network of an ensemble init_model to start from (0, 1, ...; -1: init_model must be one network)"""
    eval_every: int = 10
    """iterations between evaluations against the strong field (0: only at the end)"""
    eval_deals: int = 60
    """deals per evaluation (each played once per seat)"""
    eval_field: list[str] = field(default_factory=lambda: ["search", "expert"])
    """agents of the other seats in the evaluation games (cycled over the seats)"""
    members: list[dict] = field(default_factory=list)
    """an ensemble (empty: one network): one network per entry, each trained as its own run of these
    settings with the entry's changes (``[{seed: 1}, {seed: 2}]``), in <run folder>/members/; the
    model saved averages their values (independent fits err apart)"""
    play: dict = field(default_factory=dict)
    """the value agent's default options for the saved model, written into it (``{others: 0}``: it
    plays for its own points unless told otherwise)"""
    save_model: str = ""
    """also write the final model to this path (NAME -> NAME.npz + NAME.json)"""
    progress: bool = True
    """show a progress bar"""

    def __post_init__(self):
        self.check()

    def check(self) -> None:
        """ValueError (one line naming the setting, its value and what is allowed) for a setting out of
        range: checked when the settings are made and again by :func:`train`, before anything is
        written (``midnight exploit`` makes its learner's settings before it writes exploit.json)."""
        check_seed_below(self.seed, *SEEDS)
        make_config(self.variant, self.num_players, **self.options)
        check_counts(self, 1, "threads", "total_timesteps", "games_per_iteration", "batch_games", "minibatch",
                     "epochs", "replay", "snapshot_every", "pool_size", "eval_deals")
        check_counts(self, 0, "eval_every")
        check_numbers(self, 0.0, None, "max_seconds", "learning_rate")
        check_numbers(self, 0.0, None, "points_scale", low_open=True)
        check_widths(self, "hidden_sizes")
        for name in ("self_play", "explore", "keep", "td_lambda"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0 or (name == "keep" and value == 0.0):
                raise ValueError(f"{name}={value!r} is out of range: allowed are numbers in "
                                 f"{'(0, 1]' if name == 'keep' else '[0, 1]'}")
        if not (self.explore_end == -1.0 or 0.0 <= self.explore_end <= 1.0):
            raise ValueError(f"explore_end={self.explore_end!r} is out of range: allowed are -1 (explore "
                             "throughout) or numbers in [0, 1]")
        if self.greedy_targets and self.td_lambda == 1.0:
            raise ValueError("greedy_targets=true needs td_lambda below 1: the targets of explored moves "
                             "bootstrap from the network")
        if not 0.0 <= self.weight_average < 1.0:
            raise ValueError(f"weight_average={self.weight_average!r} is out of range: allowed are numbers in "
                             "[0, 1) (0: no average)")
        if not 0.0 <= self.openings <= 1.0:
            raise ValueError(f"openings={self.openings!r} is out of range: allowed are numbers in [0, 1] (0: no "
                             "exploring starts)")
        if self.rare_fit < 0:
            raise ValueError(f"rare_fit={self.rare_fit!r} is out of range: allowed are 0 (every record alike) or more")
        if not 0.0 <= self.restarts < 1.0:
            raise ValueError(f"restarts={self.restarts!r} is out of range: allowed are numbers in [0, 1) (some games "
                             "must start at set-up to meet positions)")
        if self.frontier_size < 1:
            raise ValueError(f"frontier_size={self.frontier_size!r} is out of range: allowed are 1 or more positions")
        if self.opening_length < 1:
            raise ValueError(f"opening_length={self.opening_length!r} is out of range: allowed are 1 or more decisions")
        if self.anneal_timesteps < 0:
            raise ValueError(f"anneal_timesteps={self.anneal_timesteps!r} is out of range: allowed are 0 "
                             "(total_timesteps) or more env steps")
        for name in ("learner_budget", "learner_turns"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name}={getattr(self, name)!r} is out of range: allowed are 0 ("
                                 f"{'one ply' if name == 'learner_budget' else 'the search default'}) or more")
        if set(self.play) - set(PLAY_OPTIONS):
            raise ValueError(f"play {self.play!r} is not allowed: allowed are {', '.join(PLAY_OPTIONS)}")
        if self.init_member < -1:
            raise ValueError(f"init_member={self.init_member!r} is out of range: allowed are -1 (init_model is one "
                             "network) or 0, 1, ... (a network of an ensemble)")
        if self.max_cpu_seconds < 0:
            raise ValueError(f"max_cpu_seconds={self.max_cpu_seconds!r} is out of range: allowed are 0 (no limit) or "
                             "more CPU-seconds")
        if not -1 <= self.learner_seat < self.num_players:
            raise ValueError(f"learner_seat={self.learner_seat!r} is out of range: allowed are -1 (any seat) or 0 to "
                             f"{self.num_players - 1} (num_players {self.num_players})")
        if self.members and self.resume:
            raise ValueError("resume=true continues one network's run: an ensemble (members) cannot resume")
        for i, changes in enumerate(self.members):
            if NOT_MEMBER & set(changes):
                raise ValueError(f"members[{i}] changes {', '.join(sorted(NOT_MEMBER & set(changes)))}: a member may "
                                 f"change every setting but {', '.join(sorted(NOT_MEMBER))}")
            from_mapping(Args, member_settings(to_mapping(self), i), where=f"members[{i}]")  # its settings in range


class Network(nn.Module):
    """tanh MLP from an afterstate observation to every player's points still to come / points_scale."""

    def __init__(self, obs_size: int, num_players: int, hidden: list[int]):
        super().__init__()
        layers, width = [], obs_size
        for h in hidden:
            layers += [nn.Linear(width, h), nn.Tanh()]
            width = h
        layers.append(nn.Linear(width, num_players))
        self.body = nn.Sequential(*layers)

    def forward(self, obs):
        return self.body(obs)

    def weights(self) -> dict[str, np.ndarray]:
        return linear_weights("value", [m for m in self.body if isinstance(m, nn.Linear)])


def widen_into(net: Network, theirs: dict[str, np.ndarray], source: str, hidden: list[int]) -> None:
    """Start ``net`` from the weights ``theirs`` (``value.K.weight`` (out, in), ``value.K.bias``) of
    a network with as many layers and hidden layers no wider than ``net``'s: each layer's weights go
    to the top-left block, and the units ``net`` has beyond them keep their fresh incoming weights
    but send nothing on (outgoing weights 0), so ``net`` computes exactly ``theirs``' function and
    has room to learn more (Net2Net's widening: a learner with more capacity than the network it
    starts from, never weaker at the start). ModelError names the file where the depth differs or a
    layer is wider than ``hidden``'s."""
    linears = [m for m in net.body if isinstance(m, nn.Linear)]
    shapes = [theirs.get(f"value.{k}.weight", np.zeros((0, 0))).shape for k in range(len(linears))]
    fits = (len(theirs) == 2 * len(linears) and shapes[0][1] == linears[0].in_features
            and shapes[-1][0] == linears[-1].out_features
            and all(o <= m.out_features and i <= m.in_features for (o, i), m in zip(shapes, linears)))
    if not fits:
        theirs_hidden = [theirs[f"value.{k}.weight"].shape[0] for k in range(len(theirs) // 2 - 1)]
        raise ModelError(f"model {source} has hidden layers {theirs_hidden}, which do not fit hidden_sizes={hidden}: "
                         "allowed are as many hidden layers, each as wide or wider")
    with torch.no_grad():
        for k, layer in enumerate(linears):
            out, inp = shapes[k]
            layer.weight[:out, :inp] = torch.from_numpy(theirs[f"value.{k}.weight"])
            layer.weight[:, inp:] = 0.0  # the new units of the layer below send nothing here yet
            layer.bias[:out] = torch.from_numpy(theirs[f"value.{k}.bias"])


def value_meta(engine: Engine, points_scale: float, training: dict[str, Any] | None = None) -> dict[str, Any]:
    return {**model_meta(engine, "tanh", training), "format": VALUE_FORMAT, "points_scale": points_scale}


def frozen(net: Network, engine: Engine, points_scale: float, name: str = "learner") -> ValueModel:
    """The network as a numpy model (what the agents play)."""
    return ValueModel(net.weights(), value_meta(engine, points_scale), source=name)


class Explorer(Agent):
    """An agent that plays ``agent``'s choice, or with probability ``rate`` a uniformly random legal
    one; ``greedy`` keeps, for the last call, ``agent``'s choice where the random one differs from
    it (else -1), for targets that follow the greedy play (:func:`play_and_record`)."""

    def __init__(self, agent: Agent, rate: float, rng: np.random.Generator):
        self.agent, self.rate, self.rng, self.name = agent, rate, rng, agent.name
        self.greedy = np.zeros(0, np.int64)

    def act(self, decisions: Decisions) -> np.ndarray:
        out = self.agent.act(decisions)
        self.greedy = np.full(len(out), -1, np.int64)
        wild = self.rng.random(len(out)) < self.rate
        if wild.any():
            drawn = decisions.random_choice()
            wild &= drawn != out
            self.greedy[wild] = out[wild]
            out[wild] = drawn[wild]
        return out


def play_and_record(engine: Engine, agents: list[Agent], lineups: np.ndarray, seeds: np.ndarray,
                    points_scale: float, model: ValueModel | None = None, td_lambda: float = 1.0,
                    greedy_targets: bool = False, record_agents: list[int] | None = None,
                    opening: np.ndarray | None = None, start: GameState | None = None,
                    meet: Callable[[GameState, np.ndarray], None] | None = None
                    ) -> tuple[np.ndarray, np.ndarray, int]:
    """Play the games to the end; (afterstate observations (M, D) float16, targets (M, N) float32,
    decisions). Row m is one decision's afterstate seen by the player who decided; its target is
    the points every player (that one first, then clockwise) booked after it, or with
    ``td_lambda`` < 1 its lambda-return: the points booked until the game's next afterstate plus
    ``model``'s prediction there, weighted ``1 - td_lambda``, and that afterstate's own return,
    weighted ``td_lambda`` (1: the points booked to the end, as they fell).

    ``greedy_targets`` (with ``td_lambda`` < 1 and a model): where an :class:`Explorer` played a
    random move instead of its greedy one, the return before it stops there (Watkins' Q(lambda))
    and takes the greedy move's afterstate instead, its points and predicted value: the targets
    value the greedy play, however much the learner explores.

    ``record_agents`` (indices of ``agents``): only their decisions' rows are returned, and a return
    bootstraps only from their afterstates (the network is fitted to no other: a return runs through
    the others' afterstates as with ``td_lambda`` 1); the decisions counted are every seat's.

    ``opening`` (one count per game): exploring starts. Game g's first ``opening[g]`` decisions are
    made uniformly at random, whoever holds the seat, and their rows are not returned: the games
    that follow start from positions the agents' own play seldom reaches, and what is fitted is
    still the agents' play from there (a return never runs back into the opening).

    ``start``: the games begin there (a batch of positions at a decision, one per seed, their dice
    streams set: :meth:`~midnight_env.training.frontier.Frontier.draw`) instead of at set-up.
    ``meet(state, games)`` is called at every decision of ``agents[0]`` outside an opening, before
    it acts (the learner's positions for :class:`~midnight_env.training.frontier.Frontier`)."""
    state = engine.new_games(seeds) if start is None else start
    rng = agent_streams(seeds)
    everyone = np.arange(len(seeds))
    n = engine.num_players
    bootstrap = td_lambda < 1.0 and model is not None
    obs, games, seats, booked, ended, recorded, opened = [], [], [], [], [], [], []
    decided = np.zeros(len(seeds), np.int64)  # decisions so far, per game
    explored = []  # per decision step: (rows of it where the learner explored, greedy afterstate obs,
    #                their booked points, whether that afterstate ends the game)
    while True:
        deciding = np.flatnonzero((state.phase == PLACE) | (state.phase == MOVE))
        if not len(deciding):
            break
        actions = np.full(len(seeds), -1, np.int64)
        greedy = np.full(len(seeds), -1, np.int64)
        holder = lineups[everyone, state.player]
        wild = np.zeros(len(deciding), bool) if opening is None else decided[deciding] < opening[deciding]
        if meet is not None and (mine := ~wild & (holder[deciding] == 0)).any():
            meet(state, deciding[mine])
        for k in np.unique(holder[deciding][~wild]):
            group = deciding[~wild & (holder[deciding] == k)]
            actions[group] = agents[k].act(Decisions(engine, state, group, rng, seeds))
            if greedy_targets and isinstance(agents[k], Explorer):
                greedy[group] = agents[k].greedy
        if wild.any():
            actions[deciding[wild]] = Decisions(engine, state, deciding[wild], rng, seeds).random_choice()
        opened.append(wild)
        decided[deciding] += 1
        movers = state.player[deciding].astype(np.int64)
        if record_agents is not None:
            recorded.append(np.isin(holder[deciding], record_agents))
        if greedy_targets and bootstrap:
            rows = np.flatnonzero(greedy[deciding] >= 0)
            alt = state.take(deciding[rows])
            engine.apply_action(alt, greedy[deciding[rows]], check=False)
            alt_obs = encode_observations(engine, alt, np.arange(len(rows)), movers[rows]).astype(np.float16)
            explored.append((rows, alt_obs, alt.spooky.astype(np.float64), alt.phase == OVER))
        engine.apply_action(state, actions, check=False)
        obs.append(encode_observations(engine, state, deciding, movers).astype(np.float16))
        games.append(deciding)
        seats.append(movers)
        booked.append(state.spooky[deciding].astype(np.float64))  # by seat
        ended.append(state.phase[deciding] == OVER)
        engine.roll_on(state)
    # returns by seat, backwards along each game's afterstates (any player's)
    to_abs = [(np.arange(n)[None, :] - s[:, None]) % n for s in seats]  # seat p's index in the mover's view
    if bootstrap:
        predicted = [np.where(e[:, None], 0.0, _view(model.points_to_come(o.astype(np.float32)), i))
                     for o, e, i in zip(obs, ended, to_abs)]
    else:
        predicted = [np.zeros((len(g), n)) for g in games]
    # what the return before each afterstate bootstraps from: its points and value, or where the
    # learner explored, the greedy afterstate's (and then lambda 0 there)
    lam = [np.full(len(g), td_lambda) for g in games]
    if record_agents is not None:  # the network values only the recorded agents' afterstates: no
        for t, kept in enumerate(recorded):  # return bootstraps from another's, it runs through them
            lam[t][~kept] = 1.0
    alt_booked, alt_predicted = list(booked), list(predicted)
    for t, (rows, o, b, e) in enumerate(explored):
        if len(rows):
            alt_booked[t], alt_predicted[t] = booked[t].copy(), predicted[t].copy()  # not the taken ones
            lam[t][rows] = 0.0
            alt_booked[t][rows] = b
            alt_predicted[t][rows] = np.where(e[:, None], 0.0,
                                              _view(model.points_to_come(o.astype(np.float32)), to_abs[t][rows]))
    next_points = state.spooky.astype(np.float64)
    next_alt_points = next_points.copy()
    next_value = np.zeros((len(seeds), n))
    next_return = np.zeros((len(seeds), n))
    next_lam = np.full(len(seeds), td_lambda)
    returns = [None] * len(games)
    for t in range(len(games) - 1, -1, -1):
        g = games[t]
        w = next_lam[g][:, None]
        ret = ((1.0 - w) * (next_alt_points[g] - booked[t] + next_value[g])
               + w * (next_points[g] - booked[t] + next_return[g]))
        returns[t] = ret
        next_points[g], next_alt_points[g], next_value[g] = booked[t], alt_booked[t], alt_predicted[t]
        next_return[g], next_lam[g] = ret, lam[t]
    to_rel = [(s[:, None] + np.arange(n)[None, :]) % n for s in seats]  # the mover's view of seat order
    targets = np.concatenate([_view(r, i) for r, i in zip(returns, to_rel)])
    obs = np.concatenate(obs)
    kept = ~np.concatenate(opened)
    if record_agents is not None:
        kept &= np.concatenate(recorded)
    if not kept.all():
        obs, targets = obs[kept], targets[kept]
    return obs, (targets / points_scale).astype(np.float32), sum(len(g) for g in games)


def fit_values(net: Network, optimizer, x: torch.Tensor, y: torch.Tensor, epochs: int, minibatch: int,
               gen: torch.Generator, draw: torch.Tensor | None = None) -> float:
    """``epochs`` passes of Adam over (observations, targets) in shuffled minibatches; the mean loss.
    ``draw``: each record's weight in drawing the minibatches instead (with replacement, as many
    records a pass)."""
    losses = []
    for _ in range(epochs):
        order = (torch.randperm(len(x), generator=gen) if draw is None
                 else torch.multinomial(draw, len(x), replacement=True, generator=gen))
        for idx in order.split(minibatch):
            loss = ((net(x[idx].float()) - y[idx]) ** 2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
    return float(np.mean(losses))


def rarity_weights(obs: np.ndarray, power: float) -> np.ndarray:
    """Each row's weight ``c ** -power``, c how many rows hold the same observation: at power 1
    every distinct afterstate is drawn as often as any other, however seldom play reaches it."""
    rows = np.ascontiguousarray(obs).view(np.dtype((np.void, obs.dtype.itemsize * obs.shape[1]))).ravel()
    _, inverse, counts = np.unique(rows, return_inverse=True, return_counts=True)
    return counts[inverse].astype(np.float64) ** -power


def _view(rows: np.ndarray, index: np.ndarray) -> np.ndarray:
    """rows[m, index[m, j]] for every m and j: a row of player values in another seat order."""
    return rows[np.arange(len(rows))[:, None], index]


def strong_field_eval(agent: Agent, engine: Engine, field_agents: list[Agent], names: list[str], deals: int,
                      seed: int) -> dict[str, float]:
    """The agent in every seat of ``deals`` deals (the same dice per deal), the field in the other
    seats (:func:`~midnight_env.training.evaluate.play_every_seat`): its mean points
    (``eval/points``, ``eval/points_ci`` over deals), each field agent's (``eval/points/<name>``)
    and its margin to the field's mean (``eval/margin``, negative: better)."""
    games = play_every_seat(engine, agent, field_agents, seed + np.arange(deals))
    mean, half = mean_ci(games.agent_points().mean(axis=1))
    mine = games.lineups == 0
    out = {"eval/points": mean, "eval/points_ci": half, "eval/win_rate": float((games.ranks[mine] == 1).mean())}
    others_mean = []
    for k, name in enumerate(names):
        taken = games.lineups == k + 1
        if taken.any():
            out[f"eval/points/{name}"] = float(games.points[taken].mean())
            others_mean.append(games.points[taken].mean())
    if others_mean:
        out["eval/margin"] = mean - float(np.mean(others_mean))
    return out


def resume_state(run_dir: Path, config: dict[str, Any]) -> dict[str, Any] | None:
    """The last checkpoint's state of the run in ``run_dir`` (None where it has none: the run starts
    there from the beginning); ValueError where that run was trained with other settings than
    ``config`` (but its budgets, :data:`RESUMABLE`)."""
    path = run_dir / "checkpoints" / RESUME_FILE
    if not path.is_file():
        return None
    saved = torch.load(path, weights_only=True)
    if not isinstance(saved, dict) or saved.get("format") != RESUME_FORMAT:
        raise ValueError(f"{path} is not a value run's resume state (format {RESUME_FORMAT})")
    mine = {k: v for k, v in config.items() if k not in RESUMABLE}
    changed = sorted(k for k in set(mine) | set(saved["config"]) if mine.get(k) != saved["config"].get(k))
    if changed:
        theirs = ", ".join(f"{k}={saved['config'].get(k)!r}" for k in changed)
        raise ValueError(f"resume=true: the run in {run_dir} was trained with {theirs}, these settings give "
                         f"{', '.join(f'{k}={mine.get(k)!r}' for k in changed)}: allowed are its own settings "
                         f"(only {', '.join(sorted(RESUMABLE - {'config', 'resume', 'progress'}))} may change)")
    return saved


def load_config(path: str | None = None, overrides: dict[str, Any] | None = None) -> Args:
    """:class:`Args` from a YAML file (or the defaults) with ``overrides`` applied; ``config`` names the file."""
    data = load_yaml(path) if path else {}
    data.update(overrides or {})
    if path:
        data["config"] = str(path)
    return from_mapping(Args, data, where=str(path) if path else "overrides")


def train(args: Args, command: str | None = None,
          evaluator: Callable[[Agent, Engine], dict[str, float]] | None = None) -> dict[str, Any]:
    """One training run (see the module doc); its folder, last metrics, final evaluation, network and steps.

    ``evaluator(agent, engine)``: the metrics of each evaluation of the shipped network's one-ply
    player (``eval/points`` and ``eval/points_ci`` at least), instead of :func:`strong_field_eval`
    against ``eval_field``."""
    args.check()  # (again: settings changed since they were made)
    if args.members:
        return train_ensemble(args, command)
    torch.set_num_threads(args.threads)
    np_rng = np.random.default_rng(args.seed)
    torch.manual_seed(args.seed)
    gen = torch.Generator().manual_seed(args.seed)

    engine = Engine(args.variant, args.num_players, **args.options)
    N, D = engine.num_players, observation_size(engine)
    name = f"{args.exp_name or f'value-{args.variant}-{N}p'}-s{args.seed}"
    config = to_mapping(args)
    saved = None
    if args.resume:
        run_dir = Path(args.run_dir) / name
        saved = resume_state(run_dir, config)
        (run_dir / "checkpoints").mkdir(parents=True, exist_ok=True)
    else:
        run_dir = make_run_dir(args.run_dir, name)
    write_config(run_dir, config)
    logger = MetricLogger(run_dir, append_to_step=None if saved is None else saved["global_step"],
                          seconds=0.0 if saved is None else saved["seconds"])
    code = code_version()
    start, cpu_start = time.perf_counter(), time.process_time()
    if saved is not None:  # the time spent before the interruption counts
        start, cpu_start = start - saved["seconds"], cpu_start - saved["cpu_seconds"]

    net = Network(D, N, args.hidden_sizes)
    previous = None
    if args.init_model:
        init = ValueModel.load(args.init_model)
        init.check_engine(engine)
        many = len(init.members)
        if many > 1 and args.init_member < 0:
            raise ModelError(f"model {init.npz_path} is an ensemble of {many} networks: init_model starts from one "
                             f"network, init_member=K picks it (0 to {many - 1})")
        if args.init_member >= many:
            raise ModelError(f"init_member {args.init_member} is out of range: model {init.npz_path} has "
                             f"{many} network{'s' if many > 1 else ''} (allowed: -1 or 0 to {many - 1})")
        widen_into(net, init.member_weights(max(args.init_member, 0)), str(init.npz_path), args.hidden_sizes)
        previous = init.meta.get("training", {})
        if many > 1:  # the chosen network's own training, not the ensemble's
            previous = (init.meta.get("members") or [previous] * many)[args.init_member]
    optimizer = torch.optim.Adam(net.parameters(), lr=args.learning_rate)
    averaged = (AveragedModel(net, multi_avg_fn=get_ema_multi_avg_fn(args.weight_average))
                if args.weight_average else None)

    def shipped() -> Network:
        """The network that is evaluated, checkpointed and saved: the average if there is one."""
        return averaged.module if averaged is not None else net

    # -- the league: agent specs, and frozen snapshots of the network ------------------------------
    specs = list(args.league)
    fixed = {s: make_agent(s) for s in specs if s != SNAPSHOT}
    snapshots: list[ValueAgent] = []
    snap_next = 0
    field_agents = [make_agent(s) for s in args.eval_field] if evaluator is None else []
    explore_rng = np.random.default_rng(args.seed + 1)
    frontier = Frontier(args.frontier_size)  # positions met by the learner, for restarts

    def evaluate(step: int) -> dict[str, float]:
        learner = ValueAgent(model=frozen(shipped(), engine, args.points_scale), budget=0, others=args.learner_others)
        if evaluator is not None:
            metrics = dict(evaluator(learner, engine))
        else:
            metrics = strong_field_eval(learner, engine, field_agents, list(args.eval_field), args.eval_deals,
                                        seed=10**9 + args.seed * 10**4)
        metrics["charts/cpu_minutes"] = (time.process_time() - cpu_start) / 60
        logger.log(step, metrics)
        return metrics

    def training_so_far(step: int, iteration: int, seconds: float | None = None,
                        cpu_seconds: float | None = None) -> dict[str, Any]:
        seconds = time.perf_counter() - start if seconds is None else seconds
        cpu_seconds = time.process_time() - cpu_start if cpu_seconds is None else cpu_seconds
        training = training_metadata("value_iteration", config, args.seed, seconds, step,
                                     cpu_seconds=cpu_seconds, command=command, code=code)
        training["cpu_minutes"] = round(cpu_seconds / 60, 1)
        training["iterations"] = iteration
        if previous is not None:
            training["init_model"] = {"path": args.init_model, "training": previous}
            if args.init_member >= 0:
                training["init_model"]["member"] = args.init_member
        return training

    replay: list[tuple[np.ndarray, np.ndarray]] = []
    global_step, iteration, last = 0, 0, {}
    if saved is not None:
        global_step, iteration, last, snap_next = (saved["global_step"], saved["iteration"], saved["last"],
                                                   saved["snap_next"])
        net.load_state_dict(saved["net"])
        optimizer.load_state_dict(saved["optimizer"])
        if averaged is not None:
            averaged.load_state_dict(saved["averaged"])
        replay = [(x.numpy(), y.numpy()) for x, y in saved["replay"]]
        snapshots = [ValueAgent(model=ValueModel({k: v.numpy() for k, v in w.items()},
                                                 value_meta(engine, args.points_scale), source=source),
                                budget=0, others=args.learner_others) for source, w in saved["snapshots"]]
        np_rng.bit_generator.state = saved["np_rng"]
        explore_rng.bit_generator.state = saved["explore_rng"]
        gen.set_state(saved["torch_gen"])
        torch.set_rng_state(saved["torch_rng"])

    def save_resume_state() -> None:
        """checkpoints/resume.pt: everything a resumed run continues from (written whole, then renamed)."""
        state = {"format": RESUME_FORMAT, "config": {k: v for k, v in config.items() if k not in RESUMABLE},
                 "global_step": global_step, "iteration": iteration, "last": last, "snap_next": snap_next,
                 "seconds": time.perf_counter() - start, "cpu_seconds": time.process_time() - cpu_start,
                 "net": net.state_dict(), "optimizer": optimizer.state_dict(),
                 "averaged": averaged.state_dict() if averaged is not None else None,
                 "replay": [(torch.from_numpy(x), torch.from_numpy(y)) for x, y in replay],
                 "snapshots": [(s.model.source, {k: torch.from_numpy(np.ascontiguousarray(v))
                                                 for k, v in s.model.weights().items()}) for s in snapshots],
                 "np_rng": np_rng.bit_generator.state, "explore_rng": explore_rng.bit_generator.state,
                 "torch_gen": gen.get_state(), "torch_rng": torch.get_rng_state()}
        path = run_dir / "checkpoints" / RESUME_FILE
        torch.save(state, path.with_suffix(".tmp"))
        os.replace(path.with_suffix(".tmp"), path)

    def schedule(step: int, horizon: int) -> float:
        """How far the run is along its schedules: its steps over ``horizon``, or its CPU time over
        max_cpu_seconds where that is further."""
        frac = step / horizon
        if args.max_cpu_seconds:
            frac = max(frac, (time.process_time() - cpu_start) / args.max_cpu_seconds)
        return min(1.0, frac)

    # the bar follows the budget that ends the run: CPU time where one is set (midnight exploit's
    # steps are unbounded: 10**15), else env steps
    by_cpu = bool(args.max_cpu_seconds)
    if by_cpu:
        spent = (time.process_time() - cpu_start) / 60  # a resumed run's CPU time included
        bar = tqdm(total=round(args.max_cpu_seconds / 60, 2), initial=round(spent, 2), unit="CPU-min",
                   disable=not args.progress, desc=f"value {args.variant} {N}p",
                   bar_format="{l_bar}{bar}| {n:.2f}/{total:.2f} CPU-min [{elapsed}<{remaining}{postfix}]")
    else:
        bar = tqdm(total=args.total_timesteps, initial=global_step, unit="step", unit_scale=True,
                   disable=not args.progress, desc=f"value {args.variant} {N}p")
    while global_step < args.total_timesteps:
        if args.max_seconds and time.perf_counter() - start > args.max_seconds:
            break
        if args.max_cpu_seconds and time.process_time() - cpu_start > args.max_cpu_seconds:
            break
        iteration += 1
        frac = schedule(global_step, args.anneal_timesteps or args.total_timesteps)
        if args.anneal_lr:
            optimizer.param_groups[0]["lr"] = args.learning_rate * (1.0 - 0.9 * frac)
        # -- play --------------------------------------------------------------------------------
        t_play = time.process_time()
        explore = args.explore
        if args.explore_end >= 0:
            explore += (args.explore_end - args.explore) * schedule(global_step, args.total_timesteps)
        learner = Explorer(ValueAgent(model=frozen(net, engine, args.points_scale), budget=args.learner_budget,
                                      turns=args.learner_turns or None, others=args.learner_others),
                           explore, explore_rng)
        pool = [fixed[s] for s in specs if s != SNAPSHOT] + (snapshots if SNAPSHOT in specs else [])
        obs_parts, target_parts, steps = [], [], 0
        restarted = int(round(args.restarts * args.games_per_iteration)) if len(frontier) else 0
        fresh = args.games_per_iteration - restarted
        for lo in range(0, args.games_per_iteration, args.batch_games):
            b = min(args.batch_games, args.games_per_iteration - lo)
            # the first `fresh` games start at set-up, the rest from the frontier
            seeds = args.seed * 10**7 + (iteration * args.games_per_iteration + lo + np.arange(b))
            begin = None
            if lo + b > fresh:
                begin = frontier.draw(np_rng, seeds[max(0, fresh - lo):])
                if lo < fresh:  # a batch across the boundary: its set-up games first
                    begin = GameState.concatenate([engine.new_games(seeds[:fresh - lo]), begin])
            lineups = np.zeros((b, N), np.int64)  # 0: the learner, k: pool[k - 1]
            if pool:
                other = np_rng.random((b, N)) >= args.self_play
                mine = np_rng.integers(N, size=b) if args.learner_seat < 0 else np.full(b, args.learner_seat)
                if begin is not None:  # a restart continues the learner's decision in its seat
                    mine = np.where(np.arange(lo, lo + b) >= fresh, begin.player, mine)
                other[np.arange(b), mine] = False  # one learner at least (in its seat)
                lineups[other] = 1 + np_rng.integers(len(pool), size=int(other.sum()))
            opening = None
            if args.openings:  # (no draws without: the runs before openings replay as they were)
                opening = np.where(np_rng.random(b) < args.openings,
                                   np_rng.integers(1, args.opening_length + 1, size=b), 0)
                opening[np.arange(lo, lo + b) >= fresh] = 0  # a restart is an exploring start already
            o, t, s = play_and_record(engine, [learner, *pool], lineups, seeds, args.points_scale,
                                      learner.agent.model, args.td_lambda, args.greedy_targets,
                                      [0] if args.learner_records else None, opening=opening, start=begin,
                                      meet=frontier.meet if args.restarts else None)
            if args.keep < 1.0:
                kept = np_rng.random(len(o)) < args.keep
                o, t = o[kept], t[kept]
            obs_parts.append(o)
            target_parts.append(t)
            steps += s
        replay = (replay + [(np.concatenate(obs_parts), np.concatenate(target_parts))])[-args.replay:]
        global_step += steps
        play_time = time.process_time() - t_play
        # -- fit ---------------------------------------------------------------------------------
        t_fit = time.process_time()
        x = torch.from_numpy(np.concatenate([r[0] for r in replay]))
        y = torch.from_numpy(np.concatenate([r[1] for r in replay]))
        draw = torch.from_numpy(rarity_weights(x.numpy(), args.rare_fit)) if args.rare_fit else None
        loss = fit_values(net, optimizer, x, y, args.epochs, args.minibatch, gen, draw)
        if averaged is not None:
            averaged.update_parameters(net)
        fit_time = time.process_time() - t_fit
        # -- bookkeeping -------------------------------------------------------------------------
        if SNAPSHOT in specs and iteration % args.snapshot_every == 0:
            snap = ValueAgent(model=frozen(net, engine, args.points_scale, f"snapshot{iteration}"), budget=0,
                              others=args.learner_others)
            if len(snapshots) < args.pool_size:
                snapshots.append(snap)
            else:
                snapshots[snap_next] = snap
                snap_next = (snap_next + 1) % args.pool_size
        last = {"losses/value_loss": loss, "charts/learning_rate": optimizer.param_groups[0]["lr"],
                "charts/explore": explore, **({"charts/frontier": len(frontier), "charts/restarted": restarted}
                                              if args.restarts else {}),
                "charts/records": len(x), "charts/play_cpu_s": play_time, "charts/fit_cpu_s": fit_time,
                "charts/SPS": global_step / (time.perf_counter() - start),
                "charts/cpu_SPS": global_step / (time.process_time() - cpu_start)}
        logger.log(global_step, last)
        if by_cpu:
            bar.update(min(bar.total, (time.process_time() - cpu_start) / 60) - bar.n)
            bar.set_postfix(steps=f"{global_step:,}", loss=f"{last['losses/value_loss']:.3f}")
        else:
            bar.update(steps)
            bar.set_postfix(loss=f"{last['losses/value_loss']:.3f}")
        if args.eval_every and iteration % args.eval_every == 0:
            ev = evaluate(global_step)
            bar.write(f"iteration {iteration}, {global_step} steps, {ev['charts/cpu_minutes']:.1f} CPU-min: "
                      f"{ev['eval/points']:.2f} ± {ev['eval/points_ci']:.2f} points, "
                      f"margin {ev.get('eval/margin', 0):+.2f}")
            # a checkpoint carries its training so far: a run stopped by hand still ships with its cost
            save_model(run_dir / "checkpoints" / f"step{global_step}", shipped().weights(),
                       value_meta(engine, args.points_scale, training_so_far(global_step, iteration)))
            save_resume_state()
    bar.close()
    save_resume_state()  # a finished run resumes too, with a larger budget
    seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - cpu_start
    final = evaluate(global_step)
    meta = value_meta(engine, args.points_scale, training_so_far(global_step, iteration, seconds, cpu_seconds))
    if args.play:
        meta["play"] = dict(args.play)
    save_model(run_dir / "model", shipped().weights(), meta)
    if args.save_model:
        save_model(args.save_model, shipped().weights(), meta)
    logger.close()
    plot_learning_curve(run_dir / "metrics.csv", run_dir / "learning_curve.png",
                        f"afterstate values {args.variant} {N}p seed {args.seed}")
    return {"run_dir": run_dir, "metrics": last, "eval": final, "net": shipped(), "steps": global_step,
            "seconds": seconds, "cpu_seconds": cpu_seconds}


NOT_MEMBER = {"members", "run_dir", "exp_name", "save_model", "config", "play"}  # what an ensemble's members share


def member_settings(config: dict[str, Any], i: int) -> dict[str, Any]:
    """The settings member ``i`` of an ensemble config trains with, but where it is written: the
    config's own with the member's changes."""
    return {**{k: v for k, v in config.items() if k not in NOT_MEMBER}, **config["members"][i]}


def train_ensemble(args: Args, command: str | None = None) -> dict[str, Any]:
    """Train ``args.members``' networks one after the other, each as its own run (the settings with
    the member's changes) in the run folder's ``members/``, and save the model that averages them
    (:func:`midnight_agents.model.ensemble_model`), evaluated as one run's final model is."""
    engine = Engine(args.variant, args.num_players, **args.options)
    run_dir = make_run_dir(args.run_dir, f"{args.exp_name or f'value-{args.variant}-{engine.num_players}p'}"
                                         f"-s{args.seed}")
    config = to_mapping(args)
    write_config(run_dir, config)
    code = code_version()
    results = []
    for i in range(len(args.members)):
        member = from_mapping(Args, {**member_settings(config, i), "run_dir": str(run_dir / "members"),
                                     "exp_name": f"member{i}"}, where=f"members[{i}]")
        results.append(train(member, command))
    models = [ValueModel.load(r["run_dir"] / "model") for r in results]
    seconds, cpu_seconds = sum(r["seconds"] for r in results), sum(r["cpu_seconds"] for r in results)
    steps = sum(r["steps"] for r in results)
    training = training_metadata("value_iteration", config, args.seed, seconds, steps, cpu_seconds=cpu_seconds,
                                 command=command, code=code)
    training["cpu_minutes"] = round(cpu_seconds / 60, 1)
    model = ensemble_model(models, training)
    model.check_engine(engine)
    if args.play:
        model.meta["play"] = dict(args.play)
    learner = ValueAgent(model=model, budget=0, others=args.play.get("others", args.learner_others))
    final = strong_field_eval(learner, engine, [make_agent(s) for s in args.eval_field], list(args.eval_field),
                              args.eval_deals, seed=10**9 + args.seed * 10**4)
    save_model(run_dir / "model", model.weights(), model.meta)
    if args.save_model:
        save_model(args.save_model, model.weights(), model.meta)
    return {"run_dir": run_dir, "metrics": results[-1]["metrics"], "eval": final, "members": results, "steps": steps,
            "seconds": seconds, "cpu_seconds": cpu_seconds}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Every :class:`Args` field as a flag (``--config FILE.yaml`` first, flags win); trains and prints a summary."""
    args = parse_args(Args, argv, description=__doc__.split("\n")[0])
    result = train(args)
    final = result["eval"]
    print(f"{result['run_dir']}: {result['steps']} env steps in {result['cpu_seconds'] / 60:.1f} CPU-minutes; "
          f"eval {final['eval/points']:.2f} ± {final['eval/points_ci']:.2f} points against the strong field")
    return result


__all__ = ["Args", "Network", "load_config", "train", "train_ensemble", "member_settings", "main", "play_and_record",
           "fit_values", "strong_field_eval", "frozen"]
