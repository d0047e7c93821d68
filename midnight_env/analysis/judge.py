"""Every decision of a recorded game judged: each legal choice's value, the chosen one's loss in
spooky points, and the game's mistakes marked by size (``midnight analyze``, the web page's
"Analyse").

The record (``midnight-record/1``, docs/RECORDS.md) is replayed with the engine; every decision
with more than one legal choice is handed, all of them in one batch, to an **evaluator** that
values each legal choice for the deciding seat:

- ``optimal``: the exact solution of the record's set-up (``midnight solve ... --save``, objective
  points; ``optimal:path=DIR`` names one): a choice's value is the expected final result with
  optimal play from then on (both seats' in a two-player game);
- an agent with ``action_values`` (``search`` and the value agents, ``value-<variant>-<N>p`` the
  shipped champions): its search's backed-up value of each move, as it judges when it plays
  (:meth:`midnight_agents.search.SearchAgent.action_values`).

Without a choice the strongest available is taken: ``optimal`` where a solution of the set-up is
saved, else the set-up's shipped champion inside its search (``value-<variant>-<N>p:budget=1500``,
with ``placement=shipped`` where a placement network of the set-up is shipped: the opening's
positions judged by it) where one is shipped and fits, else ``search``.

Every value is in the units the choosers maximise: the deciding seat's expected final **margin**
in spooky points, the other players' mean final points minus its own (alone against Hugo: minus its
own; a value agent whose ``others`` weight is not 1 weighs the others' points by it, e.g. ``0``:
its own points only). Fewest points win, so higher is better, and a choice's **loss** is the best
value minus its own: the points it gives away, 0 for a best choice. A forced decision (one legal
choice) is not valued and loses nothing.

**A loss's error and the marks.** An evaluator other than the exact solution estimates its values,
so a loss carries an error: ``loss_error``, the root mean square error of a loss that the evaluator
was measured to make in the decision's stage of the game (the opening placement; the early, middle
and late thirds of the game's rolls) against paired rollouts of the champion
(``experiments/placement_values.py truth``; the measured set-ups are in :data:`MEASURED_ACCURACY`, the
upper end of each figure's 95 % interval, so that a loss said to exceed it does). A decision is
marked only where its loss **clearly exceeds its error**, ``loss > CLEAR × loss_error``, and by the
size thresholds below (an exact evaluator's error is 0: marks by size alone). Where the evaluator's
accuracy was not measured for the set-up the loss has no error and no decision is marked: the output
says so.

**The placement book.** Where the shipped book (``midnight_agents.book``, ``experiments/placement_book.py``) covers
the set-up, the first decision of the game (seat 0's first guest) also shows the book's value of the
chosen square and of the book's best square, each with its 95 % interval: paired rollouts of the
champion. The book's values are seat 0's margin (the others' mean final points minus its own), the
evaluator's unit except where it weighs only its own points (``value-hidden_castle-4p``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from midnight_env.arena.agent import Decisions, fit_error
from midnight_env.arena.registry import agent_infos, make_agent, parse_spec
from midnight_env.core.config import setup_words
from midnight_env.core.dice import FACES_BY_NAME, agent_streams
from midnight_env.core.engine import Engine
from midnight_env.core.records import RecordError, engine_for_record, read_lines, replay_record
from midnight_env.core.state import PHASE_NAMES, PLACE, GameState
from midnight_env.infra import checks
from midnight_env.solve.solution import Solution, booked_points, find_solution, load_solution

FORMAT = "midnight-analysis/1"

# Marks by the points a choice gives away. Points come in whole numbers (a room's 1 to 6, a stair
# place's 10, 9, ...). Under half a point a choice is not marked: the champion's search estimates
# values through sampled dice, and a move's loss moves between draws of them (standard deviation
# over 4 draws, the benchmark games of BENCHMARKS.md: 0 for most moves, within 0.25 points for 90 %
# in midnight_party, 0.6 in hidden_castle). Two points is about a room entry missed or a guest
# left for Hugo a while; five is half a capture (a captured group books up to 10) or more.
INACCURACY = 0.5
MISTAKE = 2.0
BLUNDER = 5.0
MARKS = (("blunder", BLUNDER, "??"), ("mistake", MISTAKE, "?"), ("inaccuracy", INACCURACY, "?!"))  # largest first

CLEAR = 2.0  # a decision is marked only where its loss exceeds CLEAR times its loss_error
CHAMPION_BUDGET = 1500  # positions a decision of the champion inside its search (search's default budget)
TIE = 1e-9  # choices within this of the best value are best too (the chosen one first)


class AnalysisError(ValueError):
    """An evaluator that cannot judge the game, or a record line that holds no game."""


class AnalysisCancelled(AnalysisError):
    """An analysis stopped between two batches of decisions because its ``cancelled`` said so."""


def mark_of(loss: float, loss_error: float | None = 0.0) -> str | None:
    """The mark of a loss in points with its error: ``blunder``, ``mistake``, ``inaccuracy`` by
    size, where the loss clearly exceeds its error (``loss > CLEAR * loss_error``), else None; None
    too where the error is unknown (None: an evaluator whose accuracy was not measured)."""
    if loss_error is None or (loss_error > 0 and loss <= CLEAR * loss_error):
        return None
    for name, least, _ in MARKS:
        if loss >= least:
            return name
    return None


SYMBOLS = {name: symbol for name, _, symbol in MARKS}
PLURALS = {"inaccuracy": "inaccuracies", "mistake": "mistakes", "blunder": "blunders"}  # the seats' counts


# ------------------------------------------------------------------------------------------------
# evaluators


STAGES = ("placement", "early", "middle", "late")  # the opening (no die rolled yet), then thirds of the game's rolls
NOT_MEASURED = ("not measured for this evaluator and set-up: a loss has no error and no decision is marked "
                "(experiments/placement_values.py truth measures one)")


@dataclass
class Evaluator:
    """What values the choices: ``spec`` as ``--evaluator`` takes it, ``about`` in words,
    ``exact`` for a solution; ``values(engine, state)`` gives (n, A) for a batch of decisions;
    ``measured``: its entry of :data:`MEASURED_ACCURACY` (None: not measured), ``accuracy`` in words."""

    spec: str
    about: str
    exact: bool
    means: str
    # values(engine, state, first=0): ``first`` is the index of the batch's first decision in the
    # game's (its agent streams are those of the decisions' places in the whole game)
    values: Callable[..., np.ndarray] = field(repr=False)
    accuracy: str = NOT_MEASURED
    measured: dict | None = field(default=None, repr=False)

    def loss_error(self, stage: str) -> float | None:
        """A loss's error in ``stage`` (STAGES): 0 for the exact solution, None where not measured."""
        if self.exact:
            return 0.0
        if self.measured is None or stage not in self.measured["stages"]:
            return None
        return float(self.measured["stages"][stage]["loss_error"])

    def accuracy_view(self) -> dict[str, Any]:
        """The accuracy as the JSON carries it: ``measured`` (bool), ``about`` in words, the rule of
        the marks, and where measured each stage's figures, the command and its counts."""
        out: dict[str, Any] = {"measured": self.exact or self.measured is not None, "exact": self.exact,
                               "about": "exact" if self.exact else self.accuracy, "rule": MARK_RULE}
        if self.measured is not None and not self.exact:
            out.update({k: v for k, v in self.measured.items() if k != "stages"})
            out["stages"] = {stage: dict(figures) for stage, figures in self.measured["stages"].items()}
        return out


