"""Where agents meet games: the agent protocol, agents by name, and batched play (docs/ARCHITECTURE.md).

- ``agent``: :class:`~midnight_env.arena.agent.Agent`, the ``Decisions`` it is handed, ``decide``;
- ``registry``: agents by spec (built-in, plugins of the entry-point group ``midnight_env.agents``,
  ``module:Attribute``);
- ``play``: games between agents, many at a time (tournaments, evaluation, the web page).

Imports the core below it; the agents themselves (``midnight_agents``) sit above and are found
through the entry-point group at run time, never imported from here.
"""
