"""PPO on the batched ``VectorEnv``, cleanrl style: the whole algorithm in this one module, top to bottom.

Every game of the batch has one deciding seat per step. In a self-play game every seat is the
learner; in the other games one seat learns and the others are played by an opponent pool
(heuristic agents and frozen snapshots of the policy, ``self``). Each learning seat's decisions
form their own chain: the reward of a decision is minus the change of that seat's spooky points
until its next decision (other seats' moves and Hugo included), and GAE runs along the chain.
A chain's last decision in a rollout (its outcome lies in the next rollout) is bootstrapped from,
not trained on. The policy's softmax runs over each decision's legal actions only (at most 28,
packed into ``max_legal`` slots), which is what makes it fast. Optionally the network first
imitates an agent (``imitate: expert``: behaviour cloning of its choices plus its games' returns
for the value head), or starts from a saved model (``init_model``), and PPO goes on from there.

This is the algorithm that trained the shipped models (``agents/models/ppo-*-4p``, settings in
``configs/native-*-4p.yaml``) and the default of ``midnight train``:

    midnight train --config configs/native-midnight_party-4p.yaml
    midnight train --algo native --total-timesteps 2000000 --override hidden_sizes=64,64
    python experiments/ppo_native.py --config configs/native-midnight_party-4p.yaml --num-envs 256

(the script takes every :class:`Args` field as a flag). Writes ``runs/<exp_name>-s<seed>/``:
config.yaml, metrics.csv (``charts/…``, ``losses/…``, ``eval/…``), checkpoints/ (playable as
``ppo:path=…``), model.npz/.json and learning_curve.png; ``save_model: PATH`` writes the final
model there too. Models are written in the format of :mod:`midnight_agents.model`.
"""

from __future__ import annotations

import copy
import os
import sys
import time
from dataclasses import dataclass, field
from typing import Any, ClassVar, NamedTuple

# torch's OpenMP threads otherwise spin between parallel regions and fight numba's threads (and any
# other process) for the cores: 8x slower on a busy 2-core machine. OpenMP reads it once, when torch
# loads: here, before the import below (too late, and left alone, when torch was loaded already).
if "torch" not in sys.modules:
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np
import torch
import torch.nn as nn
from numba import njit
from tqdm import tqdm

from midnight_agents.model import ModelError, PolicyModel, model_meta
from midnight_agents.ppo import PPOAgent
from midnight_env.arena.agent import Decisions
from midnight_env.arena.registry import make_agent
from midnight_env.core.dice import agent_streams
from midnight_env.core.observation import encode_observations
from midnight_env.core.state import MOVE, PLACE
from midnight_env.envs.vector import VectorEnv
from midnight_env.training.args import Settings, check_counts, check_numbers, check_widths, parse_args
from midnight_env.training.evaluate import EVAL_OPPONENTS, evaluate_policy
from midnight_env.training.export import linear_weights
from midnight_env.training.runs import RunFolder
from midnight_env.training.trainer import TrainResult

# this trainer's seeds: below the limit (check_seed_below), and why
SEEDS = (10**12, "native PPO's game seeds are seed*10**6 + game numbers, below 2**62")


