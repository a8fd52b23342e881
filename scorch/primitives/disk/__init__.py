"""Files on disk: written whole or not at all, paths kept inside the allowed folders, and
the sample folders' sound files."""
