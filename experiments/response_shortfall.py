"""docs/RESEARCH.md, "Where a trained response falls short": the decisions at which a response to
an agent loses the exact best response's gain.

On a solved two-player set-up, with ``--target`` playing the other seat: the exact best
response's value (``midnight solve --best-response``), and for the target itself in the seat and
each ``--responder`` its **shortfall**: how much less it gains than the best response. The
shortfall is broken down by decision state with the performance-difference identity. A
responder's shortfall is the sum, over its decision states, of two factors. One is how often its
play against the target reaches the state (expected visits a game,
``midnight_env.solve.optimal_play.policy_visits``). The other is what its choice loses there,
valued by the best response's own values (the best action's value minus the chosen one's). The
sum is checked against the two exact values.

So a reader sees whether a response misses its gain in a few positions or everywhere, in common
positions or rare ones, by large or small mistakes, and of which kind (the best response's choice
against the responder's: walk on, enter a room, place, pass), and in midnight_party how much of
it lies where the target has nothing left to decide this round (no guest of its seat on the
gallery or waiting to be placed: a guest in a room or on the stairs stays there). There the loss
is the responder's own play, not a failure to exploit the target. (In hidden_castle a guest may
leave a room or the cellar, so the split is not made there.)

It also says how much of the shortfall is **locked in**: where the responder's choice is the best
one by its own values (each choice followed by the responder's own play, not the best
response's). There a policy-improvement step does not change the choice: the better move pays
only once the play after it is better too, so one random move of exploration at a time never
shows it; a sample-trained learner has to learn the whole line after it first.

    python experiments/response_shortfall.py --target value:path=runs/value-duo-midnight_party-2p-r1-g1-s1/model.npz \
        --responder value:path=runs/exploit-duo-r1-net/model.npz

Prints a text summary per row (``--json`` the numbers). The set-up (``--setup``, default
duo-mp-r1-g1-points) is solved in memory: duo-mp-r1-g1 takes seconds, duo-mp-r3-g1 about
20 CPU-minutes and 5 GB per agent.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from dataclasses import asdict, dataclass, field

import numpy as np

from midnight_env.arena.registry import make_agent
from midnight_env.core.positions import hugo_place_name
from midnight_env.core.state import PLACE
from midnight_env.solve.optimal_play import policy_visits
from midnight_env.solve.policy import Policy, agent_policy, evaluate_policy
from midnight_env.solve.setups import SET_UPS
from midnight_env.solve.solution import Solution, seat_modes, solve, state_modes
from midnight_env.solve.values import MAXIMISE, MINIMISE

DEFAULT_SETUP = "duo-mp-r1-g1-points"
LOSS_BANDS = (0.05, 0.2, 0.5, 1.0)  # points (or chance) lost at a visit: the edges of the bands reported
CONCENTRATION = (0.5, 0.8, 0.95)  # shares of the shortfall: how few states hold them


@dataclass
class Shortfall:
    """One row: a policy of ``seat`` against the target, and where it loses the best response's gain."""

    name: str
    value: float  # its exact value in the seat (the objective's: points of difference, chance to win)
    gain: float  # over the target itself in the seat (positive: better)
    shortfall: float  # the best response's gain minus ``gain``
    decomposed: float  # the same, summed over decision states (the identity's check)
    visits: float  # its decisions a game
    wrong_visits: float  # of them, where its choice is worse than the best response's
    states_for: dict[str, int]  # how many decision states hold 50, 80, 95 % of the shortfall
    bands: list[dict[str, float]]  # share of the shortfall and visits a game, by the loss at a visit
    alone: dict[str, float] | None  # where the target's seat has nothing left to decide this round
    #                                   (midnight_party only)
    locked: float  # share of the shortfall where its choice is the best by its own values
    kinds: list[dict[str, object]]  # share by (best response's choice, the policy's choice)
    top: list[dict[str, object]] = field(default_factory=list)  # the states that cost most


def choice_kind(solution: Solution, action: int) -> str:
    """place, pass, walk or enter a room (``ActionLayout.choice_kind``)."""
    return solution.engine.layout.choice_kind(action)


