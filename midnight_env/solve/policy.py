"""Agents on a solved state graph: their policies, exact values, regret, and values by play.

:func:`agent_policy` asks an agent for its choice at every decision state of the graph (the
seats given), in batches through the agent protocol (``midnight_env.arena.agent.decide``), and
:func:`evaluate_policy` computes the policy's exact value by iterating on the same graph (the
seats without a policy play optimally: a best response). :func:`regret_table` does both for a
list of agents; :func:`play_values` plays games instead, for a 95 % interval.

The built-in agents break ties between equally good choices with a per-game random draw
(``Decisions.uniforms``: among t tied choices, the ``floor(draw * t)``-th; ``random`` draws
from all legal choices). Here the draw is fixed instead: each decision is asked with draw 0
and with a draw just below 1, which pick the first and the last tied choice. Where the two
agree the agent is deterministic there; where not, it is asked again with one draw per legal
choice ((j + 1/2) / legal), which finds every tied choice, and the policy there is the uniform
mixture over them: exactly what the draws make of it in play. An agent whose draw does more
than break ties (``search`` with other players, sampling its opponents' rolls) or that keeps
state between decisions is not captured exactly: compare with :func:`play_values`.

The positions an agent sees are the keys' (``midnight_env.solve.keys``): the turn counter is 0,
and in midnight_party the points are those booked this round (exactly the points of a
one-round game).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numba import njit

from midnight_env.arena.agent import Agent, Decisions, decide
from midnight_env.core.state import MOVE, PLACE
from midnight_env.solve.solution import MAX_TURNS_IGNORED, Solution, booked_points, seat_modes, state_modes
from midnight_env.solve.values import (
    MAXIMISE,
    MINIMISE,
    POLICY,
    bellman_residual,
    iterate_values,
    strong_components,
)

LAST_DRAW = 1.0 - 2.0**-53  # the largest float below 1
POLICY_BATCH = 16_384  # decision states asked of an agent per call


@dataclass
class FixedDraws(Decisions):
    """Decisions whose per-game draws are given (``draws``) instead of taken from the games'
    random streams: ``uniforms()`` returns them, ``random_choice`` takes the
    ``floor(draw * legal)``-th legal choice."""

    draws: np.ndarray | None = field(default=None, repr=False)

    def uniforms(self) -> np.ndarray:
        return np.array(self.draws, dtype=np.float64)

    def random_choice(self, legal: np.ndarray | None = None) -> np.ndarray:
        legal = self.legal if legal is None else np.asarray(legal)
        counts = legal.sum(axis=1)
        want = np.minimum((self.draws * counts).astype(np.int64), counts - 1)
        rank = np.cumsum(legal, axis=1) - 1
        return np.argmax((rank == want[:, None]) & (legal == 1), axis=1).astype(np.int64)


@dataclass
class Policy:
    """An agent's play on a solution's graph: the probability of each decision transition."""

    name: str
    seats: tuple[int, ...]  # the seats whose decisions it gives
    weight: np.ndarray  # (E,) float64: probability of each transition of those seats' decisions, else 0
    decisions: int  # decision states of those seats
    tied: int  # of them, where the agent's draw chose among tied choices

    @property
    def deterministic(self) -> bool:
        return self.tied == 0


@njit(cache=True)
def _edges_of(edge_start, edge_label, states, actions, out):
    """out[k]: the transition of decision ``states[k]`` labelled ``actions[k]`` (-1: none)."""
    for k in range(states.shape[0]):
        out[k] = -1
        for e in range(edge_start[states[k]], edge_start[states[k] + 1]):
            if edge_label[e] == actions[k]:
                out[k] = e
                break


def agent_policy(solution: Solution, agent: Agent, seats=None, batch: int = POLICY_BATCH) -> Policy:
    """The policy of ``agent`` at the decisions of ``seats`` (default: every seat) of the
    solution's graph (module docstring)."""
    g = _graph(solution)
    engine = solution.engine
    seats = tuple(range(engine.num_players)) if seats is None else tuple(int(s) for s in seats)
    phases, players = g.phases, g.players
    ids = np.flatnonzero(((phases == PLACE) | (phases == MOVE)) & np.isin(players, seats))
    weight = np.zeros(g.num_edges)
    tied_total = 0
    for lo in range(0, len(ids), batch):
        chunk = ids[lo:lo + batch]
        state = solution.positions(chunk)
        games = np.arange(len(chunk))
        streams = np.zeros(len(chunk), np.uint64)

        def ask(which: np.ndarray, draws: np.ndarray, state=state, streams=streams) -> np.ndarray:
            return decide(agent, FixedDraws(engine, state, which, streams, draws=draws))

        first = ask(games, np.zeros(len(chunk)))
        last = ask(games, np.full(len(chunk), LAST_DRAW))
        tied = np.flatnonzero(first != last)
        tied_total += len(tied)
        picks_state = [games[first == last]]
        picks_action = [first[first == last]]
        if len(tied):
            legal = state.legal[tied].sum(axis=1)
            for j in range(int(legal.max())):
                which = tied[legal > j]
                draws = (j + 0.5) / legal[legal > j]
                picks_state.append(which)
                picks_action.append(ask(which, draws))
        local = np.concatenate(picks_state)
        actions = np.concatenate(picks_action)
        pairs = np.unique(np.stack([local, actions]), axis=1)  # each (state, chosen action) once
        local, actions = pairs
        edges = np.empty(len(local), np.int64)
        _edges_of(g.edge_start, g.edge_label, chunk[local], actions, edges)
        if (edges < 0).any():
            raise ValueError(f"agent {agent.name!r} chose an action the graph does not have")
        choices = np.bincount(local, minlength=len(chunk))
        weight[edges] = 1.0 / choices[local]
    return Policy(name=agent.name, seats=seats, weight=weight, decisions=len(ids), tied=tied_total)


