"""scorch's OSC door: surfaces on phones and tablets set params, recall scenes, GO on cues."""
