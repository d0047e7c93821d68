"""The exact best response to an agent on a solved two-player set-up, and how much it gains.

:func:`best_response` fixes an agent's policy at every seat but one (the responder's) on the
solution's state graph (:func:`~midnight_env.solve.policy.agent_policy`: deterministic choices
exactly, ties between equally good choices as the uniform mixture the agent's draws make of
them) and iterates the values with the responder choosing optimally
(:func:`~midnight_env.solve.policy.evaluate_policy`): the responder's exact value. The agent's
own value in the responder's seat is the same iteration with the agent's policy at every seat
(self-play), and the **gain** is how much better the best response does there than the agent:
in the objective's units (points of difference a game, or the chance to win), counted for the
responder's seat, never negative, 0 for an agent that cannot be exploited (the minimax solution
of a zero-sum game). An agent whose draw does more than break ties (``search`` sampling the
dice inside its tree) is evaluated by the mixture its draws make at each decision
(``policy``'s module docstring), not exactly as it plays: compare with play.

Values follow :mod:`midnight_env.solve.solution`: seat 0's final result, with ``points`` seat 0's
points minus seat 1's (seat 0 minimises, seat 1 maximises), with ``win`` seat 0's chance to win,
a tie 1/2 (seat 0 maximises, seat 1 minimises). A responder at seat 0 gains when it lowers the
points (raises the chance); at seat 1 when it raises the points (lowers seat 0's chance).

Other responders (``responders=``: a trained best response, say) are evaluated the same way in
the responder's seat against the same fixed agent: their exact gain (``ResponderGain``, which may
be negative) says how much of the best response's gain they found, without the dice's noise that
a gain measured by play carries.

The best response is also a :class:`~midnight_env.solve.solution.Solution` (``BestResponse.solution``,
saved like any, played by ``optimal:path=DIR``): its values are those of the best response
against the agent, its actions at the responder's decisions the best response's (the lowest
action index among those within ``TIE_TOLERANCE`` of the best), and at the other seats' decisions
the agent's own choice where it is deterministic, else its most likely one (the lowest action
index among equally likely: the first of its tied choices). ``optimal:path=DIR`` in the
responder's seat therefore plays the best response; in another seat it plays the agent where the
agent is deterministic, and the agent itself should play there.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from numba import njit

from midnight_env.arena.agent import Agent, fit_error
from midnight_env.infra import checks
from midnight_env.solve.policy import agent_policy, evaluate_policy
from midnight_env.solve.solution import Solution, seat_modes, state_modes
from midnight_env.solve.values import MAXIMISE, MINIMISE, POLICY, TIE_TOLERANCE, best_actions


@dataclass
class ResponderGain:
    """Another responder in the best response's seat against the same agent (module docstring)."""

    agent: str  # the responder's spec (or name)
    value: float  # its exact value against the agent, as BestResponse.value
    gain: float  # how much better it does in the seat than the agent itself (negative: worse)
    decisions: int  # its decision states
    tied: int  # of them, where its draw chose among tied choices (evaluated as their mixture)


@dataclass
class BestResponse:
    """The exact best response of ``seat`` to ``agent`` in every other seat (module docstring)."""

    agent: str  # the agent's spec (or name)
    seat: int  # the responder's seat
    objective: str
    value: float  # the best response's exact value, a final result as Solution.value (seat 0's terms)
    agent_value: float  # the agent's exact value in every seat (self-play), the same units
    gain: float  # how much better the best response does in ``seat`` than the agent (>= 0)
    optimum: float  # the game's value (both seats optimal)
    decisions: int  # decision states of the agent's seats
    tied: int  # of them, where its draw chose among tied choices (evaluated as their mixture)
    residual: float  # Bellman residual of the best response's values
    seconds: float  # CPU seconds: asking the agent (and the responders) and the evaluations
    solution: Solution  # the best response as a solution (module docstring)
    responders: list[ResponderGain] = field(default_factory=list)  # the other responders asked, in order

    @property
    def deterministic(self) -> bool:
        """Whether the agent chose one action at every decision of the graph (no draw decided)."""
        return self.tied == 0


