"""The card: seven rules a person can follow at the table, played as they are written.

Every legal choice is described by a few things a player sees on the board (what kind of choice
it is, where the guest ends, how many Hugo moves away the guest was and will be, ...;
:func:`choice_features`). Each rule of the card turns that description into a preference, and
the rules are applied in the card's order: a later rule only chooses among the choices every
earlier rule liked equally (a lexicographic order); what is still tied after the last rule goes
to the game's own random draw. Rule 1 decides placements, rules 2-7 moves.

"Hugo moves" to a guest is the number of Hugo faces that bring him onto its square at his
current speed: the steps he needs divided by his speed, rounded up (1: his next Hugo face
catches it; a guest in a room or on the stairs is out of his reach).

The rules were chosen and their thresholds fitted by ``experiments/fit_card.py`` on the champions'
decisions of ``midnight dataset selfplay`` (checked on ``midnight dataset solved`` and the placement
book; docs/CARD.md says how, and what the card costs); ``card:drop=K`` plays the card without rule
K, ``card:rules=FILE`` a card read from a YAML or JSON file (:func:`load_card`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from numba import njit

from midnight_agents.afterstates import pick_best
from midnight_agents.evaluation import hugo_distance
from midnight_env.arena.agent import Agent, Decisions
from midnight_env.core.board import GREEN, RED
from midnight_env.core.engine import Engine
from midnight_env.core.rules import hugo_speed, hugo_square, walk_target
from midnight_env.core.state import PLACE, GameState

VARIANTS = ("midnight_party", "hidden_castle")
OUT_OF_REACH = 99  # Hugo moves to a guest in a room, on the stairs or in the cellar

# the kinds of choice (column KIND)
PLACE_GUEST, WALK, PLAIN_ROOM, RED_ROOM, GREEN_ROOM, PASS = range(6)
# the columns of choice_features
KIND, SQUARE, FROM_MOVES, TO_MOVES, BEHIND, NEAREST, NUM_FEATURES = range(7)


# ------------------------------------------------------------------------------------------------
# what a player sees of each choice


@njit(cache=True)
def _moves(steps, speed):
    return (steps + speed - 1) // speed


@njit(cache=True)
def _features(s, R, games, actions, out):
    S = R.num_squares
    for j in range(games.shape[0]):
        i, a = games[j], actions[j]
        p = s.player[i]
        speed = hugo_speed(s.clock, R, i)
        hugo_sq = hugo_square(s.hugo, R, i)
        nearest = OUT_OF_REACH
        for sq in range(S):
            if s.gallery[i, p, sq] > 0:
                nearest = min(nearest, _moves(hugo_distance(s, R, i, sq), speed))
        f = out[j]
        f[:] = 0
        f[NEAREST], f[SQUARE] = nearest, -1
        f[FROM_MOVES] = f[TO_MOVES] = OUT_OF_REACH
        if s.phase[i] == PLACE:
            f[KIND], f[SQUARE] = PLACE_GUEST, a
            continue
        if a == R.num_actions - 1:  # pass: the last guest on the gallery stands still
            f[KIND], f[FROM_MOVES], f[TO_MOVES] = PASS, nearest, nearest
            continue
        origin, dest = divmod(a - S, 1 + R.num_rooms)
        if origin < S:  # a guest in a room or the cellar (hidden_castle) is out of Hugo's reach
            f[FROM_MOVES] = _moves(hugo_distance(s, R, i, origin), speed)
        if dest == 0:
            to = walk_target(S, R.num_rooms, R.door, R.arrow, origin, s.roll[i])
            f[KIND], f[SQUARE] = WALK, to
            f[BEHIND] = hugo_distance(s, R, i, to)
            f[TO_MOVES] = 0 if to == hugo_sq else _moves(f[BEHIND], speed)
        else:
            kind = R.kind[dest - 1]
            f[KIND] = GREEN_ROOM if kind == GREEN else RED_ROOM if kind == RED else PLAIN_ROOM


def choice_features(engine: Engine, state: GameState, games: np.ndarray, actions: np.ndarray) -> np.ndarray:
    """(n, NUM_FEATURES) int64: what a player sees of choice ``actions[j]`` in game ``games[j]``: the
    kind of choice, the square it places on or walks to (-1: none), Hugo moves to the guest before
    and after the move (0 after: walked onto him), Hugo's steps to the walk's end, and Hugo moves to
    the seat's guest nearest him (the columns of this module)."""
    out = np.empty((len(games), NUM_FEATURES), np.int64)
    _features(state, engine.rules, np.asarray(games, np.int64), np.asarray(actions, np.int64), out)
    return out


# ------------------------------------------------------------------------------------------------
# the card


@dataclass(frozen=True)
class Rule:
    """One rule of the card: its sentence (``{name}`` stands for a threshold), how many values its
    preference takes (0 .. levels-1, higher preferred) and the preference of every choice."""

    name: str
    text: str
    levels: int
    prefer: Callable[[np.ndarray, dict], np.ndarray]


