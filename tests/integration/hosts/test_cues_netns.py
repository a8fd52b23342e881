"""A cue list across two hosts in network namespaces, measured on scsynth's own clock.

Each host is a namespace with its sshd and ``scorch run --host NAME``; the
coordinator here reaches them over ssh. Each room plays a probe that counts its
own samples and, when its ``freq`` (which the cues set) or its ``mark`` (which the
test sets itself, in a bundle stamped with the GO's time) changes, sends that
count (SendReply) to the test. A GO stamps both hosts' parts with one time, and
each scsynth plays its part in the very block of the test's own bundle of that
time; an auto-follow cue fires after its wait, a double GO counts once, and one
undo takes the cue back on both hosts.
"""

from __future__ import annotations

import socket
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from scorch.api.coordinator import Coordinator
from scorch.config.installation import Config, load_config
from scorch.primitives.osc import decode_packet, encode_message
from scorch.primitives.scsynth.commands import at as at_time
from tests.conftest import jack_name
from tests.support.hosts.harness import Namespace, ScorchRun, Sshd, jack, namespaces

pytestmark = pytest.mark.integration

HOSTS = ("north", "south")
ROOMS = {"north": "nave", "south": "crypt"}
RATE = 48000
BLOCK = 64
#: Counts its samples from its start; says the count whenever its freq or its mark changes.
PROBE = ("SynthDef(\\probe, { |freq = 220, mark = 0, amp = 0.0| var n = Sweep.kr(1, "
         "SampleRate.ir); SendReply.kr(Changed.kr(freq), '/probe', [freq, n]); "
         "SendReply.kr(Changed.kr(mark), '/mark', [mark, n]); "
         "Out.ar(0, SinOsc.ar(freq) * amp) }).add; 1")


def cue(number: int, freq: int, then: str = "stop", post_wait: float = 0.0) -> str:
    return textwrap.dedent(f"""
        [[cues]]
        number = {number}
        name = "to {freq}"
        do = [{{ op = "set", instance = "*", node = "probe", params = {{ freq = {freq} }} }}]
        then = "{then}"
        post_wait = {post_wait}
        """)


class Machines:
    """Two namespace hosts with their sshd and ``scorch run``, and a coordinator."""

    def __init__(self, directory: Path, spaces: list[Namespace]) -> None:
        self.spaces = dict(zip(HOSTS, spaces, strict=True))
        self.sshd = {h: Sshd(directory / f"sshd-{h}", self.spaces[h].address, 22,
                             netns=self.spaces[h].name) for h in HOSTS}
        self.path = directory / "config.toml"
        text = textwrap.dedent(f"""
            state_dir = "{directory / 'state'}"
            [audio]
            driver = "dummy"
            sample_rate = {RATE}
            period = {BLOCK}
            jack_server = "{jack_name('cn')}"
            [docs]
            build = "on-demand"
            [cueing]
            lead = 0.6
            double_go = 1.0
            """) + cue(1, 440, "follow", 1.0) + cue(2, 660) + cue(3, 880) + cue(4, 990)
        for host in HOSTS:
            text += f'[instances.{ROOMS[host]}]\nhost = "{host}"\n'
            text += self.sshd[host].host_table(host, self.path, jack(host),
                                               listen=self.spaces[host].address)
        self.path.write_text(text)
        self.config: Config = load_config(self.path)
        self.runs: dict[str, ScorchRun] = {}
        try:
            for host in HOSTS:
                run = ScorchRun(self.path, host, directory / f"{host}.log",
                                netns=self.spaces[host].name)
                self.runs[host] = run
                run.wait_serving(self.config.host_state_path(host))
        except BaseException:
            self.stop()
            raise
        self.coordinator = Coordinator(self.config)

    def stop(self) -> None:
        if hasattr(self, "coordinator"):
            self.coordinator.close()
        for run in self.runs.values():
            run.stop()
        for sshd in self.sshd.values():
            sshd.stop()


@pytest.fixture(scope="module")
def machines(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Machines]:
    with namespaces(len(HOSTS)) as spaces:
        made = Machines(tmp_path_factory.mktemp("cues"), spaces)
        try:
            yield made
        finally:
            made.stop()


