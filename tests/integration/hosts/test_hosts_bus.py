"""A knob on one host moves a room of another: the values its router sent travel over the
host link as change-bus events, and every reader on the room's host gets each once, in
order: its router, its page's stream and its panel's ``live`` long poll.

Two ``scorch run --host`` on loopback (``via = "local"``), each with its own JACK server;
the room's host (beta) serves its page on loopback (its own copy of the config adds
``[web]``: two pages of one machine cannot share a port).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import rtmidi

from scorch.api.remote import RemoteService
from scorch.config.installation import load_config
from scorch.primitives.system.jackd import client_environment
from scorch.wire.envelope import socket_path
from tests.conftest import jack_name, scsynth_param
from tests.support.harness import wait_for
from tests.support.hosts.harness import ScorchRun, free_tcp_port
from tests.support.hosts.two_hosts import two_host_config
from tests.support.web.stream import PageStream, params_changes

pytestmark = pytest.mark.integration

KNOB = "scorchtest-hbknob"


class TwoHosts:
    """alpha (the knob) and beta (gallery, its page on loopback at :attr:`port`)."""

    def __init__(self, folder: Path) -> None:
        state, jack = folder / "state", jack_name("hb")
        self.port = free_tcp_port()
        alpha, beta = folder / "alpha.toml", folder / "beta.toml"
        alpha.write_text(two_host_config(state, jack, KNOB))
        page = f'[web]\nlisten = "127.0.0.1:{self.port}"\nopen_loopback = true\n'
        beta.write_text(two_host_config(state, jack, KNOB, page))
        self.config = load_config(alpha)
        self.jack = jack
        self.runs: list[ScorchRun] = []
        try:  # one after the other: JACK's shared registry (see test_hosts.py)
            for host, path in (("alpha", alpha), ("beta", beta)):
                run = ScorchRun(path, host, folder / f"{host}.log")
                self.runs.append(run)
                run.wait_serving(self.config.host_state_path(host))
        except BaseException:
            self.stop()
            raise
        self.beta = RemoteService(socket_path(self.config.host_state_path("beta")))

    def stop(self) -> None:
        codes = [run.stop() for run in self.runs]
        assert all(code == 0 for code in codes), [run.tail() for run in self.runs]


@pytest.fixture(scope="module")
def hosts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TwoHosts]:
    made = TwoHosts(tmp_path_factory.mktemp("hostsbus"))
    try:
        yield made
    finally:
        made.stop()


def router_bus(hosts: TwoHosts) -> tuple[int, dict[str, Any]]:
    """beta's last seq, and how far its router took the bus, once it took all it was offered."""
    def caught_up() -> bool:
        bus = hosts.beta.call("live", {}).model_dump()["midi"]["bus"]
        return bool(bus["done"] == bus["offered"])

    seq = hosts.beta.call("live", {}).model_dump()["seq"]
    wait_for(caught_up, timeout=5.0)
    return seq, hosts.beta.call("live", {}).model_dump()["midi"]["bus"]


def settled(hosts: TwoHosts, freq: float) -> None:
    """Wait until the knob's last value (``freq``) has come over the link to beta's bus and
    nothing more follows for half a second: the knob was turned until scsynth had the
    value, and the values it sent before that travel the slower link still."""
    def arrived() -> bool:
        changes = hosts.beta.call("live", {"since": 0, "wait": 0.0}).model_dump()["changes"]
        return any(f == pytest.approx(freq) for _, _, f in drone_freqs(changes, 0))

    wait_for(arrived, timeout=10.0)
    seq, deadline = -1, time.monotonic() + 10
    while (now := hosts.beta.call("live", {}).model_dump()["seq"]) != seq:
        assert time.monotonic() < deadline, "beta's bus never went quiet"
        seq = now
        time.sleep(0.5)


def drone_freqs(changes: list[dict[str, Any]], after: int) -> list[tuple[int, str, float]]:
    return [c for c in params_changes(changes, "gallery", "drone", "freq") if c[0] > after]


def test_another_hosts_knob_reaches_the_rooms_router_page_and_panel_once_in_order(
    hosts: TwoHosts,
) -> None:
    gallery = hosts.beta.call("status", {"instance": "gallery"}).model_dump()["instances"][0]
    drone, port = gallery["nodes"]["drone"]["node_id"], gallery["port"]
    with client_environment(f"{hosts.jack}-alpha"):  # alpha's JACK: plugged into alpha
        knob = rtmidi.MidiOut(rtmidi.API_UNIX_JACK, name="scorchtest-hw")
        knob.open_virtual_port(KNOB)
    try:
        def reaches(value: int, freq: float) -> bool:
            knob.send_message([0xB0, 74, value])
            return scsynth_param(port, drone, "freq") == pytest.approx(freq)

        wait_for(lambda: reaches(127, 1000.0), timeout=15.0, interval=0.2)  # routes known
        settled(hosts, 1000.0)
        with PageStream("127.0.0.1", hosts.port) as page:
            since, router = router_bus(hosts)
            panel: list[dict[str, Any]] = []
            for value, freq in ((0, 100.0), (64, 100 + 900 * 64 / 127)):
                knob.send_message([0xB0, 74, value])
                deadline = time.monotonic() + 10
                while not any(f == pytest.approx(freq, rel=1e-5)
                              for _, _, f in drone_freqs(panel, since)):
                    assert time.monotonic() < deadline, (drone_freqs(panel, since), freq)
                    view = hosts.beta.call("live", {"since": panel[-1]["seq"] if panel
                                                    else since, "wait": 2.0}).model_dump()
                    panel += view["changes"]
            wait_for(lambda: len(drone_freqs(page.changes, since)) >= 2, timeout=5.0)
            time.sleep(0.5)  # a value handed over twice would come by now
        by_panel, by_page = drone_freqs(panel, since), drone_freqs(page.changes, since)
        assert [(by, round(f, 3)) for _, by, f in by_panel] == [
            ("midi@alpha", 100.0), ("midi@alpha", round(100 + 900 * 64 / 127, 3))]
        assert by_page == by_panel
        router_after = router_bus(hosts)[1]
        assert router_after["done"] >= by_panel[-1][0]
        assert router_after["taken"] - router["taken"] == 2, (router, router_after)  # once each
        assert router_after["missed"] == router["missed"] == 0
        assert router_after["failed"] == router["failed"] == 0
        # beta keeps what alpha's router sent: its restores bring it back
        kept = hosts.beta.call("status", {"instance": "gallery"}).model_dump()
        assert kept["instances"][0]["nodes"]["drone"]["params"]["freq"] == pytest.approx(
            100 + 900 * 64 / 127, rel=1e-5)
    finally:
        knob.close_port()
        knob.delete()
