"""Game records in the ``midnight-record/1`` format (docs/RECORDS.md): writing and replaying.

A record holds the set-up, every roll and every decision with its legal set. ``replay_record``
re-plays one against the engine and raises :class:`RecordError` naming the line and the event
of the first disagreement; ``Recorder`` writes records of games the engine plays.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from midnight_env.core.actions import ActionError
from midnight_env.core.config import VARIANTS, ConfigError, check_option_names, make_config
from midnight_env.core.dice import FACES_BY_NAME, face_name
from midnight_env.core.engine import Engine
from midnight_env.core.state import MOVE, OVER, PHASE_NAMES, PLACE, ROLL, GameState

FORMAT = "midnight-record/1"


class RecordError(ValueError):
    """A record that cannot be replayed; the message names the line and the event."""

    def __init__(self, message: str, line: int | None = None, event: int | None = None):
        where = []
        if line is not None:
            where.append(f"line {line}")
        if event is not None:
            where.append(f"event {event}")
        super().__init__(f"{', '.join(where)}: {message}" if where else message)
        self.line, self.event = line, event


# ------------------------------------------------------------------------------------------------
# writing


class Recorder:
    """Collects the events of a batch of games played with ``apply_action`` / ``apply_roll``.

    Call :meth:`decisions` before applying the deciding games' actions, :meth:`rolls` with the
    faces ``apply_roll`` returned, and :meth:`record` once a game is over.
    """

    def __init__(self, engine: Engine, seeds: Iterable[int], agents: list[list[str]] | list[str] | None = None):
        self.engine = engine
        self.seeds = [int(s) for s in seeds]
        self.events: list[list[dict]] = [[] for _ in self.seeds]
        self.agents = agents
        self._rounds_seen = np.zeros(len(self.seeds), np.int64)

    def decisions(self, state: GameState, actions: np.ndarray) -> None:
        roll = state.roll
        for i in np.flatnonzero(((state.phase == PLACE) | (state.phase == MOVE)) & (actions >= 0)):
            kind = PHASE_NAMES[state.phase[i]]  # event kinds are named like the phases
            self.events[i].append({"e": kind, "p": int(state.player[i]),
                                   "a": self.engine.layout.to_notation(int(actions[i]), int(roll[i])),
                                   "legal": self.engine.legal_notations(state, int(i))})

    def rolls(self, players: np.ndarray, faces: np.ndarray) -> None:
        """``players``: the rollers before the roll; ``faces``: as returned by apply_roll."""
        for i in np.flatnonzero(faces >= 0):
            self.events[i].append({"e": "roll", "p": int(players[i]), "face": face_name(faces[i])})

    def round_ends(self, state: GameState) -> None:
        """Write a round_end for every round finished since the last call (midnight_party)."""
        for i in np.flatnonzero(state.rounds_done > self._rounds_seen):
            self._rounds_seen[i] = state.rounds_done[i]
            self.events[i].append({"e": "round_end", "round": int(state.rounds_done[i]),
                                   "points": [int(x) for x in state.spooky[i]]})

    def record(self, state: GameState, i: int) -> dict:
        agents = self.agents[i] if self.agents and isinstance(self.agents[0], list) else self.agents
        return make_record(self.engine, state, i, self.seeds[i], agents, self.events[i])


def make_record(engine: Engine, state: GameState, i: int, seed: int | None, agents, events: list[dict]) -> dict:
    points = [int(x) for x in state.spooky[i]]
    return {
        "format": FORMAT,
        "variant": engine.variant,
        "num_players": engine.num_players,
        "options": dict(engine.config.options),
        "seed": seed,
        "agents": list(agents) if agents is not None else None,
        "events": events,
        "final_points": points,
        "winners": engine.winners(state, i),
        "truncated": bool(state.truncated[i]),
    }


def write_records(records: Iterable[dict], out: TextIO, name: str | None = None) -> int:
    """Write records as JSON Lines to ``out`` and flush; returns how many. A write that fails (a
    full disk) raises OSError naming the file (``name``, else ``out.name``), and closes ``out``
    (closing it later would fail again on the data left in its buffer, without the name)."""
    n = 0
    try:
        for rec in records:
            out.write(json.dumps(rec, separators=(",", ":")) + "\n")
            n += 1
        out.flush()
    except OSError as err:
        try:
            out.close()
        except OSError:
            pass
        raise write_error(err, name or getattr(out, "name", "the file")) from None
    return n


def write_error(err: OSError, name: str | Path) -> OSError:
    """``err`` as one line naming the record file: ``cannot write records to NAME: No space left on
    device`` (its errno kept)."""
    error = OSError(f"cannot write records to {name}: {err.strerror or err}")
    error.errno = err.errno
    return error


def is_special_file(path: str | Path) -> bool:
    """Whether ``path`` names something that exists and is neither a regular file nor a folder: a
    FIFO, a character device such as /dev/null (links followed). Such a file is written in place:
    renaming a new file over it would replace the device or FIFO with a plain file."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def write_record_lines(path: str | Path, lines: Iterable[str], append: bool = False) -> int:
    """Write ``lines`` (JSON text, one record each, without the newline) to the file ``path``;
    returns how many. A regular file, or a new one, gets them all or nothing: they go to
    ``PATH.tmp`` beside it, which is then renamed over it (with ``append``, they are appended to
    it). A FIFO or a device (``is_special_file``) is opened and written in place, never replaced:
    a FIFO's reader gets every line. A write that fails (a full disk, /dev/full) raises OSError
    naming the file (:func:`write_error`), and the temporary file is removed."""
    path = Path(path)
    target = path if append or is_special_file(path) else path.with_name(path.name + ".tmp")
    n = 0
    try:
        # unbuffered: a failed write raises here, not again when the file is closed
        with open(target, "ab" if append else "wb", buffering=0) as f:
            chunk: list[bytes] = []
            size = 0
            for line in lines:
                chunk.append(line.encode("utf-8") + b"\n")
                size += len(chunk[-1])
                n += 1
                if size >= 1 << 16:
                    _write_all(f, b"".join(chunk))
                    chunk, size = [], 0
            _write_all(f, b"".join(chunk))
        if target != path:
            os.replace(target, path)
    except OSError as err:
        if target != path:
            try:
                target.unlink(missing_ok=True)
            except OSError:
                pass
        raise write_error(err, path) from None
    return n


