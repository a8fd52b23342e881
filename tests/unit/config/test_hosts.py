"""Several hosts in the config: [hosts.NAME], rooms and routes naming hosts, each host's part.

Bad configs give the file, the line, the key and what to do, as the rest of
config.toml's errors do (tests/unit/config/test_installation.py).
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scorch.api.models import RoomRow
from scorch.api.status_text import render, render_hosts
from scorch.cli.service_unit import unit_path, unit_text
from scorch.config.installation import Config, parse_config
from scorch.config.reload import config_changes
from scorch.errors import ConfigError, InvalidRequest, RoomNotFound
from scorch.hosts.link import HostInfo
from tests.support.skips import only_on

INSTALLATION = """
state_dir = "/srv/state"
[audio]
jack_server = "rooms"
[hosts.lobby-pi]
address = "10.0.0.21"
ssh_user = "pi"
listen = "10.0.0.21"
[hosts.lobby-pi.audio]
driver = "alsa"
device = "hw:1"
[hosts.cellar]
via = "local"
[instances.lobby]
host = "lobby-pi"
group = "ground"
port = 57110
[instances.porch]
host = "lobby-pi"
group = "ground"
[instances.cellar]
host = "cellar"
port = 57110
[instances.desk]
[[midi.controls]]
port = "nano"
cc = 1
instance = "ground"
node = "pad"
param = "amp"
[[midi.controls]]
host = "cellar"
port = "fader"
cc = 7
instance = "lobby"
node = "pad"
param = "amp"
[[midi.keys]]
port = "keys"
instance = "desk"
synthdef = "sine"
"""


def parse(text: str) -> Config:
    return parse_config(textwrap.dedent(text), "/srv/cfg.toml")


@pytest.fixture
def config() -> Config:
    return parse(INSTALLATION)


def test_each_host_runs_its_rooms_routes_audio_and_state(config: Config) -> None:
    lobby = config.for_host("lobby-pi")
    assert list(lobby.instances) == ["lobby", "porch"]
    assert lobby.host == "lobby-pi"
    assert (lobby.audio.driver, lobby.audio.device, lobby.audio.jack_server) == (
        "alsa", "hw:1", "rooms")
    assert lobby.state_path() == Path("/srv/state/hosts/lobby-pi")
    assert [r.port for r in lobby.midi.controls] == ["nano"]  # the route of its rooms
    assert lobby.midi.keys == ()
    assert lobby.listen_address() == "10.0.0.21"
    assert set(lobby.remote) == {"cellar", "desk"}
    cellar = config.for_host("cellar")
    assert cellar.audio.jack_server == "rooms-cellar"  # local: its own JACK on this machine
    assert [r.port for r in cellar.midi.controls] == ["fader"]  # its controller, lobby's room
    assert cellar.resolve_everywhere("lobby") == ["lobby"]
    assert cellar.resolve_everywhere("ground") == ["lobby", "porch"]
    with pytest.raises(RoomNotFound):
        cellar.resolve("lobby")  # operations only reach its own rooms
    here = config.for_host(None)
    assert list(here.instances) == ["desk"] and here.state_path() == Path("/srv/state")
    assert [r.port for r in here.midi.keys] == ["keys"]
    assert here.listen_address() == "127.0.0.1"
    assert [p for p in config.parts()] == ["lobby-pi", "cellar", None]
    assert {config.for_host(p).voice_slot() for p in config.parts()} == {0, 1, 2}
    assert parse("[instances.a]\n").voice_slot() is None


def test_a_groups_own_tempo_runs_only_on_the_hosts_of_its_rooms() -> None:
    config = parse(INSTALLATION + "[tempo.groups.ground]\nbpm = 90\n")
    assert list(config.for_host("lobby-pi").tempo.groups) == ["ground"]
    assert config.for_host("cellar").tempo.groups == {}
    assert config.for_host("cellar").tempo.bpm == config.tempo.bpm


def test_every_host_finds_the_others_state_from_its_own_part(config: Config) -> None:
    for part in config.parts():
        view = config.for_host(part)
        assert view.host_state_path("cellar") == Path("/srv/state/hosts/cellar")
        assert view.host_state_path(None) == Path("/srv/state")


def test_a_config_without_hosts_is_its_own_part() -> None:
    plain = parse("[instances.a]\n")
    assert plain.for_host(None) is plain
    with pytest.raises(ConfigError, match=r"no \[hosts.x\]; hosts: none"):
        plain.for_host("x")


def test_parts_that_run_nothing_are_refused_with_what_to_do(config: Config) -> None:
    only_hosts = parse("""
        [hosts.a]
        [instances.x]
        host = "a"
        """)
    with pytest.raises(ConfigError, match="every room runs on a host"):
        only_hosts.for_host(None)
    empty = parse("""
        [hosts.a]
        [hosts.b]
        [instances.x]
        host = "a"
        """)
    with pytest.raises(ConfigError, match="no room runs on host 'b'"):
        empty.for_host("b")


BAD = [
    pytest.param('[instances.a]\nhost = "pi"\n',
                 ["cfg.toml:2", "instances.a.host", "no [hosts.pi]", "no [hosts] table"],
                 id="unknown-host-no-table"),
    pytest.param('[hosts.lobby]\n[instances.a]\nhost = "loby"\n',
                 ["cfg.toml:3", "instances.a.host", "did you mean 'lobby'"], id="host-typo"),
    pytest.param('[hosts.lobby]\nadress = "x"\n[instances.a]\n',
                 ["cfg.toml:2", "hosts.lobby.adress", "did you mean 'address'"],
                 id="host-key-typo"),
    pytest.param('[hosts.a]\nvia = "telnet"\n[instances.x]\n',
                 ["cfg.toml:2", "hosts.a.via", "'ssh' or 'local'"], id="via"),
    pytest.param('[hosts.a]\ntransport = "telnet"\n[instances.x]\n',
                 ["cfg.toml:2", "hosts.a.transport", "'ssh' or 'local'"], id="transport"),
    pytest.param('[hosts.a]\nvia = "ssh"\ntransport = "local"\n[instances.x]\n',
                 ["cfg.toml:1", "hosts.a", "older name of via", "keep one"],
                 id="via-and-transport"),
    pytest.param('[hosts.a]\naddress = "-oProxyCommand=x"\n[instances.x]\n',
                 ["cfg.toml:2", "hosts.a.address", "host name or an IP address"],
                 id="address-is-an-option"),
    pytest.param('[hosts.a]\nssh_user = "pi; rm"\n[instances.x]\n',
                 ["cfg.toml:2", "hosts.a.ssh_user"], id="ssh-user"),
    pytest.param('[hosts.a]\nscorch = "scorch; reboot"\n[instances.x]\n',
                 ["cfg.toml:2", "hosts.a.scorch"], id="scorch-command"),
    pytest.param('[hosts.a]\nssh_options = { "Bad Name" = "1" }\n[instances.x]\n',
                 ["cfg.toml:2", "hosts.a.ssh_options", "letters and digits"], id="ssh-option"),
    pytest.param('[hosts.a]\nssh_options = { ConnectTimeout = "2\\u0000" }\n[instances.x]\n',
                 ["cfg.toml:2", "hosts.a.ssh_options", "NUL byte (at character 2)"],
                 id="ssh-option-nul"),
    pytest.param('[hosts.a]\nlisten = "everywhere"\n[instances.x]\n',
                 ["cfg.toml:2", "hosts.a.listen", "expected an IP address"], id="listen"),
    pytest.param('[hosts.a]\nssh_port = 0\n[instances.x]\n',
                 ["cfg.toml:2", "hosts.a.ssh_port", "greater than or equal to 1"], id="port"),
    pytest.param('[hosts."2b"]\n[instances.x]\n',
                 ["cfg.toml:1", "hosts.2b", "a host name must be"], id="host-name"),
    pytest.param('[hosts.a.audio]\ndriver = "alsa"\n[instances.x]\nhost = "a"\n',
                 ["cfg.toml:1", "hosts.a.audio", "needs device = 'hw:N'"],
                 id="host-audio-alsa-without-device"),
    pytest.param('[hosts.a.audio]\nperiod = "big"\n[instances.x]\n',
                 ["cfg.toml:2", "hosts.a.audio.period", "valid integer"], id="host-audio-type"),
    pytest.param('[audio]\njack_server = "scorch"\n'
                 '[hosts.a]\ntransport = "local"\n[hosts.a.audio]\njack_server = "scorch"\n'
                 '[instances.x]\nhost = "a"\n[instances.y]\n',
                 ["cfg.toml:5", "hosts.a.audio", "the rooms without a host", "'scorch'",
                  "own jack_server"], id="one-jack-twice-on-this-machine"),
    pytest.param('[hosts.a]\nvia = "local"\n[instances.x]\nhost = "a"\nport = 57110\n'
                 '[instances.y]\nport = 57110\n',
                 ["'x' and 'y' both use port 57110 on this machine"], id="port-on-one-machine"),
    pytest.param('[hosts.a]\n[hosts.b]\n[instances.x]\nhost = "a"\n[instances.y]\nhost = "b"\n'
                 '[[midi.controls]]\ncc = 1\ninstance = "*"\nnode = "n"\nparam = "p"\n',
                 ["cfg.toml:9", "midi.controls.0.instance", "several hosts",
                  "a: x; b: y", "host = \"NAME\""], id="route-across-hosts"),
    pytest.param('[hosts.a]\n[instances.x]\nhost = "a"\n'
                 '[[midi.keys]]\nhost = "b"\ninstance = "x"\nsynthdef = "sine"\n',
                 ["cfg.toml:5", "midi.keys.0.host", "no [hosts.b]"], id="route-host"),
]


@pytest.mark.parametrize(("text", "expected"), BAD)
def test_bad_host_configs_say_where_and_what(text: str, expected: list[str]) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config(text, "cfg.toml")
    message = str(caught.value)
    for part in expected:
        assert part in message, f"{part!r} not in {message!r}"


def test_two_ssh_hosts_may_use_one_port_and_one_jack_name() -> None:
    config = parse("""
        [hosts.a]
        address = "10.0.0.1"
        [hosts.b]
        address = "10.0.0.2"
        [instances.x]
        host = "a"
        port = 57110
        [instances.y]
        host = "b"
        port = 57110
        """)
    assert {config.for_host(h).audio.jack_server for h in ("a", "b")} == {"scorch"}


def test_an_older_configs_transport_key_is_read_as_via(config: Config) -> None:
    older = parse(INSTALLATION.replace('via = "local"', 'transport = "local"'))
    assert older.hosts["cellar"].via == config.hosts["cellar"].via == "local"
    assert older.hosts == config.hosts
    assert config.hosts["lobby-pi"].via == "ssh"


def test_reload_takes_new_hosts_and_restarts_rooms_whose_listen_changed(config: Config) -> None:
    old = config.for_host("lobby-pi")
    added = parse(INSTALLATION + '[hosts.attic]\naddress = "10.0.0.9"\n'
                  '[instances.attic]\nhost = "attic"\n').for_host("lobby-pi")
    changes = config_changes(old, added)
    assert changes.midi and not changes.rooms and not changes.added  # routes follow addresses
    moved = parse(INSTALLATION.replace('listen = "10.0.0.21"', 'listen = "0.0.0.0"'))
    changes = config_changes(old, moved.for_host("lobby-pi"))
    assert {name: room.restart_for for name, room in changes.rooms.items()} == {
        "lobby": ("listen",), "porch": ("listen",)}
    other_audio = parse(INSTALLATION.replace('device = "hw:1"', 'device = "hw:2"'))
    with pytest.raises(InvalidRequest, match=r"\[audio\] changed"):
        config_changes(old, other_audio.for_host("lobby-pi"))


def test_the_unit_of_a_host_runs_its_part() -> None:
    unit = unit_text(Path("/opt/scorch/.venv/bin/scorch"), Path("/srv/cfg.toml"), False,
                     "lobby-pi")
    assert ("ExecStart=/opt/scorch/.venv/bin/scorch run --config /srv/cfg.toml "
            "--host lobby-pi") in unit.splitlines()
    assert "Description=scorch: SuperCollider host lobby-pi's rooms of /srv/cfg.toml" in unit
    assert "After=network-online.target sound.target time-sync.target" in unit


@only_on(sys.platform == "linux", "systemd's user units are Linux's")
def test_a_user_unit_goes_to_the_users_systemd_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    assert unit_path(True, "rooms") == (
        tmp_path / "home" / ".config" / "systemd" / "user" / "rooms.service")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    assert unit_path(True) == tmp_path / "config" / "systemd" / "user" / "scorch.service"
    assert unit_path(False) == Path("/etc/systemd/system/scorch.service")


def test_tables_show_each_room_host_and_each_host_state() -> None:
    unused = {"since": 0.0, "uptime": None, "restart_budget_left": 5, "peak_cpu": None,
              "nodes": [], "reason": None}
    rows = [RoomRow.model_validate({**unused, **row}) for row in [
        {"name": "lobby", "host": "lobby-pi", "group": None, "state": "READY",
         "port": 57110, "cpu": 1.0, "synths": 1, "restarts": 0},
        {"name": "desk", "host": None, "group": None, "state": "UNKNOWN",
         "reason": "host (this machine) NOT_RUNNING", "port": None, "cpu": None,
         "synths": None, "restarts": 0}]]
    lines = render(rows).splitlines()
    assert lines[0].split()[:2] == ["room", "host"]
    assert lines[2].split()[:3] == ["lobby", "lobby-pi", "-"]
    assert lines[3].split()[:4] == ["desk", "-", "-", "UNKNOWN"]
    seen = {"since": 0.0, "last_seen": None, "reconciled_at": None}
    hosts = render_hosts([HostInfo.model_validate({**seen, **host}) for host in [
        {"name": "lobby-pi", "transport": "ssh", "address": "10.0.0.21", "state": "CONNECTED",
         "reason": None, "rtt_ms": 1.25, "clock_offset_ms": -0.4, "rooms": ["lobby"],
         "warnings": ["it runs another text of the config"]},
        {"name": None, "transport": "local", "address": "127.0.0.1", "state": "UNREACHABLE",
         "reason": "timed out", "rtt_ms": None, "clock_offset_ms": None, "rooms": ["desk"],
         "warnings": []}]]).splitlines()
    assert hosts[2].split() == ["lobby-pi", "ssh", "10.0.0.21", "CONNECTED", "1.2", "-0.4",
                                "lobby"]
    assert hosts[3].split()[:5] == ["(this", "machine)", "local", "127.0.0.1", "UNREACHABLE"]
    assert hosts[4] == "lobby-pi: it runs another text of the config"


@given(st.text(max_size=40))
def test_any_host_address_is_a_plain_name_or_refused(address: str) -> None:
    text = f"[hosts.a]\naddress = {address!r}\n[instances.x]\nhost = \"a\"\n".replace(
        "'", '"') if '"' not in address and "\\" not in address else None
    if text is None:
        return
    try:
        config = parse_config(text, "cfg.toml")
    except ConfigError as err:
        assert "cfg.toml" in str(err)
        return
    value = config.hosts["a"].address
    assert value and not value.startswith("-")
    assert all(c.isalnum() or c in "_.:%-" for c in value)