MARK_RULE = (f"a decision is marked only where its loss exceeds {CLEAR:g} x its loss_error (the evaluator's measured "
             "error of a loss in that stage of the game; 0 for an exact evaluator) and by size: "
             + ", ".join(f"{name} from {least:g} points" for name, least, _ in reversed(MARKS))
             + "; where the error was not measured, nothing is marked")

# What the default real-size evaluators were measured to be worth against a truth that needs no
# network: positions sampled from champion self-play games by stage, every legal choice played on by
# paired rollouts of the champion (one ply). A loss (the evaluator's best value minus a choice's)
# is compared with the rollouts' difference of the same two choices. ``loss_error``: the upper end of
# the 95 % interval of its root mean square error with the rollouts' own variance taken out (the
# positions as the sampled units); ``loss_bias``: the evaluator's loss minus the rollouts' on average
# (with its 95 % half-width); ``loss_mae``: mean absolute error, rollout noise included;
# ``noise_rms``: the rollouts' own error of a difference; ``value_bias``: the values' own bias.
# Points in the evaluator's units (``objective``: the margin, or minus the seat's own final points
# for a champion that weighs only its own). The truth is the champion's play, not optimal play.
# docs/RESEARCH.md, "Placement values at real size".
MEASURED_ACCURACY: dict[str, dict[str, Any]] = {
    "value-midnight_party-2p:budget=1500,placement=shipped": {
        "command": "python experiments/placement_values.py truth --variant midnight_party --players 2"
                   " --positions 40 --rollouts 128 --source-games 30 --seed 3 --max-cpu-seconds 600",
        "objective": "margin",
        "rollouts": 128, "source_games": 30, "cpu_seconds": 370, "stopped": "done",
        "stages": {
            "placement": {"loss_error": 1.984, "loss_rmse": 1.332, "loss_bias": 0.683, "loss_bias_half_width": 0.584,
                          "loss_mae": 2.137, "noise_rms": 2.328, "value_bias": -0.662, "value_bias_half_width": 0.135,
                          "positions": 40, "pairs": 868},
            "early": {"loss_error": 2.16, "loss_rmse": 1.614, "loss_bias": 0.541, "loss_bias_half_width": 0.633,
                      "loss_mae": 1.796, "noise_rms": 1.93, "value_bias": 0.208, "value_bias_half_width": 0.252,
                      "positions": 40, "pairs": 257},
            "middle": {"loss_error": 1.369, "loss_rmse": 1.01, "loss_bias": 0.089, "loss_bias_half_width": 0.465,
                       "loss_mae": 1.385, "noise_rms": 1.498, "value_bias": 0.106, "value_bias_half_width": 0.229,
                       "positions": 40, "pairs": 220},
            "late": {"loss_error": 1.112, "loss_rmse": 0.91, "loss_bias": 0.03, "loss_bias_half_width": 0.264,
                     "loss_mae": 0.935, "noise_rms": 0.758, "value_bias": -0.705, "value_bias_half_width": 0.261,
                     "positions": 40, "pairs": 187},
        }},
    "value-hidden_castle-2p:budget=1500,placement=shipped": {
        "command": "python experiments/placement_values.py truth --variant hidden_castle --players 2"
                   " --positions 40 --rollouts 128 --source-games 30 --seed 3 --max-cpu-seconds 600",
        "objective": "margin",
        "rollouts": 128, "source_games": 30, "cpu_seconds": 248, "stopped": "done",
        "stages": {
            "placement": {"loss_error": 2.194, "loss_rmse": 1.715, "loss_bias": 0.672, "loss_bias_half_width": 0.572,
                          "loss_mae": 2.111, "noise_rms": 2.053, "value_bias": -1.412, "value_bias_half_width": 0.144,
                          "positions": 40, "pairs": 868},
            "early": {"loss_error": 1.442, "loss_rmse": 0.884, "loss_bias": 0.024, "loss_bias_half_width": 0.487,
                      "loss_mae": 1.666, "noise_rms": 1.878, "value_bias": 0.275, "value_bias_half_width": 0.279,
                      "positions": 40, "pairs": 234},
            "middle": {"loss_error": 1.342, "loss_rmse": 0.981, "loss_bias": -0.258, "loss_bias_half_width": 0.421,
                       "loss_mae": 1.491, "noise_rms": 1.522, "value_bias": 0.192, "value_bias_half_width": 0.222,
                       "positions": 40, "pairs": 223},
            "late": {"loss_error": 1.049, "loss_rmse": 0.8, "loss_bias": -0.135, "loss_bias_half_width": 0.338,
                     "loss_mae": 1.083, "noise_rms": 1.112, "value_bias": 0.255, "value_bias_half_width": 0.158,
                     "positions": 40, "pairs": 170},
        }},
    "value-midnight_party-4p:budget=1500": {
        "command": "python experiments/placement_values.py truth --variant midnight_party --players 4"
                   " --positions 40 --rollouts 128 --source-games 30 --seed 3 --max-cpu-seconds 600",
        "objective": "margin",
        "rollouts": 128, "source_games": 30, "cpu_seconds": 448, "stopped": "done",
        "stages": {
            "placement": {"loss_error": 1.058, "loss_rmse": 0.65, "loss_bias": -0.14, "loss_bias_half_width": 0.341,
                          "loss_mae": 1.23, "noise_rms": 1.405, "value_bias": -0.024, "value_bias_half_width": 0.094,
                          "positions": 40, "pairs": 815},
            "early": {"loss_error": 1.309, "loss_rmse": 0.939, "loss_bias": -0.03, "loss_bias_half_width": 0.382,
                      "loss_mae": 1.012, "noise_rms": 1.137, "value_bias": -0.58, "value_bias_half_width": 0.187,
                      "positions": 40, "pairs": 191},
            "middle": {"loss_error": 1.042, "loss_rmse": 0.786, "loss_bias": -0.117, "loss_bias_half_width": 0.295,
                       "loss_mae": 1.083, "noise_rms": 0.83, "value_bias": 0.196, "value_bias_half_width": 0.136,
                       "positions": 40, "pairs": 247},
            "late": {"loss_error": 1.161, "loss_rmse": 0.939, "loss_bias": 0.024, "loss_bias_half_width": 0.274,
                     "loss_mae": 0.882, "noise_rms": 0.456, "value_bias": 0.268, "value_bias_half_width": 0.162,
                     "positions": 40, "pairs": 201},
        }},
    "value-hidden_castle-4p:budget=1500": {
        "command": "python experiments/placement_values.py truth --variant hidden_castle --players 4"
                   " --positions 30 --rollouts 128 --source-games 30 --seed 3 --max-cpu-seconds 400",
        "objective": "minus own final points, others weighted 0",
        "rollouts": 128, "source_games": 30, "cpu_seconds": 236, "stopped": "done",
        "stages": {
            "placement": {"loss_error": 0.931, "loss_rmse": 0.61, "loss_bias": 0.208, "loss_bias_half_width": 0.369,
                          "loss_mae": 1.082, "noise_rms": 1.229, "value_bias": -1.438, "value_bias_half_width": 0.085,
                          "positions": 30, "pairs": 607},
            "early": {"loss_error": 0.847, "loss_rmse": 0.498, "loss_bias": -0.126, "loss_bias_half_width": 0.325,
                      "loss_mae": 0.899, "noise_rms": 1.065, "value_bias": -1.443, "value_bias_half_width": 0.233,
                      "positions": 30, "pairs": 130},
            "middle": {"loss_error": 1.426, "loss_rmse": 0.945, "loss_bias": -0.179, "loss_bias_half_width": 0.363,
                       "loss_mae": 0.992, "noise_rms": 0.915, "value_bias": -0.85, "value_bias_half_width": 0.231,
                       "positions": 30, "pairs": 105},
            "late": {"loss_error": 1.513, "loss_rmse": 1.206, "loss_bias": -0.187, "loss_bias_half_width": 0.43,
                     "loss_mae": 1.067, "noise_rms": 0.709, "value_bias": -0.508, "value_bias_half_width": 0.273,
                     "positions": 30, "pairs": 101},
        }},
}


