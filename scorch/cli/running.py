"""``scorch run``'s main loop: boot, serve the control socket, reload on SIGHUP, tell systemd.

The loop wakes for a signal, for the systemd watchdog (at half its limit) and
for the status it prints; reloads run in their own thread, so the loop keeps
telling systemd that scorch is alive while rooms restart.
"""

from __future__ import annotations

import functools
import logging
import signal
import sys
import threading
import time
from collections.abc import Mapping
from types import FrameType
from typing import TYPE_CHECKING

from scorch.app import Orchestra
from scorch.config import Config
from scorch.errors import ScorchError
from scorch.primitives.system import Notifier, pid_alive
from scorch.state import State

if TYPE_CHECKING:
    from mcp_server import HttpFront
    from scorch.api import LocalService
    from scorch.osc import OscDoor
    from scorch.primitives.sclang import EarlySclang
    from scorch.web import MetricsServer, WebServer
    from scorch.wire import ControlServer

log = logging.getLogger("scorch")

#: Seconds between two looks at the rooms for systemd's STATUS line.
STATUS_EVERY = 5.0


class Runner:
    """One ``scorch run``: the orchestra, its control socket, signals and systemd."""

    def __init__(self, config: Config, boot_timeout: float, status_every: float,
                 resume: bool = False, early: Mapping[str, EarlySclang] | None = None) -> None:
        self.config = config
        self.early = dict(early or {})
        """The rooms' first sclangs, started while scorch's modules were imported."""
        self.resume = resume
        """Start from the last autosave (``scorch run --resume``)."""
        self.boot_timeout = boot_timeout
        self.status_every = status_every
        self.orchestra = Orchestra(config)
        self.notifier = Notifier()
        self._wake = threading.Event()
        self._stop = False
        self._reload = False
        self._reloading: threading.Thread | None = None

    @functools.cached_property
    def service(self) -> LocalService:
        """The API the status table, the control socket and the page answer with."""
        from scorch.api import LocalService

        return LocalService(self.orchestra)

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        if signum == signal.SIGHUP:
            self._reload = True
        else:
            log.info("%s: stopping", signal.Signals(signum).name)
            self._stop = True
        self._wake.set()

    def run(self) -> int:
        """Run until stopped; 1 if a process of scorch's was left running, else 0."""
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, self._on_signal)
        control: ControlServer | None = None
        web: WebServer | None = None
        metrics: MetricsServer | None = None
        osc: OscDoor | None = None
        http = self._listen_http()  # a taken port says so before any room boots
        try:
            seed = self.orchestra.sessions.autosaved() if self.resume else None
            if self.resume and seed is None:
                log.warning("--resume: no autosave in %s yet; starting from the config",
                            self.orchestra.sessions.store.folder)
            # The API and the control socket's server (about a second of a core to import)
            # load while the rooms boot, whose threads mostly wait on their processes.
            threading.Thread(target=_import_service, name="import-api", daemon=True).start()
            errors = self.orchestra.start(timeout=self.boot_timeout, seed=seed,
                                          early=self.early)
            for name, error in errors.items():
                if error:
                    log.error("room %r failed to boot: %s", name, error)
            if seed is not None:
                self.orchestra.sessions.resume(seed)
            self.orchestra.sessions.start_autosave()
            self._keep_hours()
            print(self.service.call("list_instances", {}).text(), flush=True)
            from scorch.api import LocalService
            from scorch.wire import ControlServer

            control = ControlServer(LocalService(self.orchestra), self.config.state_path())
            control.start()
            web = self._serve_page()
            metrics = self._serve_metrics()
            osc = self._open_osc()
            if http is not None:
                http.start()
            self.notifier.ready(self.rooms_status())
            log.info("running %s; control socket %s; Ctrl-C stops", self.config.source,
                     control.path)
            self._loop()
        finally:
            self.notifier.stopping()
            if osc is not None:
                osc.stop()
            if web is not None:
                web.stop()
            if metrics is not None:
                metrics.stop()
            if http is not None:
                http.stop()
            if control is not None:
                control.stop()
            left = self._stop_orchestra()
            self.notifier.close()
        return 1 if left else 0

    def _keep_hours(self) -> None:
        """Start the schedule and the cues: first the state the schedule says for now.

        Their calls are checked against the operations here, once the rooms boot (the
        operations' models were imported meanwhile): a wrong call stops ``scorch run``
        with its line, as any mistake of the config does.
        """
        from scorch.api import Firing
        from scorch.api.ops import load_all

        firing = Firing(self.orchestra, load_all)
        self.orchestra.sound.arm(firing)
        if self.config.schedule or self.config.cues:
            firing.check(self.config)
        self.orchestra.hours.start(firing)

    def _serve_page(self) -> WebServer | None:
        """The technician's page, when ``[web] listen`` asks for it (imported only then)."""
        address = self.config.web.address()
        if address is None:
            return None
        from scorch.web import WebServer

        web = WebServer(self.service, self.orchestra, *address, self.config.state_path(),
                        self.config.web.meter_hz, self.config.web.open_loopback)
        web.start()
        # The tokens only to a person's terminal, never into a journal that keeps them.
        print(web.how_to_open(show_tokens=sys.stdout.isatty()), flush=True)
        return web

    def _serve_metrics(self) -> MetricsServer | None:
        """``/metrics`` for Prometheus, when ``[metrics] listen`` asks (imported only then)."""
        address = self.config.metrics.address()
        if address is None:
            return None
        from scorch.web import MetricsServer, RoomCollector

        metrics = MetricsServer(RoomCollector.of(self.orchestra), *address,
                                self.config.state_path(),
                                self.config.metrics.open_loopback)
        metrics.start()
        log.info("metrics at http://%s:%d/metrics (token: %s/http-token-readonly)", *address,
                 self.config.state_path())
        return metrics

    def _open_osc(self) -> OscDoor | None:
        """The OSC door, when the config has an ``[osc]`` table (imported only then)."""
        if self.config.osc is None:
            return None
        from scorch.osc import open_door

        try:
            door = open_door(self.service, self.orchestra, self.config.osc)
        except OSError as err:
            log.error("the OSC door could not open %s: %s", self.config.osc.listen, err)
            return None
        print(f"the OSC door: {door.address[0]}:{door.address[1]}" if door.address else "",
              flush=True)
        return door

    def _listen_http(self) -> HttpFront | None:
        """MCP over streamable HTTP at ``[mcp] http`` beside the control socket, or None."""
        where = self.config.mcp.listen()
        if where is None:
            return None
        from mcp_server import HttpFront, build_server, listed_for, listen
        from scorch.api import LocalService

        host, port = where
        listed = listed_for(self.config)  # a wrong [mcp] tools: a config error, located
        sock = listen(host, port)
        try:
            return HttpFront.open(build_server(LocalService(self.orchestra), listed=listed),
                                  sock, host, self.config.state_path(),
                                  self.config.mcp.open_loopback)
        except BaseException:
            sock.close()
            raise

    def _loop(self) -> None:
        periods = [p for p in (self.status_every, self.notifier.watchdog_every) if p]
        if self.notifier.enabled:
            periods.append(STATUS_EVERY)
        every = min(periods, default=None)
        next_print = time.monotonic() + self.status_every if self.status_every else None
        last_status = ""
        while not self._stop:
            self._wake.wait(every)
            self._wake.clear()
            if self._stop:
                return
            if self._reload:
                self._reload = False
                self._start_reload()
            if self.notifier.watchdog_every:
                problem = self.orchestra.health()
                if problem is None:
                    self.notifier.watchdog()
                else:
                    log.error("not telling systemd's watchdog that scorch is alive: %s",
                              problem)
            status = self.rooms_status()
            if status != last_status:
                self.notifier.status(status)
                last_status = status
            if next_print is not None and time.monotonic() >= next_print:
                print(self.service.call("list_instances", {}).text(), flush=True)
                next_print = time.monotonic() + self.status_every

    def _start_reload(self) -> None:
        if self._reloading is not None and self._reloading.is_alive():
            log.warning("SIGHUP: a reload is already under way; this one is skipped")
            return
        self._reloading = threading.Thread(target=self._reload_now, name="reload", daemon=True)
        self._reloading.start()

    def _reload_now(self) -> None:
        self.notifier.reloading()
        try:
            changes, failed = self.orchestra.reload()
        except ScorchError as err:
            log.error("SIGHUP: the config was not reloaded, nothing changed:\n%s", err)
        else:
            log.info("SIGHUP: reloaded: %s", "; ".join(changes.summary()))
            for name, why in failed.items():
                log.error("reload: room %r: %s", name, why)
        finally:
            self.notifier.ready(self.rooms_status())
            self._wake.set()

    def rooms_status(self) -> str:
        """``3/4 rooms READY; restarts 2; lobby FAILED`` for systemd's STATUS line."""
        rows = self.orchestra.rooms.statuses()
        ready = sum(row.state in (State.READY, State.DEGRADED) for row in rows)
        restarts = sum(row.restarts_in_window for row in rows)
        down = [f"{row.name} {row.state}" for row in rows
                if row.state not in (State.READY, State.DEGRADED)]
        return "; ".join([f"{ready}/{len(rows)} rooms READY", f"restarts {restarts}", *down])

    def _stop_orchestra(self) -> list[int]:
        started = [pid for pid in self.orchestra.rooms.pids().values() if pid]
        self.orchestra.stop()
        left = [pid for pid in started if pid_alive(pid)]
        if left:
            log.error("stopped, but these processes are still running: %s", left)
        else:
            log.info("stopped; none of its %d processes is left", len(started))
        return left


def _import_service() -> None:
    """Import what serves the API (a thread of its own, while the rooms boot)."""
    import scorch.api.local
    import scorch.wire.server  # noqa: F401
    from scorch.api.ops import load_all

    load_all()
