"""The Jack actor: owns the private jackd that scorch starts for headless or ALSA audio."""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable

import pykka

from scorch.config import Config
from scorch.errors import BootError, BootTimeout
from scorch.primitives.system import (
    ORDINARY_PERIOD,
    Console,
    JackdOptions,
    ManagedProcess,
    ServerClaim,
    auto_period,
    realtime_granted,
    wait_for_server,
)

log = logging.getLogger(__name__)

#: What jackd prints when its name is registered to a server (live, or killed and unreaped).
STALE = "server already active"
STALE_RETRY = 0.25
#: Ports a headless jackd allows at least, and beyond twice what the rooms and the
#: driver register (MIDI ports, a client someone connects by hand). Every JACK client,
#: scorch itself included, maps and mlocks the server's segment: 38 MB plus 33 KB per
#: port allowed, so each 32 ports of spare are a megabyte of scorch's RSS.
PORT_MAX_MIN = 128
PORT_SPARE = 64
#: Seconds jackd's output gathers between two reads while it floods (xruns on a loaded
#: machine: hundreds of lines a second); its exit is then seen at most this late.
OUTPUT_BATCH = 0.25
_BANNER = ("jackdmp ", "Copyright ", "jackdmp comes with", "This is free software",
           "under certain conditions")


def jackd_options(config: Config) -> JackdOptions:
    """The private jackd the audio config asks for, with enough ports for every room."""
    audio = config.audio
    playback = sum(inst.outputs for inst in config.instances.values())
    capture = sum(inst.inputs for inst in config.instances.values())
    for inst in config.instances.values():
        for port in inst.connect:
            match = re.fullmatch(r"system:playback_(\d+)", port)
            if match:
                playback = max(playback, int(match.group(1)))
    # A headless server holds scorch's own ports only: the rooms', the driver's and the
    # MIDI router's, with room to spare. A sound card's keeps jackd's default: other
    # programs may join it.
    rooms = sum(inst.inputs + inst.outputs for inst in config.instances.values())
    port_max = (max(PORT_MAX_MIN, 2 * (rooms + capture + playback) + PORT_SPARE)
                if audio.driver != "alsa" else None)
    return JackdOptions(server=audio.jack_server, driver=audio.driver,
                        sample_rate=audio.sample_rate,
                        period=audio.period if audio.period is not None else auto_period(),
                        device=audio.device,
                        capture=max(2, capture), playback=max(2, playback),
                        realtime=audio.realtime, port_max=port_max)


class Jack(pykka.ThreadingActor):
    """A private jackd; its exit is reported to ``on_crash`` (the supervisor)."""

    def __init__(self, config: Config, console: Console,
                 on_crash: Callable[[str], None]) -> None:
        super().__init__()
        self.config = config
        self.audio = config.audio
        self.console = console
        self._on_crash = on_crash
        self._proc: ManagedProcess | None = None
        self._serving: ManagedProcess | None = None
        """The jackd that accepted clients: only its exit is a crash (a failed start raises)."""
        self._claim = ServerClaim(config.audio.jack_server)
        """The server's name, held from the first start until the actor stops (restarts too)."""

    def start_server(self, timeout: float = 10.0) -> int:
        """Start jackd and wait until clients can connect; return its pid.

        A jackd of the same name that was killed (SIGKILL, or its parent's death) stays
        registered as "already active" until its process is reaped, which a container's
        init may do seconds later: while no server answers, the start is tried again.
        """
        started = time.monotonic()
        deadline = started + timeout
        options = jackd_options(self.config)
        if not realtime_granted():
            if options.realtime:
                log.warning("[audio] realtime = true, but this machine refuses scorch realtime "
                            "scheduling: jackd runs without it (`scorch doctor` says how to "
                            "allow it)")
            if self.audio.period is None:
                log.info("JACK at %d frames a period: this machine refuses realtime "
                         "scheduling, and ordinary threads keep up with that", options.period)
            elif options.period < ORDINARY_PERIOD:
                log.warning("[audio] period = %d without realtime scheduling: under load JACK "
                            "clients miss cycles and JACK drops their MIDI (leave period unset "
                            "for %d here)", options.period, ORDINARY_PERIOD)
        if not self._claim.take():
            raise BootError(f"the JACK server name {self.audio.jack_server!r} is taken by "
                            "another scorch on this machine: give this installation its own "
                            "[audio] jack_server")
        if wait_for_server(self.audio.jack_server, 0.01, lambda: True):
            # A second jackd of a live server's name fails, and may take the first one's
            # clients down with it: another installation's server is never touched.
            raise BootError(f"a JACK server {self.audio.jack_server!r} runs already, not "
                            "started by this scorch (another installation?): give this one "
                            "its own [audio] jack_server, or driver = \"jack\" to join it")
        while True:
            proc = ManagedProcess("jackd", options.argv(), self.console, env=options.env(),
                                  on_exit=self._exited, batch=OUTPUT_BATCH)
            proc.start()
            self._proc = proc
            if wait_for_server(self.audio.jack_server, deadline - time.monotonic(), proc.alive):
                self._serving = proc
                if not proc.alive():  # it died between answering and here: nobody was told
                    self._serving = None
                    raise BootError(f"jackd (server {self.audio.jack_server!r}) exited right "
                                    f"after it started ({proc.describe_exit()})")
                break
            lines = [line.text for line in self.console.tail(20, source="jackd")]
            # jackd's banner says nothing; its reason ("Too many servers already active")
            # comes first, as it writes stderr before stdout's banner is flushed.
            tail = "\n".join([line for line in lines if not line.startswith(_BANNER)][-8:])
            proc.stop(grace=0.5)
            self._proc = None
            answers = wait_for_server(self.audio.jack_server, 0.01, lambda: True)
            stale = any(STALE in line for line in lines) and not answers
            if stale and time.monotonic() + STALE_RETRY < deadline:
                log.info("jackd %r: a killed server of that name is still registered; "
                         "trying again", self.audio.jack_server)
                time.sleep(STALE_RETRY)
                continue
            if not proc.alive() and proc.returncode is not None:
                raise BootError(f"jackd (server {self.audio.jack_server!r}) could not start "
                                f"({proc.describe_exit()}):\n{tail}")
            raise BootTimeout(f"jackd (server {self.audio.jack_server!r}) did not accept "
                              f"clients within {timeout:g} s:\n{tail}")
        log.info("jackd %r ready in %.2f s (pid %s)", self.audio.jack_server,
                 time.monotonic() - started, proc.pid)
        assert proc.pid is not None
        return proc.pid

    def _exited(self, proc: ManagedProcess, code: int) -> None:
        if not proc.stopping and proc is self._serving:
            self._on_crash(proc.describe_exit())

    def pid(self) -> int | None:
        """The running jackd's pid."""
        return self._proc.pid if self._proc and self._proc.alive() else None

    def stop_server(self) -> None:
        """Stop jackd: SIGTERM, wait, SIGKILL on its group."""
        if self._proc is not None:
            self._proc.stop(grace=1.0)
            self._proc = None

    def on_stop(self) -> None:
        """Stop jackd with the actor and let its name go (actor thread)."""
        self.stop_server()
        self._claim.release()

    def alive_check(self) -> Callable[[], bool]:
        """A thread-safe check that this jackd still runs (for the rooms)."""
        def alive() -> bool:
            proc = self._proc
            return proc is not None and proc.poll_alive()
        return alive


JackProxy = pykka.ActorProxy[Jack]
