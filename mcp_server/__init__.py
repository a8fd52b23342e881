"""The MCP server: the operations as tools for Claude Desktop, over stdio or HTTP."""
