"""SuperCollider and the OS beneath everything: OSC, scsynth, sclang, SynthDefs, system, disk."""
