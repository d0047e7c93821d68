"""Placement values that hold off the champion's own path (issue 41, item 1).

Why `midnight analyze` was not self-consistent at real size: the champions' networks are fitted on
their own play (self-play and a league of their snapshots), so they value well the placements they
make themselves and badly the ones they never make. In a two-player game no die is rolled between
two placements, so seat A's value of its chosen placement must equal minus seat B's best value at
the next placement. On the champion's own games the sum is small (+0.45 points on average in
midnight_party); on `expert` games, whose placements the champion never makes, it is +3.80.

The mend: a **placement network**, fitted to the positions of the opening placement reached by many
placement policies (uniformly random, `expert`, `placer`, `green_hunter`, the champion itself), each
game handed to the champion after a random number of placements, and valued by how the champion
then plays them out (Monte Carlo returns: the points every player books). It starts from the
champion's weights. `value-...:placement=FILE` judges the opening's positions with it.

    python experiments/placement_values.py fit --variant midnight_party --games 40000 --out runs/placement-mp2
    python experiments/placement_values.py check --variant midnight_party --placement runs/placement-mp2/model.npz

``fit`` writes ``model.npz/.json`` and ``fit.json`` (losses); ``check`` prints the two-player
placement sums on ``expert`` games (the issue's measure) with and without the placement network, and
each network's error against the truth that needs no network: paired rollouts of the champion from
sampled placement positions (every legal choice, ``--rollouts`` games each, 95 % intervals).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from midnight_agents.model import VALUE_FORMAT, save_model
from midnight_agents.value import ValueAgent, afterstate_values
from midnight_env.arena.agent import Decisions
from midnight_env.arena.registry import make_agent
from midnight_env.core.dice import agent_streams
from midnight_env.core.engine import Engine
from midnight_env.core.observation import encode_observations
from midnight_env.core.state import MOVE, OVER, PLACE

MIXERS = ("random", "expert", "placer", "green_hunter", "CHAMPION")


def champion_name(variant: str, players: int) -> str:
    return f"value-{variant}-{players}p"


def opening_games(engine: Engine, champion, mixers: list, seeds: np.ndarray, rng: np.random.Generator):
    """Play ``seeds``' games: the opening placement's first ``switch[g]`` placements by mixer
    ``placer[g]``, the rest of the game by ``champion``. Returns the afterstates of the opening
    placements from which the champion plays on (observations seen by the placer, float16), the
    placer's seat and game of each row, the final points (B, N) and the points booked at each row
    (M, N) by seat (hidden_castle's players start with some)."""
    state = engine.new_games(seeds)
    streams = agent_streams(seeds)
    b = len(seeds)
    total = engine.num_players * engine.rules.guests_per_player if hasattr(engine.rules, "guests_per_player") \
        else int(state.queue_len.max())
    switch = rng.integers(0, total + 1, b)
    placer = rng.integers(0, len(mixers), b)
    obs, games, seats, booked = [], [], [], []
    while True:
        deciding = np.flatnonzero((state.phase == PLACE) | (state.phase == MOVE))
        if not len(deciding):
            break
        actions = np.full(b, -1, np.int64)
        opening = deciding[(state.phase[deciding] == PLACE) & (state.rolls[deciding] == 0)]
        placed = state.queue_pos.astype(np.int64)
        mixed = opening[placed[opening] < switch[opening]]
        for m in np.unique(placer[mixed]):
            group = mixed[placer[mixed] == m]
            actions[group] = mixers[m].act(Decisions(engine, state, group, streams, seeds))
        rest = np.setdiff1d(deciding, mixed)
        if len(rest):
            actions[rest] = champion.act(Decisions(engine, state, rest, streams, seeds))
        kept = opening[placed[opening] + 1 >= switch[opening]]  # afterstates the champion plays on from
        movers = state.player[kept].astype(np.int64)
        engine.apply_action(state, actions, check=False)
        if len(kept):
            obs.append(encode_observations(engine, state, kept, movers).astype(np.float16))
            games.append(kept)
            seats.append(movers)
            booked.append(state.spooky[kept].astype(np.float64))  # hidden_castle's starting points
        engine.roll_on(state)
    obs = np.concatenate(obs)
    games = np.concatenate(games)
    seats = np.concatenate(seats)
    return obs, games, seats, state.spooky.astype(np.float64), np.concatenate(booked)


def relative(points: np.ndarray, games: np.ndarray, seats: np.ndarray) -> np.ndarray:
    """(M, N) final points of row m's game, its placer first, then clockwise."""
    n = points.shape[1]
    order = (seats[:, None] + np.arange(n)[None, :]) % n
    return points[games[:, None], order]


def fit(args) -> None:
    import torch

    from midnight_env.training.value import Network, fit_values, widen_into

    torch.set_num_threads(1)
    engine = Engine(args.variant, args.players)
    name = champion_name(args.variant, args.players)
    champion = make_agent(name)
    mixers = [champion if m == "CHAMPION" else make_agent(m) for m in MIXERS]
    rng = np.random.default_rng(args.seed)
    start = time.perf_counter()
    xs, ys = [], []
    for lo in range(0, args.games, args.batch):
        seeds = np.arange(args.seed * 10**9 + lo, args.seed * 10**9 + min(lo + args.batch, args.games))
        obs, games, seats, points, booked = opening_games(engine, champion, mixers, seeds, rng)
        xs.append(obs)
        # the network predicts the points still to come: the final ones less those booked already
        ys.append(relative(points, games, seats) - relative(booked, np.arange(len(games)), seats))
        print(f"played {min(lo + args.batch, args.games)} games, {sum(len(x) for x in xs)} positions, "
              f"{time.perf_counter() - start:.0f} s", flush=True)
    played = time.perf_counter() - start
    model = champion.model
    scale = model.points_scale
    x = torch.from_numpy(np.concatenate(xs))
    y = torch.from_numpy((np.concatenate(ys) / scale).astype(np.float32))
    hold = np.zeros(len(x), bool)
    hold[rng.permutation(len(x))[: len(x) // 10]] = True  # a tenth held out: the fit's honest loss
    hold = torch.from_numpy(hold)
    source = Path(model.source)
    arrays = dict(np.load(source.with_suffix(".npz")))
    hidden = [arrays[f"value.{k}.weight"].shape[0] for k in range(len(arrays) // 2 - 1)]
    net = Network(x.shape[1], engine.num_players, hidden)
    widen_into(net, arrays, str(source), hidden)
    optimizer = torch.optim.Adam(net.parameters(), lr=args.lr)
    gen = torch.Generator().manual_seed(args.seed)

    def held_loss() -> float:
        with torch.no_grad():
            return float(((net(x[hold].float()) - y[hold]) ** 2).mean()) * scale**2

    losses = [{"epoch": 0, "held_out_mse_points2": held_loss()}]
    for epoch in range(1, args.epochs + 1):
        train_loss = fit_values(net, optimizer, x[~hold], y[~hold], 1, args.minibatch, gen)
        losses.append({"epoch": epoch, "train_mse_points2": train_loss * scale**2,
                       "held_out_mse_points2": held_loss()})
        print(losses[-1], flush=True)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    meta = {**model.meta, "format": VALUE_FORMAT,
            "training": {"algorithm": "placement_values", "champion": name, "games": args.games,
                         "positions": len(x), "mixers": list(MIXERS), "epochs": args.epochs, "lr": args.lr,
                         "seed": args.seed, "play_seconds": round(played, 1),
                         "wall_minutes": round((time.perf_counter() - start) / 60, 1),
                         "command": "python experiments/placement_values.py fit " + " ".join(
                             f"--{k.replace('_', '-')} {v}" for k, v in vars(args).items() if k != "command")}}
    meta.pop("play", None) if False else None
    save_model(out / "model.npz", net.weights(), meta)
    (out / "fit.json").write_text(json.dumps(losses, indent=1))
    print(f"written {out / 'model.npz'}")


def placement_sums(engine: Engine, evaluator: ValueAgent, games: int, seed: int) -> np.ndarray:
    """The issue's measure on ``expert`` games: at every pair of successive opening placements of
    the two seats, the value of the first seat's chosen placement plus the second's best value."""
    expert = make_agent("expert")
    state = engine.new_games(np.arange(seed, seed + games))
    streams = agent_streams(np.arange(seed, seed + games))
    seeds = np.arange(seed, seed + games)
    sums = []
    previous = None
    while (state.phase == PLACE).all() and (state.rolls == 0).all():
        everyone = np.arange(games)
        who = state.player.astype(np.int64)
        values = evaluator.judged_afterstates(engine, state, everyone)
        best = np.nanmax(values, axis=1)
        if previous is not None:
            sums.append(previous + best)
        actions = expert.act(Decisions(engine, state, everyone, streams, seeds))
        previous = values[everyone, actions]
        del who
        engine.apply_action(state, actions, check=False)
    return np.concatenate(sums) if sums else np.zeros(0)


def check(args) -> None:
    engine = Engine(args.variant, args.players)
    name = champion_name(args.variant, args.players)
    plain = make_agent(name)
    mended = make_agent(f"{name}:placement={args.placement}") if args.placement else None
    for label, evaluator in (("champion network", plain), ("with placement network", mended)):
        if evaluator is None:
            continue
        s = placement_sums(engine, evaluator, args.games, args.seed)
        half = 1.96 * s.std(ddof=1) / np.sqrt(len(s))
        print(f"{label:<24} placement sum on expert games: mean {s.mean():+.2f} ± {half:.2f}, "
              f"mean |sum| {np.abs(s).mean():.2f}, max |sum| {np.abs(s).max():.2f} ({len(s)} pairs, "
              f"{args.games} games)")
    _ = afterstate_values, OVER


def champion_decisions(engine: Engine, champion, games: int, seed: int) -> list[tuple[str, object]]:
    """Every decision with two choices or more of ``games`` champion self-play games, each with its
    phase: ``placement`` (the opening, no die rolled yet), else ``early``, ``middle`` or ``late`` by
    the share of the game's rolls made before it (thirds)."""
    seeds = np.arange(seed, seed + games)
    state = engine.new_games(seeds)
    streams = agent_streams(seeds)
    taken = []
    while True:
        deciding = np.flatnonzero((state.phase == PLACE) | (state.phase == MOVE))
        if not len(deciding):
            break
        choices = state.legal[deciding].sum(axis=1)
        for g in deciding[choices >= 2]:
            taken.append((int(g), state.take([g])))
        actions = np.full(games, -1, np.int64)
        actions[deciding] = champion.act(Decisions(engine, state, deciding, streams, seeds))
        engine.step(state, actions)
    length = state.rolls.astype(np.float64)
    out = []
    for g, position in taken:
        if position.rolls[0] == 0 and position.phase[0] == PLACE:
            phase = "placement"
        else:
            phase = ("early", "middle", "late")[min(2, int(3 * position.rolls[0] / max(length[g], 1)))]
        out.append((phase, position))
    return out


def rollout_margins(engine: Engine, champion, position, rollouts: int, seed: int,
                    others: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """Each legal choice of ``position`` (one game at a decision) played on by ``rollouts`` games of
    the champion from its afterstate. The choices share their dice (rollout k of every choice rolls
    the same numbers), so their differences are measured closely. Returns the legal choices (L,)
    and the deciding seat's margin in every rollout (L, rollouts): the others' mean final points
    (weighted ``others``, as the evaluators value them: 0 for a champion that weighs only its own
    points) minus its own."""
    from midnight_env.core.dice import seed_streams

    legal = np.flatnonzero(position.legal[0])
    who = int(position.player[0])
    n = engine.num_players
    batch = position.take(np.zeros(len(legal) * rollouts, np.int64))
    seeds = seed + np.tile(np.arange(rollouts), len(legal))  # the same dice for every choice
    seed_streams(seeds.astype(np.int64), batch.rng)
    streams = agent_streams(seeds)
    engine.apply_action(batch, np.repeat(legal, rollouts), check=False)
    engine.roll_on(batch)
    while True:
        deciding = np.flatnonzero((batch.phase == PLACE) | (batch.phase == MOVE))
        if not len(deciding):
            break
        actions = np.full(batch.batch_size, -1, np.int64)
        actions[deciding] = champion.act(Decisions(engine, batch, deciding, streams, seeds))
        engine.step(batch, actions)
    points = batch.spooky.astype(np.float64)
    others_weight, others = others, (points.sum(axis=1) - points[:, who]) / max(n - 1, 1)
    return legal, (others_weight * others - points[:, who]).reshape(len(legal), rollouts)


def rollout_values(engine: Engine, champion, position, rollouts: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`rollout_margins` as (A,) means (NaN where illegal) and their 95 % half-widths."""
    legal, margin = rollout_margins(engine, champion, position, rollouts, seed)
    means = np.full(position.legal.shape[1], np.nan)
    halves = np.full(position.legal.shape[1], np.nan)
    means[legal] = margin.mean(axis=1)
    halves[legal] = 1.96 * margin.std(axis=1, ddof=1) / np.sqrt(rollouts)
    return means, halves


PHASES = ("placement", "early", "middle", "late")


def judged_row(values: np.ndarray, legal: np.ndarray, margin: np.ndarray) -> dict:
    """One evaluator on one position against its rollouts (``margin``: (L, R) of the legal choices).

    ``error``: each choice's value minus its rollouts' mean; ``relative_error``: the same, each
    against the position's mean choice. ``loss_error``: what ``midnight analyze`` charges, the
    evaluator's best value minus a choice's (its **loss**), minus the rollouts' difference of the
    same two choices, for every choice but the evaluator's best; ``loss_noise``: the variance of
    that rollout difference (paired: the dice are shared), the truth's own share of the error."""
    v = values[legal]
    q = margin.mean(axis=1)
    b = int(np.argmax(v))
    others = np.arange(len(legal)) != b
    diff = margin[b][None, :] - margin[others]  # (L-1, R) paired rollout differences best - choice
    return {"error": (v - q).tolist(), "relative_error": ((v - v.mean()) - (q - q.mean())).tolist(),
            "loss": (v[b] - v[others]).tolist(),
            "loss_error": ((v[b] - v[others]) - diff.mean(axis=1)).tolist(),
            "loss_noise": (diff.var(axis=1, ddof=1) / margin.shape[1]).tolist()}


def loss_accuracy(rows: list[dict], label: str) -> dict:
    """The loss's error over ``rows`` (one position each): bias (mean of evaluator loss minus rollout
    loss, 95 % interval over positions), mean absolute error (rollout noise included) and the root
    mean square error with the rollouts' own variance taken out, with its upper 95 % bound (the
    positions as the sampled units: a position's choices are not independent)."""
    per = [(np.asarray(r[label]["loss_error"]), np.asarray(r[label]["loss_noise"])) for r in rows
           if r[label]["loss_error"]]
    if not per:
        return {"positions": 0, "pairs": 0}
    err = np.concatenate([e for e, _ in per])
    # a position's mean squared error less its noise: the sampled unit of the MSE
    excess = np.array([np.mean(e**2 - n) for e, n in per])
    bias_pos = np.array([np.mean(e) for e, _ in per])
    p = len(per)
    mse = float(excess.mean())
    mse_half = float(1.96 * excess.std(ddof=1) / np.sqrt(p)) if p > 1 else float("inf")
    bias_half = float(1.96 * bias_pos.std(ddof=1) / np.sqrt(p)) if p > 1 else float("inf")
    return {"positions": p, "pairs": len(err), "bias": float(bias_pos.mean()), "bias_half_width": bias_half,
            "mae": float(np.abs(err).mean()), "rmse_without_noise": float(np.sqrt(max(mse, 0.0))),
            "rmse_upper95": float(np.sqrt(max(mse + mse_half, 0.0))),
            "noise_rms": float(np.sqrt(np.mean(np.concatenate([n for _, n in per]))))}


def truth_evaluators(engine: Engine, args) -> dict:
    """The evaluators ``truth`` measures: the champion one ply, ``midnight analyze``'s default
    evaluator of the set-up, and those ``--placement`` and ``--budget`` name."""
    from midnight_env.analysis.judge import evaluator_for

    name = champion_name(engine.variant, engine.num_players)
    out = {"one ply": make_agent(name)}
    default = evaluator_for(engine).spec
    out[f"analyze default ({default})"] = make_agent(default)
    if args.placement:
        out["one ply + placement network"] = make_agent(f"{name}:placement={args.placement}")
    if args.budget:
        out[f"search budget={args.budget}"] = make_agent(f"{name}:budget={args.budget}")
        if args.placement:
            out[f"search budget={args.budget} + placement network"] = make_agent(
                f"{name}:budget={args.budget},placement={args.placement}")
    return out


def truth(args) -> dict:
    """The evaluators against rollouts of the champion, per phase: bias and mean absolute error of
    every legal choice's value, of its value relative to the position's mean choice, and of the
    loss ``midnight analyze`` charges (:func:`judged_row`), with the rollouts' own error. Positions
    are taken a phase at a time in turn, so a run stopped by ``--max-cpu-seconds`` keeps the phases
    even; ``--out`` is rewritten after every position."""
    engine = Engine(args.variant, args.players)
    champion = make_agent(champion_name(args.variant, args.players))
    evaluators = truth_evaluators(engine, args)
    # the truth in the evaluators' own units: the others' points weighted as the champion weighs them
    weight = float(getattr(champion, "others_weight", lambda: 1.0)())
    rng = np.random.default_rng(args.seed)
    started_cpu, start = time.process_time(), time.perf_counter()
    positions = champion_decisions(engine, champion, args.source_games, 7 * 10**8 + args.seed)
    pools = {phase: [p for ph, p in positions if ph == phase] for phase in PHASES}
    picks = {phase: [pools[phase][i] for i in rng.permutation(len(pools[phase]))[: args.positions]]
             for phase in PHASES}
    rows: list[dict] = []
    stopped = "done"
    for k in range(args.positions):
        if args.max_cpu_seconds and time.process_time() - started_cpu > args.max_cpu_seconds:
            stopped = f"CPU budget: {args.max_cpu_seconds:g} s spent after {k} positions a phase"
            break
        for phase in PHASES:
            if k >= len(picks[phase]):
                continue
            position = picks[phase][k]
            legal, margin = rollout_margins(engine, champion, position, args.rollouts,
                                            9 * 10**8 + len(rows) * 10**4, weight)
            half = 1.96 * margin.std(axis=1, ddof=1) / np.sqrt(args.rollouts)
            row = {"phase": phase, "choices": len(legal), "truth_half_width": float(half.mean()),
                   "truth_variance": ((half / 1.96) ** 2).tolist()}
            for label, evaluator in evaluators.items():
                one = np.zeros(1, np.int64)
                v = np.asarray(evaluator.action_values(Decisions(engine, position, one, agent_streams(one), one)),
                               np.float64)[0]
                row[label] = judged_row(v, legal, margin)
            rows.append(row)
        print(f"{k + 1} position(s) a phase, {time.perf_counter() - start:.0f} s, "
              f"{time.process_time() - started_cpu:.0f} CPU s", flush=True)
        if args.out:
            _write_truth(args, rows, evaluators, stopped="running", cpu=time.process_time() - started_cpu)
    return _write_truth(args, rows, evaluators, stopped, time.process_time() - started_cpu, show=True)


def _write_truth(args, rows: list[dict], evaluators: dict, stopped: str, cpu: float, show: bool = False) -> dict:
    summary = {}
    if show:
        print(f"{'evaluator':<60}{'phase':<10}{'bias ± 95%':>13}{'RMSE':>8}{'rel. MAE':>10}  |  loss: "
              f"{'bias ± 95%':>13}{'MAE':>7}{'RMSE':>7}{'≤95%':>7}  (RMSE without the rollouts' noise)")
    for label in evaluators:
        for phase in (*PHASES, "all"):
            sel = [r for r in rows if phase in ("all", r["phase"])]
            if not sel:
                continue
            err = np.concatenate([r[label]["error"] for r in sel])
            rel = np.concatenate([r[label]["relative_error"] for r in sel])
            half = float(np.mean([r["truth_half_width"] for r in sel]))
            noise = float(np.mean(np.concatenate([r["truth_variance"] for r in sel])))
            # the rollouts' own noise taken out of the mean squared error: the evaluator's error alone
            rmse = float(np.sqrt(max(np.mean(err**2) - noise, 0.0)))
            bias_half = 1.96 * err.std(ddof=1) / np.sqrt(len(err)) if len(err) > 1 else float("nan")
            loss = loss_accuracy(sel, label)
            summary[f"{label}/{phase}"] = {"bias": float(err.mean()), "bias_half_width": float(bias_half),
                                           "rmse_without_noise": rmse, "mae": float(np.abs(err).mean()),
                                           "relative_mae": float(np.abs(rel).mean()), "choices": len(err),
                                           "positions": len(sel), "truth_half_width": half, "loss": loss}
            if show:
                text = (f"{label:<60}{phase:<10}{err.mean():>+7.2f}±{bias_half:<5.2f}{rmse:>8.2f}"
                        f"{np.abs(rel).mean():>10.2f}  |  ")
                if loss["positions"]:
                    text += (f"{loss['bias']:>+7.2f}±{loss['bias_half_width']:<5.2f}{loss['mae']:>7.2f}"
                             f"{loss['rmse_without_noise']:>7.2f}{loss['rmse_upper95']:>7.2f}")
                print(text + f"  (truth ± {half:.2f}, {len(sel)} positions, {len(err)} choices)")
    weight = float(getattr(next(iter(evaluators.values())), "others_weight", lambda: 1.0)())
    out = {"args": {k: v for k, v in vars(args).items() if k != "func"}, "others_weight": weight, "stopped": stopped,
           "cpu_seconds": round(cpu, 1), "summary": summary, "rows": rows}
    default = next((label for label in evaluators if label.startswith("analyze default (")), None)
    if default is not None and rows:
        out["measured_accuracy"] = {default[len("analyze default ("):-1]: accuracy_entry(args, summary, default,
                                                                                      stopped, cpu, weight)}
        if show:
            print("judge.MEASURED_ACCURACY entry:\n" + json.dumps(out["measured_accuracy"], indent=1))
    if args.out:
        tmp = Path(args.out).with_suffix(".tmp")
        tmp.write_text(json.dumps(out, indent=1))
        tmp.replace(args.out)
    return out


def accuracy_entry(args, summary: dict, label: str, stopped: str, cpu: float, weight: float = 1.0) -> dict:
    """``midnight analyze``'s record of an evaluator's measured accuracy (judge.MEASURED_ACCURACY):
    per stage the loss's error (the upper 95 % bound of its RMSE, the rollouts' noise taken out),
    that RMSE, the loss's bias and mean absolute error, the rollouts' own noise, the counts."""
    command = (f"python experiments/placement_values.py truth --variant {args.variant} --players {args.players} "
               f"--positions {args.positions} --rollouts {args.rollouts} --source-games {args.source_games} "
               f"--seed {args.seed}" + (f" --max-cpu-seconds {args.max_cpu_seconds:g}" if args.max_cpu_seconds else ""))
    stages = {}
    for phase in PHASES:
        figures = summary.get(f"{label}/{phase}")
        if figures is None or not figures["loss"]["positions"]:
            continue
        loss = figures["loss"]
        stages[phase] = {"loss_error": round(loss["rmse_upper95"], 3),
                         "loss_rmse": round(loss["rmse_without_noise"], 3),
                         "loss_bias": round(loss["bias"], 3), "loss_bias_half_width": round(loss["bias_half_width"], 3),
                         "loss_mae": round(loss["mae"], 3), "noise_rms": round(loss["noise_rms"], 3),
                         "value_bias": round(figures["bias"], 3),
                         "value_bias_half_width": round(figures["bias_half_width"], 3),
                         "positions": loss["positions"], "pairs": loss["pairs"]}
    objective = "margin" if weight == 1 else f"minus own final points, others weighted {weight:g}"
    return {"command": command, "objective": objective, "rollouts": args.rollouts, "source_games": args.source_games,
            "cpu_seconds": round(cpu), "stopped": stopped, "stages": stages}


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    f = sub.add_parser("fit")
    f.add_argument("--variant", default="midnight_party")
    f.add_argument("--players", type=int, default=2)
    f.add_argument("--games", type=int, default=40000)
    f.add_argument("--batch", type=int, default=2000)
    f.add_argument("--epochs", type=int, default=6)
    f.add_argument("--lr", type=float, default=1e-4)
    f.add_argument("--minibatch", type=int, default=1024)
    f.add_argument("--seed", type=int, default=1)
    f.add_argument("--out", required=True)
    c = sub.add_parser("check")
    c.add_argument("--variant", default="midnight_party")
    c.add_argument("--players", type=int, default=2)
    c.add_argument("--placement", default=None)
    c.add_argument("--games", type=int, default=200)
    c.add_argument("--seed", type=int, default=11)
    t = sub.add_parser("truth")
    t.add_argument("--variant", default="midnight_party")
    t.add_argument("--players", type=int, default=2)
    t.add_argument("--placement", default=None)
    t.add_argument("--budget", type=int, default=0, help="also the champion's search with this budget")
    t.add_argument("--positions", type=int, default=30, help="positions per phase")
    t.add_argument("--rollouts", type=int, default=100, help="rollouts per legal choice")
    t.add_argument("--source-games", type=int, default=40)
    t.add_argument("--seed", type=int, default=3)
    t.add_argument("--max-cpu-seconds", type=float, default=None, help="stop taking positions after this much CPU")
    t.add_argument("--out", default=None)
    args = p.parse_args(argv)
    {"fit": fit, "check": check, "truth": truth}[args.command](args)


if __name__ == "__main__":
    main()
