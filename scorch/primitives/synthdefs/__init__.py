"""synthdefs."""
