"""What a model asks through a real MCP client, each answer checked on scsynth, in the sound or in files."""