def measured_accuracy(spec: str) -> dict[str, Any] | None:
    """MEASURED_ACCURACY's entry for an evaluator spec (options in any order), or None."""
    try:
        wanted = parse_spec(spec)
        return next((entry for key, entry in MEASURED_ACCURACY.items() if parse_spec(key) == wanted), None)
    except ValueError:
        return None


def accuracy_words(entry: dict[str, Any]) -> str:
    """A measured accuracy in one sentence."""
    stages = entry["stages"]
    errors = ", ".join(f"{stages[s]['loss_error']:.2f}" if s in stages else "-" for s in STAGES)
    return (f"measured against {entry['rollouts']} paired champion rollouts a choice on "
            f"{sum(stages[s]['positions'] for s in stages)} positions of champion games: a loss's error "
            f"(RMS, upper 95 %) is {errors} points in the opening, early, middle and late game; "
            f"a decision is marked only where its loss exceeds {CLEAR:g} x that error (measured where the "
            "champion plays; off its path, e.g. in other agents' games, the error may be larger)")


def with_accuracy(evaluator: Evaluator) -> Evaluator:
    """``evaluator`` with its measured accuracy attached where its spec was measured."""
    entry = None if evaluator.exact else measured_accuracy(evaluator.spec)
    if entry is not None:
        evaluator.measured = entry
        evaluator.accuracy = accuracy_words(entry)
    return evaluator


