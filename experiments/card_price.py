"""docs/CARD.md "Its price" and docs/card_price.json: what playing by the card costs (issue 41, item 3).

Four prices, each with its error or said to be exact:

(a) exact regret on the solved set-ups: the card at seat 0 evaluated on the solved state graph
    (``midnight_env.solve.policy``; the card's draw only breaks ties, so the evaluation is exact),
    the other seat of a two-player game playing a best response; regret = how much worse than
    the optimum for seat 0 (solo: expected spooky points above it; duo: points of margin).
(b) points against the champion and against ``expert`` at real size, on paired deals: for every
    deal (one seed) and every seat r, the card plays seat r against copies of X in the other
    seats, and so does X itself, with the same dice (``training.evaluate.paired_games``). The
    price is the card's margin minus X's in the same seat (margin: own spooky points minus the
    others' mean; positive: the card does worse by that many points a game), mean over deals
    with a 95 % normal interval.
(c) a trained best response's gain against the card (``midnight exploit --target card``): read
    from the runs' exploit.json (``--exploit``).
(d) what each rule is worth: the card without rule K (``card:drop=K``) against the card, by
    exact regret on the solved set-ups and by paired deals against a field of ``expert`` at real
    size (the margin without the rule minus the card's; positive: the rule helps).

    python experiments/card_price.py --deals 200 --exploit /tmp/exploit-midnight_party-2p
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from midnight_agents.card import RULE_NAMES
from midnight_env.arena.registry import make_agent
from midnight_env.core.engine import Engine
from midnight_env.infra.seeds import derived_seed
from midnight_env.solve.policy import agent_policy, evaluate_policy
from midnight_env.solve.setups import SET_UPS
from midnight_env.solve.solution import seat_modes, solve
from midnight_env.solve.values import MAXIMISE
from midnight_env.training.evaluate import mean_ci, paired_games, play_every_seat

REGRET_SETUPS = ["solo-mp-r1-g1", "solo-mp-r1-g2", "solo-mp-r3-g1", "solo-mp-r3-g2", "solo-hc-g1",
                 "duo-mp-r1-g1-points", "duo-mp-r1-g1-win", "duo-mp-r3-g1-points"]
DROPS = [f"card:drop={k + 1}" for k in range(len(RULE_NAMES))]
PRICE_MARKER = "<!-- price tables: written by experiments/card_price.py --card docs/CARD.md -->"


def regret_part(setups: list[str]) -> list[dict]:
    """(a) and the exact half of (d): the card, each card without one rule, and expert beside, at
    seat 0 on the solved graph (as experiments/regret_table.py evaluates the heuristics)."""
    rows = []
    for name in setups:
        start = time.process_time()
        setup = SET_UPS[name]
        solution = solve(setup.config(), objective=setup.objective)
        sign = -1.0 if seat_modes(setup.players, setup.objective)[0] == MAXIMISE else 1.0
        for spec in ["card", *DROPS, "expert"]:
            policy = agent_policy(solution, make_agent(spec), seats=[0])
            value = evaluate_policy(solution, policy).value
            rows.append({"setup": name, "agent": spec, "optimum": solution.value, "value": value,
                         "regret": sign * (value - solution.value), "tied": policy.tied / max(policy.decisions, 1)})
        print(f"{name}: {time.process_time() - start:.0f} CPU-s", file=sys.stderr, flush=True)
    return rows


def against_part(variant: str, players: int, opponent: str, deals: int, seed: int) -> dict:
    """(b): the card in X's seat against copies of X, paired with X itself."""
    start = time.process_time()
    engine = Engine(variant, players)
    seeds = np.array([derived_seed("card-price", seed, d) for d in range(deals)], np.int64)
    field = [make_agent(opponent)]
    pair = paired_games(engine, make_agent("card"), make_agent(opponent), field, seeds)
    cost, half = mean_ci(-pair.gain())
    return {"variant": variant, "players": players, "opponent": opponent, "deals": deals,
            "games": 2 * deals * players, "cost": cost, "half_width": half,
            "card_points": float(pair.candidate.agent_points().mean()),
            "opponent_points": float(pair.reference.agent_points().mean()),
            "cpu_s": time.process_time() - start}


