"""``[audio] driver = "auto"``: join a running JACK server, else a sound card, else headless."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NamedTuple

import psutil
import pytest

from scorch.api.local import LocalService
from scorch.api.models import AudioStatus
from scorch.api.ops.rooms import StatusOutput
from scorch.api.remote import RemoteService
from scorch.app.orchestra import Orchestra
from scorch.config.installation import Config, parse_config
from scorch.errors import OscFailure, ScorchError
from scorch.primitives.synthdefs.library import SynthDefLibrary
from scorch.primitives.system.audio_driver import (
    DEFAULT_SERVER,
    SERVER_ENV,
    choose,
    server_running,
    sound_cards,
    user_server,
)
from scorch.primitives.system.jackd import JackdOptions, jack_env, wait_for_server
from scorch.primitives.system.process import child_env, pid_alive
from scorch.wire.envelope import find_running
from tests.conftest import jack_name, node_param
from tests.support.harness import ONE_ROOM, jack_server, wait_for
from tests.support.processes import terminate
from tests.support.rooms.readings import Readings
from tests.support.skips import elsewhere

SCORCH = [sys.executable, "-m", "scorch.cli.main"]

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
        elsewhere("this machine has a sound card: auto would use it")
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
    # The harness claims the name before it starts jackd (ServerClaim): another test run
    # that probed the same free name at once no longer starts a second jackd under it and
    # takes ours for its own, or ours for theirs (which went when that run stopped it).
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


#: Where the side-by-side installations keep their state: a fixed folder, as the JACK
#: server names are made from it and JACK keeps a registry of at most 8 names per user.
SIDE_BY_SIDE = Path(tempfile.gettempdir()) / jack_name("installations")


def installation(folder: Path, server: str = "") -> Config:
    """One room playing a named node, the driver left to auto, MIDI off: ``folder``'s config."""
    named = f'[audio]\njack_server = "{server}"\n' if server else ""
    text = f'state_dir = "{folder}"\n{named}[docs]\nbuild = "on-demand"\n{ONE_ROOM}'
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.toml").write_text(text, encoding="utf-8")
    return parse_config(text, folder / "config.toml")


def heard(orch: Orchestra) -> Readings[tuple[str, float | None]]:
    """The room's state and its node's ``freq`` read from scsynth every 20 ms, in a thread."""
    node_id = orch.rooms.nodes("room")["hum"].node_id
    osc = orch.doors["room"].scsynth
    assert osc is not None

    def read() -> tuple[str, float | None]:
        try:
            freq: float | None = node_param(osc, node_id, "freq")
        except OscFailure:
            freq = None
        return orch.rooms.status("room").state, freq

    return Readings(read, 0.02)