MARGIN = ("the deciding seat's expected final margin in spooky points: the other players' mean final points "
          "minus its own (alone: minus its own), higher is better")


def _means(others: float) -> str:
    if others == 1:
        return MARGIN
    if others == 0:
        return "minus the deciding seat's expected final spooky points (the evaluator weighs only its own)"
    return (f"the deciding seat's expected final margin in spooky points, the others' mean final points weighted "
            f"{others:g}, minus its own; higher is better")


def champion_name(engine: Engine) -> str | None:
    """The set-up's shipped champion (``value-<variant>-<N>p``) where it is registered and fits, else None."""
    name = f"value-{engine.variant}-{engine.num_players}p"
    if name not in {info.name for info in agent_infos()}:
        return None
    try:
        return name if fit_error(make_agent(name), engine) is None else None
    except (ValueError, OSError):
        return None


def allowed_evaluators(engine: Engine) -> str:
    """The evaluators there are for ``engine``'s game, in words (for error messages)."""
    champion = champion_name(engine)
    listed = ["optimal (a set-up solved by `midnight solve ... --save`, or optimal:path=DIR)",
              "search[:budget=N]"]
    if champion:
        listed.append(f"{champion}[:budget=N]")
    listed.append("value:path=FILE.npz")
    return ", ".join(listed)


def solution_evaluator(solution: Solution, spec: str = "optimal") -> Evaluator:
    """The exact solution as an evaluator (values as the module docstring says)."""
    players = solution.config.num_players

    def values(engine: Engine, state: GameState, first: int = 0) -> np.ndarray:
        # points still to come from before the choice (seat 0's, or seat 0's minus seat 1's), and
        # those booked: the final result, turned into the deciding seat's margin
        final = solution.action_values(state) + booked_points(state, "points")[:, None]
        if players == 1:
            return -final
        return np.where(state.player == 0, -1.0, 1.0)[:, None] * final

    return Evaluator(spec, f"the exact solution of the set-up ({solution.meta.get('source', 'solved here')})",
                     True, MARGIN, values)


