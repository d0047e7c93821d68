"""docs/RESEARCH.md, "Afterstate values on the same set-ups": the value network fitted to exact values.

Can the value network hold optimal play at all? Fit it to the solver's exact values and look.

A diagnostic for the solo regret of the afterstate networks (docs/RESEARCH.md, "Afterstate values
on the same set-ups"): it takes every afterstate of a solved solo set-up (a position right after a
decision, not a finished game), the observation the network reads there and the exact points still
to come under optimal play, and

1. counts the distinct observations: fewer than afterstates would mean the observation hides
   something optimal play depends on (two positions the network cannot tell apart);
2. fits the champions' network shape (``--hidden``) to the exact values by plain regression
   (every afterstate weighted alike, Adam, cosine learning rate), printing the error;
3. plays the fitted network one ply and gives its exact regret on the graph.

Supervised on the answers, so no agent of the project is trained this way: it says how close the
network's shape and the observation let a value function come, not what training reaches.

    python experiments/fit_exact_values.py --setup solo-mp-r1-g2 --hidden 256,128 --epochs 300
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
import torch

from midnight_agents.value import ValueAgent
from midnight_env.core.observation import encode_observations
from midnight_env.core.state import MOVE, OVER, PLACE
from midnight_env.solve.policy import agent_policy, evaluate_policy
from midnight_env.solve.setups import SET_UPS
from midnight_env.solve.solution import solve
from midnight_env.training.value import Network, frozen

POINTS_SCALE = 10.0  # the champions' targets are points / 10


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--setup", default="solo-mp-r1-g2")
    p.add_argument("--hidden", default="256,128", help="hidden layer sizes, as the configs' hidden_sizes")
    p.add_argument("--epochs", type=int, default=300)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    solo = sorted(name for name, s in SET_UPS.items() if s.players == 1)
    if a.setup not in solo:
        print(f"--setup {a.setup!r} is not allowed: allowed are the solo set-ups {', '.join(solo)}", file=sys.stderr)
        return 2
    s = SET_UPS[a.setup]
    solution = solve(s.variant, s.players, s.objective, **s.options)
    graph, engine = solution.graph, solution.engine
    phases = graph.phases
    decisions = np.flatnonzero((phases == PLACE) | (phases == MOVE))
    after = np.unique(np.concatenate([graph.edge_to[graph.edges(d)] for d in decisions]))
    after = after[phases[after] != OVER]
    chunks = np.array_split(after, max(1, len(after) // 4096))
    obs = np.concatenate([encode_observations(engine, solution.positions(c), np.arange(len(c)),
                                              np.zeros(len(c), np.int64)) for c in chunks])
    distinct = len(np.unique(obs, axis=0))
    print(f"{a.setup}: {len(decisions):,} decision states, {len(after):,} afterstates, "
          f"{distinct:,} distinct observations")

    torch.manual_seed(a.seed)
    x = torch.from_numpy(obs).float()
    y = torch.from_numpy(solution.values[after] / POINTS_SCALE).float()[:, None]
    net = Network(x.shape[1], 1, [int(h) for h in a.hidden.split(",")])
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, a.epochs)
    start = time.process_time()
    for epoch in range(a.epochs):
        for idx in torch.randperm(len(x)).split(512):
            loss = ((net(x[idx]) - y[idx]) ** 2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        schedule.step()
        if (epoch + 1) % max(1, a.epochs // 5) == 0:
            with torch.no_grad():
                rmse = POINTS_SCALE * ((net(x) - y) ** 2).mean().sqrt().item()
            print(f"epoch {epoch + 1}: error {rmse:.3f} points (root mean square), "
                  f"{time.process_time() - start:.0f} CPU-s")
    agent = ValueAgent(model=frozen(net, engine, POINTS_SCALE), budget=0)
    policy = agent_policy(solution, agent, seats=[0])
    regret = evaluate_policy(solution, policy).value - solution.value
    ties = policy.tied / policy.decisions
    print(f"one ply, exact on the graph: regret {regret:.4f} points per game (ties {ties:.1%})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
