"""What the rooms should be and are, as pure data: desired state, the change bus, events."""
