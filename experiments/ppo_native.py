"""Trains agents/models/ppo-<variant>-4p (BENCHMARKS_TRAIN.md, "Today's results"; "Native batched PPO").

Native batched PPO, cleanrl style: every ``Args`` field of :mod:`midnight_env.training.native` as a flag.

    python experiments/ppo_native.py --total-timesteps 2000000
    python experiments/ppo_native.py --config configs/native-midnight_party-4p.yaml

The algorithm is library code, read it there; ``midnight train --algo native`` runs the same.
Needs the package installed (``pip install -e '.[train]'``).
"""

from midnight_env.training.native import main

if __name__ == "__main__":
    main()
