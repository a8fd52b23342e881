"""scsynth: the server process, its commands, the door to it, node trees, NRT scores."""
