"""Exact optimal play for small set-ups: the state graph, its values, and policies on it.

>>> from midnight_env.solve import solve, load_solution
>>> sol = solve("midnight_party", 1, guests_per_player=2, rounds=1)   # solo, 2 guests
>>> sol.value                              # expected final spooky points under optimal play
>>> sol.save("solutions/mp1")              # solution.npz + solution.json
>>> sol = load_solution("solutions/mp1")
>>> sol.best_actions(state)                # optimal action of each game of a GameState batch
>>> sol.final_values(state)                # expected final points from each position

Modules: ``keys`` (a position as a 64-bit key), ``ranks`` (a position's layer, read off its key),
``graph`` (the reachable positions and their transitions, made by the engine's own rule kernel:
the one expansion of both solvers), ``values`` (value iteration and policy evaluation on the
graph), ``solution`` (:func:`solve`, :class:`Solution`, the file format and its metadata),
``policy`` (an agent's policy on the graph, its exact value and regret), ``best_response`` (the
exact best response to an agent in a two-player set-up, its gain, as a solution), ``check`` (the
solver's transitions and values checked against ``Engine`` calls), ``optimal_play`` (what optimal
play looks like: placement values, how often it, or any policy, meets each position, what it
decides where; not to be confused with ``midnight_env.analysis``, which judges the decisions of
a recorded game), ``layered`` (:func:`~midnight_env.solve.layered.solve_layered`: the same
values, layer by layer of what the game never takes back, one layer in memory and the rest on
disk, for set-ups beyond the memory), ``layer_store`` (a layered solution read from disk).
"""

from midnight_env.solve.graph import SolveError, StateGraph
from midnight_env.solve.solution import OBJECTIVES, Solution, load_solution, solve

__all__ = ["solve", "load_solution", "Solution", "StateGraph", "SolveError", "OBJECTIVES"]
