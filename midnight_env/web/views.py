"""What the page shows of a game, as plain JSON values: the board once, and a frame per position.

A *board view* is the SVG of everything that never changes (``render.svg.board_svg``), its
``viewBox``, and where each place a move names lies (``g<s>`` squares, ``r<q>`` rooms), so that the
page can mark legal moves and take clicks on them. A *frame* is one position: its SVG
(``render.svg.position_svg``), whose turn, the roll, the points and, at a decision, the legal
choices in record notation. A *game view* is a record replayed: the board view, the record's
events and a frame before each event and after the last one (frame k shows the position event k
starts from). Every fact comes from the engine; no text of the record ends up in an SVG. An
*analysis* is the game's decisions judged (``midnight_env.analysis``), shown beside the board.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from midnight_env.analysis import CHAMPION_BUDGET, AnalysisError, analyze_record
from midnight_env.analysis.judge import AnalysisCancelled
from midnight_env.arena.agent import fit_error
from midnight_env.arena.play import play_batch
from midnight_env.arena.registry import agent_infos, make_agent, parse_spec
from midnight_env.core.config import MAX_PLAYERS, MIN_PLAYERS, VARIANTS, make_config
from midnight_env.core.dice import FACES_BY_NAME
from midnight_env.core.engine import Engine
from midnight_env.core.records import RecordError, engine_for_record, replay_record
from midnight_env.core.state import MOVE, OVER, PHASE_NAMES, PLACE
from midnight_env.infra.seeds import SEED_LIMIT, SEED_RANGE
from midnight_env.render.layout import Rect, board_layout
from midnight_env.render.seats import PLAYER_COLOURS, seat_hex
from midnight_env.render.snapshot import snapshot, turn_text
from midnight_env.render.style import game_title
from midnight_env.render.svg import board_svg, position_svg
from midnight_env.web.checks import (
    ANALYSIS_BATCH_POSITIONS,
    MAX_EVALUATOR_BUDGET,
    MAX_EVALUATOR_TURNS,
    agent_names,
    text,
    whole,
)
from midnight_env.web.errors import WebError

MAX_EVENTS = 5000  # events of a game shown (a game at the default max_turns of 2000 rolls has fewer)
_EVENT_KEYS = ("e", "p", "a", "face", "legal", "round", "points")  # what the page reads of an event


def _box(r: Rect) -> list[float]:
    return [round(float(v), 4) for v in r]


def board_view(engine: Engine) -> dict:
    """The board of ``engine`` as the page draws it (see the module's docstring)."""
    lay = board_layout(engine.board, engine.num_players, engine.config.castle)
    places = {f"g{sq.square}": _box(sq.face) for sq in lay.squares}
    places.update({f"r{room.room}": _box(room.box) for room in lay.rooms})
    return {"variant": engine.variant, "num_players": engine.num_players, "castle": engine.config.castle,
            "title": game_title(engine.config.castle), "options": dict(engine.config.options),
            "view": _box(lay.view), "svg": board_svg(engine), "places": places,
            "colours": seat_hex(range(engine.num_players)),
            "colour_names": [PLAYER_COLOURS[p % len(PLAYER_COLOURS)].name for p in range(engine.num_players)]}


def frame(engine: Engine, state, i: int = 0) -> dict:
    """Game ``i`` of ``state`` as the page shows it (see the module's docstring)."""
    pos = snapshot(engine, state, i)
    phase = int(pos.phase)
    out: dict[str, Any] = {"svg": position_svg(engine, pos), "phase": PHASE_NAMES[phase], "player": pos.player,
                           "roll": pos.roll if phase == MOVE else None, "points": [int(x) for x in pos.spooky],
                           "turn": turn_text(pos), "rolls": pos.rolls}
    if phase in (PLACE, MOVE):
        out["legal"] = engine.legal_notations(state, i)
        if any(note.startswith("cellar>") for note in out["legal"]):
            # the guest that leaves the cellar: the player's on the highest step it occupies
            place = next(place for place in range(engine.board.num_stair_places) if pos.stairs[pos.player, place] > 0)
            lay = board_layout(engine.board, engine.num_players, engine.config.castle)
            out["cellar"] = _box(lay.stairs[place].box)
    if phase == OVER:
        out["winners"] = list(pos.winners)
    return out


def _clean_events(events: list[dict]) -> list[dict]:
    """The events of a replayed record with only the keys the page reads."""
    return [{k: ev[k] for k in _EVENT_KEYS if k in ev} for ev in events]


def _check_length(rec: Any, line: int | None) -> None:
    events = rec.get("events") if isinstance(rec, dict) else None
    if isinstance(events, list) and len(events) > MAX_EVENTS:
        raise RecordError(f"the game has {len(events)} events: games of at most {MAX_EVENTS} events are shown", line)


def record_view(rec: Any, line: int | None = None, name: str | None = None) -> dict:
    """A record replayed into a game view; WebError (422) naming the file (``name``), the line and
    the event of a record that does not replay, or one too long to show."""
    try:
        _check_length(rec, line)
        engine = engine_for_record(rec, line)
        replay_record(rec, line, engine)  # a bad record is refused before anything is drawn
    except RecordError as err:
        raise WebError(f"{name}: {err}" if name else str(err), 422) from None
    state = engine.new_games([0])
    frames = [frame(engine, state)]
    for ev in rec["events"]:
        if ev["e"] == "roll":
            engine.apply_roll(state, [FACES_BY_NAME[ev["face"]]])
        elif ev["e"] in ("place", "move"):
            engine.apply_action(state, [engine.layout.from_notation(ev["a"], int(state.roll[0]))])
        frames.append(frame(engine, state))
    agents = rec.get("agents")
    seed = rec.get("seed")
    game = {"variant": engine.variant, "num_players": engine.num_players, "options": dict(engine.config.options),
            "seed": None if seed is None else str(seed)[:40],  # as text: a 63-bit seed is not a JavaScript number
            "agents": [str(a)[:60] for a in agents] if isinstance(agents, list) and len(agents) == engine.num_players
            else None, "final_points": rec["final_points"], "winners": sorted(rec["winners"]),
            "truncated": rec["truncated"]}
    return {"board": board_view(engine), "game": game, "events": _clean_events(rec["events"]), "frames": frames}


def analysis_view(rec: Any, line: int | None = None, name: str | None = None, evaluator: Any = None,
                  max_budget: int = MAX_EVALUATOR_BUDGET, cancelled: Callable[[], bool] | None = None) -> dict:
    """Every decision of a record judged (:func:`midnight_env.analysis.analyze_record`, as JSON);
    WebError naming a record that does not replay (422) or an evaluator the page does not take or
    that cannot judge the game (400). ``evaluator``: None (the strongest available), ``optimal``,
    or a registered agent by name with at most ``budget`` (1..``max_budget``) and ``turns``
    (1..MAX_EVALUATOR_TURNS) (a request names no file). The decisions are valued in batches of
    about ANALYSIS_BATCH_POSITIONS positions searched; ``cancelled`` is asked before each (an
    AnalysisCancelled when it says True: the client has gone)."""
    spec, budget = page_evaluator(evaluator, max_budget)
    try:
        _check_length(rec, line)
        analysis = analyze_record(rec, line, spec, source=name, batch=max(1, ANALYSIS_BATCH_POSITIONS // budget),
                                  cancelled=cancelled)
    except RecordError as err:
        raise WebError(f"{name}: {err}" if name else str(err), 422) from None
    except AnalysisCancelled:
        raise
    except AnalysisError as err:
        raise WebError(str(err)) from None
    return analysis.as_dict()


def page_evaluator(evaluator: Any, max_budget: int = MAX_EVALUATOR_BUDGET) -> tuple[str | None, int]:
    """The evaluator a request names (None: the strongest available) and the positions it searches
    a decision (at least 1, for the batches); WebError (400) naming an evaluator the page does not
    take, or one over the server's limits (``max_budget``, MAX_EVALUATOR_TURNS)."""
    if evaluator in (None, ""):
        return None, CHAMPION_BUDGET
    spec = text("evaluator", evaluator, "optimal, or a registered agent by name with budget=N or turns=T")
    shown = spec[:60]
    try:
        name, options = parse_spec(spec)
    except ValueError as err:
        raise WebError(str(err)) from None
    names = [info.name for info in agent_infos()]
    if name != "optimal" and name not in names:
        raise WebError(f"evaluator {shown!r} is not one the page takes: allowed are optimal, or a registered agent "
                       f"by name ({', '.join(names)}) with budget=N or turns=T")
    bad = sorted(k for k, v in options.items() if k not in PAGE_EVALUATOR_OPTIONS or name == "optimal"
                 or isinstance(v, bool) or not isinstance(v, int))
    if bad:
        raise WebError(f"evaluator {shown!r}: option {bad[0]!r} is not one the page takes: allowed are "
                       "budget=N and turns=T (whole numbers), none for optimal (files are for the command line)")
    budget = options.get("budget", CHAMPION_BUDGET)
    if budget > max_budget:
        raise WebError(f"evaluator budget {budget} is above this server's limit: allowed are 1..{max_budget} "
                       "positions a decision (midnight serve --max-budget sets the limit)")
    turns = options.get("turns", 1)
    if turns > MAX_EVALUATOR_TURNS:
        raise WebError(f"evaluator turns {turns} is above this server's limit: allowed are 1..{MAX_EVALUATOR_TURNS}")
    return spec, max(1, budget)


PAGE_EVALUATOR_OPTIONS = ("budget", "turns")


def agents_record(variant: Any, players: Any, agents: Any, seed: Any) -> dict:
    """A new game between agents, played now as a record (the same game for the same arguments:
    a game depends on its seed and its agents only). ``agents``: one spec for every seat, or one
    per seat, comma-separated or as a list."""
    num_players = whole("players", players, MIN_PLAYERS, MAX_PLAYERS)
    seed = whole("seed", seed, 0, SEED_LIMIT - 1, SEED_RANGE)
    try:
        config = make_config(text("variant", variant, ", ".join(VARIANTS)), num_players)
    except (TypeError, ValueError) as err:
        raise WebError(str(err)) from None
    specs = agent_names("agents", agents, "agent names, comma-separated or as a list (one for every seat, or one "
                        "per seat)")
    if len(specs) == 1:
        specs = specs * num_players
    if len(specs) != num_players:
        raise WebError(f"{len(specs)} agents for {num_players} seats: give one agent for every seat, or one per seat")
    engine = Engine(config)
    per_seat = seat_agents(engine, specs)
    names = sorted(set(specs), key=specs.index)  # each agent once, as play_batch takes them
    lineup = np.array([[names.index(spec) for spec in specs]])
    agents = [per_seat[specs.index(name)] for name in names]
    return play_batch(engine, agents, lineup, [seed], record=True, agent_names=names).records[0]


def seat_agents(engine: Engine, specs: list[str | None]) -> list:
    """An agent per seat (None stays None: a person's seat), each made once; WebError naming an
    unknown agent or one that cannot play this game.

    The page plays registered agents by name only (``midnight agents``, plugins included): a spec
    with options may name a file (``ppo:path=...``) and ``module:Attribute`` runs any importable
    code, neither of which a request may ask of the server."""
    made: dict[str, Any] = {}
    names = None
    for spec in specs:
        if spec is None or spec in made:
            continue
        if names is None:
            names = [info.name for info in agent_infos()]
        if spec not in names:
            shown = str(spec)[:60]
            why = ("options and module:Attribute agents are for the command line" if ":" in shown
                   else f"known agents are {', '.join(names)}")
            raise WebError(f"agent {shown!r} is not one the page plays: it plays registered agents by name; {why}")
        try:
            agent = make_agent(spec)
        except ValueError as err:  # AgentError, a model's own refusal
            raise WebError(str(err)) from None
        reason = fit_error(agent, engine)
        if reason is not None:
            raise WebError(f"agent {spec!r} cannot play {engine.variant} with {engine.num_players} players: {reason}")
        made[spec] = agent
    return [None if spec is None else made[spec] for spec in specs]


__all__ = ["MAX_EVENTS", "board_view", "frame", "record_view", "analysis_view", "page_evaluator", "agents_record",
           "seat_agents"]
