"""An open data set of good decisions (``midnight dataset``): every decision of a solved set-up
with every legal action's exact value, or the shipped champion's decisions in self-play at real
size with every legal action valued by the trusted evaluator, written as CSV with a data card.

Two tables, joined on ``decision_id``:

- ``decisions.csv``: one row per decision (who decides, the phase, the roll, its value, and the
  observation vector the agents see, :mod:`midnight_env.core.observation`, one column each);
- ``actions.csv``: one row per legal action of each decision (its index, notation, value, loss
  and whether it is optimal, or was chosen).

The features are written once per decision rather than once per action: the tables are a third
of the size of one wide table, and a join (``decisions.merge(actions, on="decision_id")``) gives
it back. Values are in the units :mod:`midnight_env.analysis.judge` uses: the deciding seat's
expected final margin in spooky points, higher is better.

Everything is written into a temporary folder beside the target and renamed at the end, so a
run that fails leaves no half data set; a target that exists is refused before anything is
computed.
"""

from __future__ import annotations

import datetime
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from midnight_env.analysis.judge import (
    MARGIN,
    TIE,
    AnalysisError,
    analyze_record,
    champion_name,
    decision_positions,
    evaluator_for,
    solution_evaluator,
)
from midnight_env.arena.play import play_batch
from midnight_env.arena.registry import agent_infos, make_agent
from midnight_env.core.config import setup_words
from midnight_env.core.engine import ENGINE_VERSION, Engine
from midnight_env.core.observation import encode_observations, observation_names
from midnight_env.core.state import MOVE, PHASE_NAMES, PLACE
from midnight_env.infra import checks
from midnight_env.infra.provenance import code_commit
from midnight_env.solve.optimal_play import optimal_visits
from midnight_env.solve.setups import SET_UPS
from midnight_env.solve.solution import solve

DATA_CARD = "DATA_CARD.md"
DECISIONS = "decisions.csv"
ACTIONS = "actions.csv"
CHUNK = 65_536  # positions of a solution decoded and valued at once


class DatasetError(ValueError):
    """Bad input to an export: a target folder that exists, an unknown set-up, no champion."""


@dataclass
class Export:
    """What an export wrote: its folder, each file's rows and bytes, and the seconds it took."""

    out: Path
    files: list[tuple[str, int, int]] = field(default_factory=list)  # (name, rows, bytes); rows 0 for the card
    seconds: float = 0.0

    @property
    def rows(self) -> int:
        return sum(rows for _, rows, _ in self.files)

    @property
    def bytes(self) -> int:
        return sum(size for _, _, size in self.files)


# ------------------------------------------------------------------------------------------------
# checks


def check_out(out: str | Path) -> Path:
    """The target folder; DatasetError when anything is there already (the data set is written whole)."""
    path = Path(out)
    if path.exists() or path.is_symlink():
        raise DatasetError(f"--out {str(out)!r} exists: allowed is a new folder (the data set is written whole)")
    return path


def solved_set_ups() -> list[str]:
    """The named set-ups an export takes: those solved for points (values in points of margin)."""
    return [name for name, s in SET_UPS.items() if s.objective == "points"]


def check_set_up(name: str) -> str:
    return checks.choice("--set-up", name, solved_set_ups(), error=DatasetError)


def champions() -> list[str]:
    return sorted(i.name for i in agent_infos() if i.name.startswith("value-") and not i.name.endswith("-v1"))


def selfplay_engine(variant: str, players: int) -> tuple[Engine, str]:
    """The real-size game and its shipped champion; DatasetError naming the set-ups that have one."""
    engine = Engine(variant, players)  # an unknown variant or player count is named here
    champion = champion_name(engine)
    if champion is None:
        shipped = ", ".join(c.removeprefix("value-") for c in champions())
        raise DatasetError(f"{setup_words(variant, players, {})} has no shipped champion: allowed are "
                           f"--variant/--players of {shipped}")
    return engine, champion


