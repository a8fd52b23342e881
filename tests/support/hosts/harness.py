"""Hosts for the tests of several hosts: real ``scorch run``s, a private sshd, network namespaces.

Everything here is started by the test that uses it and stopped by pid (or
process group): a ``scorch run --host NAME`` (optionally inside a namespace),
an sshd on its own port with its own host key and authorized_keys in a tmp
dir, namespaces joined to this one by veth pairs, whose links are cut or
thinned with nftables (``numgen random`` drops), delayed with ``tc netem``
where the kernel has it, else by a relay that holds each chunk back.
Network traffic stays on loopback and inside the namespaces made here.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from collections import deque
from collections.abc import Iterator
from pathlib import Path

from scorch.primitives.system.process import DIE_WITH_PARENT, pid_alive
from scorch.wire.envelope import answers, socket_path
from tests.conftest import JACK_PREFIX, jack_name
from tests.support.shm.cleanup import release
from tests.support.shm.scan import mapped_by
from tests.support.skips import missing

SCORCH = Path(sys.executable).parent / "scorch"
SSHD = Path("/usr/sbin/sshd")
#: A short tag from this run's JACK prefix: two checkouts' namespaces never meet.
TAG = hashlib.sha1(JACK_PREFIX.encode()).hexdigest()[:4]


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (from /proc), children first."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[-1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    found, queue = [], deque([pid])
    while queue:
        for child in children.get(queue.popleft(), []):
            found.append(child)
            queue.append(child)
    return found


def stop_tree(proc: subprocess.Popen[bytes], grace: float = 30.0) -> int:
    """SIGTERM ``proc``, wait; SIGKILL what is left of it and of its descendants."""
    below = descendants(proc.pid)
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    try:
        code = proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        code = proc.wait()
    for pid in below:
        if pid_alive(pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    return code


# --- scorch run ----------------------------------------------------------------------------


class ScorchRun:
    """One ``scorch run --config CONFIG --host HOST`` (inside namespace ``netns`` if given)."""

    def __init__(self, config: Path, host: str | None, log: Path,
                 netns: str | None = None) -> None:
        self.config = config
        self.host = host
        self.netns = netns
        self.log = log
        argv = [str(SCORCH), "run", "--config", str(config)]
        if host is not None:
            argv += ["--host", host]
        if netns is not None:
            argv = ["ip", "netns", "exec", netns, *argv]
        self._out = log.open("ab")
        self.proc = subprocess.Popen(argv, stdout=self._out, stderr=subprocess.STDOUT,
                                     preexec_fn=DIE_WITH_PARENT)

    def wait_serving(self, state_dir: Path, timeout: float = 90.0) -> None:
        """Wait until its control socket answers (every room booted or given up)."""
        deadline = time.monotonic() + timeout
        path = socket_path(state_dir)
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"scorch run --host {self.host} exited "
                                     f"{self.proc.returncode}:\n{self.tail()}")
            if path.exists() and answers(path, timeout=1.0):
                return
            time.sleep(0.1)
        raise AssertionError(f"scorch run --host {self.host} did not serve within "
                             f"{timeout} s:\n{self.tail()}")

    def tail(self, lines: int = 30) -> str:
        """The end of its output."""
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])

    def kill(self) -> None:
        """SIGKILL it, as a power cut would; wait until its children are gone and reaped.

        Its jackd dies with it, and JACK keeps the name registered until that
        process is reaped (by init, a moment later): a new host of the same JACK
        name starts after that.
        """
        below = descendants(self.proc.pid)
        held = mapped_by([self.proc.pid, *below])  # no one frees a killed room's segments
        self.proc.kill()
        self.proc.wait()
        deadline = time.monotonic() + 15.0
        while any(Path(f"/proc/{pid}").exists() for pid in below):
            assert time.monotonic() < deadline, f"not reaped: {below}"
            time.sleep(0.05)
        release(held)

    def stop(self) -> int:
        """SIGTERM, wait for it to stop its rooms; its exit code."""
        try:
            return stop_tree(self.proc)
        finally:
            self._out.close()


# --- sshd --------------------------------------------------------------------------------


class Sshd:
    """A private sshd on ``address:port``, keys and config in ``directory``, logins by key only."""

    def __init__(self, directory: Path, address: str, port: int,
                 netns: str | None = None) -> None:
        if not SSHD.exists() or shutil.which("ssh") is None:
            missing("openssh-server and -client (make test installs them)")
        if os.geteuid() != 0:
            missing("root: the sshd test runs sshd as root (CI is root)")
        directory.mkdir(parents=True, exist_ok=True)
        self.directory = directory
        self.address, self.port = address, port
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # sshd's privilege separation
        self.host_key = directory / "host_key"
        self.identity = directory / "id_ed25519"
        for key in (self.host_key, self.identity):
            if not key.exists():
                subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)],
                               check=True, timeout=30)
        (directory / "authorized_keys").write_text(
            (directory / "id_ed25519.pub").read_text())
        self.known_hosts = directory / f"known_hosts-{port}"
        public = (directory / "host_key.pub").read_text().split()
        where = address if port == 22 else f"[{address}]:{port}"  # as ssh looks it up
        self.known_hosts.write_text(f"{where} {public[0]} {public[1]}\n")
        config = directory / f"sshd_config-{port}"
        config.write_text(textwrap.dedent(f"""\
            Port {port}
            ListenAddress {address}
            HostKey {self.host_key}
            PidFile {directory}/sshd-{port}.pid
            AuthorizedKeysFile {directory}/authorized_keys
            PubkeyAuthentication yes
            PasswordAuthentication no
            KbdInteractiveAuthentication no
            PermitRootLogin prohibit-password
            StrictModes no
            UsePAM no
            LogLevel VERBOSE
            """))
        argv = [str(SSHD), "-D", "-e", "-f", str(config)]
        if netns is not None:
            argv = ["ip", "netns", "exec", netns, *argv]
        self.log = directory / f"sshd-{port}.log"
        self._out = self.log.open("ab")
        self.proc = subprocess.Popen(argv, stdout=self._out, stderr=subprocess.STDOUT,
                                     preexec_fn=DIE_WITH_PARENT)
        self.netns = netns
        self._wait_listening()

    def _wait_listening(self, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"sshd exited: {self.log.read_text()[-2000:]}")
            if "Server listening" in self.log.read_text(errors="replace"):
                return
            time.sleep(0.05)
        raise AssertionError(f"sshd did not listen: {self.log.read_text()[-2000:]}")

    def host_table(self, name: str, config: Path, jack: str, listen: str | None = None) -> str:
        """A ``[hosts.NAME]`` table reaching this sshd, running the repo's scorch."""
        text = textwrap.dedent(f"""
            [hosts.{name}]
            address = "{self.address}"
            ssh_port = {self.port}
            ssh_user = "root"
            identity = "{self.identity}"
            known_hosts = "{self.known_hosts}"
            scorch = "{SCORCH}"
            config_path = "{config}"
            """)
        if listen:
            text += f'listen = "{listen}"\n'
        return text + f'[hosts.{name}.audio]\njack_server = "{jack}"\n'

    def stop(self) -> None:
        """Stop the listener and every session it started (by pid)."""
        stop_tree(self.proc, grace=5.0)
        self._out.close()


