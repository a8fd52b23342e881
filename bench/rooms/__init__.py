"""Benchmarks: rooms."""
