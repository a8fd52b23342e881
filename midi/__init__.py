"""MIDI as pure logic: routes, curves, takeover, voices, clock; its I/O apart in midi/io/."""