def _place(f, t):
    square = f[:, SQUARE]
    return np.where((f[:, KIND] == PLACE_GUEST) & (square != 0), 1 + square, 0)


def _safe(f, t):
    return 1 - ((f[:, KIND] == WALK) & (f[:, TO_MOVES] <= t["safe_moves"]))  # 0 moves: onto his square


def _green(f, t):
    return (f[:, KIND] == GREEN_ROOM).astype(np.int64)


def _danger(f, t):
    nearest = f[:, NEAREST]
    return ((nearest <= t["danger_moves"]) & (f[:, FROM_MOVES] == nearest) & (f[:, KIND] != PASS)).astype(np.int64)


def _hide(f, t):
    kind, near = f[:, KIND], f[:, FROM_MOVES] <= t["hide_moves"]
    plain_or_red = (kind == PLAIN_ROOM) | (kind == RED_ROOM)
    hide = np.where(kind == PLAIN_ROOM, 3, 2)  # a plain room rather than a red one
    return np.where(plain_or_red, np.where(near, hide, 0), 1)


def _pass(f, t):
    return np.where(f[:, KIND] == PASS, np.where(f[:, NEAREST] >= t["pass_moves"], 2, 0), 1)


def _trail(f, t):
    return np.where(f[:, KIND] == WALK, np.minimum(f[:, BEHIND], 63), 0)


RULES = [  # rule K of the card is RULES[K - 1]
    Rule("place", "Place every guest on the highest-numbered free square (27, then 26, ...): Hugo comes there "
         "last. Never on square 0, where he steps onto the gallery.", 29, _place),
    Rule("safe", "Never walk a guest onto Hugo's square (nor to within {safe_moves} Hugo moves of him), if any "
         "other choice avoids it.", 2, _safe),
    Rule("green", "Take every roll that brings a guest into a free green room.", 2, _green),
    Rule("danger", "If a guest of yours stands within {danger_moves} Hugo moves, move that guest (the one "
         "nearest Hugo).", 2, _danger),
    Rule("hide", "Hide a guest in a room when Hugo is at most {hide_moves} moves from it, a plain room rather "
         "than a red one; never when he is farther.", 4, _hide),
    Rule("pass", "Pass (midnight_party, your last guest on the gallery) only while it is at least {pass_moves} "
         "Hugo moves away (∞: never pass).", 3, _pass),
    Rule("trail", "Otherwise walk to the square Hugo needs the most steps to reach: just behind him.", 64, _trail),
]
RULE_NAMES = [r.name for r in RULES]

# the thresholds, fitted by experiments/fit_card.py (docs/CARD.md); one value per variant
THRESHOLDS = {  # hidden_castle has no pass: its pass_moves does nothing
    "midnight_party": dict(safe_moves=0, danger_moves=0, hide_moves=6, pass_moves=OUT_OF_REACH),
    "hidden_castle": dict(safe_moves=0, danger_moves=3, hide_moves=OUT_OF_REACH, pass_moves=OUT_OF_REACH),
}
THRESHOLD_NAMES = list(THRESHOLDS["midnight_party"])


@dataclass(frozen=True)
class Card:
    """The rules played, in order, and their thresholds by variant."""

    rules: tuple[str, ...] = tuple(RULE_NAMES)
    thresholds: dict | None = None  # variant -> {threshold: value}; None: THRESHOLDS

    def of(self, variant: str) -> dict:
        return (self.thresholds or THRESHOLDS)[variant]

    def without(self, name: str) -> Card:
        return replace(self, rules=tuple(r for r in self.rules if r != name))

    def keys(self, features: np.ndarray, variant: str) -> np.ndarray:
        """One number per choice (``choice_features`` rows): the card's preferences in order, as
        digits of a mixed radix (exact in a float64: the levels multiply to under 2**53)."""
        t = self.of(variant)
        key = np.zeros(len(features), np.float64)
        for rule in RULES:
            if rule.name in self.rules:
                key = key * rule.levels + np.clip(rule.prefer(features, t), 0, rule.levels - 1)
        return key


def card_choices(engine: Engine, state: GameState, games: np.ndarray, draws: np.ndarray,
                 card: Card = Card()) -> np.ndarray:
    """The card's choice for each of ``state``'s games ``games`` (all at PLACE or MOVE); ties go
    to ``draws`` (one uniform a game)."""
    legal = state.legal[games]
    parent, action = np.nonzero(legal)
    start = np.zeros(len(games) + 1, np.int64)
    np.cumsum(legal.sum(axis=1, dtype=np.int64), out=start[1:])
    features = choice_features(engine, state, np.asarray(games)[parent], action)
    return action[pick_best(card.keys(features, engine.variant), start, draws)].astype(np.int64)


