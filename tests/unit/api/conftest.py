"""Two hosts of one installation, a and b, each a control server over an orchestra not
started (its rooms answer STOPPED, no process needed): what the coordinator's tests
call."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from scorch.api.local import LocalService
from scorch.app.orchestra import Orchestra
from scorch.config.installation import Config, parse_config
from scorch.wire.server import ControlServer

TEXT = """
[audio]
driver = "dummy"
[hosts.a]
via = "local"
[hosts.b]
via = "local"
[instances.x]
host = "a"
group = "g"
[instances.y]
host = "b"
group = "g"
[instances.z]
host = "b"
"""


@pytest.fixture
def config(tmp_path: Path) -> Config:
    path = tmp_path / "cfg.toml"
    path.write_text(f'state_dir = "{tmp_path / "state"}"\n' + textwrap.dedent(TEXT))
    return parse_config(path.read_text(), path)


class Served:
    """The control servers of hosts a and b, each over an orchestra not started."""

    def __init__(self, config: Config) -> None:
        self.servers = {}
        for host in ("a", "b"):
            part = config.for_host(host)
            server = ControlServer(LocalService(Orchestra(part)), part.state_path())
            server.start()
            self.servers[host] = server

    def stop(self, host: str) -> None:
        self.servers.pop(host).stop()


@pytest.fixture
def served(config: Config) -> Iterator[Served]:
    made = Served(config)
    yield made
    for server in made.servers.values():
        server.stop()