def shortfall(solution: Solution, theirs: Policy, best: np.ndarray, best_value: float, reference: float,
              name: str, mine: Policy, seat: int, top: int = 10) -> Shortfall:
    """The row of ``mine`` (a policy of ``seat``) against ``theirs``; ``best`` the best response's
    values of every state, ``best_value`` and ``reference`` the best response's and the target's
    own values in the seat."""
    g = solution.graph
    n = g.num_states
    minimise = seat_modes(solution.config.num_players, solution.objective)[seat] == MINIMISE
    mode = state_modes(g, solution.objective)
    source = np.repeat(np.arange(n), np.diff(g.edge_start))
    decides = (g.players == seat) & ((mode == MAXIMISE) | (mode == MINIMISE))

    def regret(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Each transition's value (its reward, then ``values`` of where it leads), each state's best
        transition value, and at each decision of the seat what the policy's choice loses against
        it (0 elsewhere)."""
        q = g.edge_reward + values[g.edge_to]
        best_q = np.full(n, np.inf if minimise else -np.inf)
        (np.minimum if minimise else np.maximum).at(best_q, source, q)
        chosen = np.bincount(source, weights=mine.weight * q, minlength=n)
        return q, best_q, np.where(decides, np.abs(chosen - np.where(decides, best_q, 0.0)), 0.0)

    q, top_q, loss = regret(best)  # valued by the best response's play after each choice
    visits = policy_visits(solution, theirs.weight + mine.weight)
    cost = visits * loss
    total = float(cost.sum())
    own = evaluate_policy(solution, [theirs, mine])
    value = own.value
    own_q, _, own_loss = regret(own.values)  # by the policy's own play after each choice
    gain = (reference - value) if minimise else (value - reference)
    best_gain = (reference - best_value) if minimise else (best_value - reference)
    share = (lambda part: float(part / total)) if total > 0 else (lambda part: 0.0)
    wrong = decides & (loss > 1e-9)
    locked = wrong & (own_loss <= 1e-9)

    order = np.argsort(-cost)
    cumulative = np.cumsum(cost[order]) / total if total > 0 else np.zeros(n)
    states_for = {f"{q_:.0%}": int(np.searchsorted(cumulative, q_) + 1) for q_ in CONCENTRATION}
    bands = []
    for low, high in zip((0.0, *LOSS_BANDS), (*LOSS_BANDS, np.inf)):
        band = wrong & (loss > low) & (loss <= high)
        bands.append({"above": low, "up_to": float(high), "share": share(cost[band].sum()),
                      "visits": float(visits[band].sum())})
    alone = None
    if solution.config.variant == "midnight_party":  # its guests never leave a room or the stairs
        ids = np.flatnonzero(decides)
        positions = solution.positions(ids)
        other = 1 - seat
        nothing_left = (positions.gallery[:, other].sum(axis=1) == 0) & (positions.supply[:, other] == 0)
        lone = np.zeros(n, bool)
        lone[ids[nothing_left]] = True
        alone = {"share": share(cost[lone].sum()), "visits": float(visits[lone].sum()), "states": int(lone.sum())}
    # by kind: the best response's choice there against the policy's most likely one
    edge_of_best = np.full(n, -1, np.int64)
    close = np.abs(q - top_q[source]) <= 1e-9
    edge_of_best[source[close][::-1]] = np.flatnonzero(close)[::-1]  # the first best transition of each state
    played = np.flatnonzero(mine.weight > 0)
    played = played[np.lexsort((-mine.weight[played], source[played]))]  # by state, the likeliest first
    first = np.r_[True, source[played][1:] != source[played][:-1]]
    likely = np.full(n, -1, np.int64)
    likely[source[played][first]] = played[first]
    kinds: Counter = Counter()
    for s in np.flatnonzero(wrong):
        kinds[(choice_kind(solution, int(g.edge_label[edge_of_best[s]])),
               choice_kind(solution, int(g.edge_label[likely[s]])))] += cost[s]
    rows = []
    for s in order[:top]:
        if cost[s] <= 0:
            break
        p = solution.positions(np.array([s]))
        lo, hi = g.edge_start[s], g.edge_start[s + 1]
        rows.append({"state": int(s), "visits": float(visits[s]), "loss": float(loss[s]), "share": share(cost[s]),
                     "phase": "place" if g.phases[s] == PLACE else "move", "roll": int(p.roll[0]),
                     "hugo": hugo_place_name(solution.engine, p),
                     "gallery": [np.flatnonzero(p.gallery[0, k]).tolist() for k in range(2)],
                     "rooms": {int(r): int(p.room[0, r]) for r in np.flatnonzero(p.room[0] >= 0)},
                     "best": choice_kind(solution, int(g.edge_label[edge_of_best[s]])),
                     "chosen": choice_kind(solution, int(g.edge_label[likely[s]])),
                     "choices": [{"action": int(g.edge_label[e]), "kind": choice_kind(solution, int(g.edge_label[e])),
                                  "value": float(q[e]), "own_value": float(own_q[e]),
                                  "played": float(mine.weight[e])} for e in range(lo, hi)]})
    return Shortfall(name=name, value=value, gain=gain, shortfall=best_gain - gain, decomposed=total,
                     visits=float(visits[decides].sum()), wrong_visits=float(visits[wrong].sum()),
                     states_for=states_for, bands=bands,
                     alone=alone, locked=share(cost[locked].sum()),
                     kinds=[{"best": b, "chosen": c, "share": share(v)} for (b, c), v in kinds.most_common(4)],
                     top=rows)


def report(setup: str, target: str, responders: list[str], seat: int = 0, top: int = 10) -> dict:
    """Solve ``setup`` and return the best response to ``target`` and one row per policy: the
    target itself in ``seat``, then each responder."""
    if setup not in SET_UPS or SET_UPS[setup].players != 2:
        allowed = ", ".join(k for k, s in SET_UPS.items() if s.players == 2)
        raise ValueError(f"set-up {setup!r} is not a solved two-player set-up: allowed are {allowed}")
    s = SET_UPS[setup]
    solution = solve(s.config(), objective=s.objective)
    others = [1 - seat]
    target_agent = make_agent(target)
    theirs = agent_policy(solution, target_agent, seats=others)
    response = evaluate_policy(solution, theirs)
    itself = agent_policy(solution, target_agent, seats=[seat])
    reference = evaluate_policy(solution, [theirs, itself]).value
    rows = [shortfall(solution, theirs, response.values, response.value, reference, f"{target} (itself)", itself,
                      seat, top)]
    for spec in responders:
        rows.append(shortfall(solution, theirs, response.values, response.value, reference, spec,
                              agent_policy(solution, make_agent(spec), seats=[seat]), seat, top))
    minimise = seat_modes(2, s.objective)[seat] == MINIMISE
    return {"setup": setup, "objective": s.objective, "target": target, "seat": seat,
            "best_response_value": response.value, "target_value": reference,
            "best_gain": (reference - response.value) if minimise else (response.value - reference),
            "rows": [asdict(r) for r in rows]}


def text(result: dict) -> str:
    lines = [f"{result['setup']}: seat {result['seat']} against {result['target']}; the best response gains "
             f"{result['best_gain']:.4f} ({result['objective']})"]
    for r in result["rows"]:
        lines.append(f"\n{r['name']}: gains {r['gain']:+.4f}, short by {r['shortfall']:.4f} "
                     f"(summed over states: {r['decomposed']:.4f})")
        lines.append(f"  decisions a game {r['visits']:.2f}, of them worse than the best response's "
                     f"{r['wrong_visits']:.4f}")
        lines.append("  the shortfall lies in " + ", ".join(f"{v} states ({k})" for k, v in r["states_for"].items()))
        if r["alone"] is not None:
            lines.append(f"  where the target's seat has nothing left to decide this round: {r['alone']['share']:.1%} "
                         f"of it ({r['alone']['visits']:.2f} visits a game)")
        lines.append(f"  locked in (its choice the best by its own play after each): {r['locked']:.1%} of it")
        lines.append("  by the loss at a visit: " + "; ".join(
            f"({b['above']}, {b['up_to']}] {b['share']:.1%} at {b['visits']:.4f} visits" for b in r["bands"]))
        lines.append("  best response's choice / its choice: " + ", ".join(
            f"{k['best']} / {k['chosen']} {k['share']:.1%}" for k in r["kinds"]))
        for t in r["top"][:5]:
            lines.append(f"    {t['visits']:.4f} visits, loses {t['loss']:.3f} ({t['best']} / {t['chosen']}): roll "
                         f"{t['roll']}, Hugo on {t['hugo']}, gallery {t['gallery']}, rooms {t['rooms']}")
            lines.append("      " + ", ".join(f"{c['kind']} {c['value']:+.3f} (its own play after: "
                                              f"{c['own_value']:+.3f})" for c in t["choices"]))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--setup", default=DEFAULT_SETUP, help=f"a solved two-player set-up (default {DEFAULT_SETUP})")
    p.add_argument("--target", required=True, help="the agent in the other seat (an agent spec)")
    p.add_argument("--responder", action="append", default=[], help="a policy of the seat (repeatable)")
    p.add_argument("--seat", type=int, default=0, choices=(0, 1))
    p.add_argument("--top", type=int, default=10, help="the costliest states listed per row")
    p.add_argument("--json", action="store_true")
    a = p.parse_args(argv)
    try:
        result = report(a.setup, a.target, a.responder, a.seat, a.top)
    except ValueError as e:
        print(f"response_shortfall: {e}", file=sys.stderr)
        return 2
    print(json.dumps(result, indent=1) if a.json else text(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
