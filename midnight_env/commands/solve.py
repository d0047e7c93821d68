"""``midnight solve``: exact optimal play of a small set-up, its value, every agent's regret, and the
exact best response to an agent (``--best-response``)."""

from __future__ import annotations

import argparse
import json
import sys
import time

from midnight_env.arena.registry import split_specs
from midnight_env.commands.common import UsageError, add_game_arguments, check_count, parse_set_options
from midnight_env.infra import checks
from midnight_env.infra.seeds import SEED_LIMIT, SEED_RANGE, check_seed
from midnight_env.solve.graph import SolveError
from midnight_env.solve.solution import (
    OBJECTIVES,
    check_set_up,
    set_up_config,
    solution_folder,
    solution_name,
    solve,
    solver_engine,
)


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
    p.add_argument("--out", metavar="DIR",
                   help="save the solution (solution.npz + solution.json) into DIR; with --best-response the best "
                        "response instead (played by optimal:path=DIR in its seat)")
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
    p.add_argument("--best-response", metavar="AGENT",
                   help="two players: the exact best response of one seat (--seat) to AGENT in the other, AGENT's "
                        "own value there (AGENT in both seats) and the gain; --out DIR saves the best response")
    p.add_argument("--seat", type=int, default=0, help="with --best-response: the responder's seat (default 0)")
    p.add_argument("--responder", metavar="AGENT", action="append", default=[],
                   help="with --best-response: also the exact gain of AGENT in the responder's seat (a trained best "
                        "response, e.g. value:path=runs/exploit-.../model.npz): how much of the best gain it found, "
                        "without the noise of play; repeatable")
    p.add_argument("--max-states", type=int,
                   help="stop with an error beyond this many states (default: what the memory available holds); "
                        "with --layered, beyond this many in one layer")
    p.add_argument("--layered", action="store_true",
                   help="solve layer by layer (Hugo's progress, the guests placed or settled, the round: what the "
                        "game never takes back), one layer in memory and the rest on disk: set-ups beyond the "
                        "memory (the same values; --check, --regret and --best-response need the whole graph)")
    p.add_argument("--work-dir", metavar="DIR",
                   help="with --layered: keep the layers in DIR (a run stopped there resumes when started again "
                        "with the same DIR and set-up; default a temporary directory, deleted at the end). A "
                        "solved DIR is a solution: optimal:path=DIR reads its layers from disk, and --out/--save "
                        "of one beyond the memory write a solution.json naming DIR")
    p.add_argument("--time-limit", type=float, metavar="MINUTES",
                   help="with --layered: stop after the layer that passes this many minutes (resumable with "
                        "--work-dir)")
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
    checks.choice("--objective", args.objective, OBJECTIVES, error=UsageError)
    if args.max_states is not None:
        check_count("--max-states", args.max_states)
    check_count("--games", args.games, least=0)
    check_seed(args.seed, "--seed")
    for flag, given, needed, what in (("--games", args.games != 0, "--regret", "AGENTS (the agents that play them)"),
                                      ("--seed", args.seed != 0, "--games", "N (the games it seeds)")):
        if given and not getattr(args, needed[2:]):  # as --seat without --best-response: no effect, refused
            raise UsageError(f"{flag} is for {needed}: add {needed} {what}, or leave {flag} out")
    if args.seed + args.games > SEED_LIMIT:
        raise UsageError(f"--seed {args.seed} with --games {args.games} seeds games up to "
                         f"{args.seed + args.games - 1}: allowed are game seeds {SEED_RANGE}")
    specs = split_specs(args.regret) if args.regret else []
    if args.layered:
        return _run_layered(args, options, specs)
    for flag, given in (("--work-dir", args.work_dir), ("--time-limit", args.time_limit)):
        if given is not None:
            raise UsageError(f"{flag} is for --layered: add --layered, or leave {flag} out")
    responder, others = _best_response_agent(args, options)
    progress = _progress(not args.no_progress and not args.json and sys.stderr.isatty())
    solution = solve(args.variant, args.players, args.objective, max_states=args.max_states, progress=progress,
                     **options)
    if progress is not None:
        print(file=sys.stderr)
    meta = solution.meta
    saved = []
    if args.out and responder is None:
        saved.append(str(solution.save(args.out)))
    if args.save:
        saved.append(str(solution.save(solution_folder() / solution_name(solution.config, solution.objective))))
    response, response_saved = None, None
    if responder is not None:
        from midnight_env.solve.best_response import best_response

        response = best_response(solution, responder, args.seat, responders=others)
        if args.out:
            response_saved = str(response.solution.save(args.out))
    verified = {}
    if args.check:
        from midnight_env.solve.check import check_bellman, check_games, check_transitions

        verified = {"transitions": check_transitions(solution), "games": check_games(solution),
                  "bellman": check_bellman(solution)}
    rows = []
    if specs:
        from midnight_env.solve.policy import regret_table

        rows = regret_table(solution, specs, games=args.games, seed=args.seed)
    if args.json:
        out = {k: v for k, v in meta.items() if k not in ("key_layout", "format")}
        if saved:
            out["saved"] = saved
        if verified:
            out["checks"] = verified
        if rows:
            out["regret"] = [{"agent": r.agent, "value": r.value, "regret": r.regret, "decisions": r.decisions,
                              "tied": r.tied, **({"played": r.played[0], "played_95": r.played[1]}
                                                 if r.played else {})} for r in rows]
        if response is not None:
            out.update(best_response_json(response, response_saved))
        print(json.dumps(out))
        return 0
    print_table(solution, saved, verified, rows)
    if response is not None:
        print_best_response(response, response_saved)
    return 0