@dataclass
class Args(Settings):
    SEEDS: ClassVar[tuple[int, str]] = SEEDS
    RUN_NAME: ClassVar[str] = "ppo_native"

    seed: int = 1
    """seed of torch, of the line-up draws and of the games (game i of the batch starts with seed*10**6+i)"""
    total_timesteps: int = 2_000_000
    """environment steps to train for (one step = one decision in one game)"""
    max_seconds: float = 0.0
    """stop after this many seconds of training (0: no limit); the learning rate anneals over total_timesteps"""
    num_envs: int = 512
    """games played at once"""
    num_steps: int = 64
    """steps per game per rollout (a rollout is num_envs * num_steps env steps)"""
    learning_rate: float = 1e-3
    """Adam learning rate"""
    anneal_lr: bool = True
    """decay the learning rate linearly to 0 over the run"""
    gamma: float = 1.0
    """discount per decision of a seat (the game is finite: 1 counts every spooky point alike)"""
    gae_lambda: float = 0.95
    """GAE lambda along each seat's chain of decisions"""
    num_minibatches: int = 4
    """minibatches per update epoch"""
    update_epochs: int = 2
    """passes over a rollout"""
    norm_adv: bool = True
    """normalise advantages per minibatch"""
    clip_coef: float = 0.2
    """PPO clipping of the probability ratio"""
    clip_vloss: bool = True
    """clip the value loss as PPO does"""
    ent_coef: float = 0.01
    """entropy bonus"""
    vf_coef: float = 0.5
    """value-loss weight"""
    max_grad_norm: float = 0.5
    """gradient-norm clipping"""
    target_kl: float = 0.0
    """stop an update early when the approximate KL exceeds this (0: never)"""
    reward_scale: float = 0.1
    """rewards (minus spooky points) are multiplied by this before learning"""
    hidden_sizes: list[int] = field(default_factory=lambda: [128, 128])
    """widths of the shared tanh trunk; the policy and value heads are linear on top"""
    max_legal: int = 32
    """legal actions a decision may have (the softmax runs over these slots only; the rules' most is 28)"""
    self_play: float = 1.0
    """fraction of games where every seat is the learner; in the others one seat learns against opponents"""
    opponents: list[str] = field(default_factory=lambda: ["self", "expert", "coward"])
    """pool for the other seats of non-self-play games: agent specs, 'self' = a frozen snapshot"""
    snapshot_every: int = 10
    """iterations between snapshots of the policy added to the 'self' pool"""
    pool_size: int = 4
    """snapshots kept in the 'self' pool (the oldest is replaced)"""
    init_model: str = ""
    """start from this model (NAME.npz, the midnight_agents.model format, same hidden_sizes), not a fresh network"""
    imitate: str = ""
    """agent spec to imitate before PPO (behaviour cloning + value regression); '' for none"""
    imitate_games: int = 0
    """games the imitated agent plays (all seats) for the imitation data"""
    imitate_epochs: int = 4
    """passes over the imitation data"""
    eval_every: int = 20
    """iterations between evaluations against fixed heuristics (0: only at the end)"""
    eval_games: int = 400
    """games per evaluation"""
    eval_opponents: list[str] = field(default_factory=lambda: list(EVAL_OPPONENTS))
    """heuristic agents of the evaluation games"""
    save_model: str = ""
    """also write the final model to this path (NAME -> NAME.npz + NAME.json)"""
    progress: bool = True
    """show a progress bar"""
    check_actions: bool = False
    """have the engine check every action against the legal mask (slower; the smoke tests use it)"""

    def check(self) -> None:
        super().check()
        check_counts(self, 1, "total_timesteps", "num_envs", "num_steps", "num_minibatches",
                     "update_epochs", "max_legal", "snapshot_every", "pool_size", "eval_games")
        check_counts(self, 0, "imitate_games", "imitate_epochs", "eval_every")
        check_numbers(self, 0.0, None, "max_seconds", "learning_rate", "ent_coef", "vf_coef", "target_kl")
        check_numbers(self, 0.0, None, "clip_coef", "max_grad_norm", "reward_scale", low_open=True)
        check_numbers(self, 0.0, 1.0, "gamma", "gae_lambda", "self_play")
        check_widths(self, "hidden_sizes")


class Network(nn.Module):
    """Shared tanh trunk, linear policy (one logit per action) and value heads.

    The policy is read at each decision's legal actions only, packed into ``slots`` (see
    :func:`legal_slots`): the softmax runs over a few dozen slots instead of every action.
    """

    def __init__(self, obs_size: int, num_actions: int, hidden: list[int]):
        super().__init__()
        layers, width = [], obs_size
        for h in hidden:
            layers += [self._init(nn.Linear(width, h), np.sqrt(2)), nn.Tanh()]
            width = h
        self.trunk = nn.Sequential(*layers)
        self.policy = self._init(nn.Linear(width, num_actions), 0.01)
        self.value = self._init(nn.Linear(width, 1), 1.0)

    @staticmethod
    def _init(layer: nn.Linear, std: float) -> nn.Linear:
        nn.init.orthogonal_(layer.weight, std)
        nn.init.constant_(layer.bias, 0.0)
        return layer

    def forward(self, obs, slots, open_):
        h = self.trunk(obs)
        logits = self.policy(h).gather(1, slots).masked_fill(~open_, -1e9)  # empty slots get no probability
        return logits, self.value(h).squeeze(-1)

    def weights(self) -> dict[str, np.ndarray]:
        trunk = [m for m in self.trunk if isinstance(m, nn.Linear)]
        return {**linear_weights("shared", trunk), **linear_weights("policy", [self.policy]),
                **linear_weights("value", [self.value])}


