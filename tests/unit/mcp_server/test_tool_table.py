"""docs/claude-desktop.md lists every MCP tool, as the operations say (regenerate with
``python -m mcp_server.tool_table``)."""

from __future__ import annotations

from mcp_server.tool_table import DOC, table, written
from scorch.api.ops import OPERATIONS


def test_the_docs_tool_table_is_the_one_the_operations_make() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert written(text) == text, "run: python -m mcp_server.tool_table"
    for op in OPERATIONS.values():
        assert (f"| `{op.name}` |" in table()) == op.tool, op.name
