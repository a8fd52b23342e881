"""The operations that hear like an engineer beyond listen: references to compare with, sweeps."""

#: Operations are listed in scorch.api.ops.REGISTRY; a caller imports nothing from here.
__all__: list[str] = []