# --- network namespaces ------------------------------------------------------------------


def _ip(*args: str, netns: str | None = None) -> subprocess.CompletedProcess[str]:
    argv = ["ip", *args] if netns is None else ["ip", "netns", "exec", netns, "ip", *args]
    return subprocess.run(argv, capture_output=True, text=True, timeout=30)


def namespaces_allowed() -> str | None:
    """Why network namespaces cannot be used here, or None when they can."""
    if os.geteuid() != 0:
        return "network namespaces need root (CI runs as root)"
    if shutil.which("ip") is None or shutil.which("nft") is None:
        return "iproute2 or nftables (make test installs them)"
    probe = f"scorch-{TAG}-probe"
    made = _ip("netns", "add", probe)
    if made.returncode != 0:
        return f"ip netns add is not allowed here: {made.stderr.strip()}"
    _ip("netns", "del", probe)
    return None


def netem_available() -> bool:
    """True when the kernel has tc's netem qdisc (some do not: then a relay delays)."""
    probe = f"scorch-{TAG}-netem"
    if _ip("netns", "add", probe).returncode != 0:
        return False
    try:
        _ip("link", "set", "lo", "up", netns=probe)
        done = subprocess.run(["ip", "netns", "exec", probe, "tc", "qdisc", "add", "dev", "lo",
                               "root", "netem", "delay", "1ms"], capture_output=True, timeout=30)
        return done.returncode == 0
    finally:
        _ip("netns", "del", probe)


