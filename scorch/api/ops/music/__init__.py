"""The operations of the music itself: patterns and what plays, notes, the partner, the tempo."""