def _run_layered(args: argparse.Namespace, options: dict, specs: list) -> int:
    """``--layered``: solve layer by layer (``midnight_env.solve.layered``), a line a layer on
    stderr (unless --no-progress), then the table (or the JSON) as without it."""
    refused = [flag for flag, given in (("--check", args.check), ("--regret", bool(specs)),
                                        ("--best-response", args.best_response is not None)) if given]
    if refused:
        raise UsageError(f"{refused[0]} needs the whole state graph in memory, which --layered does not keep: "
                         "drop --layered (for set-ups that fit) or drop the flag")
    if args.time_limit is not None:
        checks.number("--time-limit", args.time_limit, 0, low_open=True, allowed="minutes above 0", error=UsageError)
    from midnight_env.solve.layered import solve_layered

    def log(line: str) -> None:
        print(f"solve: {line}", file=sys.stderr, flush=True)

    result = solve_layered(args.variant, args.players, args.objective, work_dir=args.work_dir,
                           max_layer_states=args.max_states, log=None if args.no_progress else log,
                           max_seconds=None if args.time_limit is None else 60 * args.time_limit, **options)
    saved = []
    if args.out or args.save:
        try:
            solution = result.solution()  # every layer joined in one file, where memory holds them
        except SolveError:
            solution = result.on_disk()  # else a solution.json naming the work directory's layers
        if args.out:
            saved.append(str(solution.save(args.out)))
        if args.save:
            saved.append(str(solution.save(solution_folder() / solution_name(solution.config, solution.objective))))
    meta = result.meta
    if args.json:
        out = {k: v for k, v in meta.items() if k not in ("key_layout", "format", "layer_ranks", "over_keys")}
        if saved:
            out["saved"] = saved
        print(json.dumps(out))
        return 0
    print_table(result, saved, {}, [])
    return 0


