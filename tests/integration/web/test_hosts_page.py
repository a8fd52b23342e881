"""The page of one host of an installation across several names every host and itself.

A ``scorch run --host stage`` of its own (one room), its page on loopback; first of
the web tests, so its run has stopped before theirs starts.
"""

from __future__ import annotations

import socket
import textwrap
import time
from collections.abc import Iterator
from typing import Any

import pytest

from scorch.config.installation import load_config
from scorch.wire.access import TOKEN_FILE
from tests.conftest import jack_name
from tests.support.hosts.harness import ScorchRun, free_tcp_port

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def stage_page(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The stage host's page on loopback, with its token to open it once."""
    folder = tmp_path_factory.mktemp("webhosts")
    port = free_tcp_port()
    path = folder / "config.toml"
    path.write_text(textwrap.dedent(f"""
        state_dir = "{folder / 'state'}"
        [audio]
        driver = "dummy"
        jack_server = "{jack_name('webhosts')}"
        [docs]
        build = "on-demand"
        [midi]
        enabled = false
        [web]
        listen = "127.0.0.1:{port}"
        [hosts.stage]
        via = "local"
        [hosts.foyer]
        via = "local"
        [instances.porch]
        host = "stage"
        synthdefs = ["sine"]
        [instances.hall]
        host = "foyer"
        synthdefs = ["sine"]
        """))
    run = ScorchRun(path, "stage", folder / "stage.log")
    try:
        state = load_config(path).host_state_path("stage")
        run.wait_serving(state)
        deadline = time.monotonic() + 10
        while True:  # the page listens right after the control socket
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, f"the page did not listen:\n{run.tail()}"
                time.sleep(0.05)
        token = (state / TOKEN_FILE).read_text().strip()
        yield f"http://127.0.0.1:{port}/?token={token}"
    finally:
        assert run.stop() == 0, run.tail()


def test_a_hosts_page_shows_every_host_and_which_one_it_is(
        stage_page: str, browser: Any) -> None:
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(stage_page)
        page.wait_for_selector("#room-porch[data-state=READY]", timeout=10000)
        page.wait_for_selector("#summary .host[data-host=foyer]", timeout=3000)
        hosts = page.eval_on_selector_all("#summary .host", "l => l.map(h => h.dataset.host)")
        assert sorted(hosts) == ["foyer", "stage"]
        assert "(this: stage)" in page.inner_text("#summary")
        assert page.locator("#room-hall").count() == 0, "another host's room shown as this one's"
    finally:
        context.close()
