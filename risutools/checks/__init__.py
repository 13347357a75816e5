"""The check registry (ground floor): the :class:`~risutools.checks.registry.Check` model and
its ``@check`` decorator, ``--select``/``--ignore`` (``RuleFilter``), the generated index of
every id (``ids``) and the cases loader (``examples``).  The checks themselves live with the
engines that run them; ``risutools.commands.checks`` gathers them all.

See ``docs/architecture.md`` for where a new check goes, and ``python -m
risutools.commands.docs`` for the generated index and documentation tables.
"""