# ------------------------------------------------------------------------------------------------
# CSV


def _quote(text: str) -> str:
    if any(c in text for c in ',"\n\r'):
        return '"' + text.replace('"', '""') + '"'
    return text


def _strings(values) -> list[str]:
    """A column as CSV fields: bools 1/0, integers as written, floats the shortest text that reads
    back the same (empty for nan), text quoted where it must be."""
    arr = np.asarray(values)
    if arr.dtype == bool:
        arr = arr.astype(np.int8)
    if arr.dtype.kind in "iu":
        labels, inverse = np.unique(arr, return_inverse=True)
        text = [str(int(v)) for v in labels]
    elif arr.dtype.kind == "f":
        labels, inverse = np.unique(arr, return_inverse=True)
        text = ["" if np.isnan(v) else np.format_float_positional(v, unique=True, trim="-") for v in labels]
    else:
        return [_quote(str(v)) for v in arr.tolist()]
    table = np.array(text, dtype=object)
    return table[inverse.reshape(-1)].tolist()


class CsvTable:
    """A CSV file written in chunks of columns; counts its rows."""

    def __init__(self, path: Path, columns: list[str]):
        self.path, self.columns, self.rows = path, list(columns), 0
        self._file = open(path, "w", encoding="utf-8", newline="")
        self._file.write(",".join(_quote(c) for c in self.columns) + "\n")

    def write(self, data: dict[str, np.ndarray] | list) -> None:
        """``data``: every column's values (a name each, or a list in the columns' order; a 2-D
        array stands for as many columns as it has)."""
        cols: list[list[str]] = []
        parts = [data[c] for c in self.columns] if isinstance(data, dict) else data
        for part in parts:
            arr = np.asarray(part)
            if arr.ndim == 2:
                cols.extend(_strings(arr[:, j]) for j in range(arr.shape[1]))
            else:
                cols.append(_strings(arr))
        if len(cols) != len(self.columns):
            raise AssertionError(f"{self.path.name}: {len(cols)} columns given, {len(self.columns)} named")
        n = len(cols[0]) if cols else 0
        if n:
            self._file.write("\n".join(map(",".join, zip(*cols))) + "\n")
        self.rows += n

    def close(self) -> tuple[str, int, int]:
        self._file.close()
        return self.path.name, self.rows, self.path.stat().st_size


# ------------------------------------------------------------------------------------------------
# the columns, documented (the data card's tables)

OBS_PREFIX = "obs:"

