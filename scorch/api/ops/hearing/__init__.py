"""The operations that hear like an engineer beyond listen: references to compare with, sweeps."""
