"""docs/RESEARCH.md, "What optimal hiding looks like": its tables, docs/placement_*.png, optimal_decisions.png.

What optimal hiding looks like: placement pictures and decision tables from exact solutions.

    python experiments/optimal_hiding.py                 # every set-up below, figures into docs/
    python experiments/optimal_hiding.py --quick         # smoke test: one guest, figures into a temp folder
    python experiments/optimal_hiding.py --set-ups solo-mp-r1-g1,solo-hc-g1 --figures /tmp/fig
    python experiments/optimal_hiding.py --from-json docs/optimal_hiding.json   # figures and tables again, no solving

Each set-up is solved exactly (``midnight_env.solve.solve``); from the solution
(``midnight_env.solve.optimal_play``) come the value of every placement square (first guest, and the
second after an optimal first: the PNGs ``placement_<variant>.png``) and every move decision
optimal play meets, weighted by how often it meets it per game (``optimal_visits``): how often
the optimal move enters a red room when one is open to it, enters any room rather than walking
on, passes when it may, leaves a room (hidden_castle), by Hugo's distance in moves and by the
clock. Two more tables: the whole placement (every guest of the set-up placed at its best, at
random and at its worst, then optimal play: ``whole_placement``) and how optimal play uses the
rooms per game (green rooms entered and left, the chance of ending at 0 points: ``green_rooms``).
Tables are printed as markdown (docs/RESEARCH.md quotes them) and, with ``--json``,
written as one JSON object.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from datetime import datetime, timezone
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from midnight_env.core.board import GREEN, PLAIN, RED  # noqa: E402
from midnight_env.core.config import make_config  # noqa: E402
from midnight_env.core.state import MOVE, OVER, PLACE, ROLL  # noqa: E402
from midnight_env.render.heatmap import placement_figure  # noqa: E402
from midnight_env.solve import solve  # noqa: E402
from midnight_env.solve.optimal_play import (  # noqa: E402
    INTO_GREEN,
    INTO_PLAIN,
    INTO_RED,
    NO_GUEST,
    PASS,
    WALK,
    decision_table,
    optimal,
    optimal_visits,
    placement_values,
    shares,
)
from midnight_env.solve.setups import SET_UPS as ALL_SET_UPS  # noqa: E402
from midnight_env.solve.solution import booked_points, seat_modes  # noqa: E402
from midnight_env.solve.values import FACE_PROBABILITY, MAXIMISE  # noqa: E402

# the set-ups solved here, of the library's table (name -> variant, players, objective, options)
SET_UPS = {name: ALL_SET_UPS[name] for name in (
    "solo-mp-r1-g1", "solo-mp-r1-g2", "solo-mp-r1-g3", "solo-mp-r1-g4", "solo-mp-r3-g1", "solo-mp-r3-g2",
    "solo-hc-g1", "solo-hc-g2", "duo-mp-r1-g1-win", "duo-mp-r1-g1-points")}
QUICK = ["solo-mp-r1-g1", "solo-hc-g1"]
TRAILING = 19  # a guest Hugo needs 19 or more steps to reach trails at most 9 squares behind him
MOVES = [0, 1, 2, 3, 4, 5, 6, -1]  # Hugo moves to the guest: 6 stands for 6 or more, -1 for Hugo on the stairs
MOVES_LABEL = {0: "0", 1: "1", 2: "2", 3: "3", 4: "4", 5: "5", 6: "6+", -1: "stairs"}


def moves_bucket(moves: np.ndarray, on_stairs: np.ndarray) -> np.ndarray:
    """Hugo moves to a guest, 6 or more as 6, and -1 while Hugo is on the stairs (rooms locked).
    0: Hugo stands on the guest's square (a guest in a room whose door square he holds)."""
    return np.where(on_stairs, -1, np.minimum(moves, 6))


