"""The ``scorch`` command: one subcommand per operation, and run, mcp, doctor, init."""

#: Each command runs from scorch.cli.main; a caller imports nothing from here.
__all__: list[str] = []
