"""Helpers around real rooms: a room for the pattern tests, readings taken in a thread."""
