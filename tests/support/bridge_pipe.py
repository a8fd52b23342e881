"""scorch bridge on two pipes, in a thread: the ssh transport without ssh."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any, BinaryIO

from scorch.wire.bridge import Bridge


class Piped:
    """A bridge on two pipes, in a thread: write request lines, read answer lines."""

    def __init__(self, path: Path) -> None:
        in_read, self._in_write = os.pipe()
        self._out_read, out_write = os.pipe()
        self.requests: BinaryIO = os.fdopen(self._in_write, "wb", buffering=0)
        self.answers: BinaryIO = os.fdopen(self._out_read, "rb")
        source, sink = os.fdopen(in_read, "rb"), os.fdopen(out_write, "wb")
        self.code: list[int] = []

        def run() -> None:
            try:
                self.code.append(Bridge(path, source, sink).run())
            finally:
                sink.close()
                source.close()

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()

    def send(self, line: bytes) -> None:
        self.requests.write(line)

    def answer(self) -> dict[str, Any]:
        line = self.answers.readline()
        assert line.endswith(b"\n"), line
        answer: dict[str, Any] = json.loads(line)
        return answer

    def close(self) -> int:
        self.requests.close()
        self.thread.join(timeout=10)
        assert not self.thread.is_alive()
        rest = self.answers.read()
        self.answers.close()
        assert rest == b"", rest
        return self.code[0]