def whole_placement(solution) -> dict:
    """Seat 0's whole placement at set-up (every one of its guests, before the first roll) placed
    at its best, at its worst and uniformly at random, each followed by optimal play (exact).

    With V the solution's values (optimal play from a position on) and r(x, s) what placing on
    square s books (nothing), a set-up placement x of seat 0 is worth
    ``W(x) = opt_s [r(x, s) + W(x + s)]`` over its free squares s, where ``opt`` is seat 0's own
    choice (best: fewest points, or the highest win chance), the opposite (worst) or the mean
    (random: every free square alike, so every set of squares alike); seat 1's placements (two
    players) are its own best; W = V from the first position that is not a placement (a roll).
    ``best`` is the set-up's optimal value; ``best - worst`` what the whole placement is worth.
    Results as ``Solution.value`` (final spooky points of seat 0 solo, seat 0's win chance or
    margin in a duo)."""
    g = solution.graph
    if g is None:
        raise ValueError("whole_placement needs the solver's graph: use the solution solve() returned")
    phases, players, V = g.phases, g.players, solution.values
    modes = seat_modes(solution.engine.num_players, solution.objective)
    start = solution.start
    booked = float(booked_points(solution.engine.new_games([0]), solution.objective)[0])
    out = {}
    for how in ("best", "worst", "random"):
        memo: dict[int, float] = {}

        def worth(x: int, how=how, memo=memo) -> float:
            if phases[x] != PLACE:
                return float(V[x])
            if x not in memo:
                lo, hi = int(g.edge_start[x]), int(g.edge_start[x + 1])
                q = np.array([g.edge_reward[e] + worth(int(g.edge_to[e])) for e in range(lo, hi)])
                maximise = modes[int(players[x])] == MAXIMISE
                if players[x] == 0 and how == "random":
                    memo[x] = float(q.mean())
                else:
                    maximise ^= bool(players[x] == 0 and how == "worst")
                    memo[x] = float(q.max() if maximise else q.min())
            return memo[x]

        out[how] = worth(start) + booked
    if abs(out["best"] - solution.value) > 1e-9:
        raise AssertionError(f"the best whole placement {out['best']} is not the optimal value {solution.value}")
    out["worth"] = abs(out["worst"] - out["best"])  # what the whole placement is worth: worst against best
    out["random_cost"] = abs(out["random"] - out["best"])  # what placing at random costs against the best
    return out


def room_actions(rules) -> tuple[np.ndarray, np.ndarray]:
    """Per action index: the kind of room it enters (PLAIN, RED, GREEN; -1: none) and the kind of
    room it leaves (hidden_castle; -1: none)."""
    S, R, A = rules.num_squares, rules.num_rooms, rules.num_actions
    enters = np.full(A, -1, np.int64)
    leaves = np.full(A, -1, np.int64)
    for a in range(S, A - 1):  # the moves: (origin, destination) pairs, then the pass
        origin, dest = divmod(a - S, 1 + R)
        if dest > 0:
            enters[a] = int(rules.kind[dest - 1])
        if S <= origin < S + R:
            leaves[a] = int(rules.kind[origin - S])
    return enters, leaves


