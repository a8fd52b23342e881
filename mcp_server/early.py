"""Answer the MCP handshake before the SDK is loaded: ``initialize`` within milliseconds.

Importing the MCP SDK takes most of a second (its pydantic models), and Claude
Desktop shows the server as starting until ``initialize`` is answered. So
``scorch mcp`` starts here, with the standard library only:

- the protocol moves to private file descriptors (fd 1 then points at stderr,
  fd 0 at /dev/null), and a thread reads the client's lines;
- ``initialize`` (or the modern ``server/discover``) and ``tools/list`` are
  answered at once from the handshake cache: the SDK's own answers from an
  earlier start, kept under a key made of scorch's sources and the SDK's
  version, so they are what the SDK would say;
- every line also goes on, in order, through a pipe to the SDK once it runs,
  so its session sees the whole handshake; its answers to what was answered
  already are dropped (:class:`AnswerFilter`), and compared: a difference
  refreshes the cache and is logged;
- a line longer than :data:`~scorch.wire.limits.REQUEST_LIMITS` allows goes on
  cut just past the limit (``mcp_server.stdio`` answers it from its head), and
  the rest of it is dropped: no line, however long, is held whole.

Without a cache entry (the first start after an install or an upgrade) the
answers come from the handshake shipped with scorch (``handshake.json``, the
SDK's own answers recorded by ``python -m mcp_server.snapshot``), when it was
recorded from these very sources: a digest of the content of every scorch module
the SDK's answers were built from, and of the SDK's and pydantic's major.minor
versions. Else the SDK answers itself, and its answers fill the cache.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sys
import threading
from pathlib import Path
from typing import Any

from scorch.wire import REQUEST_LIMITS, loads

log = logging.getLogger(__name__)

ROOT = Path(__file__).resolve().parent.parent
#: Whose sources decide what the handshake says.
SOURCES = ("mcp_server", "scorch")
#: Where a modern-era request names its protocol version.
VERSION_META = "io.modelcontextprotocol/protocolVersion"


def cache_dir() -> Path:
    """Where handshake answers are kept (per user)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "scorch"


#: The SDK's answers as recorded for these sources (``mcp_server.snapshot`` writes it).
SNAPSHOT = Path(__file__).with_name("handshake.json")
#: Set to a path to read the shipped answers from there, or to "" to do without them.
SNAPSHOT_ENV = "SCORCH_MCP_SNAPSHOT"
#: The libraries whose versions shape the answers (their dist-info folders' names).
LIBRARIES = ("mcp", "mcp_types", "pydantic", "pydantic_core")


def versions() -> list[str]:
    """The libraries the answers come from, each with its major.minor version.

    Patch releases do not change the protocol or the schemas, and an install that
    resolves a newer patch (``uv tool install`` takes the newest the requirements allow)
    should still answer its first ``initialize`` early; were an answer different after
    all, the SDK's own answer in the same session says so and sets the cache right.
    """
    found = set()
    for entry in sys.path:
        folder = Path(entry or ".")
        if folder.is_dir():
            for lib in LIBRARIES:
                for dist in folder.glob(f"{lib}-*.dist-info"):
                    version = dist.name.removeprefix(f"{lib}-").removesuffix(".dist-info")
                    found.add(f"{lib} {'.'.join(version.split('.')[:2])}")
    return sorted(found)


def sources_digest(sources: list[str]) -> str:
    """A digest of the content of ``sources`` (paths under the repository) and of
    :func:`versions`; a missing file counts as empty."""
    digest = hashlib.sha256("\n".join(versions()).encode())
    for relative in sources:
        try:
            content = (ROOT / relative).read_bytes()
        except OSError:
            content = b""
        digest.update(f"\n{relative}:{len(content)}\n".encode())
        digest.update(content)
    return digest.hexdigest()


