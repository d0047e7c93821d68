"""``midnight solve``: exact optimal play of a small set-up, its value, and every agent's regret."""

from __future__ import annotations

import argparse
import json
import sys
import time

from midnight_env.arena.registry import split_specs
from midnight_env.commands.common import UsageError, add_game_arguments, check_count, parse_set_options
from midnight_env.infra.seeds import SEED_LIMIT, SEED_RANGE, check_seed
from midnight_env.solve.solution import OBJECTIVES, solution_folder, solution_name, solve


def add_parser(sub) -> None:
    p = sub.add_parser(
        "solve", help="solve a small set-up exactly: optimal value and play",
        description="Enumerate every position reachable from the start (placements included), iterate "
                    "values to convergence and report seat 0's optimum. Solo games (--players 1) minimise "
                    "seat 0's expected final spooky points; two players (--set guests_per_player=1 or 2) "
                    "are zero-sum: --objective win (seat 0's chance to win, a tie 1/2) or points (seat "
                    "0's points minus seat 1's). max_turns is ignored: games are solved to their end.")
    add_game_arguments(p, players_default=1)
    p.add_argument("--objective", default="points", help=f"{' or '.join(OBJECTIVES)} (default points)")
    p.add_argument("--out", metavar="DIR", help="save the solution (solution.npz + solution.json) into DIR")
    p.add_argument("--save", action="store_true",
                   help=f"save the solution into the solution folder, where the optimal agent finds it "
                        f"(MIDNIGHT_SOLUTIONS, now {solution_folder()})")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    p.add_argument("--check", action="store_true",
                   help="check transitions, real games' positions and the Bellman equation against the engine")
    p.add_argument("--regret", metavar="AGENTS",
                   help="agents to evaluate exactly on the solved graph at seat 0 (the other seat optimal), "
                        "comma-separated, e.g. random,runner,coward,expert")
    p.add_argument("--games", type=int, default=0,
                   help="with --regret: also play this many games per agent for a 95%% interval (default 0)")
    p.add_argument("--seed", type=int, default=0, help="with --games: game j is seeded SEED+j (default 0)")
    p.add_argument("--max-states", type=int,
                   help="stop with an error beyond this many states (default: what the memory available holds)")
    p.add_argument("--no-progress", action="store_true", help="no progress line on stderr")
    p.set_defaults(run=run)


def _progress(enabled: bool):
    if not enabled:
        return None
    last = [0.0]

    def show(stage: str, done: int, total: int) -> None:
        now = time.perf_counter()
        if now - last[0] >= 1.0:
            last[0] = now
            print(f"\rsolve: {total:,} states found, {done:,} expanded", end="", file=sys.stderr, flush=True)

    return show


def run(args: argparse.Namespace) -> int:
    options = parse_set_options(args.options, args.variant)
    if args.objective not in OBJECTIVES:
        raise UsageError(f"--objective {args.objective!r} is not allowed: allowed are {', '.join(OBJECTIVES)}")
    if args.max_states is not None:
        check_count("--max-states", args.max_states)
    check_count("--games", args.games, least=0)
    check_seed(args.seed, "--seed")
    if args.seed + args.games > SEED_LIMIT:
        raise UsageError(f"--seed {args.seed} with --games {args.games} seeds games up to "
                         f"{args.seed + args.games - 1}: allowed are game seeds {SEED_RANGE}")
    specs = split_specs(args.regret) if args.regret else []
    progress = _progress(not args.no_progress and not args.json and sys.stderr.isatty())
    solution = solve(args.variant, args.players, args.objective, max_states=args.max_states, progress=progress,
                     **options)
    if progress is not None:
        print(file=sys.stderr)
    meta = solution.meta
    saved = []
    if args.out:
        saved.append(str(solution.save(args.out)))
    if args.save:
        saved.append(str(solution.save(solution_folder() / solution_name(solution.config, solution.objective))))
    checks = {}
    if args.check:
        from midnight_env.solve.check import check_bellman, check_games, check_transitions

        checks = {"transitions": check_transitions(solution), "games": check_games(solution),
                  "bellman": check_bellman(solution)}
    rows = []
    if specs:
        from midnight_env.solve.policy import regret_table

        rows = regret_table(solution, specs, games=args.games, seed=args.seed)
    if args.json:
        out = {k: v for k, v in meta.items() if k not in ("key_layout", "format")}
        if saved:
            out["saved"] = saved
        if checks:
            out["checks"] = checks
        if rows:
            out["regret"] = [{"agent": r.agent, "value": r.value, "regret": r.regret, "decisions": r.decisions,
                              "tied": r.tied, **({"played": r.played[0], "played_95": r.played[1]}
                                                 if r.played else {})} for r in rows]
        print(json.dumps(out))
        return 0
    print_table(solution, saved, checks, rows)
    return 0


def print_table(solution, saved, checks, rows) -> None:
    meta = solution.meta
    mb = meta["memory_bytes"] / 2**20
    print(solution.describe())
    print(f"{'objective':<11}{meta['objective']}: {meta['value_means']}")
    print(f"{'value':<11}{meta['value']:.6f}")
    print(f"{'states':<11}{meta['states']:,} ({meta['decisions']:,} decisions), {meta['edges']:,} transitions, "
          f"{meta['components']:,} strongly connected components (largest {meta['largest_component']:,})")
    print(f"{'residual':<11}{meta['residual']:.2g} after {meta['sweeps']:.1f} sweeps per state "
          f"(at most {meta['most_sweeps']} in one component)")
    print(f"{'time':<11}{meta['seconds']:.1f} s (states {meta['seconds_states']:.1f} s, values "
          f"{meta['seconds_values']:.1f} s)")
    print(f"{'memory':<11}{mb:,.1f} MiB ({meta['memory_bytes'] / meta['states']:.0f} bytes per state)")
    print(f"{'max_turns':<11}{meta['max_turns']}")
    for path in saved:
        print(f"{'saved':<11}{path}")
    for name, result in checks.items():
        print(f"{'check':<11}{name}: " + ", ".join(f"{k} {v:,}" if isinstance(v, int) else f"{k} {v:.2g}"
                                                   for k, v in result.items()) + ": agree with the engine")
    if rows:
        played = any(r.played for r in rows)
        print()
        print(f"{'agent':<22}{'value':>10}{'regret':>10}{'ties':>12}" + (f"{'by play ± 95%':>20}" if played else ""))
        for r in rows:
            ties = "none" if r.tied == 0 else f"{r.tied / r.decisions:.1%}"
            line = f"{r.agent:<22}{r.value:>10.4f}{r.regret:>10.4f}{ties:>12}"
            if r.played:
                line += f"{r.played[0]:>12.3f} ± {r.played[1]:.3f}"
            print(line)
        print("ties: share of the agent's decisions where its random draw chose among tied choices "
              "(evaluated as the uniform mixture over them)")
