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
from typing import Any, ClassVar, NamedTuple

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
from midnight_env.core.dice import agent_streams
from midnight_env.core.engine import Engine
from midnight_env.core.observation import encode_observations, observation_size
from midnight_env.core.state import MOVE, OVER, PLACE, GameState
from midnight_env.infra import checks
from midnight_env.training.args import (
    ConfigFileError,
    Settings,
    check_counts,
    check_numbers,
    check_widths,
    from_mapping,
    parse_args,
    to_mapping,
)
from midnight_env.training.evaluate import mean_ci, play_every_seat
from midnight_env.training.export import linear_weights
from midnight_env.training.frontier import Frontier
from midnight_env.training.runs import RunFolder, code_version, make_run_dir, training_metadata, write_config
from midnight_env.training.trainer import TrainResult

SNAPSHOT = "snapshot"  # league entry: a frozen past network
RESUME_FILE = "resume.pt"  # in checkpoints/: what a resumed run continues from
RESUME_FORMAT = "midnight-value-resume/1"
RESUMABLE = {"resume", "progress", "total_timesteps", "max_seconds", "max_cpu_seconds", "config"}  # may change

# this trainer's seeds: below the limit (check_seed_below), and why
SEEDS = (10**11, "the value trainer's game seeds are seed*10**7 + game numbers, below 2**62")


# settings deleted with the experiments that did not pay (docs/RESEARCH.md, "Where the rest lies"),
# read from old configs at the value that had them do nothing
RETIRED = {
    "openings": (0.0, "exploring starts, commit 1f2b929"),
    "opening_length": (20, "exploring starts, commit 1f2b929"),
    "rare_fit": (0.0, "rarity-weighted fits, commit 1f2b929"),
    "learner_budget": (0, "training on the search's play, commit d0a1385"),
    "learner_turns": (0, "training on the search's play, commit 90137b7"),
}


@dataclass
class Args(Settings):
    SEEDS: ClassVar[tuple[int, str]] = SEEDS
    RUN_NAME: ClassVar[str] = "value"
    RETIRED: ClassVar[dict[str, tuple[Any, str]]] = RETIRED

    exp_name: str = ""
    """name of the run (default value-<variant>-<N>p); its folder is <run_dir>/<exp_name>-s<seed>"""
    seed: int = 1
    """seed of torch, of the line-ups, of the exploration and of the games"""
    resume: bool = False
    """continue the run in <run_dir>/<exp_name>-s<seed> from its last checkpoint (checkpoints/resume.pt:
    the network, optimizer, replay, snapshots, random streams, steps and CPU time so far) instead of
    starting a new folder; the budgets (total_timesteps, max_seconds, max_cpu_seconds) may change,
    nothing else. A folder without a checkpoint starts from the beginning there"""
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
    restarts: float = 0.0
    """share of each iteration's training games that start not at set-up but at a position where
    the learner decided in an earlier training game, drawn with weight 1 / how often training met
    it, with fresh dice (Go-Explore's return to rare positions: training/frontier.py); 0: none.
    The positions are kept in memory only (a resumed run meets them again from the start)"""
    frontier_size: int = 200_000
    """the most positions kept for restarts (the first met; about 1 kB each)"""
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

    def check(self) -> None:
        """ConfigFileError (a ValueError: one line naming the setting, its value and what is allowed) for
        a setting out of range: checked when the settings are made and again by :func:`train`, before
        anything is written (``midnight exploit`` makes its learner's settings before it writes exploit.json)."""
        super().check()
        check_counts(self, 1, "total_timesteps", "games_per_iteration", "batch_games", "minibatch", "epochs", "replay",
                     "snapshot_every", "pool_size", "eval_deals")
        check_counts(self, 1, "frontier_size", why=" positions")
        check_counts(self, 0, "eval_every")
        check_counts(self, 0, "anneal_timesteps", why=" env steps (0: total_timesteps)")
        check_numbers(self, 0.0, None, "max_seconds", "learning_rate")
        check_numbers(self, 0.0, None, "max_cpu_seconds", why=" CPU-seconds (0: no limit)")
        check_numbers(self, 0.0, None, "points_scale", low_open=True)
        check_widths(self, "hidden_sizes")
        check_numbers(self, 0.0, 1.0, "self_play", "explore", "td_lambda")
        check_numbers(self, 0.0, 1.0, "keep", low_open=True)
        if self.explore_end != -1.0:
            checks.number("explore_end=", self.explore_end, 0.0, 1.0, error=ConfigFileError,
                          allowed="-1 (explore throughout) or numbers in [0, 1]")
        if self.greedy_targets and self.td_lambda == 1.0:
            raise ConfigFileError("greedy_targets=true needs td_lambda below 1: the targets of explored moves "
                                  "bootstrap from the network")
        check_numbers(self, 0.0, 1.0, "weight_average", high_open=True, why=" (0: no average)")
        check_numbers(self, 0.0, 1.0, "restarts", high_open=True,
                      why=" (some games must start at set-up to meet positions)")
        if set(self.play) - set(PLAY_OPTIONS):  # by hand: the message names the whole mapping, not one key
            raise ConfigFileError(f"play {self.play!r} is not allowed: allowed are {', '.join(PLAY_OPTIONS)}")
        checks.integer("init_member=", self.init_member, -1, error=ConfigFileError,
                       allowed="-1 (init_model is one network) or 0, 1, ... (a network of an ensemble)")
        checks.integer("learner_seat=", self.learner_seat, -1, self.num_players - 1, error=ConfigFileError,
                       allowed=f"-1 (any seat) or 0 to {self.num_players - 1} (num_players {self.num_players})")
        if self.members and self.resume:
            raise ConfigFileError("resume=true continues one network's run: an ensemble (members) cannot resume")
        for i, changes in enumerate(self.members):
            if NOT_MEMBER & set(changes):
                raise ConfigFileError(f"members[{i}] changes {', '.join(sorted(NOT_MEMBER & set(changes)))}: a "
                                      f"member may change every setting but {', '.join(sorted(NOT_MEMBER))}")
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


