"""The studio: recordings, renders, listening, references and sweeps of a room's sound."""
