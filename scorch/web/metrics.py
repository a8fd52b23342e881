"""``/metrics`` for Prometheus at ``[metrics] listen``: read-only, behind the read-only token.

The numbers are read from the rooms' views when a scrape asks (nothing is counted on a
room's or the MIDI path's time); events are counted by kind name from each room's
event log, so the sound watch's ``SOUND_*`` kinds show without a change here.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scorch.state import CallCounts, RoomView, State
from scorch.wire import READONLY_TOKEN_FILE, Access, is_loopback, load_token, machine_names

if TYPE_CHECKING:
    from scorch.app import Orchestra

log = logging.getLogger(__name__)


class RoomCollector:
    """A prometheus_client collector over the rooms' views and the alerts' counts."""

    def __init__(self, views: Callable[[], Mapping[str, RoomView]],
                 alerts: Callable[[], Mapping[str, int]],
                 midi: Callable[[], Mapping[str, Any]] | None = None,
                 calls: CallCounts | None = None,
                 xruns: Callable[[], Mapping[str, int]] | None = None,
                 faults: Callable[[], Mapping[tuple[str, str], float]] | None = None) -> None:
        self._views = views
        self._xruns = xruns
        self._faults = faults
        """Seconds each room spent in each sound fault (the sound watch's)."""
        """The xruns so far of the JACK server each room of this host runs on."""
        self._calls = calls
        self._alerts = alerts
        self._midi = midi
        """The router's counters (one ask per scrape, answered between MIDI messages)."""
        self._lock = threading.Lock()
        self._marks: dict[str, int] = {}
        self._events: Counter[tuple[str, str]] = Counter()

    @classmethod
    def of(cls, orch: Orchestra) -> RoomCollector:
        """The collector of a running installation's figures (what ``scorch run`` serves)."""
        midi = orch.midi.stats if orch.config.midi.enabled else None
        return cls(lambda: orch.views, lambda: orch.alerts.counts, midi, orch.calls,
                   orch.xruns, orch.sound.fault_seconds)

    def collect(self) -> Iterator[Any]:
        """Yield every metric family (called by the registry on each scrape)."""
        import psutil
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        state = GaugeMetricFamily("scorch_room_state", "1 for the state each room is in",
                                  labels=["room", "state"])
        uptime = GaugeMetricFamily("scorch_room_uptime_seconds",
                                   "seconds since the room last became READY; 0 when down",
                                   labels=["room"])
        restarts = CounterMetricFamily("scorch_room_restarts", "processes scorch started "
                                       "again", labels=["room", "process"])
        events = CounterMetricFamily("scorch_room_events", "events of each kind since scorch "
                                     "started (CRASHED, HUNG: restarts' causes; SOUND_*)",
                                     labels=["room", "kind"])
        peak = GaugeMetricFamily("scorch_room_peak_dbfs", "the largest sample of the last "
                                 "report, into and out of the safety stage", labels=["room", "at"])
        reduction = GaugeMetricFamily("scorch_room_gain_reduction_db", "how far the safety "
                                      "stage turned the room down", labels=["room", "by"])
        loudness = GaugeMetricFamily("scorch_room_loudness_lufs", "the short-term loudness "
                                     "(3 s, BS.1770) out of the safety stage", labels=["room"])
        cpu = CounterMetricFamily("scorch_process_cpu_seconds", "CPU time of each room's "
                                  "processes", labels=["room", "process"])
        xruns = CounterMetricFamily("scorch_room_xruns", "xruns the JACK server the room runs "
                                    "on reported since scorch started", labels=["room"])
        for name, count in sorted((self._xruns() if self._xruns is not None else {}).items()):
            xruns.add_metric([name], count)
        faults = CounterMetricFamily("scorch_room_sound_fault_seconds", "seconds the sound "
                                     "watch heard each fault (silent, limiting, dc, howl, nan) "
                                     "since scorch started", labels=["room", "fault"])
        for (name, fault), seconds in sorted(
                (self._faults() if self._faults is not None else {}).items()):
            faults.add_metric([name, fault], seconds)
        now = time.time()
        with self._lock:
            for name, view in sorted(self._views().items()):
                snap = view.snapshot
                for each in State:
                    state.add_metric([name, each.value], 1.0 if snap.state == each else 0.0)
                up = snap.booted_at is not None and snap.state in (State.READY, State.DEGRADED)
                uptime.add_metric([name], now - snap.booted_at if up and snap.booted_at else 0.0)
                reading = view.stage_readings.last
                if reading is not None:  # a room without a stage, or not reported yet: none
                    peak.add_metric([name, "in"], _db(reading.peak_in))
                    peak.add_metric([name, "out"], _db(reading.peak_out))
                    reduction.add_metric([name, "limiter"], -_db(reading.least_gain))
                    reduction.add_metric([name, "loudness"], -reading.loudness_db)
                    loudness.add_metric([name], reading.loudness_lufs)
                restarts.add_metric([name, "scsynth"], snap.scsynth_restarts)
                restarts.add_metric([name, "sclang"], snap.sclang_restarts)
                for process, pid in (("scsynth", snap.scsynth_pid), ("sclang", snap.sclang_pid)):
                    if pid is not None:
                        try:
                            times = psutil.Process(pid).cpu_times()
                        except psutil.Error:  # it just ended: the next scrape has the new one
                            continue
                        cpu.add_metric([name, process], times.user + times.system)
                new = view.events.since(self._marks.get(name, 0))
                if new:
                    self._marks[name] = new[-1].seq
                self._events.update((name, str(e.kind)) for e in new)
            for (name, kind), count in sorted(self._events.items()):
                events.add_metric([name, kind], count)
        alerts = CounterMetricFamily("scorch_alerts", "alert messages by outcome",
                                     labels=["outcome"])
        for outcome in ("queued", "sent", "failed", "dropped"):
            alerts.add_metric([outcome], self._alerts().get(outcome, 0))
        calls = CounterMetricFamily("scorch_calls", "operations called (MCP tools, the "
                                    "CLI, the page), by name", labels=["operation"])
        errors = CounterMetricFamily("scorch_call_errors", "operations that failed, by name",
                                     labels=["operation"])
        made, failed = self._calls.read() if self._calls is not None else ({}, {})
        for operation, count in sorted(made.items()):
            calls.add_metric([operation], count)
            errors.add_metric([operation], failed.get(operation, 0))
        yield from (state, uptime, restarts, events, cpu, xruns, faults, peak, reduction,
                    loudness, alerts, calls, errors, *self._midi_families())

    def _midi_families(self) -> Iterator[Any]:
        from prometheus_client.core import CounterMetricFamily

        if self._midi is None:
            return
        try:
            stats = self._midi()
        except Exception as err:  # MIDI off or the router restarting: no MIDI figures now
            log.debug("metrics: no MIDI counters (%s)", type(err).__name__)
            return
        messages = CounterMetricFamily("scorch_midi_messages", "MIDI messages received "
                                       "from inputs and OSC datagrams sent to rooms",
                                       labels=["direction"])
        messages.add_metric(["in"], stats.get("received", 0))
        messages.add_metric(["out"], stats.get("sent", 0))
        errors = CounterMetricFamily("scorch_midi_errors", "MIDI messages that failed",
                                     labels=["where"])
        errors.add_metric(["input"], stats.get("input_errors", 0))
        errors.add_metric(["send"], stats.get("send_errors", 0))
        yield from (messages, errors)


def _db(linear: float) -> float:
    """Decibels of a linear amplitude; silence is -200 dB, not minus infinity."""
    return 20.0 * math.log10(max(linear, 1e-10))


class MetricsServer:
    """Serve ``GET /metrics`` on one address in a daemon thread; nothing else."""

    def __init__(self, collector: RoomCollector, host: str, port: int, state_dir: Path,
                 open_loopback: bool = False) -> None:
        from prometheus_client import CollectorRegistry

        registry = CollectorRegistry(auto_describe=False)
        registry.register(collector)
        opened = open_loopback and is_loopback(host)  # the config refuses it elsewhere
        token = None if opened else load_token(state_dir, READONLY_TOKEN_FILE)
        access = Access(host, port, token, machine_names())
        self._server = ThreadingHTTPServer((host, port), _handler(registry, access))
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        name="metrics", daemon=True)

    def start(self) -> None:
        """Begin answering scrapes."""
        self._thread.start()

    def stop(self) -> None:
        """Stop answering and close the socket."""
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)


def _handler(registry: Any, access: Access) -> type[BaseHTTPRequestHandler]:
    from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            refused = access.refusal(host=self.headers.get("Host"),
                                     authorization=self.headers.get("Authorization"),
                                     origin=self.headers.get("Origin"))
            if refused is not None:
                self._answer(refused[0], refused[1].encode(), "text/plain; charset=utf-8")
            elif self.path.split("?", 1)[0] != "/metrics":
                self._answer(404, b"only /metrics is here", "text/plain; charset=utf-8")
            else:
                try:
                    body = generate_latest(registry)
                except Exception:  # a bug in reading the figures: said, and scorch runs on
                    log.exception("metrics: a scrape failed")
                    self._answer(500, b"the figures could not be read (see scorch's log)",
                                 "text/plain; charset=utf-8")
                    return
                self._answer(200, body, CONTENT_TYPE_LATEST)

        def _answer(self, status: int, body: bytes, kind: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:  # stderr via logging, quiet
            log.debug("metrics: " + format, *args)

    return Handler
