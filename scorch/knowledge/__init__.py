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

from __future__ import annotations

from typing import TYPE_CHECKING

from scorch.faces import lazy_face

if TYPE_CHECKING:
    from scorch.knowledge.class_doc import ClassDoc, MethodEntry
    from scorch.knowledge.docs_index import INDEX_SCHEMA, DocsIndex
    from scorch.knowledge.history import Entry, History
    from scorch.knowledge.snippets import (
        NAME_RULE,
        Snippet,
        SnippetStore,
        validate_name,
        validate_tag,
    )

__all__ = [
    "INDEX_SCHEMA",
    "NAME_RULE",
    "ClassDoc",
    "DocsIndex",
    "Entry",
    "History",
    "MethodEntry",
    "Snippet",
    "SnippetStore",
    "validate_name",
    "validate_tag",
]
__getattr__ = lazy_face(__name__, __file__)
