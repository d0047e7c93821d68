"""A placement book for the real set-ups (issue 41, item 2): the value of each square for the first guest.

For a set-up (variant, players, rule options) the first guest of seat 0 is forced onto each legal
gallery square in turn and the champion (``value-<variant>-<N>p``, one ply) plays every other
decision of every seat to the end. A rollout's result is seat 0's **margin**: the others' mean final
spooky points minus its own (higher is better: fewest points win). The rollouts are **paired**:
rollout k of every square plays game seed k (the same dice and agent streams), so the differences
between squares are measured closely. Each square's value comes with its 95 % normal interval over
its rollouts, the best square's lead over the runner-up with the paired interval of the difference.

**Successive halving**: round 1 gives every square ``--k0`` rollouts; the better half (by mean,
rounded up) goes on and the rollouts per square double (rollouts are kept: a square at round r has
``k0 * 2**(r-1)``, seeds 0 upwards), until a round has held one or two squares or the budget
(``--max-games``, ``--max-cpu-seconds``) would be passed by the next round.

**Resumable**: every round is written to ``OUT/progress.json`` (temp file + os.replace) as it ends;
a rerun with the same request continues from the last round written (the budget is not part of the
request: raise it to go on); another request in the same folder is refused in one line.

**Validation** (``validate``): on solved two-player set-ups, one guest each (midnight_party's real
board with one round; hidden_castle on the six-square tiny boards of ``midnight_env.solve.setups``:
its real board is 0.9 billion positions) the same method, with exact optimal play
(``midnight_env.solve``) as the "champion", against the exact value of every first placement
(``optimal_play.placement_values``, whose objective ``points`` is seat 0's points minus seat 1's: the
margin is its negative).

    python experiments/placement_book.py validate --k0 10000 --out runs/book/validate --book docs/placement_book.json \\
        --set-ups duo-mp-r1-g1-points,duo-hc-tinyplain-g1-points,duo-hc-tiny-g1-points
    python experiments/placement_book.py run --variant midnight_party --players 2 --k0 450 --max-cpu-seconds 330 \\
        --out runs/book/midnight_party-2p --book docs/placement_book.json --figures docs
    python experiments/placement_book.py table --book docs/placement_book.json    # the book as markdown

``--book`` merges the set-up's entry (values, rollouts, intervals, best square, the runner-up
difference, rollouts per CPU second, CPU seconds, the command) into one JSON file; ``--figures DIR``
draws ``placement_book_<variant>_<N>p.png`` there: a heat map of the squares' values.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import time
from pathlib import Path

import numpy as np

from midnight_env.arena.agent import Decisions
from midnight_env.core.dice import agent_streams
from midnight_env.core.engine import Engine
from midnight_env.core.state import MOVE, PLACE

Z95 = 1.96
SEED_STRIDE = 10**7  # game seed of rollout k: seed * SEED_STRIDE + k
CHUNK = 4096  # games played at once
FORMAT = "placement_book/1"


class Refused(Exception):
    """Bad input, reported in one line (exit 2)."""


# -- the champion ---------------------------------------------------------------------------------

def champions() -> dict[str, list[int]]:
    """The shipped champions by variant: player counts with a ``value-<variant>-<N>p`` agent."""
    from midnight_env.arena.registry import list_agents

    out: dict[str, list[int]] = {}
    for name, _ in list_agents():
        parts = name.split("-")
        if len(parts) == 3 and parts[0] == "value" and parts[2].endswith("p") and parts[2][:-1].isdigit():
            out.setdefault(parts[1], []).append(int(parts[2][:-1]))
    return {v: sorted(n) for v, n in sorted(out.items())}


def champion_name(variant: str, players: int) -> str:
    known = champions()
    if players not in known.get(variant, []):
        allowed = "; ".join(f"{v} with {', '.join(map(str, n))} players" for v, n in known.items())
        raise Refused(f"no champion for variant {variant!r} with {players} players (value-{variant}-{players}p): "
                      f"allowed are {allowed}")
    return f"value-{variant}-{players}p"


# -- rollouts ---------------------------------------------------------------------------------------

def play_margins(engine: Engine, agent, squares: np.ndarray, seeds: np.ndarray) -> np.ndarray:
    """(len(squares), len(seeds)) seat 0's margins: game seed ``seeds[k]`` with seat 0's first guest
    forced onto ``squares[i]``, ``agent`` playing everything else."""
    squares = np.asarray(squares, np.int64)
    seeds = np.asarray(seeds, np.int64)
    out = np.empty((len(squares), len(seeds)))
    flat_sq = np.repeat(squares, len(seeds))
    flat_seed = np.tile(seeds, len(squares))
    flat_out = out.reshape(-1)
    n = engine.num_players
    for lo in range(0, len(flat_sq), CHUNK):
        sq, sd = flat_sq[lo:lo + CHUNK], flat_seed[lo:lo + CHUNK]
        state = engine.new_games(sd)
        streams = agent_streams(sd)
        if not ((state.phase == PLACE) & (state.player == 0)).all():
            raise RuntimeError("the game does not open with seat 0's placement")
        actions = np.array([engine.layout.place(int(s)) for s in sq], np.int64)
        if not state.legal[np.arange(len(sq)), actions].all():
            raise RuntimeError("a forced square is not legal")
        engine.step(state, actions)
        while True:
            deciding = np.flatnonzero((state.phase == PLACE) | (state.phase == MOVE))
            if not len(deciding):
                break
            chosen = np.full(state.batch_size, -1, np.int64)
            chosen[deciding] = agent.act(Decisions(engine, state, deciding, streams, sd))
            engine.step(state, chosen, check=False)
        points = state.spooky.astype(np.float64)
        others = (points.sum(axis=1) - points[:, 0]) / max(n - 1, 1)
        flat_out[lo:lo + len(sq)] = others - points[:, 0]
    return out


def legal_first_squares(engine: Engine) -> list[int]:
    state = engine.new_games([0])
    return [s for s in range(engine.rules.num_squares) if state.legal[0, engine.layout.place(s)]]


# -- the folder -------------------------------------------------------------------------------------

def write_json(path: Path, data) -> None:
    """Atomic: a temp file beside ``path``, then os.replace."""
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    tmp.write_text(json.dumps(data, indent=1))
    os.replace(tmp, path)


def open_folder(out: Path, request: dict) -> dict:
    """The progress in ``out`` (a fresh one if none); Refused when it holds another request."""
    path = out / "progress.json"
    if out.exists() and not out.is_dir():
        raise Refused(f"output folder {out} is a file, not a folder")
    if path.exists():
        try:
            progress = json.loads(path.read_text())
            held = progress["request"]
        except (ValueError, KeyError, TypeError):
            raise Refused(f"output folder {out} holds an unreadable progress.json: give another folder") from None
        if held != request:
            keys = sorted(set(held) | set(request), key=str)
            diff = ", ".join(f"{k} {held.get(k)!r} there, {request.get(k)!r} here" for k in keys
                             if held.get(k) != request.get(k))
            raise Refused(f"output folder {out} holds another request ({diff}): give another folder")
        return progress
    out.mkdir(parents=True, exist_ok=True)
    return {"format": FORMAT, "request": request, "rounds": []}


# -- successive halving -----------------------------------------------------------------------------

def margins_of(progress: dict) -> dict[int, np.ndarray]:
    """Every square's rollouts so far, in seed order."""
    got: dict[int, list[float]] = {}
    for r in progress["rounds"]:
        for s, m in r["margins"].items():
            got.setdefault(int(s), []).extend(m)
    return {s: np.array(m) for s, m in got.items()}


