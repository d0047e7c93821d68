"""Training agents for midnight-env: the pieces shared by every training entry point.

==================  ======================================================================
``args``            a ``@dataclass`` of settings as a command line and a YAML config
``runs``            run folders: resolved config, metadata, checkpoints
``logger``          metrics as CSV (and TensorBoard when installed), learning-curve PNG
``evaluate``        a policy against fixed heuristic agents, mean spooky points with CIs
``export``          torch networks as the named weight arrays of the model format
``native``          PPO on the batched ``VectorEnv``, cleanrl style: the shipped PPO models' algorithm
``sb3``             MaskablePPO (sb3-contrib) against an opponent pool with self-play
``value``           afterstate value networks by approximate policy iteration in a league: the
                    shipped value models' algorithm
==================  ======================================================================

``midnight train --algo native|maskable_ppo|value --config configs/….yaml`` runs ``native.train``
(the default), ``sb3.train`` or ``value.train``; ``experiments/ppo_native.py`` takes every native
setting as a flag.
Models are written and read by :mod:`midnight_agents.model`, the one home of the model format.
torch and stable-baselines3 are imported only by ``export``, ``native``, ``sb3`` and ``value``
(the ``train`` extra); playing a trained model needs numpy only.
"""
