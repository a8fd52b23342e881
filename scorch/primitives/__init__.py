"""primitives."""
