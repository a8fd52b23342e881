"""/metrics scraped over HTTP and parsed by prometheus_client's own parser; who may scrape."""

from __future__ import annotations

import os
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from scorch.config.installation import parse_config
from scorch.errors import ConfigError
from scorch.primitives.synthdefs.stage import StageReading
from scorch.state.calls import CallCounts
from scorch.state.events import Kind, State
from scorch.state.view import RoomView
from scorch.web import dashboard
from scorch.web.metrics import MetricsServer, RoomCollector
from scorch.wire.access import READONLY_TOKEN_FILE, load_token
from tests.support import skips

FAMILIES = {"scorch_room_state", "scorch_room_uptime_seconds", "scorch_room_restarts",
            "scorch_room_events", "scorch_process_cpu_seconds", "scorch_alerts",
            "scorch_midi_messages", "scorch_midi_errors", "scorch_room_peak_dbfs",
            "scorch_room_gain_reduction_db", "scorch_calls", "scorch_call_errors",
            "scorch_room_xruns", "scorch_room_loudness_lufs", "scorch_room_sound_fault_seconds"}


@pytest.fixture
def rooms() -> dict[str, RoomView]:
    lobby, attic = RoomView("lobby", None), RoomView("attic", None)
    lobby.update(state=State.READY, booted_at=1.0, scsynth_pid=os.getpid(), scsynth_restarts=2)
    lobby.stage_readings.add(StageReading(node=2, peak_in=2.0, peak_out=0.5, least_gain=0.25,
                                          loudness_db=-3.0, non_finite=False,
                                          loudness_lufs=-23.5))
    attic.update(state=State.FAILED)
    return {"lobby": lobby, "attic": attic}


@pytest.fixture
def served(rooms: dict[str, RoomView], tmp_path: Path) -> Iterator[tuple[str, str]]:
    counts = {"sent": 3, "failed": 1}
    midi = {"received": 7, "sent": 5, "input_errors": 0, "send_errors": 1}
    calls = CallCounts()
    for ok in (True, True, False):
        calls.add("play", ok)
    collector = RoomCollector(lambda: rooms, lambda: counts, lambda: midi, calls,
                              lambda: {"lobby": 4}, lambda: {("lobby", "silent"): 12.5})
    server = MetricsServer(collector, "127.0.0.1", 0, tmp_path)
    server.start()
    try:
        yield f"http://127.0.0.1:{server.port}", load_token(tmp_path, READONLY_TOKEN_FILE)
    finally:
        server.stop()


def scrape(url: str, token: str | None, path: str = "/metrics") -> tuple[int, str]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        with urllib.request.urlopen(urllib.request.Request(url + path, headers=headers),
                                    timeout=5) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def test_every_family_is_there_with_plausible_values(
        served: tuple[str, str], rooms: dict[str, RoomView]) -> None:
    url, token = served
    rooms["lobby"].events.add(Kind.CRASHED, "scsynth killed by SIGKILL")
    rooms["lobby"].events.add(Kind.RESTORED, "back")
    status, text = scrape(url, token)
    assert status == 200
    assert {f.name for f in text_string_to_metric_families(text)} >= FAMILIES
    got = samples(text)
    assert got[("scorch_room_state", (("room", "lobby"), ("state", "READY")))] == 1
    assert got[("scorch_room_state", (("room", "lobby"), ("state", "FAILED")))] == 0
    assert got[("scorch_room_state", (("room", "attic"), ("state", "FAILED")))] == 1
    assert got[("scorch_room_uptime_seconds", (("room", "lobby"),))] > 1e9
    assert got[("scorch_room_uptime_seconds", (("room", "attic"),))] == 0
    assert got[("scorch_room_restarts_total", (("process", "scsynth"), ("room", "lobby")))] == 2
    assert got[("scorch_room_events_total", (("kind", "CRASHED"), ("room", "lobby")))] == 1
    assert got[("scorch_process_cpu_seconds_total",
                (("process", "scsynth"), ("room", "lobby")))] > 0
    assert got[("scorch_alerts_total", (("outcome", "failed"),))] == 1
    assert got[("scorch_midi_messages_total", (("direction", "in"),))] == 7
    assert got[("scorch_calls_total", (("operation", "play"),))] == 3
    assert got[("scorch_call_errors_total", (("operation", "play"),))] == 1
    assert got[("scorch_room_peak_dbfs", (("at", "in"), ("room", "lobby")))] == \
        pytest.approx(6.02, abs=0.01)
    assert got[("scorch_room_gain_reduction_db", (("by", "limiter"), ("room", "lobby")))] == \
        pytest.approx(12.04, abs=0.01)
    assert got[("scorch_room_gain_reduction_db", (("by", "loudness"), ("room", "lobby")))] == 3
    assert ("scorch_room_peak_dbfs", (("at", "in"), ("room", "attic"))) not in got
    assert got[("scorch_midi_errors_total", (("where", "send"),))] == 1
    assert got[("scorch_room_xruns_total", (("room", "lobby"),))] == 4
    assert got[("scorch_room_loudness_lufs", (("room", "lobby"),))] == -23.5
    assert got[("scorch_room_sound_fault_seconds_total",
                (("fault", "silent"), ("room", "lobby")))] == 12.5
    assert ("scorch_room_xruns_total", (("room", "attic"),)) not in got  # another host's
    rooms["lobby"].events.add(Kind.CRASHED, "again")  # counted once more, not twice over
    again = samples(scrape(url, token)[1])
    assert again[("scorch_room_events_total", (("kind", "CRASHED"), ("room", "lobby")))] == 2


