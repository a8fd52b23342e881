"""The installation as config.toml describes it: rooms, audio, MIDI, watch, schedule, hosts."""