class Probes:
    """The probes' reports, from both hosts' scsynths over their veth links."""

    def __init__(self, machines: Machines) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("0.0.0.0", 0))
        self.sock.settimeout(0.2)
        status = machines.coordinator.call("status", {}).model_dump()["instances"]
        self.where = {row["name"]: (machines.spaces[row["host"]].address, row["port"])
                      for row in status}
        self.nodes = {row["name"]: row["nodes"]["probe"]["node_id"] for row in status}
        self.seen: list[tuple[str, str, float, float]] = []
        self.rooms = {address: room for room, address in self.where.items()}
        for address in self.where.values():
            self.sock.sendto(encode_message("/notify", 1), address)

    def mark(self, value: int, at: float) -> None:
        """Set every probe's mark to ``value`` at Unix time ``at`` (a bundle of the test's)."""
        for room, address in self.where.items():
            self.sock.sendto(at_time(at, encode_message("/n_set", self.nodes[room], "mark",
                                                        float(value))), address)

    def counts(self, address: str, value: float, timeout: float = 6.0) -> dict[str, float]:
        """Each room's sample count when its ``address`` control became ``value``."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = {room: n for room, where, v, n in self.seen
                     if where == address and v == pytest.approx(value)}
            if len(found) == len(self.where):
                return found
            try:
                data, sender = self.sock.recvfrom(65536)
            except TimeoutError:
                continue
            for message in decode_packet(data):
                if message.address in ("/probe", "/mark"):
                    self.seen.append((self.rooms[sender], message.address,
                                      float(message.args[2]),  # type: ignore[arg-type]
                                      float(message.args[3])))  # type: ignore[arg-type]
        return {room: n for room, where, v, n in self.seen
                if where == address and v == pytest.approx(value)}

    def close(self) -> None:
        for address in self.where.values():
            self.sock.sendto(encode_message("/notify", 0), address)
        self.sock.close()


def test_a_go_fires_both_hosts_in_one_block_follows_counts_a_double_go_once_and_is_undone(
        machines: Machines) -> None:
    coordinator = machines.coordinator
    made = coordinator.call("execute", {"instance": "*", "code": PROBE, "timeout_s": 20})
    assert all(r.ok for r in made.results), made  # type: ignore[attr-defined]
    start = time.time() + 2.0  # both probes begin counting at one timestamp
    for room in ROOMS.values():
        coordinator.call("play", {"instance": room, "synthdef": "probe", "node": "probe",
                                  "at": start, "params": {"freq": 220}})
    time.sleep(max(0.0, start - time.time()) + 0.3)
    probes = Probes(machines)
    try:
        went = coordinator.call("cue", {"action": "go"})
        go_at = went.go_at  # type: ignore[attr-defined]
        assert time.time() < go_at - 0.05, "the GO's answer came too late to mark its time"
        probes.mark(1, go_at)
        probes.mark(2, go_at + 1.0)  # cue 2 follows cue 1 after its 1 s wait
        assert [(f.cue, f.host, f.time) for f in went.fired] == [  # type: ignore[attr-defined]
            ("1", "north", go_at), ("2", "north", go_at + 1.0),
            ("1", "south", go_at), ("2", "south", go_at + 1.0)]  # one time on every host
        fired, marked = probes.counts("/probe", 440), probes.counts("/mark", 1)
        assert set(fired) == set(marked) == {"nave", "crypt"}, (fired, marked)
        assert fired == marked  # each host's part in the block of the GO's time, on its clock
        # in the block of the test's bundle stamped a second after the GO, on each clock;
        # not counted in samples: a dummy jackd on a loaded machine loses cycles (xruns),
        # so its samples run behind the wall clock that timestamps keep
        followed, marked = probes.counts("/probe", 660), probes.counts("/mark", 2)
        assert followed == marked and set(followed) == {"nave", "crypt"}, (followed, marked)
        assert all(followed[room] > fired[room] + RATE / 2 for room in followed)
        once = coordinator.call("cue", {"action": "go"})  # cue 3
        twice = coordinator.call("cue", {"action": "go"})  # pressed again at once
        assert once.counted and not twice.counted  # type: ignore[attr-defined]
        assert set(probes.counts("/probe", 880)) == {"nave", "crypt"}
        assert probes.counts("/probe", 990, timeout=1.5) == {}  # cue 4 did not fire
        listed = coordinator.call("cue", {"action": "list"})
        assert listed.standby == "4"  # type: ignore[attr-defined]
        undone = coordinator.call("undo", {}).model_dump()["steps"]
        assert sorted(s["summary"].split(":")[0] for s in undone) == sorted(HOSTS)
        assert all("cue 3 'to 880'" in s["summary"] for s in undone)
        probes.seen.clear()
        assert set(probes.counts("/probe", 660)) == {"nave", "crypt"}  # cue 2's, on both
    finally:
        probes.close()
HOSTS_SORTED = sorted(HOSTS)