def agent_evaluator(engine: Engine, spec: str, about: str | None = None) -> Evaluator:
    """An agent with ``action_values`` (the search and value agents) as an evaluator; AnalysisError
    naming it when it values no actions or cannot play ``engine``'s game."""
    try:
        agent = make_agent(spec)
    except ValueError as err:
        raise AnalysisError(f"evaluator {spec!r}: {err}") from None
    if not callable(getattr(agent, "action_values", None)):
        raise AnalysisError(f"evaluator {spec!r} values no actions (it only picks one): allowed are "
                            f"{allowed_evaluators(engine)}")
    why = fit_error(agent, engine)
    if why is not None:
        raise AnalysisError(f"evaluator {spec!r} cannot judge {_setup(engine)}: {why}; allowed are "
                            f"{allowed_evaluators(engine)}")
    others = getattr(agent, "others_weight", lambda: 1.0)()

    def values(eng: Engine, state: GameState, first: int = 0) -> np.ndarray:
        n = state.batch_size
        streams = agent_streams(np.arange(first, first + n))
        return np.asarray(agent.action_values(Decisions(eng, state, np.arange(n), streams)), np.float64)

    return with_accuracy(Evaluator(spec, about or f"the agent {spec}", False, _means(others), values))


def optimal_evaluator(engine: Engine, spec: str = "optimal", folder: str | Path | None = None) -> Evaluator:
    """``optimal`` or ``optimal:path=DIR`` as an evaluator; AnalysisError naming it when it has no
    solution of ``engine``'s set-up for the points objective."""
    _, options = parse_spec(spec)
    unknown = sorted(set(options) - {"path", "objective"})
    if unknown:
        raise AnalysisError(f"evaluator {spec!r}: unknown option {unknown[0]!r}: optimal takes path and objective")
    if options.get("objective", "points") != "points":
        raise AnalysisError(f"evaluator {spec!r}: objective {options['objective']!r} is not allowed: losses are "
                            "counted in points (objective points)")
    try:
        if "path" in options:
            solution = load_solution(str(options["path"]))
            solution.check_engine(engine)
        else:
            solution = find_solution(engine, "points", folder)
    except ValueError as err:
        raise AnalysisError(f"evaluator {spec!r} cannot judge {_setup(engine)}: {err}; allowed are "
                            f"{allowed_evaluators(engine)}") from None
    if solution.objective != "points":
        raise AnalysisError(f"evaluator {spec!r}: the solution {solution.meta.get('source')} is for objective "
                            f"{solution.objective}: losses are counted in points (solve with --objective points)")
    return solution_evaluator(solution, spec)


def evaluator_for(engine: Engine, spec: str | None = None, folder: str | Path | None = None) -> Evaluator:
    """The evaluator ``spec`` names for ``engine``'s game (``optimal``, ``optimal:path=DIR`` or an
    agent spec), or without one the strongest available (module docstring). ``folder``: where
    saved solutions are looked for (default: the solution folder)."""
    if spec is None:
        try:
            return optimal_evaluator(engine, "optimal", folder)
        except AnalysisError:
            pass
        champion = champion_name(engine)
        if champion is not None:
            spec, placement = f"{champion}:budget={CHAMPION_BUDGET}", ""
            try:  # its placement network judges the opening where one is shipped (RESEARCH.md, "Placement values")
                make_agent(f"{spec},placement=shipped")
                spec, placement = f"{spec},placement=shipped", ", the opening judged by its placement network"
            except ValueError:
                pass
            return agent_evaluator(engine, spec,
                                   f"the set-up's shipped champion inside its search ({CHAMPION_BUDGET} positions "
                                   f"a decision{placement}); no saved solution of the set-up")
        return agent_evaluator(engine, "search", "the expectimax search with the expert's evaluation; no saved "
                                                 "solution nor shipped champion of the set-up")
    spec = str(spec).strip()
    if parse_spec(spec)[0] == "optimal":
        return optimal_evaluator(engine, spec, folder)
    return agent_evaluator(engine, spec)


def _setup(engine: Engine) -> str:
    return setup_words(engine.variant, engine.num_players, engine.config.options)


# ------------------------------------------------------------------------------------------------
# the placement book

def book_entry(engine: Engine, path: str | Path | None = None) -> dict[str, Any] | None:
    """The placement book's entry of ``engine``'s set-up (variant, players, rule options), or None
    (the shipped book, package data of midnight_agents, by default; an unreadable book: none)."""
    from midnight_agents.book import BookError
    from midnight_agents.book import book_entry as entry_of

    try:
        return entry_of(engine.variant, engine.num_players, dict(engine.config.options), path)
    except BookError:
        return None  # no book values, nothing else changes


def book_view(engine: Engine, entry: dict[str, Any], action: int) -> dict[str, Any] | None:
    """The book's value of the chosen square and of its best square, each with its 95 % half-width
    and rollouts (None where the chosen square is not in the book)."""
    def square(s: int) -> dict[str, Any] | None:
        if not 0 <= s < len(entry["values"]) or entry["values"][s] is None:
            return None
        return {"square": engine.layout.to_notation(engine.layout.place(s), 0), "value": _number(entry["values"][s]),
                "half_width": _number(entry["half_widths"][s]), "rollouts": int(entry["rollouts"][s])}

    chosen, best = square(int(action)), square(int(entry["best"]))
    if chosen is None or best is None:
        return None
    out = {"chosen": chosen, "best": best, "champion": entry.get("champion"),
           "about": "the value of seat 0's first-guest square (its margin: the others' mean final points minus its "
                    "own) when the champion (one ply) plays everything else, paired rollouts with successive "
                    "halving; 95 % half-widths (docs/placement_book.json)"}
    diff = entry.get("difference")
    if isinstance(diff, dict) and "runner_up" in entry:
        runner = engine.layout.to_notation(engine.layout.place(int(entry["runner_up"])), 0)
        out["best_over_runner_up"] = {"runner_up": runner,
                                      "mean": _number(diff["mean"]), "half_width": _number(diff["half_width"]),
                                      "separated": bool(diff.get("separated"))}
    return out