SOLVED_DECISION_COLUMNS = [
    ("decision_id", "the position's state number in the solution (the key of actions.csv)"),
    ("seat", "the seat deciding (0 places first)"),
    ("phase", "place (placing a guest on the gallery) or move (choosing a move for the roll)"),
    ("roll", "the number rolled, 1, 2, 4 or 5 (0 while placing)"),
    ("legal_actions", "how many legal actions the position has (rows of actions.csv)"),
    ("value", "the position's exact value for the deciding seat: the best legal action's value (points of margin)"),
    ("visits", "how often optimal play (every seat's) meets the position in one game: the chance of reaching it "
               "for a position met at most once a game, more than 1 where play can come back to it (a pass); "
               "0 for one optimal play never reaches"),
]
SELFPLAY_DECISION_COLUMNS = [
    ("decision_id", "the decision's number in the data set, from 0 (the key of actions.csv)"),
    ("game", "the game's number in the data set, from 0"),
    ("seed", "the game's seed (`midnight simulate --seed`; the same seed replays the same dice)"),
    ("decision", "the decision's number in its game, from 1 (forced ones counted, not written)"),
    ("seat", "the seat deciding (0 places first)"),
    ("phase", "place (placing a guest on the gallery) or move (choosing a move for the roll)"),
    ("roll", "the number rolled, 1, 2, 4 or 5 (0 while placing)"),
    ("legal_actions", "how many legal actions the position has (rows of actions.csv), 2 or more"),
    ("chosen", "the action index the champion chose"),
    ("chosen_notation", "the chosen action in record notation"),
    ("value", "the best legal action's value by the evaluator (points of margin)"),
    ("loss", "the evaluator's best value minus the chosen action's (points the choice gave away, >= 0)"),
]
SOLVED_ACTION_COLUMNS = [
    ("decision_id", "the position (decisions.csv)"),
    ("action", "the action's index in the engine's action space (`Engine.layout`; the last one is a pass)"),
    ("notation", "the action in record notation (docs/RECORDS.md): g3 places on gallery square 3, g3>r5 moves "
                 "the guest on square 3 into room 5, pass ..."),
    ("value", "the exact expected final margin for the deciding seat after this action, every seat playing "
              "optimally on (points of margin)"),
    ("loss", "the position's value minus this one (points given away, >= 0; 0 for an optimal action)"),
    ("optimal", f"1 where the action is optimal (its value within {TIE:g} of the best), else 0"),
    ("solver_choice", "1 for the one action the solution plays (the lowest index among the optimal), else 0"),
]
SELFPLAY_ACTION_COLUMNS = [
    ("decision_id", "the decision (decisions.csv)"),
    ("action", "the action's index in the engine's action space (`Engine.layout`; the last one is a pass)"),
    ("notation", "the action in record notation (docs/RECORDS.md)"),
    ("value", "the evaluator's value of the action for the deciding seat (points of margin)"),
    ("loss", "the decision's best value minus this one (points, >= 0)"),
    ("best", f"1 where the action is a best one by the evaluator (within {TIE:g} of the best), else 0"),
    ("chosen", "1 for the action the champion chose, else 0"),
]


def _obs_columns(engine: Engine) -> list[str]:
    return [OBS_PREFIX + name for name in observation_names(engine)]


# ------------------------------------------------------------------------------------------------
# writing whole