class Played(NamedTuple):
    """What the games of :func:`play_and_record` leave: one entry per decision step of the batch."""

    obs: list[np.ndarray]  # the afterstates, each seen by the player who decided (m, D) float16
    games: list[np.ndarray]  # the games that decided
    seats: list[np.ndarray]  # the seat that decided in each
    booked: list[np.ndarray]  # every seat's points right after the decision (m, N), by seat
    ended: list[np.ndarray]  # whether the afterstate ends the game
    recorded: list[np.ndarray]  # whether a recorded agent decided (``record_agents``; else empty)
    explored: list[tuple]  # where the learner explored: (rows, greedy afterstate obs, its points, it ends)
    final: np.ndarray  # every game's points at its end (B, N)


def play_and_record(engine: Engine, agents: list[Agent], lineups: np.ndarray, seeds: np.ndarray,
                    points_scale: float, model: ValueModel | None = None, td_lambda: float = 1.0, *,
                    greedy_targets: bool = False, record_agents: list[int] | None = None,
                    start: GameState | None = None, meet: Callable[[GameState, np.ndarray], None] | None = None
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

    ``start``: the games begin there (a batch of positions at a decision, one per seed, their dice
    streams set: :meth:`~midnight_env.training.frontier.Frontier.draw`) instead of at set-up.
    ``meet(state, games)`` is called at every decision of ``agents[0]``, before it acts (the
    learner's positions for :class:`~midnight_env.training.frontier.Frontier`)."""
    bootstrap = td_lambda < 1.0 and model is not None
    played = _play(engine, agents, lineups, seeds, greedy_targets and bootstrap, record_agents, start, meet)
    targets = _lambda_returns(played, model if bootstrap else None, td_lambda, record_agents is not None)
    obs = np.concatenate(played.obs)
    if record_agents is not None:
        kept = np.concatenate(played.recorded)
        obs, targets = obs[kept], targets[kept]
    return obs, (targets / points_scale).astype(np.float32), sum(len(g) for g in played.games)


def _play(engine: Engine, agents: list[Agent], lineups: np.ndarray, seeds: np.ndarray, follow_greedy: bool,
          record_agents: list[int] | None, start: GameState | None, meet) -> Played:
    """The games of :func:`play_and_record` played to the end, every decision's afterstate kept;
    ``follow_greedy``: where an :class:`Explorer` explored, its greedy move's afterstate too."""
    state = engine.new_games(seeds) if start is None else start
    rng = agent_streams(seeds)
    everyone = np.arange(len(seeds))
    played = Played([], [], [], [], [], [], [], state.spooky)
    while True:
        deciding = np.flatnonzero((state.phase == PLACE) | (state.phase == MOVE))
        if not len(deciding):
            break
        actions = np.full(len(seeds), -1, np.int64)
        greedy = np.full(len(seeds), -1, np.int64)
        holder = lineups[everyone, state.player]
        if meet is not None and (mine := holder[deciding] == 0).any():
            meet(state, deciding[mine])
        for k in np.unique(holder[deciding]):
            group = deciding[holder[deciding] == k]
            actions[group] = agents[k].act(Decisions(engine, state, group, rng, seeds))
            if follow_greedy and isinstance(agents[k], Explorer):
                greedy[group] = agents[k].greedy
        movers = state.player[deciding].astype(np.int64)
        if record_agents is not None:
            played.recorded.append(np.isin(holder[deciding], record_agents))
        if follow_greedy:
            rows = np.flatnonzero(greedy[deciding] >= 0)
            alt = state.take(deciding[rows])
            engine.apply_action(alt, greedy[deciding[rows]], check=False)
            alt_obs = encode_observations(engine, alt, np.arange(len(rows)), movers[rows]).astype(np.float16)
            played.explored.append((rows, alt_obs, alt.spooky.astype(np.float64), alt.phase == OVER))
        engine.apply_action(state, actions, check=False)
        played.obs.append(encode_observations(engine, state, deciding, movers).astype(np.float16))
        played.games.append(deciding)
        played.seats.append(movers)
        played.booked.append(state.spooky[deciding].astype(np.float64))  # by seat
        played.ended.append(state.phase[deciding] == OVER)
        engine.roll_on(state)
    return played._replace(final=state.spooky)


def _lambda_returns(played: Played, model: ValueModel | None, td_lambda: float, recorded_only: bool) -> np.ndarray:
    """Every afterstate's lambda-return (M, N) in its mover's view, backwards along each game's
    afterstates (any player's); ``model``: the values bootstrapped from (None: none, Monte Carlo)."""
    games, seats, booked, n = played.games, played.seats, played.booked, played.final.shape[1]
    to_abs = [(np.arange(n)[None, :] - s[:, None]) % n for s in seats]  # seat p's index in the mover's view
    if model is not None:
        predicted = [np.where(e[:, None], 0.0, _view(model.points_to_come(o.astype(np.float32)), i))
                     for o, e, i in zip(played.obs, played.ended, to_abs)]
    else:
        predicted = [np.zeros((len(g), n)) for g in games]
    # what the return before each afterstate bootstraps from: its points and value, or where the
    # learner explored, the greedy afterstate's (and then lambda 0 there)
    lam = [np.full(len(g), td_lambda) for g in games]
    if recorded_only:  # the network values only the recorded agents' afterstates: no
        for t, kept in enumerate(played.recorded):  # return bootstraps from another's, it runs through them
            lam[t][~kept] = 1.0
    alt_booked, alt_predicted = list(booked), list(predicted)
    for t, (rows, o, b, e) in enumerate(played.explored):
        if len(rows):
            alt_booked[t], alt_predicted[t] = booked[t].copy(), predicted[t].copy()  # not the taken ones
            lam[t][rows] = 0.0
            alt_booked[t][rows] = b
            alt_predicted[t][rows] = np.where(e[:, None], 0.0,
                                              _view(model.points_to_come(o.astype(np.float32)), to_abs[t][rows]))
    B = len(played.final)
    next_points = played.final.astype(np.float64)
    next_alt_points = next_points.copy()
    next_value, next_return = np.zeros((B, n)), np.zeros((B, n))
    next_lam = np.full(B, td_lambda)
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
    return np.concatenate([_view(r, i) for r, i in zip(returns, to_rel)])


def fit_values(net: Network, optimizer, x: torch.Tensor, y: torch.Tensor, epochs: int, minibatch: int,
               gen: torch.Generator) -> float:
    """``epochs`` passes of Adam over (observations, targets) in shuffled minibatches; the mean loss."""
    losses = []
    for _ in range(epochs):
        for idx in torch.randperm(len(x), generator=gen).split(minibatch):
            loss = ((net(x[idx].float()) - y[idx]) ** 2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
    return float(np.mean(losses))


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
    theirs = {k: v for k, v in saved["config"].items() if RETIRED.get(k, (object(),))[0] != v}  # deleted, unused
    changed = sorted(k for k in set(mine) | set(theirs) if mine.get(k) != theirs.get(k))
    if changed:
        theirs = ", ".join(f"{k}={saved['config'].get(k)!r}" for k in changed)
        raise ValueError(f"resume=true: the run in {run_dir} was trained with {theirs}, these settings give "
                         f"{', '.join(f'{k}={mine.get(k)!r}' for k in changed)}: allowed are its own settings "
                         f"(only {', '.join(sorted(RESUMABLE - {'config', 'resume', 'progress'}))} may change)")
    return saved


def load_config(path: str | None = None, overrides: dict[str, Any] | None = None) -> Args:
    """:class:`Args` from a YAML file (or the defaults) with ``overrides`` applied; ``config`` names the file."""
    return Args.load(path, overrides)


class Streams:
    """The run's random streams, seeded once: ``np`` (line-ups, restarts, kept records), ``explore``
    (the learner's random moves), ``gen`` (the fit's minibatches) and torch's own (the network's
    initial weights)."""

    def __init__(self, seed: int):
        self.np = np.random.default_rng(seed)
        torch.manual_seed(seed)
        self.gen = torch.Generator().manual_seed(seed)
        self.explore = np.random.default_rng(seed + 1)

    def state(self) -> dict[str, Any]:
        return {"np_rng": self.np.bit_generator.state, "explore_rng": self.explore.bit_generator.state,
                "torch_gen": self.gen.get_state(), "torch_rng": torch.get_rng_state()}

    def restore(self, saved: dict[str, Any]) -> None:
        self.np.bit_generator.state = saved["np_rng"]
        self.explore.bit_generator.state = saved["explore_rng"]
        self.gen.set_state(saved["torch_gen"])
        torch.set_rng_state(saved["torch_rng"])


class Learner:
    """The network that plays and learns, its optimizer, and with ``weight_average`` the moving
    average of its fits: the network evaluated, checkpointed and shipped (:meth:`shipped`)."""

    def __init__(self, args: Args, engine: Engine):
        self.args, self.engine = args, engine
        self.net = Network(observation_size(engine), engine.num_players, args.hidden_sizes)
        self.previous = start_from(self.net, args, engine) if args.init_model else None  # its training
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=args.learning_rate)
        self.averaged = (AveragedModel(self.net, multi_avg_fn=get_ema_multi_avg_fn(args.weight_average))
                         if args.weight_average else None)

    def shipped(self) -> Network:
        return self.averaged.module if self.averaged is not None else self.net

    def agent(self, name: str = "learner", shipped: bool = False) -> ValueAgent:
        """The network's one-ply player (of the live network, or the shipped one)."""
        net = self.shipped() if shipped else self.net
        return ValueAgent(model=frozen(net, self.engine, self.args.points_scale, name), budget=0,
                          others=self.args.learner_others)

    def anneal(self, frac: float) -> None:
        """The learning rate, decayed linearly to a tenth at the end of the schedule (``anneal_lr``)."""
        if self.args.anneal_lr:
            self.optimizer.param_groups[0]["lr"] = self.args.learning_rate * (1.0 - 0.9 * frac)

    def fit(self, replay: list[tuple[np.ndarray, np.ndarray]], gen: torch.Generator) -> tuple[float, int]:
        """``epochs`` passes over the replayed records (the average follows); the mean loss and the records."""
        x = torch.from_numpy(np.concatenate([r[0] for r in replay]))
        y = torch.from_numpy(np.concatenate([r[1] for r in replay]))
        loss = fit_values(self.net, self.optimizer, x, y, self.args.epochs, self.args.minibatch, gen)
        if self.averaged is not None:
            self.averaged.update_parameters(self.net)
        return loss, len(x)

    def record(self, run: RunFolder, step: int, iteration: int, command: str | None, **times: float) -> dict:
        """The ``training`` section of the model's metadata so far (``times``: seconds, cpu_seconds)."""
        training = run.training("value_iteration", self.args.seed, step, command, **times)
        training["cpu_minutes"] = round(times.get("cpu_seconds", run.cpu_seconds()) / 60, 1)
        training["iterations"] = iteration
        if self.previous is not None:
            training["init_model"] = {"path": self.args.init_model, "training": self.previous}
            if self.args.init_member >= 0:
                training["init_model"]["member"] = self.args.init_member
        return training

    def state(self) -> dict[str, Any]:
        return {"net": self.net.state_dict(), "optimizer": self.optimizer.state_dict(),
                "averaged": self.averaged.state_dict() if self.averaged is not None else None}

    def restore(self, saved: dict[str, Any]) -> None:
        self.net.load_state_dict(saved["net"])
        self.optimizer.load_state_dict(saved["optimizer"])
        if self.averaged is not None:
            self.averaged.load_state_dict(saved["averaged"])


def start_from(net: Network, args: Args, engine: Engine) -> dict[str, Any]:
    """``net`` started from ``init_model`` (its network ``init_member`` of an ensemble), widened to
    ``hidden_sizes`` (:func:`widen_into`); that network's own training record."""
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
    return previous


class League:
    """The other seats' agents: ``league``'s agent specs, and for ``snapshot`` frozen past networks
    (one taken every ``snapshot_every`` iterations, the last ``pool_size`` kept, the oldest replaced)."""

    def __init__(self, args: Args):
        self.args = args
        self.specs = list(args.league)
        self.fixed = {s: make_agent(s) for s in self.specs if s != SNAPSHOT}
        self.snapshots: list[ValueAgent] = []
        self.snap_next = 0

    def pool(self) -> list[Agent]:
        """The agents drawn into the other seats: 1, 2, ... in a line-up (0 is the learner)."""
        return [self.fixed[s] for s in self.specs if s != SNAPSHOT] + (self.snapshots if SNAPSHOT in self.specs else [])

    def lineups(self, rng: np.random.Generator, games: int, num_players: int, pool: int,
                seats: np.ndarray | None = None) -> np.ndarray:
        """Who holds each seat of ``games`` games (0: the learner, k: pool[k - 1]): each seat the learner
        with probability ``self_play``, one seat at least (``learner_seat``, else any; ``seats`` >= 0:
        that one, a restart's player)."""
        lineups = np.zeros((games, num_players), np.int64)
        if pool:
            other = rng.random((games, num_players)) >= self.args.self_play
            mine = (rng.integers(num_players, size=games) if self.args.learner_seat < 0
                    else np.full(games, self.args.learner_seat))
            if seats is not None:  # a restart continues the learner's decision in its seat
                mine = np.where(seats >= 0, seats, mine)
            other[np.arange(games), mine] = False  # one learner at least (in its seat)
            lineups[other] = 1 + rng.integers(pool, size=int(other.sum()))
        return lineups

    def update(self, learner: Learner, iteration: int) -> None:
        """Every ``snapshot_every`` iterations a snapshot of the live network joins (the oldest leaves)."""
        if SNAPSHOT in self.specs and iteration % self.args.snapshot_every == 0:
            snap = learner.agent(f"snapshot{iteration}")
            if len(self.snapshots) < self.args.pool_size:
                self.snapshots.append(snap)
            else:
                self.snapshots[self.snap_next] = snap
                self.snap_next = (self.snap_next + 1) % self.args.pool_size

    def state(self) -> dict[str, Any]:
        return {"snap_next": self.snap_next,
                "snapshots": [(s.model.source, {k: torch.from_numpy(np.ascontiguousarray(v))
                                                for k, v in s.model.weights().items()}) for s in self.snapshots]}

    def restore(self, saved: dict[str, Any], engine: Engine) -> None:
        self.snap_next = saved["snap_next"]
        self.snapshots = [ValueAgent(model=ValueModel({k: v.numpy() for k, v in w.items()},
                                                      value_meta(engine, self.args.points_scale), source=source),
                                     budget=0, others=self.args.learner_others) for source, w in saved["snapshots"]]


@dataclass
class Progress:
    """How far the run is: env steps, iterations, the last iteration's metrics, the replayed records."""

    step: int = 0
    iteration: int = 0
    last: dict[str, float] = field(default_factory=dict)
    replay: list[tuple[np.ndarray, np.ndarray]] = field(default_factory=list)

    def state(self) -> dict[str, Any]:
        return {"global_step": self.step, "iteration": self.iteration, "last": self.last,
                "replay": [(torch.from_numpy(x), torch.from_numpy(y)) for x, y in self.replay]}

    def restore(self, saved: dict[str, Any]) -> None:
        self.step, self.iteration, self.last = saved["global_step"], saved["iteration"], saved["last"]
        self.replay = [(x.numpy(), y.numpy()) for x, y in saved["replay"]]


class Checkpoint:
    """A value run's checkpoints/: a model every ``eval_every`` iterations, and ``resume.pt``, everything
    a resumed run continues from (:data:`RESUME_FORMAT`; written whole, then renamed)."""

    def __init__(self, args: Args):
        """The run's folder: a new one, or with ``resume`` the run's own (its state in :attr:`saved`,
        None where it has none: the run starts there from the beginning)."""
        config = args.as_mapping()
        self.saved = None
        if args.resume:
            run_dir = Path(args.run_dir) / args.run_name()
            self.saved = resume_state(run_dir, config)
            (run_dir / "checkpoints").mkdir(parents=True, exist_ok=True)
        else:
            run_dir = make_run_dir(args.run_dir, args.run_name())
        saved = self.saved or {}
        self.run = RunFolder(run_dir, config, append_to_step=saved.get("global_step"),
                             seconds=saved.get("seconds", 0.0), cpu_seconds=saved.get("cpu_seconds", 0.0))

    def restore(self, progress: Progress, learner: Learner, league: League, streams: Streams) -> None:
        """The parts of the run as the checkpoint left them (nothing where there is none)."""
        if self.saved is not None:
            progress.restore(self.saved)
            learner.restore(self.saved)
            league.restore(self.saved, learner.engine)
            streams.restore(self.saved)

    def save(self, progress: Progress, learner: Learner, league: League, streams: Streams) -> None:
        run = self.run
        state = {"format": RESUME_FORMAT, "config": {k: v for k, v in run.config.items() if k not in RESUMABLE},
                 **progress.state(), **league.state(), "seconds": run.seconds(), "cpu_seconds": run.cpu_seconds(),
                 **learner.state(), **streams.state()}
        path = run.run_dir / "checkpoints" / RESUME_FILE
        torch.save(state, path.with_suffix(".tmp"))
        os.replace(path.with_suffix(".tmp"), path)


def play(args: Args, engine: Engine, agents: list[Agent], league: League, frontier: Frontier,
         rng: np.random.Generator, iteration: int) -> tuple[np.ndarray, np.ndarray, int, int]:
    """An iteration's training games, ``batch_games`` at a time, ``agents[0]`` the learner: the first
    ones from set-up, a ``restarts`` share from the frontier; (afterstates, targets, env steps, games
    restarted)."""
    obs_parts, target_parts, steps = [], [], 0
    restarted = int(round(args.restarts * args.games_per_iteration)) if len(frontier) else 0
    fresh = args.games_per_iteration - restarted
    for lo in range(0, args.games_per_iteration, args.batch_games):
        b = min(args.batch_games, args.games_per_iteration - lo)
        seeds = args.seed * 10**7 + (iteration * args.games_per_iteration + lo + np.arange(b))
        begin, seats = None, None
        if lo + b > fresh:  # the first `fresh` games start at set-up, the rest from the frontier
            begin = frontier.draw(rng, seeds[max(0, fresh - lo):])
            if lo < fresh:  # a batch across the boundary: its set-up games first
                begin = GameState.concatenate([engine.new_games(seeds[:fresh - lo]), begin])
            seats = np.where(np.arange(lo, lo + b) >= fresh, begin.player, -1)
        lineups = league.lineups(rng, b, engine.num_players, len(agents) - 1, seats)
        o, t, s = play_and_record(engine, agents, lineups, seeds, args.points_scale, agents[0].agent.model,
                                  args.td_lambda, greedy_targets=args.greedy_targets,
                                  record_agents=[0] if args.learner_records else None, start=begin,
                                  meet=frontier.meet if args.restarts else None)
        if args.keep < 1.0:
            kept = rng.random(len(o)) < args.keep
            o, t = o[kept], t[kept]
        obs_parts.append(o)
        target_parts.append(t)
        steps += s
    return np.concatenate(obs_parts), np.concatenate(target_parts), steps, restarted


class Evaluation:
    """The shipped network's one-ply player measured, logged with the CPU time so far: against the
    strong field (``eval_field``, ``eval_deals`` duplicate deals) or by ``evaluator(agent, engine)``."""

    def __init__(self, args: Args, engine: Engine, evaluator: Callable[[Agent, Engine], dict[str, float]] | None):
        self.args, self.engine, self.evaluator = args, engine, evaluator
        self.field = [make_agent(s) for s in args.eval_field] if evaluator is None else []

    def __call__(self, learner: Learner, run: RunFolder, step: int) -> dict[str, float]:
        agent = learner.agent(shipped=True)
        if self.evaluator is not None:
            metrics = dict(self.evaluator(agent, self.engine))
        else:
            metrics = strong_field_eval(agent, self.engine, self.field, list(self.args.eval_field),
                                        self.args.eval_deals, seed=10**9 + self.args.seed * 10**4)
        metrics["charts/cpu_minutes"] = run.cpu_seconds() / 60
        run.log(step, metrics)
        return metrics


class Bar:
    """The progress bar, following the budget that ends the run: CPU time where one is set (``midnight
    exploit``'s steps are unbounded: 10**15), else env steps."""

    def __init__(self, args: Args, run: RunFolder, step: int):
        self.by_cpu, desc = bool(args.max_cpu_seconds), f"value {args.variant} {args.num_players}p"
        if self.by_cpu:
            spent = run.cpu_seconds() / 60  # a resumed run's CPU time included
            self.bar = tqdm(total=round(args.max_cpu_seconds / 60, 2), initial=round(spent, 2), unit="CPU-min",
                            disable=not args.progress, desc=desc,
                            bar_format="{l_bar}{bar}| {n:.2f}/{total:.2f} CPU-min [{elapsed}<{remaining}{postfix}]")
        else:
            self.bar = tqdm(total=args.total_timesteps, initial=step, unit="step", unit_scale=True,
                            disable=not args.progress, desc=desc)

    def update(self, run: RunFolder, progress: Progress, steps: int) -> None:
        loss = f"{progress.last['losses/value_loss']:.3f}"
        if self.by_cpu:
            self.bar.update(min(self.bar.total, run.cpu_seconds() / 60) - self.bar.n)
            self.bar.set_postfix(steps=f"{progress.step:,}", loss=loss)
        else:
            self.bar.update(steps)
            self.bar.set_postfix(loss=loss)

    def write(self, progress: Progress, ev: dict[str, float]) -> None:
        """An evaluation's line, above the bar."""
        self.bar.write(f"iteration {progress.iteration}, {progress.step} steps, {ev['charts/cpu_minutes']:.1f} "
                       f"CPU-min: {ev['eval/points']:.2f} ± {ev['eval/points_ci']:.2f} points, "
                       f"margin {ev.get('eval/margin', 0):+.2f}")

    def close(self) -> None:
        self.bar.close()


def schedule(args: Args, run: RunFolder, step: int, horizon: int) -> float:
    """How far the run is along its schedules: its steps over ``horizon``, or its CPU time over
    max_cpu_seconds where that is further."""
    frac = step / horizon
    if args.max_cpu_seconds:
        frac = max(frac, run.cpu_seconds() / args.max_cpu_seconds)
    return min(1.0, frac)


def out_of_time(args: Args, run: RunFolder) -> bool:
    return bool((args.max_seconds and run.seconds() > args.max_seconds)
                or (args.max_cpu_seconds and run.cpu_seconds() > args.max_cpu_seconds))


def train(args: Args, command: str | None = None,
          evaluator: Callable[[Agent, Engine], dict[str, float]] | None = None) -> TrainResult:
    """One training run (see the module doc): iterations of play, fit, league, log and checkpoint.

    ``evaluator(agent, engine)``: the metrics of each evaluation of the shipped network's one-ply
    player (``eval/points`` and ``eval/points_ci`` at least), instead of :func:`strong_field_eval`
    against ``eval_field``."""
    args.check()  # (again: settings changed since they were made)
    if args.members:
        return train_ensemble(args, command)
    torch.set_num_threads(args.threads)
    streams = Streams(args.seed)
    engine = Engine(args.variant, args.num_players, **args.options)
    checkpoint = Checkpoint(args)
    run, progress = checkpoint.run, Progress()
    learner, league = Learner(args, engine), League(args)
    evaluate = Evaluation(args, engine, evaluator)
    frontier = Frontier(args.frontier_size)  # positions met by the learner, for restarts
    checkpoint.restore(progress, learner, league, streams)
    bar = Bar(args, run, progress.step)
    while progress.step < args.total_timesteps and not out_of_time(args, run):
        progress.iteration += 1
        learner.anneal(schedule(args, run, progress.step, args.anneal_timesteps or args.total_timesteps))
        # -- play --------------------------------------------------------------------------------
        t_play = time.process_time()
        explore = args.explore
        if args.explore_end >= 0:
            explore += (args.explore_end - args.explore) * schedule(args, run, progress.step, args.total_timesteps)
        agents = [Explorer(learner.agent(), explore, streams.explore), *league.pool()]
        obs, targets, steps, restarted = play(args, engine, agents, league, frontier, streams.np, progress.iteration)
        progress.replay = (progress.replay + [(obs, targets)])[-args.replay:]
        progress.step += steps
        play_time = time.process_time() - t_play
        # -- fit ---------------------------------------------------------------------------------
        t_fit = time.process_time()
        loss, records = learner.fit(progress.replay, streams.gen)
        fit_time = time.process_time() - t_fit
        # -- league ------------------------------------------------------------------------------
        league.update(learner, progress.iteration)
        # -- log ---------------------------------------------------------------------------------
        progress.last = {
            "losses/value_loss": loss, "charts/learning_rate": learner.optimizer.param_groups[0]["lr"],
            "charts/explore": explore,
            **({"charts/frontier": len(frontier), "charts/restarted": restarted} if args.restarts else {}),
            "charts/records": records, "charts/play_cpu_s": play_time, "charts/fit_cpu_s": fit_time,
            "charts/SPS": progress.step / run.seconds(), "charts/cpu_SPS": progress.step / run.cpu_seconds()}
        run.log(progress.step, progress.last)
        bar.update(run, progress, steps)
        # -- checkpoint: a model with its training so far (a run stopped by hand ships with its cost) --
        if args.eval_every and progress.iteration % args.eval_every == 0:
            bar.write(progress, evaluate(learner, run, progress.step))
            run.checkpoint(progress.step, learner.shipped().weights(), value_meta(
                engine, args.points_scale, learner.record(run, progress.step, progress.iteration, command)))
            checkpoint.save(progress, learner, league, streams)
    bar.close()
    checkpoint.save(progress, learner, league, streams)  # a finished run resumes too, with a larger budget
    return finish(args, learner, evaluate, run, progress, command)


def finish(args: Args, learner: Learner, evaluate: Evaluation, run: RunFolder, progress: Progress,
           command: str | None) -> TrainResult:
    """The final evaluation and model (its training record, and ``play``'s defaults), the run closed."""
    seconds, cpu_seconds = run.seconds(), run.cpu_seconds()
    final = evaluate(learner, run, progress.step)
    training = learner.record(run, progress.step, progress.iteration, command, seconds=seconds,
                              cpu_seconds=cpu_seconds)
    meta = value_meta(learner.engine, args.points_scale, training)
    if args.play:
        meta["play"] = dict(args.play)
    run.save(learner.shipped().weights(), meta, also=args.save_model)
    run.close(f"afterstate values {args.variant} {args.num_players}p seed {args.seed}")
    return TrainResult(run.run_dir, progress.step, seconds, final, progress.last, cpu_seconds, learner.shipped())


NOT_MEMBER = {"members", "run_dir", "exp_name", "save_model", "config", "play"}  # what an ensemble's members share


def member_settings(config: dict[str, Any], i: int) -> dict[str, Any]:
    """The settings member ``i`` of an ensemble config trains with, but where it is written: the
    config's own with the member's changes."""
    return {**{k: v for k, v in config.items() if k not in NOT_MEMBER}, **config["members"][i]}


def train_ensemble(args: Args, command: str | None = None) -> TrainResult:
    """Train ``args.members``' networks one after the other, each as its own run (the settings with
    the member's changes) in the run folder's ``members/``, and save the model that averages them
    (:func:`midnight_agents.model.ensemble_model`), evaluated as one run's final model is."""
    engine = Engine(args.variant, args.num_players, **args.options)
    run_dir = make_run_dir(args.run_dir, args.run_name())
    config = to_mapping(args)
    write_config(run_dir, config)
    code = code_version()
    results = []
    for i in range(len(args.members)):
        member = from_mapping(Args, {**member_settings(config, i), "run_dir": str(run_dir / "members"),
                                     "exp_name": f"member{i}"}, where=f"members[{i}]")
        results.append(train(member, command))
    models = [ValueModel.load(r.run_dir / "model") for r in results]
    seconds, cpu_seconds = sum(r.seconds for r in results), sum(r.cpu_seconds for r in results)
    steps = sum(r.steps for r in results)
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
    return TrainResult(run_dir, steps, seconds, final, results[-1].metrics, cpu_seconds, model, results)


def main(argv: list[str] | None = None) -> TrainResult:
    """Every :class:`Args` field as a flag (``--config FILE.yaml`` first, flags win); trains and prints a summary."""
    args = parse_args(Args, argv, description=__doc__.split("\n")[0])
    result = train(args)
    final = result.eval
    print(f"{result.run_dir}: {result.steps} env steps in {result.cpu_seconds / 60:.1f} CPU-minutes; "
          f"eval {final['eval/points']:.2f} ± {final['eval/points_ci']:.2f} points against the strong field")
    return result


__all__ = ["Args", "Checkpoint", "League", "Learner", "Network", "load_config", "train", "train_ensemble",
           "member_settings", "main", "play_and_record", "fit_values", "strong_field_eval", "frozen"]