# ------------------------------------------------------------------------------------------------
# the analysis


@dataclass
class Judged:
    """One decision of the game, judged."""

    decision: int  # 1, 2, ... in the game's order
    event: int  # index of its event in the record
    seat: int
    phase: str  # place or move
    stage: str  # placement (the opening: no die rolled yet), early, middle or late (thirds of the game's rolls)
    roll: int | None  # the number moved with (None: a placement)
    chosen: str  # in record notation
    best: str  # the best choice (the chosen one where it is among the best)
    loss: float  # points the chosen choice gives away, >= 0
    loss_error: float | None  # the evaluator's measured error of a loss in this stage (0: exact; None: not measured)
    mark: str | None  # inaccuracy, mistake, blunder or None (module docstring: only where loss > CLEAR x loss_error)
    forced: bool  # one legal choice: not valued
    chosen_value: float | None
    best_value: float | None
    values: dict[str, float] | None  # every legal choice's value (None: forced)
    book: dict[str, Any] | None = None  # the placement book's values (seat 0's first guest of a covered set-up)

    def as_dict(self) -> dict[str, Any]:
        out = dict(self.__dict__)
        for key in ("loss", "loss_error", "chosen_value", "best_value"):
            out[key] = _number(out[key])
        if self.values is not None:
            out["values"] = {note: _number(v) for note, v in self.values.items()}
        return out


@dataclass
class GameAnalysis:
    """A recorded game judged: its set-up, the evaluator, every decision and each seat's totals."""

    record: dict = field(repr=False)
    evaluator: Evaluator
    decisions: list[Judged]
    seconds: float
    source: str | None = None  # file and line, where known

    @property
    def num_players(self) -> int:
        return int(self.record["num_players"])

    def seats(self) -> list[dict[str, Any]]:
        """Per seat: its agent (where the record names it), decisions, valued ones, total loss,
        the loss per valued decision, the count of each mark and the final points."""
        agents = self.record.get("agents")
        out = []
        for seat in range(self.num_players):
            mine = [d for d in self.decisions if d.seat == seat]
            judged = [d for d in mine if not d.forced]
            loss = float(sum(d.loss for d in mine))
            row: dict[str, Any] = {
                "seat": seat, "agent": str(agents[seat]) if isinstance(agents, list) and len(agents) > seat else None,
                "decisions": len(mine), "judged": len(judged), "loss": _number(loss),
                "loss_per_decision": _number(loss / len(judged)) if judged else None,
                "final_points": self.record["final_points"][seat]}
            for name, _, _ in reversed(MARKS):
                row[PLURALS[name]] = sum(d.mark == name for d in mine)
            out.append(row)
        return out

    def as_dict(self) -> dict[str, Any]:
        rec = self.record
        return {"format": FORMAT, "source": self.source, "variant": rec["variant"],
                "num_players": self.num_players, "options": rec["options"], "seed": rec.get("seed"),
                "agents": rec.get("agents"), "final_points": rec["final_points"], "winners": rec["winners"],
                "evaluator": {"spec": self.evaluator.spec, "about": self.evaluator.about,
                              "exact": self.evaluator.exact, "values": self.evaluator.means,
                              "accuracy": self.evaluator.accuracy_view()},
                "thresholds": {name: least for name, least, _ in reversed(MARKS)},
                "marking": {"clear": CLEAR, "rule": MARK_RULE},
                "decisions": [d.as_dict() for d in self.decisions], "seats": self.seats(),
                "seconds": round(self.seconds, 3)}


def _number(value: float | None) -> float | None:
    return None if value is None else round(float(value), 4)


def decision_positions(engine: Engine, rec: dict) -> tuple[GameState | None, list[int], list[int]]:
    """The position before every decision of a record already replayed (a batch, one game per
    decision), the index of each one's event, and the action chosen."""
    state = engine.new_games([0])
    positions, events, actions = [], [], []
    for k, ev in enumerate(rec["events"]):
        if ev["e"] == "roll":
            engine.apply_roll(state, [FACES_BY_NAME[ev["face"]]])
        elif ev["e"] in ("place", "move"):
            action = engine.layout.from_notation(ev["a"], int(state.roll[0]))
            positions.append(state.copy())
            events.append(k)
            actions.append(action)
            engine.apply_action(state, [action], check=False)
    return (GameState.concatenate(positions) if positions else None), events, actions