class Namespace:
    """A network namespace joined to this one by a veth pair: ``10.X.N.1`` here, ``.2`` there."""

    def __init__(self, index: int) -> None:
        self.name = f"scorch-{TAG}-{index}"
        self.outer = f"sc{TAG}o{index}"  # interface names: at most 15 characters
        self.inner = f"sc{TAG}i{index}"
        net = 200 + int(TAG[:2], 16) % 50
        self.here = f"10.{net}.{index}.1"
        self.address = f"10.{net}.{index}.2"
        _ip("netns", "del", self.name)  # left by a killed run
        _ip("link", "del", self.outer)
        for step in (("netns", "add", self.name),
                     ("link", "add", self.outer, "type", "veth", "peer", "name", self.inner),
                     ("link", "set", self.inner, "netns", self.name),
                     ("addr", "add", f"{self.here}/24", "dev", self.outer),
                     ("link", "set", self.outer, "up")):
            done = _ip(*step)
            if done.returncode != 0:
                self.delete()
                raise AssertionError(f"ip {' '.join(step)}: {done.stderr}")
        for step in (("addr", "add", f"{self.address}/24", "dev", self.inner),
                     ("link", "set", self.inner, "up"), ("link", "set", "lo", "up")):
            done = _ip(*step, netns=self.name)
            if done.returncode != 0:
                self.delete()
                raise AssertionError(f"ip {' '.join(step)} in {self.name}: {done.stderr}")

    def nft(self, *rules: str) -> None:
        """Replace this namespace's ``scorch`` table with one input chain holding ``rules``."""
        self.clear()
        script = ("table inet scorch {\n chain input {\n"
                  "  type filter hook input priority 0; policy accept;\n"
                  + "".join(f"  {rule}\n" for rule in rules) + " }\n}\n")
        done = subprocess.run(["ip", "netns", "exec", self.name, "nft", "-f", "-"],
                              input=script, capture_output=True, text=True, timeout=30)
        assert done.returncode == 0, done.stderr

    def cut(self) -> None:
        """A partition: everything from outside the namespace is dropped."""
        self.nft(f"iifname {self.inner} drop")

    def lose(self, percent: int) -> None:
        """Drop ``percent`` % of the packets from outside, at random."""
        self.nft(f"iifname {self.inner} numgen random mod 100 < {percent} drop")

    def delay(self, ms: int) -> None:
        """netem delay on both ends of the link (the kernel must have netem)."""
        for netns, dev in ((None, self.outer), (self.name, self.inner)):
            argv = ["tc", "qdisc", "replace", "dev", dev, "root", "netem", "delay", f"{ms}ms"]
            if netns:
                argv = ["ip", "netns", "exec", netns, *argv]
            subprocess.run(argv, check=True, capture_output=True, timeout=30)

    def clear(self) -> None:
        """Heal the link: no drops (and no netem delay)."""
        subprocess.run(["ip", "netns", "exec", self.name, "nft", "delete", "table", "inet",
                        "scorch"], capture_output=True, timeout=30)
        for netns, dev in ((None, self.outer), (self.name, self.inner)):
            argv = ["tc", "qdisc", "del", "dev", dev, "root"]
            if netns:
                argv = ["ip", "netns", "exec", netns, *argv]
            subprocess.run(argv, capture_output=True, timeout=30)

    def delete(self) -> None:
        """Remove the namespace (and its veth pair with it)."""
        _ip("netns", "del", self.name)
        _ip("link", "del", self.outer)


class DelayRelay:
    """A TCP relay on loopback that holds every chunk back ``delay`` seconds each way.

    For the kernels without netem: a host reached through it answers late by
    twice the delay per round trip, as over a slow link.
    """

    def __init__(self, target: tuple[str, int], delay: float) -> None:
        self.target = target
        self.delay = delay
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._start(self._accept)

    def _start(self, target: object, *args: object) -> None:
        thread = threading.Thread(target=target, args=args, daemon=True)  # type: ignore[arg-type]
        thread.start()
        self._threads.append(thread)

    def _accept(self) -> None:
        self._listener.settimeout(0.2)
        while not self._stop.is_set():
            try:
                client, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            upstream = socket.create_connection(self.target, timeout=5.0)
            for src, dst in ((client, upstream), (upstream, client)):
                self._start(self._pump, src, dst)

    def _pump(self, src: socket.socket, dst: socket.socket) -> None:
        held: deque[tuple[float, bytes]] = deque()
        src.setblocking(False)
        try:
            while not self._stop.is_set():
                wait = max(0.0, held[0][0] - time.monotonic()) if held else 0.05
                readable, _, _ = select.select([src], [], [], min(wait, 0.05))
                if readable:
                    data = src.recv(65536)
                    if not data:
                        break
                    held.append((time.monotonic() + self.delay, data))
                while held and held[0][0] <= time.monotonic():
                    dst.sendall(held.popleft()[1])
            while held:
                time.sleep(max(0.0, held[0][0] - time.monotonic()))
                dst.sendall(held.popleft()[1])
        except OSError:
            pass
        finally:
            with contextlib.suppress(OSError):
                dst.shutdown(socket.SHUT_WR)

    def close(self) -> None:
        """Stop relaying and close the listener."""
        self._stop.set()
        self._listener.close()


@contextlib.contextmanager
def namespaces(count: int) -> Iterator[list[Namespace]]:
    """``count`` namespaces for the block; skipped with the reason where they are not allowed."""
    why = namespaces_allowed()
    if why is not None:
        missing(why)
    made: list[Namespace] = []
    try:
        for index in range(count):
            made.append(Namespace(index))
        yield made
    finally:
        for ns in made:
            ns.delete()


def jack(host: str) -> str:
    """The JACK server name of a test host (fixed names: JACK's registry holds 8)."""
    return jack_name(f"h-{host}")


def free_tcp_port(address: str = "127.0.0.1") -> int:
    """A TCP port free on ``address`` now (for an sshd of a test)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((address, 0))
        return int(sock.getsockname()[1])
