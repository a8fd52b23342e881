"""The MIDI router: keyboards into voices and controllers into params, straight to scsynth."""
