"""What scorch knows about SuperCollider and about what was played: docs, history, snippets.

Logic with its own storage, beside ``midi`` and ``scorch.state`` in the layers:
the docs index (help files parsed by :mod:`~scorch.knowledge.schelp`, the class
library dumped by a headless sclang in :mod:`~scorch.knowledge.introspect`,
merged and searched in :mod:`~scorch.knowledge.docs_index`, kept current by
:mod:`~scorch.knowledge.build`, which runs as its own process), the execution
history (:mod:`~scorch.knowledge.history`) and the snippets
(:mod:`~scorch.knowledge.snippets`). The service owns one of each per
installation (``scorch/app/knowledge.py``); the ``docs``, ``history`` and
``snippet`` operations are thin adapters over them.
"""
