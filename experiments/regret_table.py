"""docs/RESEARCH.md, "Regret against the optimum" (and its figures); LEADERBOARD.md, "Regret on the solved set-ups".

How far is every agent from optimal play? Regret on the set-ups ``midnight solve`` solves exactly.

For each set-up the script solves it (``midnight_env.solve``), then for each agent at seat 0
computes its expected final result exactly on the solved state graph
(``midnight_env.solve.policy``: the agent is asked for its choice at every decision state; the
other seat of a two-player game plays a best response to it) and the regret: how much worse than
the optimum for seat 0 (solo: expected spooky points above the optimum; two players: points of
difference, or chance to win, below the game's value).

Which numbers are exact: the policy evaluation is exact for an agent whose choice depends on
the position alone, its random draw only breaking ties between equally scored choices (the tie
becomes the uniform mixture over them, as in play): ``random`` (all legal choices tied),
``runner``, ``coward``, ``green_hunter``, ``placer``, ``expert``, a ``ppo:path=…`` model played
greedily (the best legal logit; no draw at all), a ``value:path=…`` network playing one ply (the
legal choice whose afterstate it values most; ``budget=0``) and ``optimal``: their code draws from
the game's random stream only in ``pick_best`` / ``random_choice`` among tied or legal choices.
``search`` also uses its draw to sample dice inside its tree (common random numbers), so its
policy is a mixture over draws that the graph's tie treatment does not reproduce (on
solo-mp-r1-g1 it gave a regret of 0.95 where play gives 1.86 ± 0.15): it is played instead,
``--games`` games, with a 95 % interval. Games played in two-player set-ups pit the agent against
the solution's optimal (minimax) play, which exploits it less than the best response of the
exact rows: a regret by play there is a lower bound of the regret against a best response.

A ``value:path=…,budget=N`` network inside that search is played too, unless ``--exact-search``:
then it is evaluated on the graph like the one-ply agents (how: "on the graph (search)"). That
is exact where its search samples no dice, as in a solo set-up whose budget covers every own roll
it searches (one own turn in hidden_castle by default; ``turns=2`` needs a larger budget): its
draw then only breaks ties, and its share of tied decisions stays at the one-ply network's.
Where the search samples dice, the draws decide at many more decisions (solo-mp-r1-g2 at budget
1,500 with two turns: 9.8 % against 0.4 %) and the graph's value is not the play's
(``--play-all`` plays it beside).

    python experiments/regret_table.py                            # the default set-ups and agents
    python experiments/regret_table.py --setups solo-mp-r1-g2 --agents expert,search --games 2000
    python experiments/regret_table.py --runs runs/ppo-solo-midnight_party-1p-r1-g2-s1 \
        runs/value-solo-midnight_party-1p-r1-g2-s1 --plot docs/regret_vs_steps.png
                                                                  # every checkpoint of trained runs

Prints a markdown table (``--out FILE`` writes it too); ``--runs`` adds one row per checkpoint of
each training run, native PPO (``midnight train``) or afterstate values (``midnight train --algo
value``), its set-up read from the run's config.yaml, and ``--plot`` draws regret against env
steps.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from midnight_env.arena.registry import make_agent, split_specs
from midnight_env.solve.policy import POLICY_BATCH, agent_policy, evaluate_policy, play_values, solution_agent
from midnight_env.solve.setups import SET_UPS
from midnight_env.solve.solution import seat_modes, solve
from midnight_env.solve.values import MAXIMISE


@dataclass(frozen=True)
class SetUp:
    name: str
    variant: str
    players: int
    objective: str
    options: tuple  # (name, value) pairs

    def command(self) -> str:
        sets = " ".join(f"--set {k}={v}" for k, v in self.options)
        variant = "" if self.variant == "midnight_party" else f" --variant {self.variant}"
        objective = "" if self.objective == "points" else f" --objective {self.objective}"
        return f"midnight solve{variant} --players {self.players} {sets}{objective}"


# the set-ups reported here, from the library's table; commands name rounds first, as RESEARCH.md
SETUPS = {name: SetUp(name, s.variant, s.players, s.objective, tuple(sorted(s.options.items(), reverse=True)))
          for name, s in SET_UPS.items() if name in (
              "solo-mp-r1-g1", "solo-mp-r1-g2", "solo-mp-r1-g3", "solo-mp-r1-g4", "solo-mp-r3-g1", "solo-mp-r3-g2",
              "solo-hc-g1", "solo-hc-g2", "duo-mp-r1-g1-win", "duo-mp-r1-g1-points", "duo-mp-r3-g1-win",
              "duo-mp-r3-g1-points")}
DEFAULT_SETUPS = ["solo-mp-r1-g1", "solo-mp-r1-g2", "solo-mp-r1-g3", "solo-mp-r3-g1", "solo-mp-r3-g2",
                  "solo-hc-g1", "duo-mp-r1-g1-win", "duo-mp-r1-g1-points"]
DEFAULT_AGENTS = "random,runner,coward,green_hunter,placer,expert,search,search:budget=6000"
SEARCH_BATCH = 1024  # decision states per call for a searching agent: 16,384 trees of 20,000 overflow 24 GiB
# agents whose random draw only breaks ties (module docstring): their graph evaluation is exact
TIE_BREAKING_ONLY = {"random", "runner", "coward", "green_hunter", "placer", "expert", "optimal"}


def searches(spec: str) -> bool:
    """A value agent with a budget: the network inside the search of `search`."""
    name, _, params = spec.partition(":")
    params = params.replace(" ", "").lower()
    return name == "value" and any(p.startswith("budget=") and p != "budget=0" for p in re.split("[,:]", params))


def exact_on_graph(spec: str, exact_search: bool = False) -> bool:
    name, _, params = spec.partition(":")
    params = params.replace(" ", "").lower()
    if name == "ppo":
        return "sample=true" not in params
    if name == "value":  # one ply; inside the search it may sample dice as `search` does (--exact-search)
        return exact_search or not searches(spec)
    return name in TIE_BREAKING_ONLY


@dataclass
class Row:
    setup: str
    agent: str
    optimum: float
    value: float
    regret: float
    exact: bool
    tied: float  # share of decisions where the draw chose among tied choices
    played: tuple[float, float] | None  # (mean, 95 % half-width) of the result by play
    played_regret: tuple[float, float] | None
    seconds: float
    steps: int | None = None  # env steps of a trained run's checkpoint
    minimax_regret: float = float("nan")  # two players: exact regret with seat 1 playing the solution's optimum


def regret_rows(setup: SetUp, specs: list[str], games: int, seed: int, solution=None,
                steps: dict[str, int] | None = None, play_all: bool = False,
                exact_search: bool = False) -> list[Row]:
    """One row per agent spec on one set-up (solved here unless ``solution`` is given): exactly on
    the graph where the agent allows it, else (and with ``play_all`` too) by ``games`` games.
    ``exact_search``: value agents with a budget on the graph too (see ``--exact-search``)."""
    if solution is None:
        solution = solve(setup.variant, setup.players, setup.objective, **dict(setup.options))
    optimum = solution.value
    sign = -1.0 if seat_modes(setup.players, setup.objective)[0] == MAXIMISE else 1.0  # regret = sign * (v - opt)
    duo = setup.players == 2
    optimal_seat1 = agent_policy(solution, solution_agent(solution), seats=[1]) if duo else None
    rows = []
    for spec in specs:
        start = time.process_time()
        agent = make_agent(spec)
        exact = exact_on_graph(spec, exact_search)
        value, tied, played, minimax = float("nan"), float("nan"), None, float("nan")
        if exact:  # a search's trees are large: fewer decision states at a time
            batch = SEARCH_BATCH if searches(spec) else POLICY_BATCH
            policy = agent_policy(solution, agent, seats=[0], batch=batch)
            value = evaluate_policy(solution, policy).value
            tied = policy.tied / max(policy.decisions, 1)
            if duo:
                minimax = sign * (evaluate_policy(solution, [policy, optimal_seat1]).value - optimum)
        if games > 0 and (not exact or play_all):
            lineup = [agent] if not duo else [agent, solution_agent(solution)]
            played = play_values(solution, lineup, games, seed)
        if not exact and played is None:
            raise ValueError(f"{spec!r} is not evaluated exactly on the graph: give --games to play it")
        played_regret = (sign * (played[0] - optimum), played[1]) if played else None
        if exact:
            regret = sign * (value - optimum)
        else:  # solo: play gives the regret; two players: only against the minimax seat 1
            regret = played_regret[0] if not duo else float("nan")
            value = played[0] if not duo else float("nan")
        rows.append(Row(setup.name, spec, optimum, value, regret, exact, tied, played, played_regret,
                        time.process_time() - start, (steps or {}).get(spec), minimax))
    return rows


def mistake_kinds(setup: SetUp, specs: list[str], solution=None) -> str:
    """Where each agent's choice is worse than optimal (by more than 1e-9 in value), over every
    decision state of the graph (not weighted by how often play reaches it; ties at draw 0):
    how many, and which kind of choice the optimum makes there and which the agent makes."""
    from collections import Counter

    from midnight_env.core.state import MOVE, PLACE
    from midnight_env.solve.policy import FixedDraws

    if solution is None:
        solution = solve(setup.variant, setup.players, setup.objective, **dict(setup.options))
    g, engine = solution.graph, solution.engine
    ids = np.flatnonzero(((g.phases == PLACE) | (g.phases == MOVE)) & (g.players == 0))
    state = solution.positions(ids)
    q = solution.action_values(state)
    sign = -1.0 if seat_modes(setup.players, setup.objective)[0] == MAXIMISE else 1.0
    best = solution.best[ids].astype(np.int64)
    kind = engine.layout.choice_kind

    lines = [f"{setup.name}: {len(ids):,} decision states of seat 0"]
    for spec in specs:
        acts = make_agent(spec).act(FixedDraws(engine, state, np.arange(len(ids)), np.zeros(len(ids), np.uint64),
                                               draws=np.zeros(len(ids))))
        gap = sign * (q[np.arange(len(ids)), acts] - q[np.arange(len(ids)), best])
        wrong = gap > 1e-9
        kinds = Counter((kind(o), kind(a)) for o, a in zip(best[wrong], acts[wrong])).most_common(4)
        lines.append(f"  {spec}: worse than optimal at {wrong.sum():,}; optimum / agent: "
                     + ", ".join(f"{o} / {a} {n:,}" for (o, a), n in kinds))
    return "\n".join(lines)


def markdown(rows: list[Row], setups: dict[str, SetUp]) -> str:
    out = []
    by_setup: dict[str, list[Row]] = {}
    for r in rows:
        by_setup.setdefault(r.setup, []).append(r)
    for name, group in by_setup.items():
        s = setups[name]
        duo = s.players == 2
        unit = {"win": "chance to win (a tie 1/2)", "points": "points"}[s.objective]
        what = ("expected final spooky points (fewer is better)" if not duo else
                f"seat 0's {'points minus seat 1 (fewer is better)' if s.objective == 'points' else unit}")
        out.append(f"**{name}** (`{s.command()}`): optimum {group[0].optimum:.4f}, {what}\n")
        played = any(r.played and r.exact for r in group)
        if duo:
            head = ("| agent | value, seat 1 a best response | regret | regret, seat 1 the minimax optimum | how | "
                    "ties |")
        else:
            head = "| agent | value | regret | how | ties |" + (" regret by play ± 95 % |" if played else "")
        out.append(head)
        out.append("|" + "---|" * (head.count("|") - 1))
        for r in group:
            if r.exact:
                cells = [f"{r.value:.4f}", f"{r.regret:.4f}"] + ([f"{r.minimax_regret:.4f}"] if duo else [])
                # a search on the graph is exact only if it sampled no dice: its ties column says (docstring)
                cells += ["on the graph (search)" if searches(r.agent) else "exact", f"{r.tied:.1%}"]
                if played and not duo:
                    cells.append(f"{r.played_regret[0]:.3f} ± {r.played_regret[1]:.3f}" if r.played else "")
            else:
                band = f"{r.played_regret[0]:.3f} ± {r.played_regret[1]:.3f}"
                cells = (["", "", band] if duo else [f"{r.value:.3f} ± {r.played[1]:.3f}", band])
                cells += ["by play", ""]
            out.append(f"| {r.agent} | " + " | ".join(cells) + " |")
        out.append("")
    return "\n".join(out)


def run_checkpoints(run: Path) -> tuple[SetUp, str, list[tuple[int, str]]]:
    """The set-up of a training run folder (its config.yaml), its kind (``ppo`` or ``value``, from
    its checkpoints' metadata) and its checkpoints (steps, agent spec)."""
    import yaml

    config = yaml.safe_load((run / "config.yaml").read_text())
    # options given on the command line arrive as strings ("rounds=1"): the engine wants numbers
    options = tuple(sorted((k, int(v) if isinstance(v, str) and v.isdigit() else v)
                           for k, v in (config.get("options") or {}).items()))
    setup = SetUp(run.name, config["variant"], int(config["num_players"]), "points", options)
    models = sorted((run / "checkpoints").glob("step*.npz"))
    final = run / "model.npz"  # the model at the run's end, where it ended between checkpoints
    if final.exists():
        models.append(final)
    if not models:
        raise FileNotFoundError(f"run folder {run} has no checkpoints/step*.npz and no model.npz")
    found = {}
    for path in models:
        training = json.loads(path.with_suffix(".json").read_text()).get("training", {})
        kind = "value" if training.get("algorithm") == "value_iteration" else "ppo"
        step = re.fullmatch(r"step(\d+)", path.stem)
        # the agent plays greedily: the best legal logit, or one ply of the value network
        found.setdefault(int(step.group(1)) if step else int(training["env_steps"]), f"{kind}:path={path}")
    return setup, kind, sorted(found.items())


def plot(curves: dict[str, list[tuple[int, float]]], path: str, references: dict[str, dict[str, float]]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.8))
    drawn = set()  # a reference agent on a set-up that several runs share: one line
    for (name, points), colour in zip(curves.items(), plt.rcParams["axes.prop_cycle"].by_key()["color"]):
        steps, regrets = zip(*points)
        short = name.replace("-solo-", " ").replace("ppo", "PPO").replace("-1p", "").removesuffix("-s1")
        ax.plot(steps, np.maximum(regrets, 1e-4), marker="o", ms=3, label=short, color=colour)
        for agent, regret in references.get(name, {}).items():
            if (agent, round(regret, 9)) in drawn:
                continue
            drawn.add((agent, round(regret, 9)))
            ax.axhline(regret, ls=":", lw=1, color=colour)
            ax.annotate(f"{agent} {regret:.2f}", (0, regret), xycoords=("axes fraction", "data"), fontsize=7,
                        color=colour, ha="left", va="bottom")
    ax.axhline(0.05, ls="--", lw=1, color="grey")
    ax.annotate("aim 0.05", (0, 0.05), xycoords=("axes fraction", "data"), fontsize=7, color="grey", va="bottom")
    ax.set_yscale("log")
    ax.set_xlabel("env steps (decisions)")
    ax.set_ylabel("regret: expected points above the optimum")
    ax.set_title("Trained agents on solved solo set-ups: exact regret of greedy play")
    ax.legend(fontsize=7, loc="center right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--setups", help=f"comma-separated, of {', '.join(SETUPS)} (default: "
                   f"{','.join(DEFAULT_SETUPS)}; none with --runs)")
    p.add_argument("--agents", default=DEFAULT_AGENTS, help="agent specs, comma-separated")
    p.add_argument("--games", type=int, default=1000,
                   help="games played by each agent not evaluated exactly on the graph (search), 95 %% interval")
    p.add_argument("--play-all", action="store_true", help="play --games games with the exact agents too")
    p.add_argument("--exact-search", action="store_true",
                   help="evaluate value agents with a budget on the graph too: exact where their search samples "
                        "no dice (solo, a budget that covers every own roll searched; where it samples, its ties "
                        "share jumps above the one-ply network's), with --play-all checked by play")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--runs", "--ppo-runs", nargs="*", default=[], dest="runs",
                   help="training run folders (native PPO or value): every checkpoint's regret")
    p.add_argument("--references", default="expert,search",
                   help="with --plot: agents drawn as dotted lines on each run's set-up")
    p.add_argument("--plot", help="with --runs: draw regret against env steps into this PNG")
    p.add_argument("--out", help="also write the markdown here")
    p.add_argument("--mistakes", action="store_true",
                   help="instead of the table: where each agent's choices differ from the optimum, by kind")
    a = p.parse_args(argv)
    setups = dict(SETUPS)
    rows: list[Row] = []
    if a.setups is None:
        a.setups = "" if a.runs else ",".join(DEFAULT_SETUPS)
    names = split_specs(a.setups) if a.setups else []
    for name in names:
        if name not in SETUPS:
            print(f"--setups {name!r} is not allowed: allowed are {', '.join(SETUPS)}", file=sys.stderr)
            return 2
    specs = split_specs(a.agents) if a.agents else []
    if a.mistakes:
        for name in names:
            print(mistake_kinds(SETUPS[name], specs))
        return 0
    for name in names:
        rows += regret_rows(SETUPS[name], specs, a.games, a.seed, play_all=a.play_all, exact_search=a.exact_search)
        print(f"{name}: done ({sum(r.seconds for r in rows if r.setup == name):.0f} CPU-s)", file=sys.stderr)
    curves, references = {}, {}
    for run in a.runs:
        setup, kind, checkpoints = run_checkpoints(Path(run))
        setups[setup.name] = setup
        solution = solve(setup.variant, setup.players, setup.objective, **dict(setup.options))
        refs = split_specs(a.references) if a.references else []
        ref_rows = regret_rows(setup, refs, a.games, a.seed, solution, exact_search=a.exact_search)
        references[setup.name] = {r.agent: r.regret for r in ref_rows}
        specs_run = [spec for _, spec in checkpoints]
        run_rows = regret_rows(setup, specs_run, a.games, a.seed, solution,
                               steps={spec: step for step, spec in checkpoints})
        for r in run_rows:
            r.agent = f"{kind} step {r.steps:,}"
        rows += ref_rows + run_rows
        curves[setup.name] = [(r.steps, r.regret) for r in run_rows]
    text = markdown(rows, setups)
    print(text)
    if a.out:
        Path(a.out).write_text(text + "\n")
    if a.plot and curves:
        plot(curves, a.plot, references)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
