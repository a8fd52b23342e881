"""room."""
