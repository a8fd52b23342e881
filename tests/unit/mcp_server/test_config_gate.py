"""The gate of a broken config: its mistakes at every call, the installation once it loads."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from mcp_server.config_gate import ConfigGate
from scorch.api.local import LocalService
from scorch.api.operation import Service
from scorch.config.installation import Config, load_config
from scorch.errors import ConfigError

GOOD = "[instances.room]\n"
BROKEN = "[instances.room]\nportt = 57999\n"


def broken(path: Path) -> ConfigError:
    path.write_text(BROKEN)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    return caught.value


class Opened:
    """An opener that records the configs it was given and when the service was closed."""

    def __init__(self) -> None:
        self.configs: list[Config] = []
        self.opened = threading.Event()
        self.closed = threading.Event()

    def __call__(self, config: Config) -> tuple[Service, Callable[[], None]]:
        self.configs.append(config)
        self.opened.set()
        return LocalService(), self.closed.set


def test_every_call_says_the_located_mistakes_until_the_file_is_fixed(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    opened = Opened()
    gate = ConfigGate(path, broken(path), opened)
    with pytest.raises(ConfigError, match=rf"{path}:2: instances.room.portt: unknown key"):
        gate.call("list_instances", {})
    path.write_text(GOOD)  # read again at the next call, watched or not
    assert isinstance(gate.service(), LocalService)
    assert [list(c.instances) for c in opened.configs] == [["room"]]
    gate.service()
    assert len(opened.configs) == 1  # started once
    gate.close()
    assert opened.closed.is_set()


def test_a_fixed_file_starts_the_installation_without_a_call(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    opened = Opened()
    gate = ConfigGate(path, broken(path), opened).start()
    try:
        path.write_text(GOOD + "\n")  # another size: seen as a change
        assert opened.opened.wait(10.0), "the fixed file was not read again"
    finally:
        gate.close()
    assert opened.closed.is_set()