def best_response(solution: Solution, agent: Agent | str, seat: int = 0,
                  responders: Sequence[Agent | str] = ()) -> BestResponse:
    """The exact best response of ``seat`` against ``agent`` (an Agent or an agent spec) playing
    every other seat of the solved set-up, the agent's own value in that seat, the gain, and the
    exact gain of each of ``responders`` in the same seat (module docstring). ValueError for a
    one-player set-up, a seat out of range, or an agent or responder that cannot play the set-up;
    ``solution`` must be the one ``solve()`` returned (it keeps the graph)."""
    n = solution.config.num_players
    if n < 2:
        raise ValueError(f"a best response needs another seat to respond to: {solution.describe()} has 1 player "
                         "(allowed: set-ups of 2 players)")
    seat = checks.integer("seat", seat, 0, n - 1, allowed=f"0 to {n - 1} ({n} players)")
    agent = _playing(solution, agent, "agent")
    responders = [_playing(solution, r, "responder") for r in responders]
    started = time.process_time()
    others = [s for s in range(n) if s != seat]
    theirs = agent_policy(solution, agent, seats=others)
    mine = agent_policy(solution, agent, seats=[seat])
    response = evaluate_policy(solution, theirs)  # the responder's seat optimal against them
    itself = evaluate_policy(solution, [theirs, mine])
    better_high = seat_modes(n, solution.objective)[seat] == MAXIMISE

    def gain_of(value: float) -> float:
        return float(value - itself.value if better_high else itself.value - value)

    asked = []
    for responder in responders:
        played = agent_policy(solution, responder, seats=[seat])
        value = evaluate_policy(solution, [theirs, played]).value
        asked.append(ResponderGain(agent=responder.name, value=value, gain=gain_of(value),
                                   decisions=played.decisions, tied=played.tied))
    seconds = time.process_time() - started
    gain = gain_of(response.value)
    as_solution = _response_solution(solution, theirs.weight, others, response, agent.name, seat)
    result = BestResponse(agent=agent.name, seat=seat, objective=solution.objective, value=response.value,
                          agent_value=itself.value, gain=float(gain), optimum=solution.value,
                          decisions=theirs.decisions + mine.decisions, tied=theirs.tied + mine.tied,
                          residual=response.residual, seconds=round(seconds, 3), solution=as_solution,
                          responders=asked)
    as_solution.meta["best_response"].update(agent_value=result.agent_value, gain=result.gain,
                                             decisions=result.decisions, tied=result.tied)
    return result


def _playing(solution: Solution, agent: Agent | str, role: str) -> Agent:
    """``agent`` built from its spec where it is one (named by it), checked to play the set-up."""
    if isinstance(agent, str):
        from midnight_env.arena.registry import make_agent

        spec = agent.strip()
        agent = make_agent(spec)
        agent.name = spec
    problem = fit_error(agent, solution.engine)
    if problem is not None:
        raise ValueError(f"{role} {agent.name!r} cannot play {solution.describe()}: {problem}")
    return agent


@njit(cache=True)
def _likeliest(edge_start, edge_label, weight, states, out):
    """out[k]: the action of state ``states[k]``'s most likely transition (the first among equals)."""
    for k in range(states.shape[0]):
        v = states[k]
        best = -1.0
        out[k] = -1
        for e in range(edge_start[v], edge_start[v + 1]):
            if weight[e] > best:
                best = weight[e]
                out[k] = edge_label[e]


def _response_solution(solution: Solution, weight: np.ndarray, others: list[int], response, agent: str,
                       seat: int) -> Solution:
    g = solution.graph
    mode = state_modes(g, solution.objective)
    deciding = (mode == MAXIMISE) | (mode == MINIMISE)
    fixed = deciding & np.isin(g.players, others)
    mode[fixed] = POLICY
    V = response.values
    best = best_actions(V, mode, g.edge_start, g.edge_to, g.edge_label, g.edge_reward, TIE_TOLERANCE)
    ids = np.flatnonzero(fixed)
    theirs = np.empty(len(ids), np.int64)
    _likeliest(g.edge_start, g.edge_label, weight, ids, theirs)
    best[ids] = theirs
    seats = ", ".join(str(s) for s in others)
    meta = {k: v for k, v in solution.meta.items() if k != "source"}
    meta.update(
        value=response.value, residual=response.residual, sweeps=round(response.sweeps, 3),
        value_means=f"{meta['value_means']}, with seat {seat} the best response to {agent} in seat(s) {seats}",
        best_response={
            "agent": agent, "seat": seat, "optimum": solution.value,
            "plays": f"seat {seat}: the best response to {agent}; seat(s) {seats}: {agent}'s choice where it is "
                     "deterministic, else its most likely one (the lowest action index among equally likely)"})
    return Solution(config=solution.config, objective=solution.objective, layout=solution.layout,
                    keys=solution.keys, values=V, best=best, meta=meta, graph=g, _engine=solution.engine)


__all__ = ["BestResponse", "ResponderGain", "best_response"]
