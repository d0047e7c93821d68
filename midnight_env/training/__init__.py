"""Training agents for midnight-env: the pieces shared by every training entry point.

==================  ======================================================================
``args``            a ``@dataclass`` of settings as a command line and a YAML config
``runs``            run folders: resolved config, metadata, checkpoints
``logger``          metrics as CSV (and TensorBoard when installed), learning-curve PNG
``evaluate``        a policy against fixed heuristic agents, mean spooky points with CIs
``export``          torch networks as the named weight arrays of the model format
``native``          PPO on the batched ``VectorEnv``, cleanrl style: the shipped models' algorithm
``sb3``             MaskablePPO (sb3-contrib) against an opponent pool with self-play
==================  ======================================================================

``midnight train --algo native|maskable_ppo --config configs/….yaml`` runs ``native.train`` (the
default) or ``sb3.train``; ``experiments/ppo_native.py`` takes every native setting as a flag.
Models are written and read by :mod:`midnight_agents.model`, the one home of the model format.
torch and stable-baselines3 are imported only by ``export``, ``native`` and ``sb3`` (the
``train`` extra); playing a trained model needs numpy only.
"""
