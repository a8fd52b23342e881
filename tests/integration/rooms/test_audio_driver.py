"""``[audio] driver = "auto"``: join a running JACK server, else a sound card, else headless."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from scorch.api.local import LocalService
from scorch.app.orchestra import Orchestra
from scorch.config.installation import Config, parse_config
from scorch.primitives.system.audio_driver import (
    DEFAULT_SERVER,
    SERVER_ENV,
    choose,
    server_running,
    sound_cards,
    user_server,
)
from scorch.primitives.system.jackd import jack_env
from scorch.primitives.system.process import child_env
from tests.conftest import jack_name
from tests.support.harness import jack_server

# Two cards as /proc/asound shows them: the first can only record, the second plays.
CARDS = """\
 0 [Mic            ]: USB-Audio - USB Microphone
                      Generic USB Microphone at usb-0000:00:14.0-1, full speed
 1 [PCH            ]: HDA-Intel - HDA Intel PCH
                      HDA Intel PCH at 0xf7f10000 irq 33
"""


def asound(tmp_path: Path, cards: str, playback: tuple[int, ...]) -> Path:
    """A real /proc/asound-shaped tree: the cards file and each card's pcm devices."""
    root = tmp_path / "asound"
    root.mkdir()
    (root / "cards").write_text(cards)
    for index in (0, 1):
        card = root / f"card{index}"
        card.mkdir()
        (card / "pcm0c").mkdir()
        if index in playback:
            (card / "pcm0p").mkdir()
    return root


def never(server: str) -> bool:
    return False


def test_the_first_card_that_can_play_is_found_with_its_device(tmp_path: Path) -> None:
    cards = sound_cards(asound(tmp_path, CARDS, playback=(1,)))
    assert [(c.index, c.id, c.device) for c in cards] == [(1, "PCH", "hw:1")]
    assert cards[0].name == "HDA-Intel - HDA Intel PCH"


def test_no_asound_folder_means_no_cards(tmp_path: Path) -> None:
    assert sound_cards(tmp_path / "missing") == []


def test_auto_starts_jackd_on_the_first_card_when_no_server_runs(tmp_path: Path) -> None:
    choice = choose("auto", "scorch", environ={}, running=never,
                    asound=asound(tmp_path, CARDS, playback=(0, 1)))
    assert (choice.driver, choice.server, choice.device) == ("alsa", "scorch", "hw:0")
    assert choice.owns_server and "Mic" in choice.reason
    fallback = choice.without_card("device busy")
    assert (fallback.driver, fallback.device) == ("dummy", None)
    assert "device busy" in fallback.describe()


def test_auto_prefers_a_configured_device_to_the_first_card(tmp_path: Path) -> None:
    choice = choose("auto", "scorch", "hw:1", environ={}, running=never,
                    asound=asound(tmp_path, CARDS, playback=(0, 1)))
    assert (choice.driver, choice.device) == ("alsa", "hw:1")


def test_auto_is_headless_without_a_server_or_a_card(tmp_path: Path) -> None:
    choice = choose("auto", "mine", environ={}, running=never, asound=tmp_path / "none")
    assert (choice.driver, choice.server, choice.device) == ("dummy", "mine", None)
    assert "no JACK server 'default' runs and no sound card" in choice.describe()


@pytest.mark.parametrize("asked", ["dummy", "jack", "alsa"])
def test_other_drivers_are_taken_as_configured(asked: str, tmp_path: Path) -> None:
    choice = choose(asked, "mine", "hw:3" if asked == "alsa" else None,
                    running=lambda server: True, asound=asound(tmp_path, CARDS, (0, 1)))
    assert (choice.asked, choice.driver, choice.server) == (asked, asked, "mine")


def test_the_users_server_is_named_by_the_environment_else_default() -> None:
    assert user_server({}) == DEFAULT_SERVER == "default"
    assert user_server({SERVER_ENV: "studio"}) == "studio"


# --- with real jackd and scsynth -------------------------------------------------


def auto_config(tmp_path: Path, private: str) -> Config:
    """One room, the driver left to its default (auto), MIDI off."""
    text = f"""
state_dir = "{tmp_path / 'state'}"
[audio]
jack_server = "{private}"
[midi]
enabled = false
[instances.room]
"""
    return parse_config(text, tmp_path / "config.toml")


def clients_of(server: str) -> str:
    """The ports of JACK server ``server``, as jack_lsp lists them."""
    return subprocess.run(["jack_lsp", "-s", server], env=child_env(jack_env(server)),
                          capture_output=True, text=True, timeout=10, check=False).stdout


def connections(server: str) -> dict[str, list[str]]:
    """Each port of ``server`` and the ports it is connected to (``jack_lsp -c``)."""
    listing = subprocess.run(["jack_lsp", "-s", server, "-c"], env=child_env(jack_env(server)),
                             capture_output=True, text=True, timeout=10, check=False).stdout
    found: dict[str, list[str]] = {}
    port = ""
    for line in listing.splitlines():
        if line.startswith(" "):
            found[port].append(line.strip())
        else:
            port = line.strip()
            found[port] = []
    return found


@pytest.mark.integration
def test_auto_runs_headless_on_a_machine_without_a_server_or_a_card(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        start_orchestra: Callable[[Config], Orchestra]) -> None:
    if sound_cards():
        pytest.skip("this machine has a sound card: auto would use it")
    nobody = jack_name("nobody")  # a server name nothing runs under
    monkeypatch.setenv(SERVER_ENV, nobody)
    assert not server_running(nobody)
    orch = start_orchestra(auto_config(tmp_path, jack_name("auto")))
    assert orch.audio is not None
    assert (orch.audio.asked, orch.audio.driver, orch.audio.server) == (
        "auto", "dummy", jack_name("auto"))
    assert orch.rooms.pids()["jackd"] is not None
    # A room that names no ports plays to the hardware outputs: scsynth alone connects none.
    wired = connections(jack_name("auto"))
    assert (wired["scorch-room:out_1"], wired["scorch-room:out_2"]) == (
        ["system:playback_1"], ["system:playback_2"])
    audio = LocalService(orch).call("status", {"instance": "room"}).model_dump()["audio"]
    assert audio["driver"] == "dummy" and "no sound card" in audio["summary"]


@pytest.mark.integration
def test_auto_joins_the_running_jack_server_and_leaves_it_running(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        start_orchestra: Callable[[Config], Orchestra]) -> None:
    with jack_server(jack_name("users")) as users:
        monkeypatch.setenv(SERVER_ENV, users)
        orch = start_orchestra(auto_config(tmp_path, jack_name("auto")))
        assert orch.audio is not None
        assert (orch.audio.driver, orch.audio.server) == ("jack", users)
        assert orch.rooms.pids()["jackd"] is None  # scorch started no jackd of its own
        assert orch.rooms.status("room").state == "READY"
        assert connections(users)["scorch-room:out_1"] == ["system:playback_1"]
        audio = LocalService(orch).call("status", {}).model_dump()["audio"]
        assert audio["driver"] == "jack" and f"${SERVER_ENV}" in audio["summary"]
        orch.stop()
        assert server_running(users)  # joined, not owned: stopping scorch leaves it up
        assert "scorch-room" not in clients_of(users)