def _write_whole(out: Path, fill: Callable[[Path], list[tuple[str, int, int]]]) -> list[tuple[str, int, int]]:
    """Run ``fill(folder)`` on a temporary folder beside ``out`` and rename it ``out`` at the end;
    on any failure the temporary folder goes and ``out`` is never made."""
    parent = out.parent if str(out.parent) else Path(".")
    parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.partial-", dir=parent))
    try:
        files = fill(tmp)
        check_out(out)  # made meanwhile by someone else: refused, not merged
        os.rename(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return files


# ------------------------------------------------------------------------------------------------
# the solved set-ups


def export_solved(name: str, out: str | Path, command: str | None = None,
                  progress: Callable[[str], None] | None = None) -> Export:
    """Solve the named set-up and write every decision position with every legal action's exact
    value (module docstring)."""
    started = time.perf_counter()
    out = check_out(out)
    check_set_up(name)
    setup = SET_UPS[name]
    say = progress or (lambda line: None)
    say(f"solving {name} ...")
    solution = solve(setup.config(), objective=setup.objective)
    engine = solution.engine
    visits = optimal_visits(solution)
    evaluator = solution_evaluator(solution)
    ids = np.flatnonzero(np.isin(solution.phases, (PLACE, MOVE)))
    say(f"{solution.meta['states']:,} states, {len(ids):,} decision positions: writing ...")
    obs_cols = _obs_columns(engine)
    dec_cols = [c for c, _ in SOLVED_DECISION_COLUMNS] + obs_cols
    act_cols = [c for c, _ in SOLVED_ACTION_COLUMNS]

    def fill(folder: Path) -> list[tuple[str, int, int]]:
        decisions, actions = CsvTable(folder / DECISIONS, dec_cols), CsvTable(folder / ACTIONS, act_cols)
        for lo in range(0, len(ids), CHUNK):
            chunk = ids[lo:lo + CHUNK]
            st = solution.positions(chunk)
            q = evaluator.values(engine, st)
            legal = st.legal.astype(bool)
            best = np.max(np.where(legal, q, -np.inf), axis=1)
            rows, act = np.nonzero(legal)
            decisions.write([chunk, st.player.astype(np.int64), np.array(PHASE_NAMES, object)[st.phase],
                             st.roll.astype(np.int64), legal.sum(axis=1), best, visits[chunk],
                             encode_observations(engine, st)])
            value = q[rows, act]
            roll = st.roll[rows].astype(np.int64)
            loss = np.maximum(best[rows] - value, 0.0)
            loss[loss < TIE] = 0.0
            actions.write([chunk[rows], act, [engine.layout.to_notation(int(a), int(r)) for a, r in zip(act, roll)],
                           value, loss, loss == 0.0, act == solution.best[chunk[rows]]])
        files = [decisions.close(), actions.close()]
        card = solved_card(name, solution, files, command)
        return files + [_write_card(folder, card)]

    files = _write_whole(out, fill)
    return Export(out, files, time.perf_counter() - started)


def solved_card(name: str, solution, files, command: str | None) -> str:
    setup = SET_UPS[name]
    meta = solution.meta
    about = (f"Every decision position of the solved set-up **{name}** ({solution.describe()}), "
             f"{meta['states']:,} states in all, found by the exact solver (`midnight_env.solve`) in "
             f"{meta['seconds_states'] + meta['seconds_values']:.1f} s; the expected final result at the start: "
             f"{meta['value']:+.4f} ({'seat 0' if setup.players == 1 else 'seat 0 minus seat 1'}'s expected "
             "final points under optimal play; fewest points win).")
    limits = ["- The values are exact up to the solver's tolerance "
              f"(Bellman residual {meta['residual']:.1e}) for this small set-up only: its board, rounds and "
              "guests are not the real game's, and what is best here need not be best at real size.",
              "- Every position reachable from the start is listed, also those optimal play never meets "
              "(`visits` 0): weight rows by `visits` for the decisions as optimal play meets them.",
              "- Two players: the values assume both seats play optimally for the points margin (zero-sum); "
              "against a weaker opponent other actions may earn more."]
    return _card(f"Solved decisions: {name}", about, "the exact solution (every seat optimal from then on)",
                 "exact", files, SOLVED_DECISION_COLUMNS, SOLVED_ACTION_COLUMNS, solution.engine, command, limits)


# ------------------------------------------------------------------------------------------------
# self-play at real size


def export_selfplay(variant: str, players: int, games: int, out: str | Path, seed: int = 0,
                    command: str | None = None, progress: Callable[[str], None] | None = None) -> Export:
    """Play ``games`` games of the set-up's shipped champion against itself and write every
    decision with 2+ legal actions, every action valued by the default evaluator (module docstring)."""
    started = time.perf_counter()
    out = check_out(out)
    games = checks.integer("--games", games, 1, error=DatasetError)
    engine, champion = selfplay_engine(variant, players)
    say = progress or (lambda line: None)
    judge = evaluator_for(engine)
    say(f"playing {games} games of {champion} against itself ...")
    seeds = np.arange(seed, seed + int(games), dtype=np.int64)
    result = play_batch(engine, [make_agent(champion)], np.zeros((len(seeds), players), np.int64), seeds,
                        record=True, agent_names=[champion])
    obs_cols = _obs_columns(engine)
    dec_cols = [c for c, _ in SELFPLAY_DECISION_COLUMNS] + obs_cols
    act_cols = [c for c, _ in SELFPLAY_ACTION_COLUMNS]

    def fill(folder: Path) -> list[tuple[str, int, int]]:
        decisions, actions = CsvTable(folder / DECISIONS, dec_cols), CsvTable(folder / ACTIONS, act_cols)
        first_id = 0
        for g, rec in enumerate(result.records):
            say(f"valuing game {g + 1} of {len(result.records)} by {judge.spec} ...")
            analysis = analyze_record(rec, evaluator=judge.spec, source=f"game {g} (seed {int(seeds[g])})")
            state, _, chosen = decision_positions(engine, rec)
            if state is None:
                continue
            pick = [i for i, d in enumerate(analysis.decisions) if not d.forced]
            if not pick:
                continue
            sub = state.take(np.array(pick))
            legal = sub.legal.astype(bool)
            values = np.full(legal.shape, np.nan)
            rolls = sub.roll.astype(np.int64)
            for k, i in enumerate(pick):
                d = analysis.decisions[i]
                for a in np.flatnonzero(legal[k]):
                    values[k, a] = d.values[engine.layout.to_notation(int(a), int(rolls[k]))]
            if np.isnan(values[legal]).any():
                raise AnalysisError(f"game {g}: the evaluator left a legal action without a value")
            best = np.max(np.where(legal, values, -np.inf), axis=1)
            chosen_a = np.array([chosen[i] for i in pick], np.int64)
            dec_id = first_id + np.arange(len(pick))
            first_id += len(pick)
            decisions.write([dec_id, np.full(len(pick), g), np.full(len(pick), int(seeds[g])),
                             np.array(pick) + 1, sub.player.astype(np.int64),
                             np.array(PHASE_NAMES, object)[sub.phase], rolls, legal.sum(axis=1), chosen_a,
                             [analysis.decisions[i].chosen for i in pick], best,
                             [analysis.decisions[i].loss for i in pick], encode_observations(engine, sub)])
            rows, act = np.nonzero(legal)
            value = values[rows, act]
            loss = np.maximum(best[rows] - value, 0.0)
            loss[loss < TIE] = 0.0
            actions.write([dec_id[rows], act, [engine.layout.to_notation(int(a), int(r))
                                               for a, r in zip(act, rolls[rows])],
                           value, loss, loss == 0.0, act == chosen_a[rows]])
        files = [decisions.close(), actions.close()]
        card = selfplay_card(engine, champion, judge, result, seeds, files, command)
        return files + [_write_card(folder, card)]

    files = _write_whole(out, fill)
    return Export(out, files, time.perf_counter() - started)


def selfplay_card(engine: Engine, champion: str, judge, result, seeds, files, command: str | None) -> str:
    setup = setup_words(engine.variant, engine.num_players, engine.config.options)
    mean = result.points.mean(axis=0)
    plural = "s" if len(seeds) != 1 else ""
    about = (f"The shipped champion `{champion}` against itself in {len(seeds)} game{plural} of {setup} at real size "
             f"(seeds {int(seeds[0])} to {int(seeds[-1])}; mean final points by seat "
             f"{', '.join(f'{p:.1f}' for p in mean)}). Every decision with two or more legal actions is "
             f"written, each legal action valued by `{judge.spec}`: {judge.about}. The champion plays with its "
             "defaults; the evaluator is the champion inside its search, so its values may differ from the "
             "choices made (`loss`).")
    limits = [f"- The values are the evaluator's estimates, not exact: {judge.accuracy}. See docs/RESEARCH.md, "
              "\"Placement values at real size\".",
              "- The search samples dice: a value moves between draws of them (for most moves not at all, "
              "within 0.25 points for 90 % of them in midnight_party, 0.6 in hidden_castle; BENCHMARKS.md).",
              "- The positions are those the champion's own play meets, not a sample of all positions: a policy "
              "fitted here has seen little of what weaker or stranger play leads to.",
              "- Forced decisions (one legal action) are left out; `decision` still counts them."]
    return _card(f"Champion self-play decisions: {setup}", about, f"`{judge.spec}`", judge.accuracy, files,
                 SELFPLAY_DECISION_COLUMNS, SELFPLAY_ACTION_COLUMNS, engine, command, limits)


# ------------------------------------------------------------------------------------------------
# the data card


def _write_card(folder: Path, text: str) -> tuple[str, int, int]:
    path = folder / DATA_CARD
    path.write_text(text, encoding="utf-8")
    return path.name, 0, path.stat().st_size


def _table(columns: list[tuple[str, str]]) -> list[str]:
    rows = ["| column | meaning |", "|---|---|"]
    rows += [f"| `{name}` | {text.replace('|', '/')} |" for name, text in columns]
    return rows


def _card(title: str, about: str, evaluator: str, accuracy: str, files, decision_columns, action_columns,
          engine: Engine, command: str | None, limits: list[str]) -> str:
    counts = {name: rows for name, rows, _ in files}
    names = observation_names(engine)
    obs = [(OBS_PREFIX + n, "") for n in names]
    lines = [f"# {title}", "", about, "",
             "## How it was made", "",
             f"- command: `{command or 'midnight_env.analysis.dataset'}`",
             f"- engine version: {ENGINE_VERSION} (`midnight_env.core.engine.ENGINE_VERSION`)",
             f"- code commit: {code_commit() or 'unknown (not a git checkout)'}",
             f"- made: {datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}",
             f"- values by: {evaluator}", f"- accuracy: {accuracy}", "",
             "## Files", "",
             f"- `{DECISIONS}`: {counts.get(DECISIONS, 0):,} rows, one per decision: who decides, its value and "
             "the features the agents see",
             f"- `{ACTIONS}`: {counts.get(ACTIONS, 0):,} rows, one per legal action of each decision",
             "", "Join them on `decision_id` (pandas: `decisions.merge(actions, on=\"decision_id\")`) for one row "
             "per (decision, action). CSV with a header line; booleans are 1/0; numbers are written as the "
             "shortest text that reads back the same value.", "",
             "## Units", "",
             f"Every value is {MARGIN}. A position's value is its best action's value; an action's `loss` is "
             "the best value minus its own, in points.", "",
             f"## {DECISIONS}", "", *_table(decision_columns),
             f"| `{OBS_PREFIX}...` | the observation vector of the deciding seat "
             "(`midnight_env.core.observation.encode_observations`), one column per index, in order: |", "",
             "### The features", "",
             "Relative to the deciding seat: `me`, then `opp1` (the next seat to roll after me), ...; guests divided "
             "by the guests per player, spooky points by the variant's scale, so values lie in about [0, 1] "
             "(the layout is documented in `midnight_env/core/observation.py`). The columns:", "",
             *_table([(name, text or _feature_text(name[len(OBS_PREFIX):])) for name, text in obs]), "",
             f"## {ACTIONS}", "", *_table(action_columns), "",
             "## Known limits", "", *limits, ""]
    return "\n".join(lines)


FEATURE_TEXT = {
    "gallery": "guests of the player on the gallery square, / guests per player",
    "supply": "guests of the player still to place, / guests per player",
    "room": "1 where the room holds a guest of the player",
    "stairs": "guests of the player on the stair place, / guests per player",
    "hugo": "1 where Hugo stands",
    "rooms_open": "1 once Hugo has stepped onto the gallery (rooms unlocked)",
    "clock": "1 at this clock time (hidden_castle)",
    "speed": "Hugo's steps a move / 7",
    "spooky": "the player's spooky points / the variant's scale",
    "round": "the current round / rounds",
    "phase": "1 in this phase",
    "roll": "1 for the number being decided",
    "to_move": "1 for the relative player deciding",
    "seat": "1 for the observer's seat number",
}


def _feature_text(name: str) -> str:
    for key in sorted(FEATURE_TEXT, key=len, reverse=True):
        if name.startswith(key):
            return FEATURE_TEXT[key]
    return ""


__all__ = ["DatasetError", "Export", "export_solved", "export_selfplay", "check_out", "solved_set_ups",
           "DATA_CARD", "DECISIONS", "ACTIONS"]