def green_rooms(solution, visits: np.ndarray, batch: int = 200_000) -> dict:
    """How optimal play uses the rooms, seat 0's, per game (exact: every decision weighted by
    how often optimal play meets it, ``optimal_visits``): entries into green, red and plain rooms
    per game, how often it takes a green room out again (hidden_castle) and enters one when it
    may (a green room needs the exact roll), and the distribution of seat 0's final spooky points
    (each finished position weighted by the chance that the game ends there)."""
    g = solution.graph
    phases, players = g.phases, g.players
    enters, leaves = room_actions(solution.engine.rules)
    decide = np.flatnonzero((phases == MOVE) & (players == 0) & (visits > 0))
    w = visits[decide]
    best = solution.best[decide].astype(np.int64)
    out = {f"{name}_entries": float((w * (enters[best] == kind)).sum())
           for name, kind in (("green", GREEN), ("red", RED), ("plain", PLAIN))}
    out["green_leaves"] = float((w * (leaves[best] == GREEN)).sum())
    # a green room open to a guest (the exact roll): any of the decision's edges enters one
    label = np.clip(g.edge_label.astype(np.int64), 0, None)
    green_edge = (enters[label] == GREEN).astype(np.int8)
    may = np.maximum.reduceat(green_edge, g.edge_start[decide]) > 0 if len(decide) else np.zeros(0, bool)
    out["green_may_per_game"] = float(w[may].sum())
    out["green_taken_share"] = (float((w[may] * (enters[best[may]] == GREEN)).sum() / w[may].sum())
                                if w[may].sum() > 0 else float("nan"))
    # a finished game's key keeps no points: the final points are those of the position before
    # the end (hidden_castle keeps them in the key, a one-round midnight_party game books all its
    # points in the round that the position shows) plus what the last step books
    if solution.layout.off_points >= 0 or solution.config.options.get("rounds") == 1:
        into = np.flatnonzero(phases[g.edge_to] == OVER)
        source = np.searchsorted(g.edge_start, into, side="right") - 1
        label = g.edge_label[into].astype(np.int64)
        roll = phases[source] == ROLL
        odds = np.where(roll, FACE_PROBABILITY[np.clip(label, 0, 5)], label == solution.best[source])
        keep = (odds > 0) & (visits[source] > 0)
        into, source, mass = into[keep], source[keep], (odds * visits[source])[keep]
        final = np.zeros(len(into), np.int64)
        for lo in range(0, len(into), batch):
            final[lo:lo + batch] = solution.positions(source[lo:lo + batch]).spooky[:, 0]
        if solution.objective == "points" and solution.engine.num_players == 1:
            final += g.edge_reward[into]
        else:  # seat 0's own points: a two-player reward is a difference (or nothing)
            final = None
        if final is not None:
            sums = np.bincount(final - final.min(), weights=mass)
            out["final_points"] = {int(k + final.min()): float(sums[k]) for k in np.flatnonzero(sums)}
            out["ends_at_zero"] = out["final_points"].get(0, 0.0)
            out["ends_below_zero"] = sum(v for k, v in out["final_points"].items() if k < 0)
    return out


