"""sclang."""
