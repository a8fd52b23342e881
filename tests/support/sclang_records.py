"""scorch's sclang records as Scorch.emit writes them."""

from __future__ import annotations


def record(request_id: str, name: str, payload: bytes | str = b"") -> bytes:
    """One record as Scorch.emit writes it."""
    data = payload.encode() if isinstance(payload, str) else payload
    return b"@@scorch:%s:%s:%d@@%s\n" % (request_id.encode(), name.encode(), len(data), data)
