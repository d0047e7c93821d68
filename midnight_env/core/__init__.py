"""The rules and the engine: everything a game is, and nothing about who plays it (docs/ARCHITECTURE.md).

- ``board`` (and ``boards/``, the boards as data), ``config`` (variants and rule options);
- ``state`` (the batch of games as arrays), ``dice`` (the die and the per-game random streams);
- ``rules`` (the compiled rule functions), ``scoring`` (ranks and rewards), ``actions`` (the
  action layout and record notation), ``observation`` (the observation encoding);
- ``engine`` (the batch API over the rules), ``random_choice`` (a random legal choice per game);
- ``vector_kernels`` (the vector env's compiled step), ``specialize`` (its copies compiled per rule set);
- ``records`` (game records, replay), ``positions`` (hand-made positions), ``bench`` (the engine's speed).

Imports only :mod:`midnight_env.infra`; never PettingZoo, Gymnasium or an agent.
"""
