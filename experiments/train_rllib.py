"""docs/RAY.md, "Training on RLlib": trains runs/<exp_name>-s<seed>/model.npz (no model shipped from it).

RLlib's PPO in self-play, cleanrl style: every ``TrainConfig`` field of :mod:`midnight_env.training.rllib_ppo`
as a flag.

    python experiments/train_rllib.py --config configs/rllib-midnight_party-4p.yaml
    python experiments/train_rllib.py --variant hidden_castle --num-players 3 --total-timesteps 20000

The algorithm's set-up (env, action masking, seat mapping, snapshots, export) is library code,
read it there; ``midnight train --algo rllib`` runs the same. Needs the package installed with
the rllib extra (``pip install -e '.[rllib]'``).
"""

from midnight_env.training.rllib_ppo import main

if __name__ == "__main__":
    main()