def analyze_record(rec: Any, line: int | None = None, evaluator: str | None = None, source: str | None = None,
                   folder: str | Path | None = None, batch: int | None = None,
                   cancelled: Callable[[], bool] | None = None) -> GameAnalysis:
    """Judge every decision of the record ``rec`` (module docstring): RecordError naming the line
    (``line``) of a record that does not replay, AnalysisError of an evaluator that cannot judge
    its game. ``evaluator``: a spec (``optimal``, ``search``, ``value-...:budget=N``), or None for
    the strongest available; ``folder``: where saved solutions are looked for. ``batch``: the
    decisions valued at once (None: all; fewer bound the memory, and each decision's value is the
    same, up to a network's rounding); ``cancelled``: asked before each batch, AnalysisCancelled
    when it says True (the web page's analysis whose client has gone)."""
    started = time.perf_counter()
    engine = engine_for_record(rec, line)
    replay_record(rec, line, engine)  # a bad record is refused before anything is judged
    judge = evaluator_for(engine, evaluator, folder)
    state, events, actions = decision_positions(engine, rec)
    judged: list[Judged] = []
    if state is not None:
        legal = state.legal.astype(bool)
        forced = legal.sum(axis=1) == 1
        values = np.full(legal.shape, np.nan)
        valued = np.flatnonzero(~forced)
        step = max(1, len(valued) if batch is None else int(batch))
        for first in range(0, len(valued), step):
            if cancelled is not None and cancelled():
                raise AnalysisCancelled(f"the analysis was cancelled after {first} of {len(valued)} decisions valued")
            chunk = valued[first:first + step]
            values[chunk] = judge.values(engine, state.take(chunk), first)
        stages = decision_stages(state, sum(ev["e"] == "roll" for ev in rec["events"]))
        book = book_entry(engine)
        for i, (k, action) in enumerate(zip(events, actions)):
            one = _judge_one(engine, state, i, k, action, values[i], bool(forced[i]), judge, stages[i])
            if book is not None and i == 0 and _opening(state, i):
                one.book = book_view(engine, book, action)
            judged.append(one)
    return GameAnalysis(rec, judge, judged, time.perf_counter() - started, source)


def decision_stages(state: GameState, rolls: int) -> list[str]:
    """Each decision's stage (STAGES): ``placement`` before the first roll, else ``early``,
    ``middle`` or ``late`` by the share of the game's ``rolls`` made before it (thirds), as
    ``experiments/placement_values.py truth`` sorts the positions it measures."""
    made = state.rolls.astype(np.int64)
    out = []
    for i in range(state.batch_size):
        if made[i] == 0 and int(state.phase[i]) == PLACE:
            out.append("placement")
        else:
            out.append(STAGES[1 + min(2, int(3 * made[i] / max(rolls, 1)))])
    return out


def _opening(state: GameState, i: int) -> bool:
    """Decision ``i`` is seat 0's first guest at the start of the game (what the placement book values)."""
    return int(state.phase[i]) == PLACE and int(state.rolls[i]) == 0 and int(state.queue_pos[i]) == 0 \
        and int(state.player[i]) == 0


def _judge_one(engine: Engine, state: GameState, i: int, event: int, action: int, row: np.ndarray, forced: bool,
               judge: Evaluator, stage: str) -> Judged:
    roll = int(state.roll[i])
    placing = int(state.phase[i]) == PLACE
    note = engine.layout.to_notation(action, roll)
    common = dict(decision=i + 1, event=event, seat=int(state.player[i]), phase=PHASE_NAMES[int(state.phase[i])],
                  stage=stage, roll=None if placing else roll, chosen=note, forced=forced)
    spec = judge.spec
    if forced:
        return Judged(**common, best=note, loss=0.0, loss_error=0.0, mark=None, chosen_value=None, best_value=None,
                      values=None)
    legal = np.flatnonzero(state.legal[i])
    if np.isnan(row[legal]).any():
        raise AnalysisError(f"evaluator {spec!r} gave no value to a legal choice at decision {i + 1} (event {event})")
    top = float(np.max(row[legal]))
    best = action if row[action] >= top - TIE else int(legal[np.argmax(row[legal] >= top - TIE)])
    loss = max(0.0, top - float(row[action]))
    if loss < TIE:
        loss = 0.0
    error = judge.loss_error(stage)
    return Judged(**common, best=engine.layout.to_notation(best, roll), loss=loss, loss_error=error,
                  mark=mark_of(loss, error), chosen_value=float(row[action]), best_value=top,
                  values={engine.layout.to_notation(int(a), roll): float(row[a]) for a in legal})