def drop_part(variant: str, players: int, deals: int, seed: int) -> list[dict]:
    """The by-play half of (d): each card:drop=K against the card, in a field of expert."""
    engine = Engine(variant, players)
    seeds = np.array([derived_seed("card-drop", seed, d) for d in range(deals)], np.int64)
    field = [make_agent("expert")]
    card = play_every_seat(engine, make_agent("card"), field, seeds)
    rows = []
    for k, spec in enumerate(DROPS):
        start = time.process_time()
        pair = paired_games(engine, make_agent(spec), card, field, seeds)
        worth, half = mean_ci(-pair.gain())
        rows.append({"variant": variant, "players": players, "rule": k + 1, "name": RULE_NAMES[k], "deals": deals,
                     "worth": worth, "half_width": half, "cpu_s": time.process_time() - start})
        print(f"  {spec}: {worth:+.2f} ± {half:.2f}", file=sys.stderr, flush=True)
    return rows


def exploit_part(folders: list[str]) -> list[dict]:
    rows = []
    for folder in folders:
        r = json.loads((Path(folder) / "exploit.json").read_text())
        rows.append({"variant": r["variant"], "players": r["players"], "target": r["target"], "seat": r["seat"],
                     "cpu_minutes": r["cpu_minutes"], "train_cpu_minutes": r["train_cpu_minutes"],
                     "env_steps": r["env_steps"], "gain": r["gain"], "gain_ci": r["ci95"], "deals": r["games"],
                     "command": f"midnight exploit --variant {r['variant']} --players {r['players']} --target "
                                f"{r['target']} --cpu-minutes {r['cpu_minutes']:g} --deals {r['games']}"})
    return rows


def summary(result: dict) -> list[str]:
    """The headline figures in sentences, from the results."""
    out = []
    against = result.get("against", [])
    for opponent in ("champion", "expert"):
        rows = [r for r in against if (r["opponent"] == "expert") == (opponent == "expert")]
        if rows:
            parts = ", ".join(f"{r['variant']} {r['players']}p {r['cost']:+.1f} ± {r['half_width']:.1f}" for r in rows)
            who = "the champion (`value-<variant>-<n>p`, one ply)" if opponent == "champion" else "`expert`"
            out.append(f"- Against {who} at real size the card gives away, points of margin a game: {parts} "
                       "(paired deals).")
    regret = [r for r in result.get("regret", []) if r["agent"] in ("card", "expert")]
    if regret:
        by = {(r["setup"], r["agent"]): r["regret"] for r in regret}
        setups = list(dict.fromkeys(r["setup"] for r in regret))
        out.append("- Exact regret where the game is solved (card / expert): "
                   + ", ".join(f"{s} {by[(s, 'card')]:.3f} / {by[(s, 'expert')]:.3f}" for s in setups) + ".")
    for r in result.get("exploit", []):
        out.append(f"- A best response trained {r['cpu_minutes']} CPU-minutes gains {r['gain']:+.2f} ± "
                   f"{r['gain_ci']:.2f} points a game against it ({r['variant']}, {r['players']} players, "
                   f"{r['deals']} paired deals).")
    drops = result.get("drops", [])
    if drops:
        worth = {}
        for r in drops:
            worth.setdefault((r["rule"], r["name"]), []).append(f"{r['worth']:+.1f}")
        out.append("- Each rule's worth by play (midnight_party / hidden_castle, 2 players, field of `expert`): "
                   + "; ".join(f"{k} {n} {' / '.join(w)}" for (k, n), w in worth.items()) + ".")
    return out