def analyse(name: str) -> dict:
    """Solve one set-up and take its placement values and decision statistics."""
    variant, players, objective, options = SET_UPS[name]
    started = time.perf_counter()
    solution = solve(variant, players, objective, **options)
    solved = time.perf_counter()
    visits = optimal_visits(solution)
    table = decision_table(solution, visits)
    seat0 = table.player == 0
    out = {"name": name, "variant": variant, "players": players, "objective": objective, "options": options,
           "states": solution.num_states, "value": solution.value, "solve_s": round(solved - started, 1)}

    # placement: the first guest's squares; the second's after an optimal first (one seat's turn
    # each in a two-player game: seat 0 then seat 1)
    first = placement_values(solution)
    lower = objective == "points"  # seat 0 minimises its points, maximises its win chance
    best_first = int(np.nanargmin(first) if lower else np.nanargmax(first))
    out["placement"] = {"first": first.tolist(), "best_first": best_first}
    guests = options["guests_per_player"] * players
    if guests > 1:
        second = placement_values(solution, [best_first])
        # seat 1 places second in a duo: it minimises seat 0's win chance
        second_lower = lower if players == 1 else not lower
        out["placement"]["second"] = second.tolist()
        out["placement"]["best_second"] = int(np.nanargmin(second) if second_lower else np.nanargmax(second))

    # decisions (seat 0's), weighted by visits under optimal play
    t = table
    per = {}
    stats = {
        "red": (t.can_red, t.best_kind == INTO_RED, t.red_moves),
        "room": (t.can_room, (t.best_kind >= INTO_PLAIN) & (t.best_origin == 0), t.room_moves),
        "pass": (t.can_pass, t.best_kind == PASS, t.hugo_moves),
    }
    if variant == "hidden_castle":
        stats["leave"] = (t.can_leave & t.can_walk, t.best_origin == 1, t.hugo_moves)
    for key, (where, outcome, by) in stats.items():
        where = where & seat0
        total = shares(t, where, outcome)[0]
        rows = shares(t, where, outcome, moves_bucket(by, t.hugo_on_stairs))
        per[key] = {"share": total.share, "per_game": total.per_game, "positions": total.positions,
                    "by_moves": {int(r.group): [r.share, r.per_game, r.positions] for r in rows}}
        if variant == "hidden_castle":
            per[key]["by_clock"] = {int(r.group): [r.share, r.per_game, r.positions]
                                    for r in shares(t, where, outcome, t.clock)}
    # what optimal play does instead of a red room it could enter
    red = t.can_red & seat0
    kinds = {"red room": t.best_kind == INTO_RED, "green room": t.best_kind == INTO_GREEN,
             "plain room": (t.best_kind == INTO_PLAIN), "walk": t.best_kind == WALK, "pass": t.best_kind == PASS}
    per["red_instead"] = {k: shares(t, red, v)[0].share for k, v in kinds.items()}
    per["red_instead"]["of them leaving a room"] = shares(t, red, t.best_origin == 1)[0].share
    # ties: the solution takes the lowest action index (a walk before a room before a pass)
    per["red"]["optimal_share"] = shares(t, t.can_red & seat0, optimal(t, INTO_RED))[0].share
    per["pass"]["optimal_share"] = shares(t, t.can_pass & seat0, optimal(t, PASS))[0].share
    per["pass"]["optimal_by_moves"] = {
        int(r.group): [r.share, r.per_game, r.positions]
        for r in shares(t, t.can_pass & seat0, optimal(t, PASS), moves_bucket(t.hugo_moves, t.hugo_on_stairs))}
    per["decisions_per_game"] = float(t.weight[seat0].sum())
    # where the nearest guest stands relative to Hugo (on the gallery) when optimal play decides:
    # steps he needs to reach it; 28 - steps is how far behind him it trails
    on = seat0 & ~t.hugo_on_stairs & (t.hugo_steps < NO_GUEST)
    hist = np.bincount(t.hugo_steps[on], weights=t.weight[on], minlength=28)[:28]
    per["nearest_steps"] = (hist / hist.sum()).tolist() if hist.sum() > 0 else []
    per["trailing_share"] = float(hist[TRAILING:].sum() / hist.sum()) if hist.sum() > 0 else float("nan")
    per["what"] = {k: shares(t, seat0, v)[0].share for k, v in kinds.items()}
    out["decisions"] = per
    out["whole_placement"] = whole_placement(solution)
    out["green_rooms"] = green_rooms(solution, visits)
    out["analysis_s"] = round(time.perf_counter() - solved, 1)
    return out, solution


def fmt(x: float, digits: int = 2) -> str:
    return "—" if x is None or (isinstance(x, float) and np.isnan(x)) else f"{x:.{digits}f}"


def pct(x: float) -> str:
    return "—" if x is None or (isinstance(x, float) and np.isnan(x)) else f"{100 * x:.0f} %"


