"""MIDI I/O: ports opened by name through python-rtmidi, and scorch's own JACK MIDI input
client (``jack_in.c``). The rest of ``midi/`` is pure: no threads, sockets or devices."""
