"""The MCP server: the operations as tools for Claude Desktop, over stdio or HTTP."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scorch.faces import lazy_face

if TYPE_CHECKING:
    from mcp_server.claude_config import (
        InstallRefused,
        desktop_config_path,
        http_entry,
        install,
        snippet,
    )
    from mcp_server.config_gate import hosted_here
    from mcp_server.early import EarlyFront, HandshakeCache
    from mcp_server.http import HttpFront, listen, serve_http, url
    from mcp_server.server import build_server, listed_for, serve

__all__ = [
    "EarlyFront", "HandshakeCache", "HttpFront", "InstallRefused", "build_server",
    "desktop_config_path", "hosted_here", "http_entry", "install", "listed_for", "listen",
    "serve", "serve_http", "snippet", "url",
]
__getattr__ = lazy_face(__name__, __file__)
