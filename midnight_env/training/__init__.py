"""Training agents for midnight-env: the pieces shared by every training entry point.

==================  ======================================================================
``args``            settings as a ``@dataclass`` (``Settings``, the base of every trainer's
                    ``Args``): a command line, a YAML config, checks of every range
``trainer``         what ``midnight train`` calls: the ``Trainer`` protocol and ``TrainResult``
``runs``            run folders (``RunFolder``): resolved config, metadata, checkpoints, clocks
``logger``          metrics as CSV (and TensorBoard when installed), learning-curve PNG
``evaluate``        a policy against fixed heuristic agents, mean spooky points with CIs
``export``          torch networks as the named weight arrays of the model format
``native``          PPO on the batched ``VectorEnv``, cleanrl style: the shipped PPO models' algorithm
``sb3``             MaskablePPO (sb3-contrib) against an opponent pool with self-play
``rllib_ppo``       RLlib's PPO, every seat one shared policy, frozen snapshots as opponents
``value``           afterstate value networks by approximate policy iteration in a league: the
                    shipped value models' algorithm
``frontier``        positions met in training, for restarts of the value trainer
``exploit``         a trained best response to an agent, its gain measured
==================  ======================================================================

Each trainer module is a :class:`~midnight_env.training.trainer.Trainer`: its ``Args``, ``SEEDS``,
``load_config(path, overrides)`` and ``train(args, command)``, which returns a
:class:`~midnight_env.training.trainer.TrainResult`. Its ``train`` reads as one loop of named
phases (play, fit, league, log, checkpoint), with a ``League`` of the other seats' agents.
``midnight train --algo native|maskable_ppo|rllib|value --config configs/….yaml`` runs them;
``experiments/ppo_native.py`` takes every native setting as a flag.
Models are written and read by :mod:`midnight_agents.model`, the one home of the model format.
torch and stable-baselines3 are imported only by ``export``, ``native``, ``sb3`` and ``value``
(the ``train`` extra), Ray only by ``rllib_ppo`` when it trains; playing a trained model needs numpy only.
"""
