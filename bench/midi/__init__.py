"""Benchmarks: midi."""