def shipped_answers(tools: str = "") -> dict[str, Any]:
    """The shipped answers for a choice of tools (``""``: all; a profile's name), if they were
    recorded from these sources; else none."""
    where = os.environ.get(SNAPSHOT_ENV)
    path = SNAPSHOT if where is None else Path(where) if where else None
    try:
        recorded = json.loads(path.read_text(encoding="utf-8")) if path else {}
        if recorded.get("digest") == sources_digest(recorded["sources"]):
            return dict(recorded["profiles"][tools] if tools else recorded["answers"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        pass
    return {}


def cache_key() -> str:
    """A digest of everything the answers come from: scorch's sources, the SDK, Python."""
    digest = hashlib.sha256(sys.version.encode())
    for package in SOURCES:
        for path in sorted((ROOT / package).rglob("*.py")):
            stat = path.stat()
            digest.update(f"{path.relative_to(ROOT)}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    for entry in sys.path:
        folder = Path(entry or ".")
        for dist in sorted(folder.glob("mcp*.dist-info")) if folder.is_dir() else ():
            digest.update(dist.name.encode())
    return digest.hexdigest()[:32]


class HandshakeCache:
    """The SDK's answers to ``initialize`` (per protocol version) and ``tools/list``."""

    def __init__(self, folder: Path | None = None, key: str | None = None,
                 tools: str = "") -> None:
        suffix = f"-{tools}" if tools else ""
        self.path = (folder or cache_dir()) / f"handshake-{key or cache_key()}{suffix}.json"
        self.tools = tools
        """The tools chosen (``scorch.config.tools.key``; "" for all): each choice lists its
        own tools, and says them in its instructions."""
        try:
            self.answers: dict[str, Any] = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            self.answers = {}
        self.shipped: dict[str, Any] | None = None
        """The shipped answers, once one was needed."""

    @staticmethod
    def slot(message: dict[str, Any]) -> str | None:
        """The cache slot of a request, or None for one that is never cached.

        The classic handshake is ``initialize``; the modern one ``server/discover``
        (the SDK's own client probes it first). Each is kept per protocol version.
        """
        method, params = message.get("method"), message.get("params") or {}
        if not isinstance(params, dict):
            return None
        meta = params.get("_meta")
        meta = meta if isinstance(meta, dict) else {}
        version = params.get("protocolVersion") or meta.get(VERSION_META)
        if not isinstance(version, str | type(None)):
            return None
        if method == "initialize" and version:
            return f"initialize {version}"
        if method == "server/discover" and version:
            return f"server/discover {version}"
        if method == "tools/list" and not params.get("cursor"):
            return f"tools/list {version}" if version else "tools/list"
        return None

    def get(self, slot: str) -> Any:
        """The cached result for ``slot``, else the shipped one (see :func:`shipped_answers`)."""
        found = self.answers.get(slot)
        if found is None:
            if self.shipped is None:  # read only when the cache lacks an answer
                self.shipped = shipped_answers(self.tools)
            found = self.shipped.get(slot)
        return found

    def put(self, slot: str, result: Any) -> None:
        """Keep the SDK's result for ``slot`` (written at once, atomically)."""
        if self.answers.get(slot) == result:
            return
        self.answers[slot] = result
        self.path.parent.mkdir(parents=True, exist_ok=True)
        partial = self.path.with_suffix(f".{os.getpid()}.tmp")
        try:
            partial.write_text(json.dumps(self.answers), encoding="utf-8")
            os.replace(partial, self.path)
        except OSError as err:
            log.warning("could not keep the handshake answers in %s: %s", self.path, err)


class EarlyFront:
    """The protocol's streams from the first millisecond, and the handshake answered early."""

    def __init__(self, cache: HandshakeCache | None = None) -> None:
        self.cache = cache or HandshakeCache()
        self.wire_in = os.dup(0)
        self.wire_out = os.dup(1)
        for fd in (self.wire_in, self.wire_out):
            os.set_inheritable(fd, False)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        os.dup2(2, 1)  # stray prints and children write to stderr, never to the protocol
        self.sdk_in, self._to_sdk = os.pipe()
        self.answered: dict[Any, tuple[str, Any]] = {}
        """Request ids answered here, with their slot and result."""
        self._write_lock = threading.Lock()
        self._thread = threading.Thread(target=self._read, name="mcp-early", daemon=True)

    def start(self) -> EarlyFront:
        """Begin reading the client's lines."""
        self._thread.start()
        return self

    def write(self, text: str) -> None:
        """Write protocol text to the client (the SDK's writer shares this lock)."""
        with self._write_lock:
            data = text.encode()
            while data:
                data = data[os.write(self.wire_out, data):]

    def _read(self) -> None:
        buffer = b""
        skipping = False  # dropping the rest of an over-long line
        try:
            while chunk := os.read(self.wire_in, 65536):
                if skipping:
                    skipping, chunk = _after_newline(chunk)
                buffer += chunk
                if b"\n" in chunk:  # else no line ended: the long buffer is not split again
                    *lines, buffer = buffer.split(b"\n")
                    for line in lines:
                        self._forward(line)
                if len(buffer) > REQUEST_LIMITS.size:
                    self._forward(buffer)
                    buffer, skipping = b"", True
            if buffer:
                _write_all(self._to_sdk, buffer[:REQUEST_LIMITS.size + 1])
        except OSError as err:
            log.debug("the client's stream ended: %s", err)
        finally:
            os.close(self._to_sdk)

    def _forward(self, line: bytes) -> None:
        """Answer ``line`` early if it may be, and pass it on to the SDK (cut if over-long)."""
        line = line[:REQUEST_LIMITS.size + 1]
        self._early(line)
        _write_all(self._to_sdk, line + b"\n")

    def _early(self, line: bytes) -> None:
        """Answer ``line`` here when it is a cached handshake request."""
        try:
            message = loads(line, REQUEST_LIMITS)
        except ValueError:  # not JSON, or over the limits: mcp_server.stdio answers it
            return
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0" or "id" not in message:
            return
        slot = HandshakeCache.slot(message)
        result = self.cache.get(slot) if slot else None
        if slot is None or result is None:
            return
        self.answered[_id_key(message["id"])] = (slot, result)
        self.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}) + "\n")
        where = "the handshake cache" if slot in self.cache.answers else "the shipped handshake"
        log.info("answered %s early, from %s", slot, where)