def markdown(results: list[dict]) -> str:
    lines = ["### Placement", "",
             "| set-up | states | optimal value | best first square | its value | worst first square | its value "
             "| best second square | its value |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in results:
        p = r["placement"]
        first = np.array(p["first"])
        worst = int(np.nanargmax(first) if r["objective"] == "points" else np.nanargmin(first))
        second = (f"{p['best_second']} | {fmt(p['second'][p['best_second']], 3)}" if "second" in p else "— | —")
        lines.append(f"| {r['name']} | {r['states']:,} | {fmt(r['value'], 3)} | {p['best_first']} | "
                     f"{fmt(first[p['best_first']], 3)} | {worst} | {fmt(first[worst], 3)} | {second} |")
    whole = [r for r in results if "whole_placement" in r]
    if whole:
        lines += ["", "### The whole placement", "",
                  "(seat 0's guests all placed at set-up, then optimal play; exact. Solo: expected final spooky "
                  "points; duo: seat 0's win chance (-win) or its points minus seat 1's (-points), seat 1 placing "
                  "optimally. First square only: best "
                  "against worst first square, the others placed optimally)", "",
                  "| set-up | best whole placement (optimal) | at random | worst whole placement | worth: worst "
                  "against best | random against best | first square only |", "|---|---:|---:|---:|---:|---:|---:|"]
        for r in whole:
            w, first = r["whole_placement"], np.array(r["placement"]["first"])
            lines.append(f"| {r['name']} | {fmt(w['best'], 3)} | {fmt(w['random'], 3)} | {fmt(w['worst'], 3)} | "
                         f"{fmt(w['worth'], 3)} | {fmt(w['random_cost'], 3)} | "
                         f"{fmt(float(np.nanmax(first) - np.nanmin(first)), 3)} |")
    green = [r for r in results if "green_rooms" in r]
    if green:
        lines += ["", "### Rooms under optimal play (seat 0, per game)", "",
                  "(expected entries per game, exact; a green room needs the exact roll; final points: where the "
                  "position shows every point booked, hidden_castle and one-round midnight_party solo)", "",
                  "| set-up | green rooms entered | green rooms left | takes a green room when it may | red rooms "
                  "entered | plain rooms entered | ends at 0 points | ends below 0 |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|"]
        for r in green:
            x = r["green_rooms"]
            lines.append(f"| {r['name']} | {fmt(x['green_entries'])} | {fmt(x['green_leaves'])} | "
                         f"{pct(x['green_taken_share'])} ({fmt(x['green_may_per_game'])}) | {fmt(x['red_entries'])} "
                         f"| {fmt(x['plain_entries'])} | {pct(x.get('ends_at_zero'))} | "
                         f"{pct(x.get('ends_below_zero'))} |")
    lines += ["", "### Decisions of optimal play (seat 0), weighted by how often a game meets them", "",
              "| set-up | decisions / game | enters red when it may | red is optimal (ties included) "
              "| enters a room when it may (from the gallery) | passes when it may | passing is optimal (ties "
              "included) | leaves a room when a gallery guest could move | nearest guest trails Hugo by 9 squares "
              "or less | its moves: walk / plain / red / green / pass |",
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in results:
        d = r["decisions"]
        w = d["what"]
        leave = pct(d["leave"]["share"]) if "leave" in d else "—"
        lines.append(f"| {r['name']} | {fmt(d['decisions_per_game'], 1)} | {pct(d['red']['share'])} "
                     f"({fmt(d['red']['per_game'])}/game) | {pct(d['red']['optimal_share'])} | "
                     f"{pct(d['room']['share'])} | {pct(d['pass']['share'])} ({fmt(d['pass']['per_game'])}/game) | "
                     f"{pct(d['pass']['optimal_share'])} | {leave} | {pct(d['trailing_share'])} | "
                     f"{pct(w['walk'])} / {pct(w['plain room'])} / "
                     f"{pct(w['red room'])} / {pct(w['green room'])} / {pct(w['pass'])} |")
    for key, title in [("red", "Enters a red room when one is open to it, by Hugo moves to that guest"),
                       ("room", "Enters a room (any) when a gallery guest may, by Hugo moves to that guest"),
                       ("pass", "Passes when it may, by Hugo moves to its guest on the gallery"),
                       ("leave", "Takes a guest out of a room when a gallery guest could move instead (hidden_castle), "
                                 "by Hugo moves to the nearest guest on the gallery"),
                       ("pass_optimal", "Passing is optimal (ties included) when it may pass, by Hugo moves")]:
        lines += ["", f"### {title}", "", "(share of such decisions, in brackets how many a game meets; Hugo moves "
                  "until he reaches the guest (0: he stands on its room's door), \"stairs\": Hugo still on the "
                  "stairs, rooms locked)", "",
                  "| set-up | " + " | ".join(MOVES_LABEL[m] for m in MOVES) + " |",
                  "|---|" + "---:|" * len(MOVES)]
        for r in results:
            if key not in r["decisions"] and key != "pass_optimal":
                continue
            by = (r["decisions"]["pass"]["optimal_by_moves"] if key == "pass_optimal"
                  else r["decisions"][key]["by_moves"])
            if not by:
                continue
            cells = [f"{pct(by[m][0])} ({fmt(by[m][1])})" if m in by else "—" for m in MOVES]
            lines.append(f"| {r['name']} | " + " | ".join(cells) + " |")
    castle = [r for r in results if r["variant"] == "hidden_castle"]
    if castle:
        from midnight_env.core.config import CLOCK_TIMES

        lines += ["", "### hidden_castle by the clock", "",
                  "| set-up | decision | " + " | ".join(CLOCK_TIMES[:6]) + " |", "|---|---|" + "---:|" * 6]
        for r in castle:
            for key, what in [("red", "enters red when it may"), ("room", "enters a room when it may"),
                              ("leave", "leaves a room")]:
                by = r["decisions"][key]["by_clock"]
                cells = [f"{pct(by[c][0])} ({fmt(by[c][1])})" if c in by else "—" for c in range(6)]
                lines.append(f"| {r['name']} | {what} | " + " | ".join(cells) + " |")
    red = ["", "### What optimal play does when it could enter a red room", "",
           "| set-up | red room | green room | plain room | walk | pass | (moving a guest out of a room) |",
           "|---|---:|---:|---:|---:|---:|---:|"]
    for r in results:
        x = r["decisions"]["red_instead"]
        red.append(f"| {r['name']} | " + " | ".join(pct(x[k]) for k in ["red room", "green room", "plain room",
                                                                          "walk", "pass",
                                                                          "of them leaving a room"]) + " |")
    return "\n".join(lines + red)


def figures(results: dict, boards: dict, folder: Path) -> list[Path]:
    """The placement pictures (one per variant) and the decision curves."""
    written = []
    for variant, names in [("midnight_party", ["solo-mp-r1-g1", "solo-mp-r3-g1", "solo-mp-r1-g2", "solo-mp-r1-g3",
                                               "solo-mp-r1-g4"]),
                           ("hidden_castle", ["solo-hc-g1", "solo-hc-g2"]),
                           ("duo", ["duo-mp-r1-g1-win"])]:
        names = [n for n in names if n in results]
        if not names:
            continue
        panels = []
        for n in names:
            r, p = results[n], results[n]["placement"]
            g = r["options"]["guests_per_player"]
            what = "win chance of seat 0" if r["objective"] == "win" else "expected final points"
            label = f"{n}: " + ("first guest" if g > 1 or r["players"] > 1 else "the guest")
            lower = r["objective"] == "points"
            panels.append((f"{label} ({what})", np.array(p["first"]), (), lower))
            if "second" in p:
                who = "seat 1's guest" if r["players"] > 1 else "second guest"
                # seat 1 places to bring seat 0's win chance down
                panels.append((f"{n}: {who}, first on {p['best_first']}", np.array(p["second"]),
                               (p["best_first"],), lower if r["players"] == 1 else not lower))
        title = ("Two players, one guest each: seat 0's win chance by placement square (seat 0 places first, "
                 "seat 1 answers)" if variant == "duo" else
                 "Value of every placement square under optimal play (red outline: the best square)")
        fig = placement_figure(boards[names[0]], panels, columns=2, suptitle=title, digits=3 if variant == "duo" else 2)
        path = folder / f"placement_{variant}.png"
        fig.savefig(path, dpi=130)
        plt.close(fig)
        written.append(path)

    fig, axes = plt.subplots(1, 4, figsize=(17, 4.2))
    colours = dict(zip(results, plt.rcParams["axes.prop_cycle"].by_key()["color"] * 2))
    for ax, (key, title) in zip(axes, [("red", "optimal play enters a red room when it may"),
                                       ("room", "optimal play enters a room when it may"),
                                       ("pass", "passing is optimal when it may pass (ties included)")]):
        for n, r in results.items():
            d = r["decisions"][key]
            by = d["optimal_by_moves"] if key == "pass" else d["by_moves"]
            if not by or r["players"] > 1:
                continue
            xs = [m for m in MOVES[1:-1] if m in by]
            ax.plot(xs, [by[m][0] for m in xs], "o-", label=n, color=colours[n])
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("Hugo moves to the guest (6: six or more)", fontsize=8)
        ax.set_ylim(-0.03, 1.03)
        ax.set_xticks(MOVES[1:-1])
    for n, r in results.items():
        steps = r["decisions"]["nearest_steps"]
        if steps and r["players"] == 1:
            axes[3].plot(range(1, 28), steps[1:], "-", label=n, color=colours[n])
    axes[3].set_title("where the nearest guest stands when optimal play decides", fontsize=9)
    axes[3].set_xlabel("Hugo's steps to it (27: just behind him)", fontsize=8)
    axes[3].set_ylabel("share of decisions (Hugo on the gallery)", fontsize=8)
    axes[0].set_ylabel("share of such decisions (weighted by visits)")
    handles, labels = axes[1].get_legend_handles_labels()
    if labels:  # none where only two-player set-ups were run
        fig.legend(handles, labels, loc="lower center", ncol=len(labels), fontsize=7)
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    path = folder / "optimal_decisions.png"
    fig.savefig(path, dpi=130)
    plt.close(fig)
    written.append(path)
    return written


def with_int_keys(result: dict) -> dict:
    """A result read back from JSON, its tables keyed by numbers again (JSON keys are strings)."""
    for d in result["decisions"].values():
        if isinstance(d, dict):
            for key in ("by_moves", "by_clock", "optimal_by_moves"):
                if key in d:
                    d[key] = {int(k): v for k, v in d[key].items()}
    return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set-ups", default=None, help=f"comma-separated, of {', '.join(SET_UPS)}")
    parser.add_argument("--quick", action="store_true", help=f"smoke test: {', '.join(QUICK)}")
    parser.add_argument("--figures", default=None, help="folder for the PNGs (default docs/, a temp folder "
                                                         "with --quick)")
    parser.add_argument("--json", default=None, help="write every number as one JSON object to this file")
    parser.add_argument("--from-json", default=None, help="solve nothing: the figures and tables of the results "
                                                           "saved by --json in this file")
    args = parser.parse_args(argv)
    names = QUICK if args.quick else (args.set_ups.split(",") if args.set_ups else list(SET_UPS))
    for n in names:
        if n not in SET_UPS:
            parser.error(f"set-up {n!r} is unknown: allowed are {', '.join(SET_UPS)}")
    if args.figures:
        folder = Path(args.figures)
    elif args.quick:
        import tempfile

        folder = Path(tempfile.mkdtemp())
    else:
        folder = Path(__file__).resolve().parents[1] / "docs"
    folder.mkdir(parents=True, exist_ok=True)
    results, boards = {}, {}
    if args.from_json:
        names = []
        for r in json.loads(Path(args.from_json).read_text(encoding="utf-8")):
            results[r["name"]] = with_int_keys(r)
            boards[r["name"]] = make_config(r["variant"], r["players"], **r["options"]).board
    for n in names:
        r, sol = analyse(n)
        results[n] = r
        boards[n] = sol.engine.board
        del sol
        print(f"# {n}: {r['states']:,} states, value {r['value']:.4f}, solved in {r['solve_s']} s, "
              f"analysed in {r['analysis_s']} s", flush=True)
    written = figures(results, boards, folder)
    print(f"\nMachine: {platform.processor() or platform.machine()}, Python {platform.python_version()}, "
          f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC\n")
    print(markdown(list(results.values())))
    print("\nFigures: " + ", ".join(str(p) for p in written))
    if args.json:
        Path(args.json).write_text(json.dumps(list(results.values()), indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
