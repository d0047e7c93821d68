"""A trained afterstate value network as an agent, alone (one ply) or inside the search.

The network (:class:`midnight_agents.model.ValueModel`, trained by
``midnight_env.training.value``) reads a position right after a player's decision, seen by that
player, and predicts the spooky points every player will still book. A position's value for seat
``p`` is then, as in the expert's evaluation, the others' mean expected final points (booked plus
still to come) times ``others`` minus ``p``'s own: fewest points win, and points the others book
count for ``p`` in the comparison. A finished game is valued by its booked points alone. Without
an ``others`` option the agent takes the model's own (its metadata's ``play``), else 1.

``budget=0`` plays the decision's best afterstate (every legal choice applied to a copy, as the
expert does, judged by the network). A budget above 0 runs the search of
:mod:`midnight_agents.search` with the network in the expert's three places: it judges the
leaves, plays the other players' moves (their best afterstate by the network, from their own
point of view) and places guests. With ``opponent=AGENT`` the other players' moves in the tree are
that agent's instead: the search of a **best response** to AGENT, which knows whom it plays
against (``midnight exploit --search-budget``); a deterministic AGENT is then modelled exactly.

With ``book=shipped`` (or ``book=FILE``) the game's first guest, placed on an empty gallery by
seat 0, goes to the placement book's best square for the set-up (:mod:`midnight_agents.book`,
issue 41 item 2): the one position the book values. Every other decision, the later seats' first
guests included, and :meth:`ValueAgent.action_values`, are the network's as without the book: played
at every seat's first guest, where others' guests already stand, the book's square lost 1.4 ± 0.8
points a game in seat 1 of midnight_party 2 players and 0.9 ± 0.3 over the seats of 4 players
(experiments/book_gain.py).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from midnight_agents.afterstates import expand, pick_best
from midnight_agents.book import BookError, book_entry, book_square, require_entry
from midnight_agents.model import VALUE_FORMAT, ModelError, ValueModel, ensemble_model
from midnight_agents.ppo import model_setup, shipped_models
from midnight_agents.search import SearchAgent
from midnight_env.arena.agent import Agent, Decisions
from midnight_env.arena.registry import AgentInfo
from midnight_env.core.dice import mix64
from midnight_env.core.engine import Engine
from midnight_env.core.observation import encode_observations
from midnight_env.core.state import OVER, PLACE, GameState
from midnight_env.infra import checks


def relative_points(engine: Engine, state: GameState, seats: np.ndarray) -> np.ndarray:
    """(B, N) booked spooky points of every game of ``state``, player ``seats[j]`` first, then clockwise."""
    n = engine.num_players
    order = (np.asarray(seats, np.int64)[:, None] + np.arange(n)[None, :]) % n
    return state.spooky[np.arange(state.batch_size)[:, None], order].astype(np.float64)


def expected_final_points(engine: Engine, state: GameState, seats: np.ndarray, model: ValueModel,
                          placement: ValueModel | None = None) -> np.ndarray:
    """(B, N) expected final points of every game of ``state`` seen by ``seats[j]`` (relative order).
    With ``placement``, the positions of the opening placement (no die rolled yet) are judged by
    that network instead (``value:placement=FILE``, RESEARCH.md "Placement values")."""
    seats = np.broadcast_to(np.asarray(seats, np.int64), (state.batch_size,))
    final = relative_points(engine, state, seats)
    live = state.phase != OVER
    opening = live & (state.rolls == 0) if placement is not None else np.zeros_like(live)
    for rows, judge in ((np.flatnonzero(live & ~opening), model), (np.flatnonzero(opening), placement)):
        if len(rows):
            final[rows] += judge.points_to_come(encode_observations(engine, state, rows, seats[rows]))
    return final


def afterstate_values(engine: Engine, state: GameState, who: np.ndarray, model: ValueModel,
                      others: float = 1.0, placement: ValueModel | None = None) -> np.ndarray:
    """Value of every game of ``state`` for seat ``who[j]``: ``others`` times the others' mean
    expected final points minus its own (higher is better)."""
    final = expected_final_points(engine, state, who, model, placement)
    if engine.num_players == 1:
        return -final[:, 0]
    return others * final[:, 1:].mean(axis=1) - final[:, 0]


def best_afterstates(engine: Engine, state: GameState, games: np.ndarray, draws: np.ndarray, model: ValueModel,
                     others: float = 1.0, placement: ValueModel | None = None) -> np.ndarray:
    """The choice of each of ``state``'s games ``games`` (at PLACE or MOVE) whose afterstate the
    network values most for the deciding player; ties broken by ``draws``."""
    children = expand(engine, state, games)
    who = state.player[games][children.parent].astype(np.int64)
    values = afterstate_values(engine, children.state, who, model, others, placement)
    return children.action[pick_best(values, children.start, draws)]


def load_value_model(path: str | Path) -> ValueModel:
    """The model file ``path``, or the ensemble of several joined by ``+`` (``a.npz+b.npz``: their values
    averaged, :func:`midnight_agents.model.ensemble_model`)."""
    parts = str(path).split("+")
    if len(parts) == 1:
        return ValueModel.load(path)
    return ensemble_model([ValueModel.load(p) for p in parts], source=str(path))


class ValueAgent(SearchAgent):
    name = "value"
    description = ("a trained afterstate value network: value:path=FILE.npz (A.npz+B.npz: their values averaged) "
                   "plays the legal choice whose afterstate it values most (budget=0) or searches like `search` "
                   "with the network judging the leaves and playing the others (budget=N positions, turns=T as "
                   "`search`'s; others=W weighs the others' points, by default as the model file says, else 1; "
                   "opponent=AGENT: the others in the search played by that agent, a best response's model of it; "
                   "placement=FILE.npz: another network judges the opening placement's positions, placement=shipped "
                   "the one shipped for a champion; book=shipped: the game's first guest (seat 0's, on the empty "
                   "gallery) on the placement book's best square for the set-up (docs/placement_book.json), "
                   "book=FILE another book)")
    plays = "the set-up of its model file (value:path=FILE.npz)"

    def __init__(self, path: str | Path | None = None, budget: int = 0, turns: int | None = None,
                 others: float | None = None, model: ValueModel | None = None, opponent: str | Agent | None = None,
                 placement: str | Path | ValueModel | None = None, book: str | Path | None = None):
        if (path is None) == (model is None):
            raise ModelError("a value agent needs its model file: value:path=FILE.npz")
        checks.integer("value option budget=", budget, 0, allowed="0 (one ply) or more")
        super().__init__(budget=max(int(budget), 1), turns=turns)
        self.budget = int(budget)
        self.model = model if model is not None else load_value_model(path)
        if others is None:  # the model's own default (the ``play`` of its metadata), else the margin
            others = self.model.meta.get("play", {}).get("others", 1.0)
        self.others = checks.number("value option others=", others)
        self.name = self.model.name
        if isinstance(opponent, str):  # a spec (its options without commas: they separate this agent's)
            from midnight_env.arena.registry import make_agent

            try:
                opponent = make_agent(opponent)
            except ValueError as err:
                raise ValueError(f"value option opponent={opponent!r}: {err}") from None
        if opponent is not None and self.budget == 0:
            raise ValueError("value option opponent= models the others inside the search: allowed only with "
                             "budget=N above 0")
        self.opponent = opponent
        if isinstance(placement, str) and placement == "shipped":  # the set-up's shipped placement network
            shipped = PLACEMENT_DIR / f"{self.model.name}.npz"
            if not shipped.exists():
                raise ModelError(f"value option placement=shipped: no placement network is shipped for "
                                 f"{self.model.name}: allowed are {', '.join(shipped_placements()) or 'none'}, "
                                 "or placement=FILE.npz")
            placement = shipped
        self.placement = load_value_model(placement) if isinstance(placement, (str, Path)) else placement
        if self.placement is not None and (self.placement.meta.get("observation_layout")
                                           != self.model.meta.get("observation_layout")):
            raise ModelError(f"value option placement={placement!s}: its network reads another observation than "
                             f"{self.model.name}'s: allowed is a network of the same set-up")
        self.book_square: int | None = None  # the game's first guest's square by the book (None: no book)
        if book is not None:
            meta = self.model.meta
            entry = require_entry(meta["variant"], meta["num_players"], meta.get("options"), book,
                                  who=f"value option book={book!s}")
            self.book_square = book_square(entry)

    def act(self, decisions: Decisions) -> np.ndarray:
        self.model.check_engine(decisions.engine)
        if self.budget == 0:
            actions = self.choose(decisions.engine, decisions.state, decisions.games, decisions.uniforms())
        else:
            actions = super().act(decisions)
        if self.book_square is not None:  # decided as without the book first: the games' draws stay the same
            actions = np.array(actions, np.int64)
            actions[book_openings(decisions, self.book_square)] = decisions.engine.layout.place(self.book_square)
        return actions

    def action_values(self, decisions: Decisions) -> np.ndarray:
        """As :meth:`SearchAgent.action_values`: the search's values of the moves, or with
        ``budget=0`` every choice's afterstate as the network values it (what it plays by)."""
        self.model.check_engine(decisions.engine)
        if self.budget == 0:
            return self.judged_afterstates(decisions.engine, decisions.state, decisions.games)
        return super().action_values(decisions)

    def others_weight(self) -> float:
        return self.others

    def judge(self, engine: Engine, state: GameState, who: np.ndarray) -> np.ndarray:
        return afterstate_values(engine, state, who, self.model, self.others, self.placement)

    def reply(self, engine: Engine, state: GameState, games: np.ndarray) -> None:
        sub = state.take(games)
        if self.opponent is not None:  # the modelled agent decides, on streams drawn from the position's own
            streams = mix64(sub.rng ^ _OPPONENT_SALT)
            # a searching opponent searches all the positions of one call at once: a few hundred at a
            # time, as in a game, not every position of the tree (23 GB for value-hidden_castle-2p:budget=1500)
            chunk = max(1, OPPONENT_POSITIONS // max(1, getattr(self.opponent, "budget", 1)))
            actions = np.empty(len(games), np.int64)
            for lo in range(0, len(games), chunk):
                part = np.arange(lo, min(lo + chunk, len(games)))
                actions[part] = np.asarray(self.opponent.act(Decisions(engine, sub, part, streams)), np.int64)
            engine.apply_action(sub, actions, check=False)
            state.put(games, sub)
            return
        actions = best_afterstates(engine, sub, np.arange(len(games)), np.zeros(len(games)), self.model,
                                   self.others, self.placement)
        engine.apply_action(sub, actions, check=False)
        state.put(games, sub)

    def choose(self, engine: Engine, state: GameState, games: np.ndarray, draws: np.ndarray) -> np.ndarray:
        return best_afterstates(engine, state, games, draws, self.model, self.others, self.placement)


def book_openings(decisions: Decisions, square: int) -> np.ndarray:
    """(n,) bool: the games of ``decisions`` at the position the placement book values, the game's
    first placement (no die rolled, no guest on the gallery), where gallery square ``square`` is legal."""
    state, games = decisions.state, decisions.games
    return ((state.phase[games] == PLACE) & (state.rolls[games] == 0)
            & (state.gallery[games].sum(axis=(1, 2)) == 0)
            & (state.legal[games, decisions.engine.layout.place(square)] == 1))


# placement networks (experiments/placement_values.py): a champion's opening judged off its own path
PLACEMENT_DIR = Path(__file__).resolve().parent / "models" / "placement"


def shipped_placements() -> list[str]:
    """The champions a placement network is shipped for (``value-...:placement=shipped``)."""
    return sorted(p.stem for p in PLACEMENT_DIR.glob("*.npz"))


_OPPONENT_SALT = np.uint64(0x6F70706F6E656E74)  # "opponent": its streams differ from the dice's
# positions a searching opponent in the tree is asked to search in one call (its budget each): about
# what a batch of 500 games of it holds in ordinary play
OPPONENT_POSITIONS = 500_000

SHIPPED_BUDGET = 0  # the shipped value models play their best afterstate unless given a budget


def shipped_description(meta: dict) -> str:
    t = meta.get("training", {})
    cost = f" ({t['cpu_minutes']:.0f} CPU-minutes of training)" if t.get("cpu_minutes") else ""
    networks = len(meta.get("members", [])) or 1
    what = "afterstate value network" if networks == 1 else f"ensemble of {networks} afterstate value networks"
    earlier = (f"; the champion shipped as {meta['renamed']['from']} until {meta['renamed']['on']}"
               if "renamed" in meta else "")
    try:
        booked = book_entry(meta["variant"], meta["num_players"], meta.get("options")) is not None
    except BookError:
        booked = False
    book = "; book=shipped: the game's first guest on the placement book's square" if booked else ""
    return (f"shipped {what} for {meta['variant']} with {meta['num_players']} players{cost}{earlier}; "
            f"picks its best afterstate, or searches with budget=N positions like `search`{book}")


def shipped_factory(stem: Path):
    def factory(budget: int = SHIPPED_BUDGET, turns: int | None = None, others: float | None = None,
                opponent: str | None = None, placement: str | None = None, book: str | None = None) -> ValueAgent:
        return ValueAgent(stem, budget=budget, turns=turns, others=others, opponent=opponent, placement=placement,
                          book=book)

    return factory


# the shipped value models as agents, named like their files (listed by midnight_agents.catalog)
SHIPPED_VALUE_AGENTS = [AgentInfo(name, shipped_factory(stem), shipped_description(meta), plays=model_setup(meta))
                        for name, stem, meta in shipped_models((VALUE_FORMAT,))]