@pytest.fixture
def side_by_side(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    if sound_cards():
        elsewhere("this machine has a sound card: auto would use it")
    monkeypatch.setenv(SERVER_ENV, jack_name("nobody"))  # no user's server to join
    shutil.rmtree(SIDE_BY_SIDE, ignore_errors=True)
    yield SIDE_BY_SIDE
    shutil.rmtree(SIDE_BY_SIDE, ignore_errors=True)


class Run:
    """One installation as ``scorch run`` runs it: its own config file and state folder."""

    def __init__(self, folder: Path) -> None:
        self.config = installation(folder).source
        assert self.config is not None
        self.log = folder / "run.log"
        with self.log.open("w") as log:
            # A session of its own: the fixture kills its group if a stop hangs.
            self.proc = subprocess.Popen([*SCORCH, "run", "--config", str(self.config)],
                                         stdout=subprocess.DEVNULL, stderr=log,
                                         start_new_session=True)
        self.kids: set[int] = set()
        deadline = time.monotonic() + 60
        while (path := find_running(folder)) is None:
            assert self.proc.poll() is None, f"scorch run exited: {self.tail()}"
            assert time.monotonic() < deadline, f"no control socket: {self.tail()}"
            time.sleep(0.1)
        self.api = RemoteService(path)

    def tail(self) -> str:
        return " / ".join(self.log.read_text().splitlines()[-12:])

    def room(self) -> Reading:
        """The room now, from the ``live`` view (which keeps its level meter running)."""
        live = self.api.call("live", {}).model_dump()
        (room,) = live["rooms"]
        peak = max(room["meter"]["peak"]) if room["meter"] else None
        kids = psutil.Process(self.proc.pid).children(recursive=True)
        self.kids |= {kid.pid for kid in kids}
        jackd = [kid.pid for kid in kids if kid.name() == "jackd"]
        return Reading(room["state"], room["pids"]["scsynth"], jackd, peak)

    def audio(self) -> AudioStatus:
        status = self.api.call("status", {})
        assert isinstance(status, StatusOutput) and status.audio is not None
        return status.audio

    def stop(self) -> int:
        """SIGTERM, as systemd stops it; its exit status."""
        self.api.close()
        return terminate(self.proc)


class Reading(NamedTuple):
    """One look at an installation's room."""

    state: str
    """READY, RESTARTING..."""
    scsynth: int | None
    """scsynth's pid: a new one means the room was restarted."""
    jackd: list[int]
    """The pids of the jackd processes ``scorch run`` started (its own, one)."""
    peak: float | None
    """The loudest output's peak, dBFS, as scsynth measures it (None: no fresh meter)."""

    @property
    def sounding(self) -> bool:
        # The hum plays at amp 0.001 (-63 dBFS per output); silence reads -90.
        return self.state == "READY" and self.peak is not None and self.peak > -75


def sounding(run: Run) -> Reading:
    """A reading of ``run``'s room once it is READY and its meter hears the hum."""
    wait_for(lambda: run.room().sounding, 60, 0.1)
    return run.room()


def unlike(seen: list[Reading], first: Reading) -> list[Reading]:
    """The readings that are silent, not READY, or of other processes than ``first``."""
    assert len(seen) >= 10
    return [look for look in seen if not look.sounding or look[1:3] != first[1:3]]


@pytest.fixture
def runs(side_by_side: Path) -> Iterator[Callable[[str], Run]]:
    started: list[Run] = []

    def start(name: str) -> Run:
        started.append(Run(side_by_side / name))
        return started[-1]

    yield start
    codes = [run.stop() for run in started]
    assert codes == [0] * len(started), [run.tail() for run in started]
    left = [pid for run in started for pid in run.kids if pid_alive(pid)]
    assert not left, f"processes left after stop: {left}"


@pytest.mark.integration
def test_two_scorch_runs_with_the_auto_driver_sound_at_once_and_outlive_each_other(
        runs: Callable[[str], Run]) -> None:
    # Issue 24: an installation under systemd, a second config tried by hand, both auto.
    first = runs("first")
    before = sounding(first)
    with Readings(first.room, 0.1) as watch:
        watch.more(1)
        second = runs("second")
        during = sounding(second)
        audio = [(a.asked, a.driver, a.server) for a in (first.audio(), second.audio())]
        servers = audio[0][2], audio[1][2]
        assert [a[:2] for a in audio] == [("auto", "dummy")] * 2 and servers[0] != servers[1]
        assert len(before.jackd) == len(during.jackd) == 1 and before.jackd != during.jackd
        assert all(server_running(server) for server in servers)
        assert second.stop() == 0, second.tail()
        assert not server_running(servers[1]) and server_running(servers[0])
        watch.more(10)  # the first still sounds once the second is gone
    assert unlike(watch.seen, before) == []

    # And the other way: the one tried by hand outlives the installation.
    second = runs("second")
    after = sounding(second)
    assert second.audio().server == servers[1]
    with Readings(second.room, 0.1) as watch:
        assert first.stop() == 0, first.tail()
        assert not server_running(servers[0]) and server_running(servers[1])
        watch.more(10)
    assert unlike(watch.seen, after) == []


@pytest.mark.integration
def test_a_second_installation_under_a_running_servers_name_leaves_that_server_alone(
        side_by_side: Path, start_orchestra: Callable[[Config], Orchestra],
        library: SynthDefLibrary) -> None:
    server = jack_name("shared")
    first = start_orchestra(installation(side_by_side / "first", server))
    jackd = first.rooms.pids()["jackd"]
    second = Orchestra(installation(side_by_side / "second", server), library)
    with heard(first) as sounding:
        try:
            with pytest.raises(ScorchError, match=f"name '{server}' is taken by another scorch"):
                second.start()
        finally:
            second.stop()
        sounding.more(10)
    assert {seen for seen in sounding.seen} == {("READY", 220.0)}
    assert first.rooms.pids()["jackd"] == jackd and server_running(server)


@pytest.mark.integration
def test_a_jackd_scorch_did_not_start_is_never_started_again_under_its_name(
        side_by_side: Path, library: SynthDefLibrary) -> None:
    server = jack_name("foreign")
    options = JackdOptions(server=server)
    foreign = subprocess.Popen(options.argv(), env=child_env(options.env()),
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert wait_for_server(server, 10.0, lambda: foreign.poll() is None)
        orch = Orchestra(installation(side_by_side / "mine", server), library)
        try:
            with pytest.raises(ScorchError, match=f"a JACK server '{server}' runs already"):
                orch.start()
        finally:
            orch.stop()
        assert foreign.poll() is None and server_running(server)
    finally:
        foreign.terminate()  # SIGTERM: a SIGKILLed jackd keeps its slot in JACK's registry
        foreign.wait(timeout=10)
