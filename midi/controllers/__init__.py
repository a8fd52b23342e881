"""Controllers by name: device profiles, their feedback language, pages of mappings."""