@njit(cache=True)
def _pack_legal(legal, slots, open_):
    most = 0
    width = slots.shape[1]
    for i in range(legal.shape[0]):
        k = 0
        for a in range(legal.shape[1]):
            if legal[i, a]:
                if k < width:
                    slots[i, k] = a
                k += 1
        for j in range(width):
            open_[i, j] = j < k
            if j >= k:
                slots[i, j] = 0
        most = max(most, k)
    return most


def legal_slots(legal: np.ndarray, width: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(slots, open): each row's legal actions in order in its first slots (n, width), the rest closed."""
    slots = np.empty((legal.shape[0], width), np.int64)
    open_ = np.empty((legal.shape[0], width), np.bool_)
    most = _pack_legal(legal, slots, open_)
    if most > width:
        raise ValueError(f"a decision has {most} legal actions: raise max_legal (now {width}) to at least {most}")
    return torch.from_numpy(slots), torch.from_numpy(open_)


def sample(logits: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """One action per row from softmax(logits) (Gumbel-max, from the seeded generator)."""
    u = torch.rand(logits.shape, generator=gen).clamp_(1e-12, 1.0)
    return (logits - torch.log(-torch.log(u))).argmax(dim=1)


def chain_advantages(values, rewards, dones, seats, learn, gamma, lam):
    """GAE along each (game, seat) chain of decisions; (advantages, trainable) of shape (T, B).

    rewards (T, B, N) are every seat's rewards of step t; dones (T, B) mark steps that ended a game.
    A chain's last decision before the rollout's end has no known outcome: not trainable.
    """
    T, B = values.shape
    n = rewards.shape[2]
    adv = np.zeros((T, B), np.float32)
    trainable = np.zeros((T, B), bool)
    acc = np.zeros((B, n), np.float32)  # rewards since each seat's next decision (going backwards)
    next_v = np.zeros((B, n), np.float32)
    next_adv = np.zeros((B, n), np.float32)
    known = np.zeros((B, n), bool)  # the seat's next decision (or the game's end) is in this rollout
    games = np.arange(B)
    for t in range(T - 1, -1, -1):
        d = dones[t]
        acc[d], next_v[d], next_adv[d], known[d] = 0.0, 0.0, 0.0, True
        acc += rewards[t]
        b = games[learn[t]]
        p = seats[t, b]
        delta = acc[b, p] + gamma * next_v[b, p] - values[t, b]
        a = np.where(known[b, p], delta + gamma * lam * next_adv[b, p], 0.0)
        adv[t, b] = a
        trainable[t, b] = known[b, p]
        next_v[b, p], next_adv[b, p], known[b, p], acc[b, p] = values[t, b], a, True, 0.0
    return adv, trainable


def ppo_update(net: Network, optimizer, args: Args, gen: torch.Generator, obs, slots, open_, actions, logp,
               advantages, values, returns) -> dict[str, Any]:
    """PPO's clipped update over a rollout's trainable decisions; the last minibatch's losses.

    ``update_epochs`` passes, each over ``num_minibatches`` minibatches drawn from ``gen``:
    ``actions`` are slots of ``slots``, ``logp`` their log-probabilities when they were chosen.
    """
    n = len(actions)
    clipfracs = []
    for _epoch in range(args.update_epochs):
        for j in torch.randperm(n, generator=gen).chunk(args.num_minibatches):
            logits, v = net(obs[j], slots[j], open_[j])
            logp_all = torch.log_softmax(logits, 1)
            newlogp = logp_all.gather(1, actions[j, None]).squeeze(1)
            entropy = -(logp_all.exp() * logp_all).sum(1)
            logratio = newlogp - logp[j]
            ratio = logratio.exp()
            with torch.no_grad():
                approx_kl = ((ratio - 1) - logratio).mean()
                clipfracs.append(((ratio - 1.0).abs() > args.clip_coef).float().mean().item())
            a_j = advantages[j]
            if args.norm_adv:
                a_j = (a_j - a_j.mean()) / (a_j.std() + 1e-8)
            pg_loss = torch.max(-a_j * ratio, -a_j * ratio.clamp(1 - args.clip_coef, 1 + args.clip_coef)).mean()
            if args.clip_vloss:
                v_clipped = values[j] + (v - values[j]).clamp(-args.clip_coef, args.clip_coef)
                v_loss = 0.5 * torch.max((v - returns[j]) ** 2, (v_clipped - returns[j]) ** 2).mean()
            else:
                v_loss = 0.5 * ((v - returns[j]) ** 2).mean()
            ent = entropy.mean()
            loss = pg_loss - args.ent_coef * ent + args.vf_coef * v_loss
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(net.parameters(), args.max_grad_norm)
            optimizer.step()
        if args.target_kl and approx_kl > args.target_kl:
            break
    return {"losses/value_loss": v_loss.item(), "losses/policy_loss": pg_loss.item(), "losses/entropy": ent.item(),
            "losses/approx_kl": approx_kl.item(), "losses/clipfrac": float(np.mean(clipfracs))}


def load_weights(net: Network, path: str, engine) -> dict:
    """Copy a saved model's weights into ``net`` (refused when its game or shapes differ); its training metadata."""
    model = PolicyModel.load(path)
    model.check_engine(engine)
    weights = model.weights()
    mine = net.weights()
    if weights.keys() != mine.keys() or any(weights[k].shape != mine[k].shape for k in mine):
        raise ModelError(f"model {model.npz_path} has another network shape than hidden_sizes={net_widths(net)}")
    trunk = [m for m in net.trunk if isinstance(m, nn.Linear)]
    layers = {**{f"shared.{k}": m for k, m in enumerate(trunk)}, "policy.0": net.policy, "value.0": net.value}
    with torch.no_grad():
        for name, layer in layers.items():
            layer.weight.copy_(torch.from_numpy(weights[f"{name}.weight"]))
            layer.bias.copy_(torch.from_numpy(weights[f"{name}.bias"]))
    return model.meta.get("training", {})


def net_widths(net: Network) -> list[int]:
    return [m.out_features for m in net.trunk if isinstance(m, nn.Linear)]


def imitation_data(engine, spec: str, games: int, seed: int, reward_scale: float):
    """Observations, masks, the agent's choices and each decision's return from games it plays with itself."""
    agent = make_agent(spec)
    seeds = seed + np.arange(games)
    state = engine.new_games(seeds)
    rng = agent_streams(seeds, stream=7)
    obs, masks, actions, before, game, seat = [], [], [], [], [], []
    while True:
        deciding = np.flatnonzero((state.phase == PLACE) | (state.phase == MOVE))
        if not len(deciding):
            break
        choice = agent.act(Decisions(engine, state, deciding, rng))
        obs.append(encode_observations(engine, state, deciding))
        masks.append(state.legal[deciding])
        actions.append(choice)
        players = state.player[deciding].astype(np.int64)
        before.append(state.spooky[deciding, players])
        game.append(deciding)
        seat.append(players)
        full = np.full(len(seeds), -1, np.int64)
        full[deciding] = choice
        engine.step(state, full)
    game, seat = np.concatenate(game), np.concatenate(seat)
    returns = (np.concatenate(before) - state.spooky[game, seat]) * reward_scale  # minus points still to come
    return (np.concatenate(obs), np.concatenate(masks), np.concatenate(actions), returns.astype(np.float32))


def load_config(path: str | None = None, overrides: dict[str, Any] | None = None) -> Args:
    """:class:`Args` from a YAML file (or the defaults) with ``overrides`` applied; ``config`` names the file."""
    return Args.load(path, overrides)


def imitate(net: Network, engine, args: Args, gen: torch.Generator, run: RunFolder) -> None:
    """Behaviour cloning of ``args.imitate``'s choices, and its games' returns for the value head
    (``imitate_games`` games, ``imitate_epochs`` passes): a warm start for PPO."""
    optimizer = torch.optim.Adam(net.parameters(), lr=args.learning_rate, eps=1e-5)
    o, masks, choices, r = imitation_data(engine, args.imitate, args.imitate_games,
                                          args.seed * 10**6 + 5 * 10**8, args.reward_scale)
    o, r = torch.from_numpy(o), torch.from_numpy(r)
    sl, op = legal_slots(masks, args.max_legal)
    a = (sl == torch.from_numpy(choices)[:, None]).int().argmax(1)  # the agent's choice as a slot
    n = len(a)
    probe = torch.arange(min(n, 20000))

    def accuracy() -> float:
        with torch.no_grad():
            return (net(o[probe], sl[probe], op[probe])[0].argmax(1) == a[probe]).float().mean().item()

    run.log(0, {"imitation/accuracy": accuracy(), "imitation/decisions": n})  # before: the untrained net
    for _epoch in range(args.imitate_epochs):
        ces, vls = [], []
        for idx in torch.randperm(n, generator=gen).split(1024):
            logits, v = net(o[idx], sl[idx], op[idx])
            ce = nn.functional.cross_entropy(logits, a[idx])
            vloss = ((v - r[idx]) ** 2).mean()
            optimizer.zero_grad()
            (ce + args.vf_coef * vloss).backward()
            nn.utils.clip_grad_norm_(net.parameters(), args.max_grad_norm)
            optimizer.step()
            ces.append(ce.item())
            vls.append(vloss.item())
        run.log(0, {"imitation/cross_entropy": np.mean(ces), "imitation/value_loss": np.mean(vls),
                    "imitation/accuracy": accuracy()})


class League:
    """Who holds the other seats of the games where one seat learns (a ``1 - self_play`` share):
    heuristic agents by spec and ``self``, frozen snapshots of the policy (``pool_size`` of them,
    refreshed in turn every ``snapshot_every`` iterations). ``lineup[b, s]`` is seat s of game b:
    -1 the learner, 0..H-1 heuristic k, H+j snapshot j; a game keeps its line-up to its end.
    ``rng`` draws the line-ups; the heuristics draw from the games' own agent streams."""

    def __init__(self, args: Args, net: Network, envs: VectorEnv, rng: np.random.Generator):
        self.args, self.engine, self.rng = args, envs.engine, rng
        self.heuristics = [make_agent(s) for s in args.opponents if s != "self"]
        self.specs = [s for s in args.opponents if s != "self"] + (["self"] if "self" in args.opponents else [])
        self.snapshots = [copy.deepcopy(net) for _ in range(args.pool_size if "self" in self.specs else 0)]
        self.snap_next = 0
        self.lineup = np.full((envs.num_envs, envs.num_players), -1, np.int64)
        self.draw(np.arange(envs.num_envs))
        self.agent_rng = agent_streams(np.arange(envs.num_envs) + args.seed * 10**6, stream=3)

    def draw(self, games: np.ndarray) -> None:
        """New line-ups for ``games`` (the batch's slots whose games begin)."""
        H, N, rng = len(self.heuristics), self.lineup.shape[1], self.rng
        for b in games:
            self.lineup[b] = -1
            if rng.random() < self.args.self_play or not self.specs:
                continue
            learner = rng.integers(N)
            for s in range(N):
                if s != learner:
                    k = rng.integers(len(self.specs))
                    self.lineup[b, s] = k if self.specs[k] != "self" else H + rng.integers(len(self.snapshots))

    def act(self, who: np.ndarray, state, obs, slots, open_, gen: torch.Generator, actions: np.ndarray) -> None:
        """The actions of the games whose deciding seat the league holds (``who`` >= 0), into ``actions``."""
        H = len(self.heuristics)
        for k in np.unique(who[who >= 0]):
            games = np.flatnonzero(who == k)
            if k < H:
                actions[games] = self.heuristics[k].act(Decisions(self.engine, state, games, self.agent_rng))
            else:
                g = torch.from_numpy(games)
                pick = sample(self.snapshots[k - H](obs[g], slots[g], open_[g])[0], gen)
                actions[games] = slots[g].gather(1, pick[:, None]).squeeze(1).numpy()

    def update(self, net: Network, iteration: int) -> None:
        """Every ``snapshot_every`` iterations the next snapshot (the oldest) becomes the policy."""
        if self.snapshots and iteration % self.args.snapshot_every == 0:
            self.snapshots[self.snap_next].load_state_dict(net.state_dict())
            self.snap_next = (self.snap_next + 1) % len(self.snapshots)


class Batch(NamedTuple):
    """A rollout's trainable decisions, as :func:`ppo_update` takes them (in this order)."""

    obs: torch.Tensor  # (n, D) what the learner saw
    slots: torch.Tensor  # (n, K) its legal actions, packed (legal_slots)
    open: torch.Tensor  # (n, K) which slots hold one
    actions: torch.Tensor  # (n,) the slot chosen
    logp: torch.Tensor  # (n,) its log-probability then
    advantages: torch.Tensor  # (n,) GAE along the seat's chain
    values: torch.Tensor  # (n,) the value head's estimate then
    returns: torch.Tensor  # (n,) advantages + values


class Rollout:
    """``num_steps`` steps of every game of the batch: what each deciding seat saw, the learner's
    choices (slots), their log-probabilities and values, and every seat's rewards."""

    def __init__(self, T: int, B: int, D: int, K: int, N: int):
        self.obs = torch.zeros((T, B, D))
        self.slots = torch.zeros((T, B, K), dtype=torch.long)
        self.open = torch.zeros((T, B, K), dtype=torch.bool)
        self.actions = torch.zeros((T, B), dtype=torch.long)
        self.logp = torch.zeros((T, B))
        self.values = np.zeros((T, B), np.float32)
        self.rewards = np.zeros((T, B, N), np.float32)
        self.dones = np.zeros((T, B), bool)
        self.seats = np.zeros((T, B), np.int64)
        self.learn = np.zeros((T, B), bool)

    def play(self, envs: VectorEnv, net: Network, league: League, gen: torch.Generator,
             reward_scale: float) -> dict[str, Any]:
        """Fill the buffers with the next ``num_steps`` steps (the learner sampling from ``net``, the
        league playing its seats); the ended games' learner points and wins, and illegal choices (0)."""
        B, K = envs.num_envs, self.slots.shape[2]
        points, wins, illegal = [], [], 0
        for t in range(len(self.obs)):
            obs, state = envs.observations(), envs.state
            seats = state.player.astype(np.int64)
            who = league.lineup[np.arange(B), seats]
            learn = who < 0
            obs_t = torch.from_numpy(obs["observation"])
            mask_t = torch.from_numpy(obs["action_mask"].view(np.bool_))
            slots_t, open_t = legal_slots(obs["action_mask"], K)
            self.obs[t], self.slots[t], self.open[t] = obs_t, slots_t, open_t
            actions = np.empty(B, np.int64)
            li = torch.from_numpy(np.flatnonzero(learn))
            with torch.no_grad():
                logits, value = net(obs_t[li], slots_t[li], open_t[li])
                a = sample(logits, gen)  # a slot
                self.logp[t, li] = torch.log_softmax(logits, 1).gather(1, a[:, None]).squeeze(1)
                self.actions[t, li] = a
                self.values[t, li.numpy()] = value.numpy()
                chosen = slots_t[li].gather(1, a[:, None])
                actions[li.numpy()] = chosen.squeeze(1).numpy()
                illegal += int((~mask_t[li].gather(1, chosen)).sum())  # must stay 0: only legal slots are open
                league.act(who, state, obs_t, slots_t, open_t, gen, actions)
            self.seats[t], self.learn[t] = seats, learn
            rewards, term, trunc, info = envs.advance(actions)
            self.rewards[t] = rewards * reward_scale
            self.dones[t] = term | trunc
            if "final_games" in info:
                ended = info["final_games"]
                mine = league.lineup[ended] < 0
                points.extend(info["final_points"][mine].tolist())
                solo = (mine.sum(1) == 1)  # games with one learner against opponents
                wins.extend((info["final_ranks"][solo][mine[solo]] == 1).tolist())
                league.draw(ended)
        return {"points": points, "wins": wins, "illegal": illegal}

    def batch(self, gamma: float, lam: float) -> Batch:
        """The trainable decisions (those whose outcome lies in the rollout) with their advantages."""
        D, K = self.obs.shape[2], self.slots.shape[2]
        adv, trainable = chain_advantages(self.values, self.rewards, self.dones, self.seats, self.learn, gamma, lam)
        idx = torch.from_numpy(np.flatnonzero(trainable.reshape(-1)))
        b_adv = torch.from_numpy(adv.reshape(-1))[idx]
        b_val = torch.from_numpy(self.values.reshape(-1))[idx]
        return Batch(self.obs.reshape(-1, D)[idx], self.slots.reshape(-1, K)[idx], self.open.reshape(-1, K)[idx],
                     self.actions.reshape(-1)[idx], self.logp.reshape(-1)[idx], b_adv, b_val, b_adv + b_val)


def evaluate(net: Network, engine, args: Args, run: RunFolder, step: int) -> dict[str, float]:
    """The greedy policy against ``eval_opponents`` (``eval_games`` games), logged at ``step``."""
    agent = PPOAgent(model=PolicyModel(net.weights(), model_meta(engine, "tanh"), source="policy"))
    metrics = evaluate_policy(agent, engine, args.eval_opponents, args.eval_games, seed=10**9 + args.seed)
    run.log(step, metrics)
    return metrics


def rollout_metrics(run: RunFolder, optimizer, step: int, rollout_sps: float, played: dict[str, Any],
                    losses: dict, returns: torch.Tensor, values: torch.Tensor) -> dict[str, float]:
    """An iteration's ``charts/…`` and ``losses/…``: speed, the games' points and wins, the update's losses."""
    var_y = returns.var()
    metrics = {
        "charts/learning_rate": optimizer.param_groups[0]["lr"], "charts/SPS": step / run.seconds(),
        # per CPU-second of this process (all its threads): the cost, whatever else runs on the machine
        "charts/cpu_SPS": step / run.cpu_seconds(), "charts/rollout_SPS": rollout_sps,
        "charts/trained_samples": len(returns), "charts/illegal_actions": played["illegal"], **losses,
        "losses/explained_variance":
            float("nan") if var_y == 0 else 1 - (returns - values).var().item() / var_y.item(),
    }
    if played["points"]:
        metrics["charts/episodic_points"] = float(np.mean(played["points"]))
    if played["wins"]:
        metrics["charts/win_rate"] = float(np.mean(played["wins"]))
    return metrics


def train(args: Args, command: str | None = None) -> TrainResult:
    """One training run (see the module doc): PPO iterations of play, fit, league, log and checkpoint."""
    args.check()  # (again: settings changed since they were made)
    torch.set_num_threads(args.threads)
    # -- seeding ---------------------------------------------------------------------------------
    np_rng = np.random.default_rng(args.seed)
    torch.manual_seed(args.seed)
    gen = torch.Generator().manual_seed(args.seed)

    envs = VectorEnv(args.num_envs, args.variant, args.num_players, seed=args.seed * 10**6, copy=False,
                     check=args.check_actions, **args.options)
    engine, B, N, T = envs.engine, args.num_envs, envs.num_players, args.num_steps
    batch_size = B * T
    num_iterations = max(1, args.total_timesteps // batch_size)
    run = RunFolder.new(args)
    net = Network(envs.obs_size, envs.num_actions, args.hidden_sizes)
    previous = load_weights(net, args.init_model, engine) if args.init_model else None
    if args.imitate and args.imitate_games > 0:
        imitate(net, engine, args, gen, run)
    optimizer = torch.optim.Adam(net.parameters(), lr=args.learning_rate, eps=1e-5)  # fresh moments for PPO
    league = League(args, net, envs, np_rng)
    rollout = Rollout(T, B, envs.obs_size, args.max_legal, N)
    envs.reset(seed=args.seed * 10**6)

    step, metrics = 0, {}
    bar = tqdm(total=num_iterations * batch_size, unit="step", unit_scale=True, disable=not args.progress,
               desc=f"ppo {args.variant} {N}p")
    for iteration in range(1, num_iterations + 1):
        if args.max_seconds and run.seconds() > args.max_seconds:
            break
        if args.anneal_lr:
            optimizer.param_groups[0]["lr"] = args.learning_rate * (1.0 - (iteration - 1.0) / num_iterations)
        # -- play ----------------------------------------------------------------------------------
        started = time.perf_counter()
        played = rollout.play(envs, net, league, gen, args.reward_scale)
        step += batch_size
        rollout_sps = batch_size / (time.perf_counter() - started)
        # -- fit: PPO on the advantages along each seat's chain --------------------------------------
        batch = rollout.batch(args.gamma, args.gae_lambda)
        losses = ppo_update(net, optimizer, args, gen, *batch)
        # -- league --------------------------------------------------------------------------------
        league.update(net, iteration)
        # -- log -----------------------------------------------------------------------------------
        metrics = rollout_metrics(run, optimizer, step, rollout_sps, played, losses, batch.returns, batch.values)
        run.log(step, metrics)
        bar.update(batch_size)
        bar.set_postfix(SPS=f"{metrics['charts/SPS']:.0f}", pts=f"{metrics.get('charts/episodic_points', 0):.1f}")
        # -- checkpoint ------------------------------------------------------------------------------
        if args.eval_every and iteration % args.eval_every == 0:
            evaluate(net, engine, args, run, step)
            run.checkpoint(step, net.weights(), model_meta(engine, "tanh"))
    bar.close()
    return finish(net, engine, args, run, step, metrics, previous, command)


def finish(net: Network, engine, args: Args, run: RunFolder, step: int, metrics: dict, previous: dict | None,
           command: str | None) -> TrainResult:
    """The final evaluation and model (its training, and the training it started from), the run closed."""
    seconds, cpu_seconds = run.seconds(), run.cpu_seconds()
    final = evaluate(net, engine, args, run, step)
    training = run.training("ppo_native", args.seed, step, command, seconds=seconds, cpu_seconds=cpu_seconds)
    if previous is not None:  # a fine-tuned model carries the training it started from
        training["init_model"] = {"path": args.init_model, "training": previous}
        training["total_training_time_s"] = round(seconds + previous.get("total_training_time_s",
                                                                         previous.get("training_time_s", 0)), 1)
        training["total_env_steps"] = step + previous.get("total_env_steps", previous.get("env_steps", 0))
    run.save(net.weights(), model_meta(engine, "tanh", training), also=args.save_model)
    torch.save(net.state_dict(), run.run_dir / "checkpoints" / "final.pt")
    run.close(f"native PPO {args.variant} {args.num_players}p seed {args.seed}")
    return TrainResult(run.run_dir, step, seconds, final, metrics, cpu_seconds, net)


def main(argv: list[str] | None = None) -> TrainResult:
    """Every :class:`Args` field as a flag (``--config FILE.yaml`` first, flags win); trains and prints a summary."""
    args = parse_args(Args, argv, description=__doc__.split("\n")[0])
    result = train(args)
    steps, seconds, final = result.steps, result.seconds, result.eval
    print(f"{result.run_dir}: {steps} env steps in {seconds:.0f} s ({steps / seconds:.0f} steps/s); "
          f"eval {final['eval/points']:.2f} ± {final['eval/points_ci']:.2f} points, "
          f"win rate {final['eval/win_rate']:.3f}")
    return result


__all__ = ["Args", "League", "Network", "Rollout", "load_config", "train", "main", "chain_advantages", "ppo_update",
           "legal_slots"]