class AnswerFilter:
    """Sits on the SDK's output: drops its answers to what was answered early, keeps the rest.

    It also learns: the SDK's answers to cacheable requests are kept for the next
    start, and one that differs from the early answer refreshes the cache.
    """

    def __init__(self, front: EarlyFront) -> None:
        self.front = front
        self.asked: dict[Any, str] = {}
        """Cacheable requests the SDK will answer: id -> slot (see :meth:`saw`)."""
        self._pending = ""

    def saw(self, line: str) -> None:
        """A request on its way to the SDK (its answer may be worth keeping)."""
        try:
            message = json.loads(line)
        except ValueError:
            return
        if isinstance(message, dict) and "id" in message and "method" in message:
            slot = HandshakeCache.slot(message)
            if slot is not None:
                self.asked[_id_key(message["id"])] = slot

    def passes(self, text: str) -> str:
        """What of the SDK's ``text`` goes to the client (whole lines are judged)."""
        self._pending += text
        *lines, self._pending = self._pending.split("\n")
        return "".join(line + "\n" for line in lines if self._keep(line))

    def _keep(self, line: str) -> bool:
        try:
            message = json.loads(line)
        except ValueError:
            return True
        if not isinstance(message, dict) or "result" not in message:
            return True
        key = _id_key(message.get("id"))
        slot = self.asked.pop(key, None)
        if slot is not None:
            self.front.cache.put(slot, message["result"])
        early = self.front.answered.pop(key, None)
        if early is None:
            return True
        if early[1] != message["result"]:
            log.warning("the handshake cache answered %s differently from the SDK; it is "
                        "refreshed for the next start", early[0])
        return False


def _id_key(request_id: Any) -> str:
    return json.dumps(request_id)


def _after_newline(chunk: bytes) -> tuple[bool, bytes]:
    """Whether the over-long line goes on past ``chunk``, and what of ``chunk`` follows it."""
    end = chunk.find(b"\n")
    return (True, b"") if end < 0 else (False, chunk[end + 1:])


def _write_all(fd: int, data: bytes) -> None:
    while data:
        data = data[os.write(fd, data):]
