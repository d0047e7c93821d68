"""The built-in agents of midnight-env (installed as ``midnight_agents``).

Each module holds agents of one idea, behind the protocol of :mod:`midnight_env.arena.agent`:

==================  ===========================================================================
``simple``          ``random`` and the family rules: ``runner``, ``coward``, ``green_hunter``, ``placer``
``expert``          one ply of afterstates judged by the expected-points evaluation (``evaluation``)
``search``          expectimax over the die through its own next turn
``ppo``             trained policy networks as agents, the shipped models in ``models/``
``model``           the model format: ``NAME.npz`` weights + ``NAME.json`` metadata, numpy forward pass
==================  ===========================================================================

They are registered by name through the entry points in pyproject.toml, like any plugin
(:mod:`midnight_env.arena.registry`): ``make_agent("expert")``.
"""
