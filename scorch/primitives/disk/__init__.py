"""Files on disk: written whole or not at all, paths kept inside the allowed folders, and
the sample folders' sound files."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scorch.faces import lazy_face

if TYPE_CHECKING:
    from scorch.primitives.disk.files import cache_folder, write_atomically, write_json_atomically
    from scorch.primitives.disk.folders import Folders
    from scorch.primitives.disk.samples import MB, resolve_sample, search_samples

__all__ = [
    "MB",
    "Folders",
    "cache_folder",
    "resolve_sample",
    "search_samples",
    "write_atomically",
    "write_json_atomically",
]
__getattr__ = lazy_face(__name__, __file__)
