"""Training agents for midnight-env: the pieces shared by every training entry point.

==================  ======================================================================
``args``            a ``@dataclass`` of settings as a command line and a YAML config
``runs``            run folders: resolved config, metadata, checkpoints
``logger``          metrics as CSV (and TensorBoard when installed), learning-curve PNG
``evaluate``        a policy against fixed heuristic agents, mean spooky points with CIs
``export``          torch networks to the numpy model format of ``midnight_agents.ppo``
``sb3``             MaskablePPO (sb3-contrib) against an opponent pool with self-play
==================  ======================================================================

``midnight train --config configs/….yaml`` runs :func:`midnight_env.training.sb3.train`;
``experiments/ppo_native.py`` is the fast single-file PPO on the batched ``VectorEnv``.
torch and stable-baselines3 are imported only by ``export`` and ``sb3`` (the ``train`` extra);
playing a trained model needs numpy only (``midnight_agents.ppo``).
"""