def analyze_file(path: str | Path, line: int | None = None, evaluator: str | None = None,
                 folder: str | Path | None = None) -> GameAnalysis:
    """Judge the game on line ``line`` (default: the first record) of a record file; RecordError
    naming the file and line that holds no game (not JSON, not a record, no such line)."""
    if line is not None:
        line = checks.integer("line", line, 1, error=AnalysisError)
    found, last = None, None
    for number, rec in read_lines(path):
        if line is None or number == line:
            found = (number, rec)
            break
        last = number
    if found is None:
        where = f"its last record is on line {last}" if last else "it holds no record"
        raise RecordError(f"{path} has no record on line {line}: {where}" if line is not None
                          else f"{path} holds no record")
    number, rec = found
    if isinstance(rec, RecordError):
        raise RecordError(f"{path}: {rec}")
    try:
        return analyze_record(rec, number, evaluator, f"{path} line {number}", folder)
    except RecordError as err:
        raise RecordError(f"{path}: {err}") from None


# ------------------------------------------------------------------------------------------------
# as text


def format_analysis(analysis: GameAnalysis, every: bool = True) -> str:
    """The analysis as the ``midnight analyze`` table: a line per decision (``every=False``: the
    marked ones only) with its loss ± its error, the placement book where it covers the opening,
    then a line per seat."""
    rec, ev = analysis.record, analysis.evaluator
    n = analysis.num_players
    agents = rec.get("agents")
    head = [f"{rec['variant']}, {n} player{'s' if n > 1 else ''}"
            + (f" ({', '.join(map(str, agents))})" if isinstance(agents, list) else "")
            + (f", seed {rec['seed']}" if rec.get("seed") is not None else "")
            + (f", {analysis.source}" if analysis.source else "")
            + f": {len(analysis.decisions)} decisions judged in {analysis.seconds:.1f} s",
            f"evaluator {ev.spec}: {ev.about}",
            f"accuracy: {'exact' if ev.exact else ev.accuracy}",
            f"value: {ev.means}; loss: the best value minus the chosen one's, in points, ± its error (the "
            "evaluator's measured error of a loss in that stage; - not measured)",
            "marks: " + ", ".join(f"{symbol} {name} (loss >= {least:g})" for name, least, symbol in reversed(MARKS))
            + f", only where the loss exceeds {CLEAR:g} x its error"
            + ("" if ev.exact or ev.measured is not None else ": the error is not measured here, nothing is marked"),
            ""]
    width = max([6] + [len(d.chosen) for d in analysis.decisions] + [len(d.best) for d in analysis.decisions])
    rows = [f"{'#':>4} {'event':>5} {'seat':>4} {'stage':>9} {'roll':>4}  {'chosen':<{width}} {'loss':>6} "
            f"{'± err':>6}  {'best':<{width}} {'value':>7}  mark"]
    for d in analysis.decisions:
        if not every and d.mark is None:
            continue
        roll = "-" if d.roll is None else str(d.roll)
        value = "forced" if d.forced else f"{d.best_value:+.2f}"
        error = "" if d.forced else "-" if d.loss_error is None else f"{d.loss_error:.2f}"
        mark = "" if d.mark is None else f"{SYMBOLS[d.mark]} {d.mark}"
        rows.append(f"{d.decision:>4} {d.event:>5} {d.seat:>4} {d.stage:>9} {roll:>4}  {d.chosen:<{width}} "
                    f"{d.loss:>6.2f} {error:>6}  {d.best:<{width}} {value:>7}  {mark}".rstrip())
    for d in analysis.decisions:
        if d.book is not None:
            rows += ["", book_line(d)]
    seats = analysis.seats()
    names = [str(s["agent"] or "") for s in seats]
    aw = max([5] + [len(a) for a in names])
    rows += ["", f"{'seat':>4}  {'agent':<{aw}} {'decisions':>9} {'loss':>7} {'a choice':>8} {'inaccuracies':>12} "
                 f"{'mistakes':>8} {'blunders':>8} {'points':>6}"]
    for s, name in zip(seats, names):
        per = "-" if s["loss_per_decision"] is None else f"{s['loss_per_decision']:.3f}"
        rows.append(f"{s['seat']:>4}  {name:<{aw}} {s['decisions']:>9} {s['loss']:>7.2f} {per:>8} "
                    f"{s['inaccuracies']:>12} {s['mistakes']:>8} {s['blunders']:>8} {s['final_points']:>6}")
    return "\n".join(head + rows)


def book_line(d: Judged) -> str:
    """The placement book's word on decision ``d`` (seat 0's first guest) in one line."""
    b = d.book
    assert b is not None

    def one(x: dict) -> str:
        return f"{x['square']} {x['value']:+.2f} ± {x['half_width']:.2f} ({x['rollouts']:,} rollouts)"

    text = (f"placement book, decision {d.decision} (seat 0's first guest, margin): chosen {one(b['chosen'])}; "
            f"best {one(b['best'])}")
    r = b.get("best_over_runner_up")
    if r:
        text += (f"; best - runner-up {r['runner_up']}: {r['mean']:+.2f} ± {r['half_width']:.2f}"
                 f"{'' if r['separated'] else ' (not separated)'}")
    return text
