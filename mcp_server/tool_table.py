"""The tool table of docs/claude-desktop.md, made from the operations (every tool, one line).

``python -m mcp_server.tool_table`` writes it between the file's markers;
``tests/unit/mcp_server/test_tool_table.py`` fails when the file differs from it.
"""

from __future__ import annotations

import sys
from pathlib import Path

from scorch.api.ops import OPERATIONS

DOC = Path(__file__).resolve().parent.parent / "docs" / "claude-desktop.md"
BEGIN, END = "<!-- tools: made by python -m mcp_server.tool_table -->", "<!-- tools end -->"


def table() -> str:
    """Every MCP tool with the first sentence of its operation's doc, and its access."""
    rows = ["| Tool | What it does | Access |", "|------|--------------|--------|"]
    for op in OPERATIONS.values():
        if op.tool:
            actions = f" Actions: {', '.join(op.actions)}." if op.actions else ""
            summary = " ".join(op.summary.split()).replace("|", "\\|")
            rows.append(f"| `{op.name}` | {summary}{actions} | {op.access.word} |")
    return "\n".join(rows)


def written(text: str) -> str:
    """``text`` (the doc) with the table between its markers made anew."""
    head, found, rest = text.partition(BEGIN)
    if not found or END not in rest:
        raise ValueError(f"{DOC.name} lacks the markers {BEGIN!r} ... {END!r}")
    return f"{head}{BEGIN}\n{table()}\n{END}{rest.split(END, 1)[1]}"


def main() -> int:
    """Write the table into the doc."""
    DOC.write_text(written(DOC.read_text(encoding="utf-8")), encoding="utf-8")
    sys.stderr.write(f"{DOC}: tool table written\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