def tables(result: dict) -> str:
    out = [*summary(result), ""] if summary(result) else []
    if result.get("regret"):
        setups = list(dict.fromkeys(r["setup"] for r in result["regret"]))
        by = {(r["setup"], r["agent"]): r for r in result["regret"]}
        out += ["(a) exact regret on the solved set-ups (seat 0; solo: spooky points a game above the optimum; "
                "-points: points of margin, -win: chance to win, against a best response), and (d) the regret "
                "without each rule minus the card's (positive: the rule helps)", "",
                "| set-up | optimum | card | expert | " + " | ".join(f"without {k + 1} ({n})" for k, n in
                                                                   enumerate(RULE_NAMES)) + " |",
                "|---|---:|---:|---:|" + "---:|" * len(RULE_NAMES)]
        for s in setups:
            card = by[(s, "card")]["regret"]
            cells = " | ".join(f"{by[(s, d)]['regret'] - card:+.3f}" for d in DROPS)
            out.append(f"| {s} | {by[(s, 'card')]['optimum']:.3f} | {card:.3f} | {by[(s, 'expert')]['regret']:.3f} "
                       f"| {cells} |")
        out.append("")
    if result.get("against"):
        out += ["(b) the card against the champion and expert at real size, paired deals: the card's margin minus "
                "X's in the same seat (points a game; positive: the card does worse), 95 %", "",
                "| variant | players | X (every other seat too) | deals (games) | card minus X | card's points | "
                "X's points |", "|---|---:|---|---:|---:|---:|---:|"]
        for r in result["against"]:
            out.append(f"| {r['variant']} | {r['players']} | `{r['opponent']}` | {r['deals']} ({r['games']:,}) | "
                       f"**{r['cost']:+.2f} ± {r['half_width']:.2f}** | {r['card_points']:.1f} | "
                       f"{r['opponent_points']:.1f} |")
        out.append("")
    if result.get("exploit"):
        out += ["(c) a trained best response against the card (`midnight exploit --target card`)", "",
                "| variant | players | CPU-minutes | deals | gain |", "|---|---:|---:|---:|---:|"]
        for r in result["exploit"]:
            out.append(f"| {r['variant']} | {r['players']} | {r['cpu_minutes']} | {r['deals']} | "
                       f"**{r['gain']:+.2f} ± {r['gain_ci']:.2f}** |")
        out.append("")
    if result.get("drops"):
        out += ["(d) each rule's worth by play: the margin of the card without it minus the card's, paired deals "
                "in a field of `expert` (points a game; positive: the rule helps), 95 %", "",
                "| rule | " + " | ".join(f"{v} {n}p ({d} deals)" for v, n, d in
                                       dict.fromkeys((r["variant"], r["players"], r["deals"]) for r in result["drops"]))
                + " |"]
        keys = list(dict.fromkeys((r["variant"], r["players"]) for r in result["drops"]))
        out.append("|---|" + "---:|" * len(keys))
        by = {(r["variant"], r["players"], r["rule"]): r for r in result["drops"]}
        for k, name in enumerate(RULE_NAMES):
            cells = " | ".join(f"{by[(v, n, k + 1)]['worth']:+.2f} ± {by[(v, n, k + 1)]['half_width']:.2f}"
                               for v, n in keys)
            out.append(f"| {k + 1} ({name}) | {cells} |")
        out.append("")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--parts", default="regret,against,drops", help="which of regret, against, drops to run")
    p.add_argument("--setups", default=",".join(REGRET_SETUPS))
    p.add_argument("--deals", type=int, default=200, help="paired deals a measurement, two players (b)")
    p.add_argument("--deals-4p", type=int, default=80, help="paired deals a measurement, four players (b)")
    p.add_argument("--drop-deals", type=int, default=150, help="paired deals of each card:drop=K (d)")
    p.add_argument("--exploit", nargs="*", default=[], help="run folders of midnight exploit --target card (c)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", default="docs/card_price.json", help="results here (merged into what is there)")
    p.add_argument("--card", help="also write the tables into this card page (docs/CARD.md), after its price marker")
    a = p.parse_args(argv)
    parts = a.parts.split(",")
    path = Path(a.json)
    result = json.loads(path.read_text()) if path.exists() else {}
    started = time.process_time()
    if "regret" in parts:
        result["regret"] = regret_part(a.setups.split(","))
        result["regret_command"] = f"python experiments/card_price.py --parts regret --setups {a.setups}"
    if "against" in parts:
        result["against"] = []
        for variant in ("midnight_party", "hidden_castle"):
            for players, deals in ((2, a.deals), (4, a.deals_4p)):
                for opponent in (f"value-{variant}-{players}p", "expert"):
                    r = against_part(variant, players, opponent, deals, a.seed)
                    print(f"{variant} {players}p vs {opponent}: {r['cost']:+.2f} ± {r['half_width']:.2f} "
                          f"({r['cpu_s']:.0f} CPU-s)", file=sys.stderr, flush=True)
                    result["against"].append(r)
                    path.write_text(json.dumps(result, indent=1) + "\n")
        result["against_command"] = (f"python experiments/card_price.py --parts against --deals {a.deals} "
                                     f"--deals-4p {a.deals_4p}")
    if "drops" in parts:
        result["drops"] = []
        for variant in ("midnight_party", "hidden_castle"):
            result["drops"] += drop_part(variant, 2, a.drop_deals, a.seed)
            path.write_text(json.dumps(result, indent=1) + "\n")
        result["drops_command"] = f"python experiments/card_price.py --parts drops --drop-deals {a.drop_deals}"
    if a.exploit:
        result["exploit"] = exploit_part(a.exploit)
    result["cpu_s"] = result.get("cpu_s", 0.0) + time.process_time() - started
    path.write_text(json.dumps(result, indent=1) + "\n")
    print(tables(result))
    if a.card:
        page = Path(a.card).read_text(encoding="utf-8")
        head = page.split(PRICE_MARKER)[0]
        Path(a.card).write_text(head + PRICE_MARKER + "\n\n" + tables(result), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