def halving(engine: Engine, agent, out: Path, request: dict, max_games: int | None = None,
            max_cpu_seconds: float | None = None, log=print) -> dict:
    """Run (or go on with) successive halving in ``out``; returns the summary (:func:`summary`) with
    ``games_now``: the games this call played."""
    progress = open_folder(out, request)
    k0, seed = request["k0"], request["seed"]
    squares = legal_first_squares(engine)
    games_now = 0
    while True:
        rounds = progress["rounds"]
        if rounds and len(rounds[-1]["squares"]) <= 2:
            progress["stopped"] = "done: the last round held two squares or fewer"
            break
        alive = rounds[-1]["after"] if rounds else squares
        target = k0 * 2 ** len(rounds)
        have = k0 * 2 ** (len(rounds) - 1) if rounds else 0
        games = len(alive) * (target - have)
        spent_games = sum(r["games"] for r in rounds)
        spent_cpu = sum(r["cpu_s"] for r in rounds)
        if max_games is not None and spent_games + games > max_games:
            progress["stopped"] = f"budget: {spent_games} games played, the next round needs {games} more"
            break
        if max_cpu_seconds is not None and rounds:
            rate = spent_games / max(spent_cpu, 1e-9)
            if spent_cpu + games / rate > max_cpu_seconds:
                progress["stopped"] = (f"budget: {spent_cpu:.0f} CPU s spent, the next round needs about "
                                       f"{games / rate:.0f} more")
                break
        cpu, wall = time.process_time(), time.perf_counter()
        seeds = seed * SEED_STRIDE + np.arange(have, target)
        m = play_margins(engine, agent, np.array(alive), seeds)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        games_now += games
        new = {str(s): [round(float(x), 6) for x in m[i]] for i, s in enumerate(alive)}
        progress["rounds"].append({"round": len(rounds) + 1, "squares": list(alive), "rollouts": target,
                                   "games": games, "cpu_s": round(cpu, 2), "wall_s": round(wall, 2),
                                   "margins": new, "after": []})
        totals = margins_of(progress)
        means = {s: float(totals[s].mean()) for s in alive}
        ranked = sorted(alive, key=lambda s: (-means[s], s))
        progress["rounds"][-1]["after"] = ranked[: -(-len(alive) // 2)] if len(alive) > 2 else ranked
        progress.pop("stopped", None)
        write_json(out / "progress.json", progress)
        log(f"round {len(rounds)}: {len(alive)} squares to {target} rollouts, {games} games in {cpu:.1f} CPU s "
            f"({games / max(cpu, 1e-9):.0f}/s); best so far {ranked[0]} ({means[ranked[0]]:+.3f})")
    write_json(out / "progress.json", progress)
    result = summary(progress, engine.rules.num_squares)
    result["games_now"] = games_now
    return result


def interval(x: np.ndarray) -> float:
    return float(Z95 * x.std(ddof=1) / np.sqrt(len(x))) if len(x) > 1 else float("nan")


def summary(progress: dict, num_squares: int) -> dict:
    """Each square's value (mean margin) ± its 95 % half-width and rollouts; the best square among
    the last round's and its paired difference to the runner-up; the range best to worst."""
    totals = margins_of(progress)
    values = [None] * num_squares
    halves = [None] * num_squares
    counts = [0] * num_squares
    for s, m in totals.items():
        values[s], halves[s], counts[s] = float(m.mean()), interval(m), len(m)
    rounds = progress["rounds"]
    out = {"values": values, "half_widths": halves, "rollouts": counts, "rounds": len(rounds),
           "games": sum(r["games"] for r in rounds), "cpu_s": round(sum(r["cpu_s"] for r in rounds), 1),
           "stopped": progress.get("stopped")}
    out["rollouts_per_cpu_s"] = round(out["games"] / out["cpu_s"], 1) if out["cpu_s"] else None
    if not rounds:
        return out
    last = rounds[-1]["after"] or rounds[-1]["squares"]
    best = last[0]
    out["best"] = best
    out["last_round_squares"] = last
    if len(last) > 1:
        runner = last[1]
        n = min(len(totals[best]), len(totals[runner]))
        d = totals[best][:n] - totals[runner][:n]
        out["runner_up"] = runner
        out["difference"] = {"mean": float(d.mean()), "half_width": interval(d), "rollouts": n,
                             "separated": bool(d.mean() - interval(d) > 0)}
    first = rounds[0]["squares"]
    r1 = {s: float(totals[s][: progress["request"]["k0"]].mean()) for s in first}
    worst = min(first, key=lambda s: (r1[s], s))
    top = max(first, key=lambda s: (r1[s], -s))
    out["range_round1"] = {"best": top, "worst": worst, "best_value": r1[top], "worst_value": r1[worst],
                           "spread": r1[top] - r1[worst], "rollouts": progress["request"]["k0"]}
    return out


# -- the book and its pictures ----------------------------------------------------------------------

def merge_book(path: Path, key: str, entry: dict) -> None:
    book = json.loads(path.read_text()) if path.exists() else {}
    book.setdefault("about", "issue 41 item 2: value of each first-guest square for seat 0 (the others' mean "
                    "final spooky points minus its own; higher is better), paired rollouts of the champion "
                    "with successive halving; intervals are 95 % normal half-widths. See "
                    "experiments/placement_book.py.")
    book[key] = entry
    path.parent.mkdir(parents=True, exist_ok=True)
    write_json(path, dict(sorted(book.items(), key=lambda kv: (kv[0] != "about", kv[0]))))


def draw(board, entry: dict, title: str, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from midnight_env.render.heatmap import placement_figure

    values = np.array([np.nan if v is None else v for v in entry["values"]])
    fig = placement_figure(board, [(title, values, (), False)], columns=1)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=130)
    plt.close(fig)


def setup_key(variant: str, players: int, options: dict) -> str:
    extra = "".join(f"_{k}{v}" for k, v in sorted(options.items()))
    return f"{variant}_{players}p{extra}"


def describe(result: dict) -> str:
    if "best" not in result:
        return "no round played"
    v, h = result["values"], result["half_widths"]
    b = result["best"]
    text = f"best square {b}: {v[b]:+.3f} ± {h[b]:.3f} ({result['rollouts'][b]} rollouts)"
    if "runner_up" in result:
        d = result["difference"]
        text += (f"; runner-up {result['runner_up']}: {v[result['runner_up']]:+.3f}; difference "
                 f"{d['mean']:+.3f} ± {d['half_width']:.3f} ({'separated' if d['separated'] else 'not separated'})")
    r = result["range_round1"]
    return text + f"; range (round 1) {r['best']} {r['best_value']:+.2f} to {r['worst']} {r['worst_value']:+.2f}"


# -- commands ---------------------------------------------------------------------------------------

def run(args) -> dict:
    from midnight_env.arena.registry import make_agent
    from midnight_env.commands.common import parse_set_options

    name = champion_name(args.variant, args.players)
    try:
        options = parse_set_options(args.set, args.variant)
        engine = Engine(args.variant, args.players, **options)
    except Exception as err:  # noqa: BLE001 - a bad option, in one line
        raise Refused(f"bad set-up: {err}") from None
    agent = make_agent(name)
    try:
        check = getattr(agent, "check_engine", None) or getattr(getattr(agent, "model", None), "check_engine", None)
        if check is not None:
            check(engine)
    except ValueError as err:
        raise Refused(f"the champion {name} cannot play this set-up: {str(err).splitlines()[0]}") from None
    request = {"variant": args.variant, "players": args.players, "options": options, "champion": name,
               "k0": args.k0, "seed": args.seed}
    result = halving(engine, agent, Path(args.out), request, args.max_games, args.max_cpu_seconds)
    print(describe(result))
    if args.book and "best" in result:
        key = setup_key(args.variant, args.players, options)
        entry = {**request, **result, "command": "python experiments/placement_book.py " + shlex.join(args.argv)}
        entry.pop("games_now")
        merge_book(Path(args.book), key, entry)
        if args.figures:
            words = f"{args.variant}, {args.players} players" + "".join(f", {k}={v}" for k, v in options.items())
            title = (f"{words}: seat 0's first guest\nmargin (others' mean points - own) with {name} after it\n"
                     f"best by halving: {result['best']}; {result['games']:,} games")
            draw(engine.config.board, entry, title, Path(args.figures) / f"placement_book_{key}.png")
    return result


VALIDATION = ("duo-mp-r1-g1-points", "duo-hc-tinyplain-g1-points", "duo-hc-tiny-g1-points")


def validation_setup(name: str):
    from midnight_env.solve.setups import SET_UPS, SetUp

    if name in SET_UPS:
        return SET_UPS[name]
    if name.endswith("-points") and name[: -len("points")] + "win" in SET_UPS:
        s = SET_UPS[name[: -len("points")] + "win"]
        return SetUp(s.variant, s.players, "points", s.options)
    raise Refused(f"unknown solved set-up {name!r}: allowed are {', '.join(VALIDATION)}")


def validate_one(name: str, k0: int, seed: int, out: Path, log=print) -> dict:
    from midnight_env.solve import solve
    from midnight_env.solve.optimal_play import placement_values
    from midnight_env.solve.policy import solution_agent

    setup = validation_setup(name)
    started = time.process_time()
    solution = solve(setup.config(), objective=setup.objective)
    solve_s = time.process_time() - started
    exact = -placement_values(solution)  # seat 0's points minus seat 1's: the margin is its negative
    request = {"solved": name, "champion": "optimal", "k0": k0, "seed": seed}
    result = halving(solution.engine, solution_agent(solution), out / name, request, log=log)
    legal = [s for s, v in enumerate(result["values"]) if v is not None]
    est = np.array([result["values"][s] for s in legal])
    half = np.array([result["half_widths"][s] for s in legal])
    ex = exact[legal]
    best_exact = float(np.nanmax(exact))
    ties = [int(s) for s in np.flatnonzero(np.abs(exact - best_exact) < 1e-9)]
    b = result["best"]
    report = {"set_up": name, "states": int(solution.num_states), "solve_cpu_s": round(solve_s, 1),
              "exact": [None if np.isnan(x) else float(x) for x in exact], "exact_best": ties,
              "method_best": b, "best_found": b in ties, "exact_gap_of_method_best": float(best_exact - exact[b]),
              "mean_abs_error": float(np.abs(est - ex).mean()), "mean_half_width": float(half.mean()),
              "covered": float(np.mean(np.abs(est - ex) <= half)), **result}
    # the method's resolution at the top: the paired interval of best minus runner-up
    resolution = result["difference"]["half_width"] if "difference" in result else float("nan")
    report["best_within_resolution"] = bool(best_exact - exact[b] <= resolution)
    report.pop("games_now")
    log(f"{name}: exact best {ties} ({best_exact:+.4f}), method best {b} ({'found' if b in ties else 'MISSED'}, exact "
        f"gap {best_exact - exact[b]:.4f}, resolution ± {resolution:.4f}); mean |error| "
        f"{report['mean_abs_error']:.4f} vs mean ± "
        f"{report['mean_half_width']:.4f} ({100 * report['covered']:.0f} % inside their intervals)")
    return report


def validate(args) -> list[dict]:
    reports = [validate_one(n, args.k0, args.seed, Path(args.out)) for n in args.set_ups.split(",")]
    if args.book:
        merge_book(Path(args.book), "validation", {
            "command": "python experiments/placement_book.py " + shlex.join(args.argv), "set_ups": reports})
    return reports


def table(args) -> str:
    """The book as markdown: a row per set-up, then the validation."""
    book = json.loads(Path(args.book).read_text())
    lines = ["| set-up | best square | its value ± 95 % | runner-up | best − runner-up (paired) | range in round 1 "
             "(best → worst) | games | rollouts / CPU s | CPU s |", "|---|---:|---:|---:|---:|---|---:|---:|---:|"]
    for key, e in book.items():
        if key in ("about", "validation") or "best" not in e:
            continue
        b, v, h = e["best"], e["values"], e["half_widths"]
        d = e.get("difference")
        diff = (f"{d['mean']:+.2f} ± {d['half_width']:.2f}{' (separated)' if d['separated'] else ''}"
                if d else "—")
        r = e["range_round1"]
        lines.append(f"| {key} | {b} | {v[b]:+.2f} ± {h[b]:.2f} ({e['rollouts'][b]:,}) | {e.get('runner_up', '—')} "
                     f"| {diff} | {r['best']} {r['best_value']:+.2f} → {r['worst']} {r['worst_value']:+.2f} "
                     f"| {e['games']:,} | {e['rollouts_per_cpu_s']:.0f} | {e['cpu_s']:.0f} |")
    if "validation" in book:
        lines += ["", "| solved set-up | exact best | method's best | exact gap | best − runner-up (paired) "
                  "| mean abs. error | mean ± 95 % | inside |", "|---|---|---:|---:|---:|---:|---:|---:|"]
        for rep in book["validation"]["set_ups"]:
            d = rep.get("difference") or {}
            lines.append(f"| {rep['set_up']} | {rep['exact_best']} | {rep['method_best']} | "
                         f"{rep['exact_gap_of_method_best']:.3f} | {d.get('mean', float('nan')):+.3f} ± "
                         f"{d.get('half_width', float('nan')):.3f} | {rep['mean_abs_error']:.3f} | "
                         f"{rep['mean_half_width']:.3f} | {100 * rep['covered']:.0f} % |")
    text = "\n".join(lines)
    print(text)
    return text


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="one set-up with its champion")
    r.add_argument("--variant", default="midnight_party")
    r.add_argument("--players", type=int, default=2)
    r.add_argument("--set", action="append", metavar="OPTION=VALUE", help="rule option (repeatable)")
    r.add_argument("--out", required=True, help="folder of the run's progress (resumable)")
    r.add_argument("--book", default=None, help="merge the result into this JSON file")
    r.add_argument("--figures", default=None, help="with --book: the heat map into this folder")
    v = sub.add_parser("validate", help="the method with exact play on solved set-ups, against the exact values")
    v.add_argument("--set-ups", default=",".join(VALIDATION[:2]))
    v.add_argument("--out", required=True)
    v.add_argument("--book", default=None)
    t = sub.add_parser("table", help="the book as markdown")
    t.add_argument("--book", default="docs/placement_book.json")
    for q in (r, v):
        q.add_argument("--k0", type=int, default=200, help="rollouts per square in round 1 (default 200)")
        q.add_argument("--seed", type=int, default=1)
    r.add_argument("--max-games", type=int, default=None)
    r.add_argument("--max-cpu-seconds", type=float, default=None)
    args = p.parse_args(argv)
    args.argv = argv
    try:
        if args.command == "table":
            table(args)
            return 0
        if args.k0 < 2:
            raise Refused(f"--k0 {args.k0} is out of range: allowed are 2 or more")
        (run if args.command == "run" else validate)(args)
    except Refused as err:
        print(f"placement_book: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
