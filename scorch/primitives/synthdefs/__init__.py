"""SynthDefs: the library, its compiler, warps, and scorch's own defs built without sclang."""
