"""Real MCP clients of scorch: over stdio, over HTTP, and the calls every tool test makes."""