def test_a_scrape_without_the_token_or_with_a_foreign_host_is_refused(
        served: tuple[str, str]) -> None:
    url, token = served
    assert scrape(url, None)[0] == 401
    assert scrape(url, "wrong")[0] == 401
    assert scrape(url, token, "/")[0] == 404
    request = urllib.request.Request(url + "/metrics", headers={
        "Authorization": f"Bearer {token}", "Host": "attacker.example"})
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=5)
    assert refused.value.code == 421  # Misdirected: the DNS-rebinding guard


@skips.needs(os.geteuid() == 0, "root, to scrape as another local account (setpriv)")
def test_another_local_account_cannot_read_the_token_nor_scrape_without_it(
        served: tuple[str, str], tmp_path: Path) -> None:
    url, _ = served
    tmp_path.chmod(0o755)  # the folder open: only the token's own 0600 keeps it
    script = ("import sys, urllib.request, urllib.error\n"
              "try:\n    open(sys.argv[2]).read(); print('read')\n"
              "except PermissionError:\n    print('denied')\n"
              "try:\n    urllib.request.urlopen(sys.argv[1], timeout=5); print('200')\n"
              "except urllib.error.HTTPError as err:\n    print(err.code)\n")
    out = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                          sys.executable, "-I", "-c", script, url + "/metrics",
                          str(tmp_path / READONLY_TOKEN_FILE)],
                         capture_output=True, text=True, timeout=30, check=True)
    assert out.stdout.split() == ["denied", "401"]


def test_metrics_listen_is_validated_and_open_loopback_is_for_loopback_only() -> None:
    assert parse_config("[instances.a]\n").metrics.address() is None
    config = parse_config('[instances.a]\n[metrics]\nlisten = "127.0.0.1:9464"\n')
    assert config.metrics.address() == ("127.0.0.1", 9464)
    with pytest.raises(ConfigError, match=r"metrics\.listen"):
        parse_config('[instances.a]\n[metrics]\nlisten = "nowhere:port"\n')
    with pytest.raises(ConfigError, match="open_loopback"):
        parse_config('[instances.a]\n[metrics]\nlisten = "0.0.0.0:9464"\nopen_loopback = true\n')


def test_every_dashboard_panel_queries_a_served_family_and_the_file_is_current(
        served: tuple[str, str]) -> None:
    url, token = served
    families = {f.name for f in text_string_to_metric_families(scrape(url, token)[1])}
    assert dashboard.metric_names() and dashboard.metric_names() <= families
    assert dashboard.DASHBOARD.read_text() == dashboard.render(), \
        "docs/grafana-dashboard.json is stale: python -m scorch.web.dashboard"


def test_midi_off_leaves_its_families_out_and_the_rest_in(
        rooms: dict[str, RoomView]) -> None:
    from prometheus_client import CollectorRegistry, generate_latest

    from scorch.errors import MidiUnavailable

    def off() -> dict[str, int]:
        raise MidiUnavailable("MIDI is off")

    registry = CollectorRegistry(auto_describe=False)
    registry.register(RoomCollector(lambda: rooms, dict, off))
    names = {f.name for f in text_string_to_metric_families(generate_latest(registry).decode())}
    assert "scorch_room_state" in names and "scorch_midi_messages" not in names
