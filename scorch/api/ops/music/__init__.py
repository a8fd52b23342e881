"""The operations of the music itself: patterns and what plays, notes, the partner, the tempo."""

#: Operations are listed in scorch.api.ops.REGISTRY; a caller imports nothing from here.
__all__: list[str] = []
