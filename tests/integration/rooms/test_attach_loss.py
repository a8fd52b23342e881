"""sclang's attach to scsynth survives lost datagrams (issue 29): it asks again, soon.

A real sclang attaches through a relay that drops, on the way back from a real
scsynth, the answer to its first login, the first ``/synced`` and every
``/status.reply``. SuperCollider's own status watcher logs in only after a
status reply and asks once: the attach waited out its whole timeout. Scorch's
login asks at once and again every 0.25 s, so one lost answer costs one ask.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator

import pytest

from scorch.primitives.console import Console
from scorch.primitives.sclang.interpreter import Sclang
from scorch.primitives.scsynth.server import Scsynth, ScsynthOptions
from scorch.primitives.system.jackd import JackdOptions, wait_for_server
from scorch.primitives.system.ports import free_udp_port
from scorch.primitives.system.process import spawn
from tests.conftest import jack_name
from tests.support.lossy_udp import LossyRelay, first, osc_address

pytestmark = pytest.mark.integration

#: The attach's own timeout here: the old attach, with status replies lost, never finished.
ATTACH_TIMEOUT = 15.0


@pytest.fixture(scope="module")
def scsynth() -> Iterator[Scsynth]:
    """One scsynth on its own headless jackd (no room, no orchestra: one sclang is the test)."""
    options = JackdOptions(server=jack_name("lossy"))
    jackd = spawn(options.argv(), env=options.env())
    try:
        assert wait_for_server(options.server, 10.0, lambda: jackd.poll() is None)
        server = Scsynth.start(ScsynthOptions(name="lossy", port=free_udp_port(),
                                              jack_server=options.server),
                               Console(), lambda proc, code: None, 10.0)
        try:
            yield server
        finally:
            server.stop()
    finally:
        jackd.terminate()  # SIGTERM: a SIGKILLed jackd keeps its name registered
        try:
            jackd.wait(timeout=10)
        except subprocess.TimeoutExpired:
            jackd.kill()
            jackd.wait()


def test_an_attach_whose_login_answer_sync_and_status_replies_are_lost_asks_again(
        scsynth: Scsynth) -> None:
    login_answer = first(1, "to-client", b"/done", b"/notify")
    synced = first(1, "to-client", b"/synced")

    def drop(way: str, datagram: bytes) -> bool:
        return (login_answer(way, datagram) or synced(way, datagram)
                or (way == "to-client" and osc_address(datagram) == b"/status.reply"))

    relay = LossyRelay(scsynth.port, drop)
    console = Console()
    sclang = None
    try:
        sclang = Sclang.start(name="lossy", lang_port=free_udp_port(), server_port=relay.port,
                              console=console, on_exit=lambda proc, code: None,
                              timeout=ATTACH_TIMEOUT)
        dropped = [osc_address(d) for d in relay.dropped]
        assert b"/done" in dropped and b"/synced" in dropped, dropped
        assert sclang.login_asks == 1  # the lost answer cost one ask, nothing more
        assert sclang.client_id == 0
        # `s` works: a round trip through scsynth, and its node ids are client 0's.
        result = sclang.session.submit("s.serverRunning", timeout=5.0)[1].result(timeout=10.0)
        assert result.ok and result.value == "true", result

        # A re-attach (after a restart of scsynth) asks again too: here scsynth knows the
        # client, so it answers "already registered"; the first such answer is lost.
        # (The old re-attach asked once and waited out its timeout.)
        relay.drop = first(1, "to-client", b"/fail", b"/notify")
        before = len(relay.dropped)
        sclang.reattach(relay.port)
        assert [osc_address(d) for d in relay.dropped[before:]] == [b"/fail"]
    finally:
        if sclang is not None:
            sclang.stop("the test is over")
        relay.close()