def _best_response_agent(args: argparse.Namespace, options: dict):
    """The agent of ``--best-response`` and the agents of ``--responder``, built and checked before
    anything is solved ((None, []) without the flag): UsageError for one player, a seat out of
    range or --seat/--responder without --best-response; the registry's error for an agent it
    does not know; an agent that cannot play the set-up is named (with ``--save`` that check
    waits for the solution to be saved, so that plain ``optimal`` can answer in the same run)."""
    if args.best_response is None:
        for flag, given in (("--seat", args.seat != 0), ("--responder", bool(args.responder))):
            if given:
                raise UsageError(f"{flag} is for --best-response: give the agent to respond to")
        return None, []
    if args.players < 2:
        raise UsageError(f"--best-response needs another seat to respond to: --players {args.players} has none "
                         "(allowed: --players 2)")
    checks.integer("--seat", args.seat, 0, args.players - 1, error=UsageError,
                   allowed=f"0 to {args.players - 1} (--players {args.players})")
    from midnight_env.arena.agent import fit_error
    from midnight_env.arena.registry import make_agent

    def named(spec: str):
        agent = make_agent(spec.strip())
        agent.name = spec.strip()
        return agent

    agent = named(args.best_response)
    responders = [named(spec) for spec in args.responder]
    if not args.save:
        config = set_up_config(args.variant, args.players, **options)
        check_set_up(config, args.objective)
        for flag, a in [("--best-response", agent)] + [("--responder", r) for r in responders]:
            problem = fit_error(a, solver_engine(config))
            if problem is not None:
                raise UsageError(f"{flag} {a.name!r} cannot play this set-up: {problem}")
    return agent, responders


def best_response_json(response, saved: str | None = None) -> dict:
    return {"best_response_value": response.value, "agent_value": response.agent_value, "gain": response.gain,
            "seat": response.seat, "agent": response.agent, "agent_decisions": response.decisions,
            "agent_tied": response.tied, "best_response_residual": response.residual,
            "best_response_seconds": response.seconds,
            **({"responders": [{"agent": r.agent, "value": r.value, "gain": r.gain, "decisions": r.decisions,
                                "tied": r.tied} for r in response.responders]} if response.responders else {}),
            **({"best_response_saved": saved} if saved else {})}


def print_best_response(response, saved: str | None = None) -> None:
    other = ", ".join(str(s) for s in range(response.solution.config.num_players) if s != response.seat)
    if response.objective == "points":
        means, unit = "seat 0's points minus seat 1's", "points of difference a game"
    else:
        means, unit = "seat 0's chance to win", "chance to win"
    ties = "none" if response.tied == 0 else \
        f"{response.tied:,} of its {response.decisions:,} decisions ({response.tied / response.decisions:.1%})"
    print()
    print(f"{'best response':<15}seat {response.seat} against {response.agent} in seat {other} ({means})")
    print(f"{'value':<15}{response.value:.6f} (the game's value {response.optimum:.6f})")
    print(f"{'agent itself':<15}{response.agent_value:.6f} ({response.agent} in every seat)")
    print(f"{'gain':<15}{response.gain:.6f} {unit} for seat {response.seat} "
          f"(positive: {response.agent} is exploitable; 0: it is not)")
    print(f"{'agent ties':<15}{ties} (where its draw chose among tied choices: evaluated as their mixture)")
    for r in response.responders:
        share = f", {r.gain / response.gain:.0%} of the best" if response.gain > 0 else ""
        print(f"{'responder':<15}{r.agent}: value {r.value:.6f}, gain {r.gain:.6f}{share}")
    print(f"{'time':<15}{response.seconds:.1f} CPU-seconds")
    if saved:
        print(f"{'saved':<15}{saved} (optimal:path={saved} in seat {response.seat} plays the best response)")


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
    if meta.get("solver") == "layered":
        print(f"{'layers':<11}{meta['layers']:,}, the largest {meta['largest_layer']:,} states")
        peak = meta["peak_bytes"]
        print(f"{'memory':<11}{peak / 2**20:,.0f} MiB at the peak ({peak / meta['states']:.1f} bytes per state; "
              f"the largest layer's arrays {mb:,.1f} MiB)")
        print(f"{'disk':<11}{meta['disk_bytes'] / 2**20:,.1f} MiB of layers"
              + (f" in {meta['work_dir']}" if meta["work_dir"] else " (a temporary directory, deleted)"))
    else:
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
