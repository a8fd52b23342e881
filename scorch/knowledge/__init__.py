"""What scorch knows about SuperCollider and about what was played: docs, history, snippets.

Pure modules with their own storage; the MCP tools ``docs``, ``history`` and
``snippet`` are thin adapters over :mod:`scorch.knowledge.docs_index`,
:mod:`scorch.knowledge.history` and :mod:`scorch.knowledge.snippets`.
"""
