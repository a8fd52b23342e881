"""scorch: several named SuperCollider rooms, run, watched and played from one place.

Each package's face is its ``__init__.py`` (``__all__``, loaded lazily through
:mod:`scorch.faces`); docs/architecture.md draws the layers."""

#: The root shows no names: each package below has its own face.
__all__: list[str] = []
