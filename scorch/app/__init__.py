"""The facade: an Orchestra composing one component per feature (``orch.rooms``, ...)."""