@dataclass
class PolicyValue:
    values: np.ndarray  # (n,) every state's value under the policies (others optimal)
    value: float  # the start's, as a final result (as Solution.value)
    residual: float
    sweeps: float


def evaluate_policy(solution: Solution, policies: Policy | list[Policy], tolerance: float = 1e-12) -> PolicyValue:
    """Exact values of play by ``policies`` (seats without one play optimally against them),
    by iteration on the solution's graph."""
    g = _graph(solution)
    policies = [policies] if isinstance(policies, Policy) else list(policies)
    mode = state_modes(g, solution.objective)
    weight = np.zeros(g.num_edges)
    players = g.players
    for policy in policies:
        fixed = ((mode == MAXIMISE) | (mode == MINIMISE)) & np.isin(players, policy.seats)
        mode[fixed] = POLICY
        weight += policy.weight
    members, comp_start = strong_components(g.edge_start, g.edge_to)
    V, sweeps, _ = iterate_values(members, comp_start, mode, g.phases == MOVE, g.edge_start, g.edge_to,
                                  g.edge_label, g.edge_reward, weight, tolerance, 1_000_000)
    if sweeps < 0:
        raise ValueError("the policy's values did not settle (a policy that never ends the game?)")
    residual = bellman_residual(V, mode, g.edge_start, g.edge_to, g.edge_label, g.edge_reward, weight)
    start = solution.start
    value = float(V[start]) + float(booked_points(solution.positions([start]), solution.objective)[0])
    return PolicyValue(values=V, value=value, residual=float(residual), sweeps=float(sweeps))


def play_values(solution: Solution, agents: list[Agent], games: int = 10_000, seed: int = 0,
                batch: int = 2048) -> tuple[float, float]:
    """(mean, 95 % half-width) of the objective's final result over ``games`` games played
    to their end by ``agents`` (one per seat): seat 0's points, seat 0's points minus seat 1's,
    or seat 0's wins (a tie 1/2)."""
    from midnight_env.arena.play import play_batch

    engine = solution.engine
    assert engine.config.options["max_turns"] == MAX_TURNS_IGNORED
    n = engine.num_players
    total = squares = 0.0
    for first in range(0, games, batch):
        seeds = seed + first + np.arange(min(batch, games - first))
        res = play_batch(engine, agents, np.tile(np.arange(n), (len(seeds), 1)), seeds)
        if solution.objective == "win":
            d = res.points[:, 0].astype(np.int64) - res.points[:, 1]
            result = np.where(d < 0, 1.0, np.where(d == 0, 0.5, 0.0))
        elif n == 1:
            result = res.points[:, 0].astype(np.float64)
        else:
            result = (res.points[:, 0].astype(np.int64) - res.points[:, 1]).astype(np.float64)
        total += result.sum()
        squares += (result**2).sum()
    mean = total / games
    half = 1.96 * np.sqrt(max(squares / games - mean**2, 0.0) / max(games - 1, 1)) if games > 1 else float("nan")
    return float(mean), float(half)


@dataclass
class Regret:
    agent: str
    value: float  # the agent's exact value (final-result units), the other seat optimal
    optimum: float
    regret: float  # how much worse than optimal for seat 0, in the objective's units (>= 0)
    decisions: int
    tied: int  # decisions where the agent's draw chose among ties (0: deterministic on the graph)
    played: tuple[float, float] | None = None  # (mean, 95 % half-width) by play, where asked


def regret_table(solution: Solution, specs: list[str], seat: int = 0, games: int = 0, seed: int = 0) -> list[Regret]:
    """Every agent of ``specs`` (agent specs, ``midnight_env.arena.registry``) at ``seat`` (the other
    seat optimal), evaluated exactly on the graph; with ``games`` > 0 also by play (solo:
    the agent alone; two players: against the ``optimal`` play of this solution)."""
    from midnight_env.arena.registry import make_agent

    optimum = solution.value
    better_high = seat_modes(solution.config.num_players, solution.objective)[0] == MAXIMISE
    rows = []
    for spec in specs:
        agent = make_agent(spec)
        agent.name = spec
        policy = agent_policy(solution, agent, seats=[seat])
        result = evaluate_policy(solution, policy)
        gap = result.value - optimum
        regret = -gap if better_high else gap
        if seat == 1:
            regret = -regret
        played = None
        if games > 0:
            lineup = [agent] if solution.config.num_players == 1 else (
                [agent, _SolutionAgent(solution)] if seat == 0 else [_SolutionAgent(solution), agent])
            played = play_values(solution, lineup, games, seed)
        rows.append(Regret(spec, result.value, optimum, regret, policy.decisions, policy.tied, played))
    return rows


class _SolutionAgent(Agent):
    """Optimal play from a solution in memory (the ``optimal`` agent plays saved ones)."""

    name = "optimal"

    def __init__(self, solution: Solution):
        self.solution = solution

    def act(self, decisions: Decisions) -> np.ndarray:
        return self.solution.best_actions(decisions.state, decisions.games)


def solution_agent(solution: Solution) -> Agent:
    """An agent that plays ``solution`` optimally, without saving it first."""
    return _SolutionAgent(solution)


def _graph(solution: Solution):
    if solution.graph is None:
        raise ValueError("policy evaluation needs the solver's graph: use the solution solve() returned, not a "
                         "loaded one (solve the set-up again)")
    return solution.graph
