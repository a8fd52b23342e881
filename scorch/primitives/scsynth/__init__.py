"""scsynth."""
