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

CHAMPION_BUDGET = 1500  # positions a decision of the champion inside its search (search's default budget)
TIE = 1e-9  # choices within this of the best value are best too (the chosen one first)


class AnalysisError(ValueError):
    """An evaluator that cannot judge the game, or a record line that holds no game."""


class AnalysisCancelled(AnalysisError):
    """An analysis stopped between two batches of decisions because its ``cancelled`` said so."""


def mark_of(loss: float) -> str | None:
    """The mark of a loss in points: ``blunder``, ``mistake``, ``inaccuracy``, or None."""
    for name, least, _ in MARKS:
        if loss >= least:
            return name
    return None


SYMBOLS = {name: symbol for name, _, symbol in MARKS}
PLURALS = {"inaccuracy": "inaccuracies", "mistake": "mistakes", "blunder": "blunders"}  # the seats' counts


# ------------------------------------------------------------------------------------------------
# evaluators


@dataclass
class Evaluator:
    """What values the choices: ``spec`` as ``--evaluator`` takes it, ``about`` in words,
    ``exact`` for a solution; ``values(engine, state)`` gives (n, A) for a batch of decisions."""

    spec: str
    about: str
    exact: bool
    means: str
    # values(engine, state, first=0): ``first`` is the index of the batch's first decision in the
    # game's (its agent streams are those of the decisions' places in the whole game)
    values: Callable[..., np.ndarray] = field(repr=False)
    accuracy: str = "not measured (docs/RESEARCH.md measures the default evaluators)"


# What the default real-size evaluators were measured to be worth against rollouts of the champion
# (docs/RESEARCH.md, "Placement values at real size"; experiments/placement_values.py truth)
MEASURED_ACCURACY = {
    ("midnight_party", 2): "measured against 64 champion rollouts a choice, 48 positions of champion games: each "
                           "choice's value relative to the position's others is off by 1.0-1.7 points by phase "
                           "(opening, early, middle, late; rollout noise included), bias within +-0.7: a loss under "
                           "about 2 points is within that error",
}


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

    return Evaluator(spec, about or f"the agent {spec}", False, _means(others), values)


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
            evaluator = agent_evaluator(engine, spec,
                                        f"the set-up's shipped champion inside its search ({CHAMPION_BUDGET} positions "
                                        f"a decision{placement}); no saved solution of the set-up")
            measured = MEASURED_ACCURACY.get((engine.variant, engine.num_players)) if placement else None
            if measured:
                evaluator.accuracy = measured
            return evaluator
        return agent_evaluator(engine, "search", "the expectimax search with the expert's evaluation; no saved "
                                                 "solution nor shipped champion of the set-up")
    spec = str(spec).strip()
    if parse_spec(spec)[0] == "optimal":
        return optimal_evaluator(engine, spec, folder)
    return agent_evaluator(engine, spec)


def _setup(engine: Engine) -> str:
    return setup_words(engine.variant, engine.num_players, engine.config.options)


# ------------------------------------------------------------------------------------------------
# the analysis


@dataclass
class Judged:
    """One decision of the game, judged."""

    decision: int  # 1, 2, ... in the game's order
    event: int  # index of its event in the record
    seat: int
    phase: str  # place or move
    roll: int | None  # the number moved with (None: a placement)
    chosen: str  # in record notation
    best: str  # the best choice (the chosen one where it is among the best)
    loss: float  # points the chosen choice gives away, >= 0
    mark: str | None  # inaccuracy, mistake, blunder or None
    forced: bool  # one legal choice: not valued
    chosen_value: float | None
    best_value: float | None
    values: dict[str, float] | None  # every legal choice's value (None: forced)

    def as_dict(self) -> dict[str, Any]:
        out = dict(self.__dict__)
        for key in ("loss", "chosen_value", "best_value"):
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
                              "accuracy": "exact" if self.evaluator.exact else self.evaluator.accuracy},
                "thresholds": {name: least for name, least, _ in reversed(MARKS)},
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
        for i, (k, action) in enumerate(zip(events, actions)):
            judged.append(_judge_one(engine, state, i, k, action, values[i], bool(forced[i]), judge.spec))
    return GameAnalysis(rec, judge, judged, time.perf_counter() - started, source)


def _judge_one(engine: Engine, state: GameState, i: int, event: int, action: int, row: np.ndarray, forced: bool,
               spec: str) -> Judged:
    roll = int(state.roll[i])
    placing = int(state.phase[i]) == PLACE
    note = engine.layout.to_notation(action, roll)
    common = dict(decision=i + 1, event=event, seat=int(state.player[i]), phase=PHASE_NAMES[int(state.phase[i])],
                  roll=None if placing else roll, chosen=note, forced=forced)
    if forced:
        return Judged(**common, best=note, loss=0.0, mark=None, chosen_value=None, best_value=None, values=None)
    legal = np.flatnonzero(state.legal[i])
    if np.isnan(row[legal]).any():
        raise AnalysisError(f"evaluator {spec!r} gave no value to a legal choice at decision {i + 1} (event {event})")
    top = float(np.max(row[legal]))
    best = action if row[action] >= top - TIE else int(legal[np.argmax(row[legal] >= top - TIE)])
    loss = max(0.0, top - float(row[action]))
    if loss < TIE:
        loss = 0.0
    return Judged(**common, best=engine.layout.to_notation(best, roll), loss=loss, mark=mark_of(loss),
                  chosen_value=float(row[action]), best_value=top,
                  values={engine.layout.to_notation(int(a), roll): float(row[a]) for a in legal})


def analyze_file(path: str | Path, line: int | None = None, evaluator: str | None = None,
                 folder: str | Path | None = None) -> GameAnalysis:
    """Judge the game on line ``line`` (default: the first record) of a record file; RecordError
    naming the file and line that holds no game (not JSON, not a record, no such line)."""
    if line is not None and (isinstance(line, bool) or not isinstance(line, int) or line < 1):
        raise AnalysisError(f"line {line!r} is out of range: allowed are 1 or more")
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
    marked ones only), then a line per seat."""
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
            f"value: {ev.means}; loss: the best value minus the chosen one's, in points",
            "marks: " + ", ".join(f"{symbol} {name} (loss >= {least:g})" for name, least, symbol in reversed(MARKS)),
            ""]
    width = max([6] + [len(d.chosen) for d in analysis.decisions] + [len(d.best) for d in analysis.decisions])
    rows = [f"{'#':>4} {'event':>5} {'seat':>4} {'roll':>4}  {'chosen':<{width}} {'loss':>6}  "
            f"{'best':<{width}} {'value':>7}  mark"]
    for d in analysis.decisions:
        if not every and d.mark is None:
            continue
        roll = "-" if d.roll is None else str(d.roll)
        value = "forced" if d.forced else f"{d.best_value:+.2f}"
        mark = "" if d.mark is None else f"{SYMBOLS[d.mark]} {d.mark}"
        rows.append(f"{d.decision:>4} {d.event:>5} {d.seat:>4} {roll:>4}  {d.chosen:<{width}} {d.loss:>6.2f}  "
                    f"{d.best:<{width}} {value:>7}  {mark}".rstrip())
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
