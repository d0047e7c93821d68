"""Values on a state graph: optimal play (value iteration) and the value of a given policy.

A state's value is what its player's objective expects from there on: the points still to be
booked (``points``) or seat 0's chance of winning, a tie counting 1/2 (``win``). A roll averages
its transitions with the die's odds (1/6 per number, 1/3 for Hugo); a decision takes the best
transition for the deciding seat (its mode: MAXIMISE or MINIMISE), or, in a policy evaluation,
the average under the policy's probabilities (POLICY); a finished game is worth its result
(``win``) or nothing more.

The graph has cycles (a guest can run from Hugo round the gallery for ever), so values are
iterated to convergence. The graph is cut into strongly connected components (Tarjan's
algorithm, which finds them successors first); a component of one state without a loop is
exact after one update, a larger one is swept Gauss-Seidel until no value moves by more than
the tolerance. A sweep takes a component's states from the last found to the first (the graph
numbers states breadth-first from the start, so this runs roughly against the play, the way
values flow, and along memory), which takes far fewer sweeps than Tarjan's own order or the
order of play (BENCHMARKS.md). A roll is solved exactly against its own loops (a void roll, a
pass) at each visit, which saves more sweeps. Every policy ends the game with probability 1
(enough Hugo faces in a row clear the gallery; the castle's clock runs out), so the sweeps
converge.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from midnight_env.core.dice import CHANCE_OUTCOMES

# what a state's value is made of: a finished game (worth 0: no more points, or seat 0 lost;
# 1/2: a tie; 1: seat 0 won), a roll, a decision (best for its seat, or a given policy), or a
# value given beforehand (FIXED: the layered solver's positions of a later, solved layer)
TERMINAL, CHANCE, MAXIMISE, MINIMISE, POLICY, TIED_END, WON_END, FIXED = 0, 1, 2, 3, 4, 5, 6, 7
FACE_PROBABILITY = np.zeros(6, np.float64)  # by die face
for _face, _p in CHANCE_OUTCOMES:
    FACE_PROBABILITY[_face] = _p
TIE_TOLERANCE = 1e-9  # actions within this of the best are tied; the lowest action index wins
# compile options of the sweeps: no reference counting (they never allocate; counting the
# references of the graph's arrays at every call of ``backup`` would cost more than the backup)
_SWEEP = dict(cache=True, _nrt=False)


@njit(cache=True)
def strong_components(edge_start, edge_to):
    """Tarjan's strongly connected components, iteratively: (members, comp_start), component c
    being ``members[comp_start[c]:comp_start[c+1]]``, in the order to sweep them; every
    transition leads into the same or an earlier component."""
    n = edge_start.shape[0] - 1
    index = np.full(n, -1, np.int32)
    low = np.empty(n, np.int32)
    on_stack = np.zeros(n, np.bool_)
    stack = np.empty(n, np.int32)
    call_node = np.empty(n, np.int32)
    call_edge = np.empty(n, np.int64)
    members = np.empty(n, np.int32)
    comp_start = np.empty(n + 1, np.int32)  # (states are int32 in the graph)
    sp = 0
    m = 0
    comps = 0
    counter = 0
    for root in range(n):
        if index[root] >= 0:
            continue
        index[root] = counter
        low[root] = counter
        counter += 1
        stack[sp] = root
        sp += 1
        on_stack[root] = True
        call_node[0] = root
        call_edge[0] = edge_start[root]
        cp = 1
        while cp > 0:
            v = call_node[cp - 1]
            e = call_edge[cp - 1]
            if e < edge_start[v + 1]:
                call_edge[cp - 1] = e + 1
                w = edge_to[e]
                if index[w] < 0:
                    index[w] = counter
                    low[w] = counter
                    counter += 1
                    stack[sp] = w
                    sp += 1
                    on_stack[w] = True
                    call_node[cp] = w
                    call_edge[cp] = edge_start[w]
                    cp += 1
                elif on_stack[w] and index[w] < low[v]:
                    low[v] = index[w]
                continue
            cp -= 1
            if cp > 0:
                u = call_node[cp - 1]
                if low[v] < low[u]:
                    low[u] = low[v]
            if low[v] == index[v]:
                comp_start[comps] = m
                comps += 1
                while True:
                    sp -= 1
                    w = stack[sp]
                    on_stack[w] = False
                    members[m] = w
                    m += 1
                    if w == v:
                        break
    comp_start[comps] = m
    for c in range(comps):  # sweep order: latest found first (module docstring)
        lo = comp_start[c]
        hi = comp_start[c + 1]
        if hi - lo > 1:
            members[lo:hi] = np.sort(members[lo:hi])[::-1]
    return members, comp_start[:comps + 1].copy()


@njit(**_SWEEP)
def backup(v, V, mode, edge_start, edge_to, edge_label, edge_reward, weight):
    """The value of state ``v`` from the values ``V`` of its successors."""
    kind = mode[v]
    if kind == TERMINAL:
        return 0.0
    if kind == TIED_END:
        return 0.5
    if kind == WON_END:
        return 1.0
    if kind == FIXED:
        return V[v]
    lo = edge_start[v]
    hi = edge_start[v + 1]
    if kind == CHANCE:
        total = 0.0
        for e in range(lo, hi):
            total += FACE_PROBABILITY[edge_label[e]] * (edge_reward[e] + V[edge_to[e]])
        return total
    if kind == POLICY:
        total = 0.0
        for e in range(lo, hi):
            if weight[e] != 0.0:
                total += weight[e] * (edge_reward[e] + V[edge_to[e]])
        return total
    best = edge_reward[lo] + V[edge_to[lo]]
    for e in range(lo + 1, hi):
        q = edge_reward[e] + V[edge_to[e]]
        if (kind == MAXIMISE and q > best) or (kind == MINIMISE and q < best):
            best = q
    return best


@njit(**_SWEEP)
def settle_roll(v, c, comp_of, V, mode, edge_start, edge_to, edge_label, edge_reward, weight):
    """Solve roll ``v``'s value exactly against the loops through itself: a void roll (back to
    the same roll) and its own decisions that lead back to it (a pass), all other values held.
    Its value x solves x = a + b x with the deciding choices taken at x; the choices are
    re-taken at the solution until they stay (policy iteration in one dimension: the decisions
    of one roll are one seat's, so few rounds). Sets ``V[v]`` and the values of its decisions
    of component ``c``; returns how far ``V[v]`` moved."""
    x = V[v]
    for _ in range(30):
        a = 0.0
        b = 0.0
        for e in range(edge_start[v], edge_start[v + 1]):
            p = FACE_PROBABILITY[edge_label[e]]
            t = edge_to[e]
            r = edge_reward[e]
            if t == v:
                a += p * r
                b += p
                continue
            kind = mode[t]
            if comp_of[t] != c or not (kind == MAXIMISE or kind == MINIMISE or kind == POLICY):
                a += p * (r + V[t])
                continue
            if kind == POLICY:
                for f in range(edge_start[t], edge_start[t + 1]):
                    w = weight[f]
                    if w != 0.0:
                        a += p * w * (r + edge_reward[f])
                        if edge_to[f] == v:
                            b += p * w
                        else:
                            a += p * w * V[edge_to[f]]
                continue
            best = 0.0
            back = False
            for f in range(edge_start[t], edge_start[t + 1]):
                u = edge_to[f]
                q = edge_reward[f] + (x if u == v else V[u])
                if f == edge_start[t] or (kind == MAXIMISE and q > best) or (kind == MINIMISE and q < best):
                    best = q
                    back = u == v
                    rb = edge_reward[f]
            if back:
                a += p * (r + rb)
                b += p
            else:
                a += p * (r + best)
        new = a / (1.0 - b)
        if new == x:
            break
        x = new
    moved = abs(x - V[v])
    V[v] = x
    for e in range(edge_start[v], edge_start[v + 1]):
        t = edge_to[e]
        if t != v and comp_of[t] == c and (mode[t] == MAXIMISE or mode[t] == MINIMISE or mode[t] == POLICY):
            V[t] = backup(t, V, mode, edge_start, edge_to, edge_label, edge_reward, weight)
    return moved


@njit(**_SWEEP)
def iterate_in_place(members, comp_start, mode, inline, edge_start, edge_to, edge_label, edge_reward, weight,
                     tolerance, max_sweeps, V, comp_of):
    """:func:`iterate_values` on arrays the caller holds: ``V`` (the values to start from, the
    FIXED states' kept) is updated in place, ``comp_of`` (n,) int32 is scratch. Returns (sweeps,
    largest)."""
    n = mode.shape[0]
    for c in range(comp_start.shape[0] - 1):
        for k in range(comp_start[c], comp_start[c + 1]):
            comp_of[members[k]] = c
    swept = 0
    largest = 0
    for c in range(comp_start.shape[0] - 1):
        lo = comp_start[c]
        hi = comp_start[c + 1]
        if hi - lo == 1:
            v = members[lo]
            loop = False
            for e in range(edge_start[v], edge_start[v + 1]):
                if edge_to[e] == v:
                    loop = True
            if not loop:
                V[v] = backup(v, V, mode, edge_start, edge_to, edge_label, edge_reward, weight)
                swept += 1
                continue
        sweeps = 0
        while True:
            delta = 0.0
            for k in range(lo, hi):
                v = members[k]
                if mode[v] == CHANCE:
                    d = settle_roll(v, c, comp_of, V, mode, edge_start, edge_to, edge_label, edge_reward,
                                    weight)
                elif inline[v]:
                    continue
                else:
                    new = backup(v, V, mode, edge_start, edge_to, edge_label, edge_reward, weight)
                    d = abs(new - V[v])
                    V[v] = new
                if d > delta:
                    delta = d
            sweeps += 1
            swept += hi - lo
            if delta <= tolerance:
                break
            if sweeps >= max_sweeps:
                return -1.0, sweeps
        if sweeps > largest:
            largest = sweeps
    return swept / max(n, 1), largest


def iterate_values(members, comp_start, mode, inline, edge_start, edge_to, edge_label, edge_reward, weight,
                   tolerance, max_sweeps, initial=None):
    """Values of every state, component by component (see the module docstring); a roll is
    settled against its own loops (``settle_roll``) at every visit, which also updates its
    decisions. The states flagged ``inline`` (moves: a move's only predecessor is the roll it
    decides, in its component whenever the move is on a loop) are left to their roll in the
    sweeps. Returns (V, sweeps, largest): ``sweeps`` the Gauss-Seidel sweeps made (states
    swept over the number of states), ``largest`` the most sweeps one component needed; -1
    sweeps when a component did not settle within ``max_sweeps``. ``initial``: the values to
    start from (default 0; a float64 array is updated in place and returned as V); the FIXED
    states keep theirs."""
    V = np.zeros(len(mode)) if initial is None else np.asarray(initial, dtype=np.float64)
    comp_of = np.empty(len(mode), np.int32)
    sweeps, largest = iterate_in_place(members, comp_start, mode, inline, edge_start, edge_to, edge_label,
                                       edge_reward, weight, tolerance, max_sweeps, V, comp_of)
    return V, sweeps, largest


@njit(**_SWEEP)
def bellman_residual(V, mode, edge_start, edge_to, edge_label, edge_reward, weight):
    """Largest |backup(v) - V[v]| over all states: how far ``V`` is from the fixed point."""
    worst = 0.0
    for v in range(mode.shape[0]):
        d = abs(backup(v, V, mode, edge_start, edge_to, edge_label, edge_reward, weight) - V[v])
        if d > worst:
            worst = d
    return worst


@njit(**_SWEEP)
def _best_actions(V, mode, edge_start, edge_to, edge_label, edge_reward, tolerance, out):
    for v in range(mode.shape[0]):
        out[v] = -1
        kind = mode[v]
        if kind != MAXIMISE and kind != MINIMISE:
            continue
        lo = edge_start[v]
        hi = edge_start[v + 1]
        best = edge_reward[lo] + V[edge_to[lo]]
        for e in range(lo + 1, hi):
            q = edge_reward[e] + V[edge_to[e]]
            if (kind == MAXIMISE and q > best) or (kind == MINIMISE and q < best):
                best = q
        for e in range(lo, hi):
            q = edge_reward[e] + V[edge_to[e]]
            if abs(q - best) <= tolerance:
                out[v] = edge_label[e]
                break


def best_actions(V, mode, edge_start, edge_to, edge_label, edge_reward, tolerance):
    """The optimal action of every decision (-1 elsewhere): among the actions within
    ``tolerance`` of the best, the lowest action index (transitions are in action order)."""
    out = np.empty(len(mode), np.int16)
    _best_actions(V, mode, edge_start, edge_to, edge_label, edge_reward, tolerance, out)
    return out
