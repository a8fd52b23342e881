"""Conversations: what a model asks through a real MCP client, checked on scsynth."""
