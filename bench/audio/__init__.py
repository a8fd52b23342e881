"""Benchmarks: audio."""