# ------------------------------------------------------------------------------------------------
# the card in words, and card files


def threshold_words(card: Card, name: str) -> str:
    values = {v: card.of(v)[name] for v in VARIANTS}
    words = {v: ("∞" if x >= OUT_OF_REACH else str(x)) for v, x in values.items()}
    if len(set(words.values())) == 1:
        return words[VARIANTS[0]]
    return "[" + ", ".join(f"{words[v]} in {v}" for v in VARIANTS) + "]"


def rule_sentences(card: Card = Card()) -> list[tuple[int, str, str]]:
    """(number, name, sentence) of every rule played, numbered as on the full card."""
    words = {name: threshold_words(card, name) for name in THRESHOLD_NAMES}
    return [(k + 1, r.name, r.text.format(**words)) for k, r in enumerate(RULES) if r.name in card.rules]


class CardError(ValueError):
    """A card option or card file that cannot be played: the message names the value and what is allowed."""


def load_card(path: str | Path) -> Card:
    """A card from a YAML or JSON file::

        rules: [place, safe, green, danger, hide, pass, trail]   # those played
        thresholds:                                                             # optional
          midnight_party: {pass_moves: 6}
          hidden_castle: {hide_moves: 2}

    Rules not listed are not played; thresholds not given keep the fitted ones."""
    import yaml

    allowed = (f"a YAML or JSON mapping with 'rules' (a list of {', '.join(RULE_NAMES)}) and optional "
               f"'thresholds' ({', '.join(VARIANTS)} -> {{{', '.join(THRESHOLD_NAMES)}: integer}})")
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as err:
        raise CardError(f"card option rules={str(path)!r} cannot be read ({err.strerror}): allowed is {allowed}") \
            from None
    try:
        data = json.loads(text) if str(path).endswith(".json") else yaml.safe_load(text)
    except (ValueError, yaml.YAMLError) as err:
        first = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise CardError(f"card file {str(path)!r} does not parse ({first}): allowed is {allowed}") from None
    if not isinstance(data, dict) or not isinstance(data.get("rules"), list) or set(data) - {"rules", "thresholds"}:
        raise CardError(f"card file {str(path)!r} holds {_short(data)}: allowed is {allowed}")
    for name in data["rules"]:
        if name not in RULE_NAMES:
            raise CardError(f"card file {str(path)!r} names rule {name!r}: allowed are {', '.join(RULE_NAMES)}")
    thresholds = {v: dict(THRESHOLDS[v]) for v in VARIANTS}
    given = data.get("thresholds") or {}
    if not isinstance(given, dict):
        raise CardError(f"card file {str(path)!r}: thresholds {_short(given)}: allowed is {allowed}")
    for variant, values in given.items():
        if variant not in VARIANTS or not isinstance(values, dict):
            raise CardError(f"card file {str(path)!r}: thresholds {variant!r}: allowed are {', '.join(VARIANTS)}, "
                            "each a mapping of thresholds")
        for name, value in values.items():
            if name not in THRESHOLD_NAMES or isinstance(value, bool) or not isinstance(value, int):
                raise CardError(f"card file {str(path)!r}: threshold {variant}.{name}={value!r}: allowed are "
                                f"{', '.join(THRESHOLD_NAMES)}, each an integer")
            thresholds[variant][name] = value
    order = [r for r in RULE_NAMES if r in data["rules"]]
    return Card(tuple(order), thresholds)


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def drop_rules(card: Card, drop) -> Card:
    """``card`` without the rules ``drop`` names: a number 1-10, a rule's name, or several joined by '+'."""
    for part in str(drop).split("+"):
        part = part.strip()
        if part.isdigit() and 1 <= int(part) <= len(RULES):
            card = card.without(RULE_NAMES[int(part) - 1])
        elif part in RULE_NAMES:
            card = card.without(part)
        else:  # by hand: one message for the whole option (numbers or names joined by '+')
            raise CardError(f"card option drop={drop!r} is not allowed: allowed are the rule numbers 1-{len(RULES)} "
                            f"or names ({', '.join(RULE_NAMES)}), several joined by '+'")
    return card


class CardAgent(Agent):
    name = "card"
    description = ("seven rules a person can follow (docs/CARD.md), fitted on the champions' decisions: place "
                   "high, never walk onto Hugo, take the green rooms, move the guest in danger, hide in a room "
                   "when Hugo comes near, when to pass, trail Hugo; options drop=K (without rule K), rules=FILE "
                   "(a card file)")
    plays = "every set-up"

    def __init__(self, drop=None, rules=None):
        card = load_card(rules) if rules is not None else Card()
        self.card = drop_rules(card, drop) if drop is not None else card

    def act(self, decisions: Decisions) -> np.ndarray:
        return card_choices(decisions.engine, decisions.state, decisions.games, decisions.uniforms(), self.card)