def _write_all(f, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[f.write(view):]


# ------------------------------------------------------------------------------------------------
# reading and replaying


@dataclass
class ReplayResult:
    record: dict
    state: GameState
    decisions: int
    rolls: int


def engine_for_record(rec: dict, line: int | None) -> Engine:
    """The engine a record's set-up asks for; RecordError names a missing field or a bad set-up.
    A record plays on its variant's own board: its options are the variant's rule options only."""
    if not isinstance(rec, dict):
        raise RecordError(f"a record must be a JSON object, got {type(rec).__name__}", line)
    if rec.get("format") != FORMAT:
        raise RecordError(f"format {rec.get('format')!r} is not {FORMAT!r}", line)
    for key in ("variant", "num_players", "options", "events", "final_points", "winners", "truncated"):
        if key not in rec:
            raise RecordError(f"missing field {key!r}", line)
    if not isinstance(rec["options"], dict) or not isinstance(rec["events"], list):
        raise RecordError("'options' must be an object and 'events' a list", line)
    try:
        if rec["variant"] in VARIANTS:
            check_option_names(rec["variant"], rec["options"])
        return Engine(make_config(rec["variant"], rec["num_players"], **rec["options"]))
    except (ConfigError, TypeError) as err:
        raise RecordError(str(err), line) from None


_MALFORMED = (TypeError, ValueError, KeyError, AttributeError, IndexError, OverflowError)  # of odd JSON values


def replay_record(rec: dict, line: int | None = None, engine: Engine | None = None) -> ReplayResult:
    """Replay one record against the engine; RecordError on the first disagreement, naming the
    line and the event (a malformed value too: any JSON is refused with a message, never a crash)."""
    eng = engine or engine_for_record(rec, line)
    state = eng.new_games([0])
    rounds_seen = 0
    n_dec = n_roll = 0
    events = rec["events"]

    def fail(msg: str, k: int | None):
        raise RecordError(msg, line, k)

    for k, ev in enumerate(events):
        try:
            if not isinstance(ev, dict) or "e" not in ev:
                fail(f"event {as_text(ev)[:80]} is not an object with 'e'", k)
            kind = ev["e"]
            phase = int(state.phase[0])
            if rounds_seen < int(state.rounds_done[0]) and kind != "round_end":
                fail(f"expected round_end for round {rounds_seen + 1}, got {kind!r}", k)
            if kind == "round_end":
                if rounds_seen >= int(state.rounds_done[0]):
                    fail(f"round_end {ev.get('round')!r} but no round has ended here", k)
                rounds_seen += 1
                if ev.get("round") != rounds_seen:
                    fail(f"round_end names round {ev.get('round')!r}, the engine ended round {rounds_seen}", k)
                points = [int(x) for x in state.spooky[0]]
                if ev.get("points") != points:
                    fail(f"round {rounds_seen} points {ev.get('points')!r}, the engine has {points}", k)
                continue
            if kind not in ("place", "roll", "move"):
                fail(f"unknown event kind {kind!r}: allowed are place, roll, move, round_end", k)
            if phase == OVER:
                fail(f"{kind} event after the game ended", k)
            player = int(state.player[0])
            if ev.get("p") != player or isinstance(ev.get("p"), bool):
                fail(f"{kind} by player {ev.get('p')!r}, but player {player} is to {PHASE_NAMES[phase]}", k)
            if kind == "roll":
                if phase != ROLL:
                    fail(f"roll, but the engine expects a {PHASE_NAMES[phase]} decision", k)
                face = ev.get("face")
                if isinstance(face, (bool, float, list, dict)) or face not in FACES_BY_NAME:
                    fail(f"face {face!r} is not a die face: allowed are 1, 2, 4, 5, \"hugo\"", k)
                eng.apply_roll(state, [FACES_BY_NAME[face]])
                n_roll += 1
                continue
            expected = PLACE if kind == "place" else MOVE
            if phase != expected:
                fail(f"{kind}, but the engine expects a {PHASE_NAMES[phase]}", k)
            legal = eng.legal_notations(state, 0)
            if "legal" not in ev:
                fail(f"{kind} without 'legal': RECORDS.md lists the legal choices on every decision", k)
            got = ev["legal"]
            if not isinstance(got, list) or not all(isinstance(x, str) for x in got) or len(set(got)) != len(got):
                fail("'legal' must be a list of choices in record notation, without duplicates", k)
            if set(got) != set(legal):
                missing = sorted(set(legal) - set(got))
                extra = sorted(set(got) - set(legal))
                fail(f"legal set differs: engine also allows {missing}, record also lists {extra}", k)
            if not isinstance(ev.get("a"), str):
                fail(f"choice 'a' {ev.get('a')!r} is not a choice in record notation", k)
            try:
                action = eng.layout.from_notation(ev["a"], int(state.roll[0]))
            except ActionError as err:
                fail(str(err), k)
            if not state.legal[0, action]:
                fail(f"{ev.get('a')!r} is not legal here; legal: {', '.join(sorted(legal))}", k)
            eng.apply_action(state, [action], check=False)
            n_dec += 1
        except RecordError:
            raise
        except (*_MALFORMED, RecursionError) as err:
            fail(f"malformed event ({type(err).__name__}: {err})", k)
    if rounds_seen < int(state.rounds_done[0]):
        fail(f"missing round_end for round {rounds_seen + 1}", len(events))
    if state.phase[0] != OVER:
        fail(f"events end but the game is not over (player {state.player[0]} to "
             f"{PHASE_NAMES[state.phase[0]]})", len(events))
    points = [int(x) for x in state.spooky[0]]
    if rec["final_points"] != points:
        fail(f"final_points {rec['final_points']!r}, the engine has {points}", None)
    winners, got = eng.winners(state, 0), rec["winners"]
    if not isinstance(got, list) or not all(type(x) is int for x in got) or sorted(got) != winners:
        fail(f"winners {got!r}, the engine has {winners}", None)
    if not isinstance(rec["truncated"], bool) or rec["truncated"] != bool(state.truncated[0]):
        fail(f"truncated {rec['truncated']!r}, the engine has {bool(state.truncated[0])}", None)
    return ReplayResult(rec, state, n_dec, n_roll)


# the longest line a record file may have, in bytes: the longest real records are under 50 KB (an
# 8-player midnight_party game, tests/golden/), a game cut at the default max_turns under 1 MiB
MAX_LINE_BYTES = 16 * 2**20


def read_lines(path: str | Path) -> Iterator[tuple[int, Any]]:
    """(line number, record) for every non-empty line of a JSON Lines file, where a line that is
    not a record gives a :class:`RecordError` saying why in place of the record (so that a reader
    may report it and go on). A line longer than MAX_LINE_BYTES is such a line: it is never read
    whole (``/dev/zero`` is one endless line), only skipped to its end when the reader goes on."""
    with open(path, "rb") as f:
        yield from parse_lines(_bounded_lines(f, MAX_LINE_BYTES))


def _bounded_lines(f, limit: int) -> Iterator[bytes]:
    """The lines of a binary file, each with its newline; of a line longer than ``limit`` bytes
    only its first ``limit + 1`` (which tell that it is too long), the rest read past in pieces."""
    while True:
        line = f.readline(limit + 1)
        if not line:
            return
        yield line
        if len(line) > limit and not line.endswith(b"\n"):
            while (rest := f.readline(2**20)) and not rest.endswith(b"\n"):
                pass


def parse_lines(lines: Iterable[bytes]) -> Iterator[tuple[int, Any]]:
    """:func:`read_lines` of lines already read (an uploaded file's, say), each as bytes."""
    limit = MAX_LINE_BYTES
    for number, raw in enumerate(lines, start=1):
        if len(raw) - raw.endswith(b"\n") > limit:
            yield number, RecordError(f"longer than the limit of {limit} bytes ({limit / 2**20:g} MiB) for a "
                                      "record line", number)
            continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as err:
            yield number, RecordError(f"not UTF-8 text (byte {err.start + 1} of the line)", number)
            continue
        if not text.strip():
            continue
        try:
            yield number, json.loads(text)
        except json.JSONDecodeError as err:
            yield number, RecordError(f"not valid JSON ({err.msg} at column {err.colno})", number)
        except RecursionError:
            yield number, RecordError("not a record: its JSON is nested too deeply", number)


def read_records(path: str | Path) -> Iterator[tuple[int, Any]]:
    """(line number, record) for every non-empty line; RecordError at the first line that is not JSON."""
    for number, rec in read_lines(path):
        if isinstance(rec, RecordError):
            raise rec
        yield number, rec


def replay_lines(path: str | Path) -> Iterator[tuple[int, ReplayResult | RecordError]]:
    """(line number, replay or the RecordError naming what is wrong) for every record of a file."""
    engines: dict[str, Engine] = {}
    for number, rec in read_lines(path):
        if isinstance(rec, RecordError):
            yield number, rec
            continue
        try:
            key = json.dumps([rec.get("variant"), rec.get("num_players"), rec.get("options")], sort_keys=True) \
                if isinstance(rec, dict) else ""
            if key not in engines:
                engines[key] = engine_for_record(rec, number)
            yield number, replay_record(rec, number, engines[key])
        except RecordError as err:
            yield number, err
        except (*_MALFORMED, RecursionError) as err:
            yield number, RecordError(f"malformed record ({type(err).__name__}: {err})", number)


def replay_file(path: str | Path) -> list[ReplayResult]:
    """Replay every record of a JSON Lines file; RecordError at the first bad one."""
    results = []
    for _, result in replay_lines(path):
        if isinstance(result, RecordError):
            raise result
        results.append(result)
    return results


def as_text(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))
