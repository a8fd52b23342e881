"""Call an MCP tool through a client and read what came back (the MCP tests share these)."""

from __future__ import annotations

from typing import Any

from mcp import Client
from mcp.types import CallToolResult


async def call(client: Client, tool: str, **args: Any) -> dict[str, Any]:
    """The structured result of a call that must succeed."""
    result = await client.call_tool(tool, args)
    assert not result.is_error, text(result)
    assert result.structured_content is not None
    return result.structured_content


async def fails(client: Client, tool: str, **args: Any) -> str:
    """The error text of a call that must fail."""
    result = await client.call_tool(tool, args)
    assert result.is_error, result.structured_content
    return text(result)


def text(result: CallToolResult) -> str:
    """The text blocks of a result, one per line."""
    return "\n".join(getattr(block, "text", "") for block in result.content)
