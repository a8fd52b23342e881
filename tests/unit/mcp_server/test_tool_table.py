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


def test_the_tools_keep_their_order_whatever_module_was_imported_first() -> None:
    """A command or a test that imports one operation's module first (here `notes`) once
    moved its tool up the list: the docs' table then differed from the one written."""
    import subprocess
    import sys

    code = ("import scorch.api.ops.music.notes\n"
            "from mcp_server.tool_table import DOC, written\n"
            "text = DOC.read_text(encoding='utf-8')\n"
            "print(written(text) == text)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.stdout.strip() == "True", done.stderr[-2000:]
