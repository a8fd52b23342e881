"""One room's two processes: start scsynth and restore onto it, attach sclang, stop both.

:class:`Processes` belongs to the Room actor and runs only in its thread, so
Linux's parent-death signal ties the children to a thread that lives as long as
they should. It publishes what it starts on the room's view (pids, ports) for
readers in other threads, and opens the room's doors (:class:`~scorch.state.door.Door`)
on the new OSC client and sclang session: no one else holds either.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from actors.room.staging import keep_layout, stage_for
from midi import FIRST_NODE_ID, NODE_ID_SPAN
from scorch.config import AudioConfig, RoomConfig, SafetyConfig, WatchdogConfig
from scorch.errors import BootError, BootTimeout, OscError, OscFailure, OscTimeout, PortInUse
from scorch.notes import Capture
from scorch.primitives.sclang import EarlySclang, Sclang, SclangSession, protocol
from scorch.primitives.scsynth import (
    OscClient,
    Scsynth,
    ScsynthOptions,
    client_leftovers,
    failures_since,
    placement,
    port_in_use,
    tree_nodes,
)
from scorch.primitives.scsynth.server import commands
from scorch.primitives.system import ExitCallback, free_udp_port, udp_port_free
from scorch.state import (
    PERSISTENT_NODE_BASE,
    UNNAMED_NODE_BASE,
    DesiredState,
    Door,
    RoomSpec,
    RoomView,
    Timeline,
)

log = logging.getLogger(__name__)

#: Tries at an automatic port when another program takes it between choice and bind.
PORT_TRIES = 3

Lost = Callable[[list[tuple[int, str]], dict[int, float]], None]
"""Told what a crash lost: (node id, SynthDef) of each synth, and when those seen start began."""


@dataclass(frozen=True)
class RoomSettings:
    """What a room needs from the rest of the installation."""

    audio: AudioConfig
    watchdog: WatchdogConfig
    compiled_synthdef: Callable[[str], bytes]
    """Return a SynthDef's compiled bytes by name (raise KeyError if unknown)."""
    all_synthdefs: Callable[[], list[str]]
    synthdescs: Callable[[], Path | None] = lambda: None
    """Return the directory of the library's SynthDefs that sclang reads into its
    SynthDescLib (:mod:`scorch.primitives.synthdefs.descs`), or None."""
    jack_alive: Callable[[], bool] = lambda: True
    """False while the JACK server scorch owns is down (then restarts wait for it)."""
    on_changed: Callable[[str], None] = lambda name: None
    """Told the room's name when it is READY again or its named nodes changed on their
    own (the MIDI router looks again where they are)."""
    startup_code: str | None = None
    scsynth: str = "scsynth"
    sclang: str = "sclang"
    boot_timeout: float = 10.0
    sclang_timeout: float = 20.0
    extra_env: dict[str, str] = field(default_factory=dict)
    listen: str = "127.0.0.1"
    """The address scsynth listens on (its host's ``listen``)."""
    pattern_notes: Capture | None = None
    """Where the notes its patterns play are kept, a ring per pattern (None: not kept)."""
    grid: Callable[[], Timeline | None] = lambda: None
    """The beat grid the room's clock follows now (read from sclang's reader thread)."""
    seed: RoomSpec | None = None
    """What the room played when it was last saved (``--resume``): boot with these nodes and
    buffers instead of the config's nodes."""
    early_sclang: EarlySclang | None = None
    """The room's first sclang, started before the room booted (taken by the first boot)."""
    safety: SafetyConfig = field(default_factory=SafetyConfig)
    """The room's safety stage (``[safety]`` with its own ``[instances.NAME.safety]`` over it)."""


def restore_synthdefs(osc: OscClient, desired: DesiredState) -> None:
    """Replay the SynthDefs; wait for ``/synced``."""
    for packet in desired.synthdef_messages():
        osc.send(packet)
    osc.sync(timeout=5.0)


def load_timeout(paths: list[str]) -> float:
    """Seconds scsynth may take to read these files: a base, plus 50 MB/s at worst."""
    total = 0
    for path in paths:
        with contextlib.suppress(OSError):
            total += os.stat(path).st_size
    return 5.0 + total / (50 * 1024 * 1024)


def restore_buffers(osc: OscClient, desired: DesiredState) -> list[str]:
    """Load every buffer again under its bufnum; wait for ``/synced``, then ask ``/b_info``.

    Returns what could not be restored (a file gone or changed), one line each; those
    buffers stay in ``desired`` (the file may come back) and are tried at every restore.
    """
    buffers = list(desired.buffers.values())
    if not buffers:
        return []
    for packet in desired.buffer_messages():
        osc.send(packet)
    osc.sync(timeout=load_timeout([b.path for b in buffers]))
    reply = osc.exchange(commands.b_query(*(b.bufnum for b in buffers)), commands.Cmd.B_QUERY,
                         commands.Reply.B_INFO, timeout=2.0)
    args = [float(a) for a in reply.args]  # type: ignore[arg-type]
    info = {int(args[i]): (int(args[i + 1]), int(args[i + 2]), args[i + 3])
            for i in range(0, len(args) - 3, 4)}
    problems = []
    for buf in buffers:
        frames, channels, rate = info.get(buf.bufnum, (0, 0, 0.0))
        if not frames:
            problems.append(f"{buf.name} (bufnum {buf.bufnum}): {buf.path} could not be read")
        elif not buf.frames:  # seeded from a session: its size is learnt now
            buf.frames, buf.channels, buf.sample_rate = frames, channels, rate
        elif (frames, channels) != (buf.frames, buf.channels):
            problems.append(f"{buf.name} (bufnum {buf.bufnum}): {buf.path} changed on disk: "
                            f"{frames} frames x {channels} channels, was "
                            f"{buf.frames} x {buf.channels}")
            buf.frames, buf.channels, buf.sample_rate = frames, channels, rate
    return problems


def restore_nodes(osc: OscClient, desired: DesiredState) -> list[str]:
    """Replay named nodes with their last values; wait for ``/synced``.

    Returns the names of nodes that cannot be sent (a value OSC cannot carry):
    they are dropped from ``desired``, so no restore ever replays them again.
    """
    dropped = []
    for node in list(desired.nodes.values()):
        try:
            packet = desired.message_for(node)
        except OscError:
            desired.remove_node(node.name)
            dropped.append(node.name)
            continue
        osc.send(packet)
    osc.sync(timeout=5.0)
    osc.status(timeout=2.0)  # the cached status now counts the restored nodes
    return dropped


class Processes:
    """The scsynth and sclang of one room (the Room actor's thread only)."""

    def __init__(self, name: str, config: RoomConfig, settings: RoomSettings,
                 view: RoomView, door: Door, on_exit: ExitCallback,
                 on_node_end: Callable[[int, OscClient], None],
                 on_server_request: Callable[[str], None],
                 on_recompiled: Callable[[], None]) -> None:
        self.name = name
        self.on_pattern: Callable[[str, str], None] = lambda name, payload: None
        """Told each ``pattern*`` record sclang sends (its reader thread)."""
        self.on_sclang_started: Callable[[], None] = lambda: None
        """Called (actor thread) once a new sclang attached: patterns are restored then."""
        self._client_id = 0
        """The login slot of the last sclang: its leftovers on scsynth are freed."""
        self._on_node_end = on_node_end
        """Told each named node that ended, and on which scsynth (OSC receive thread)."""
        self._on_server_request = on_server_request
        """Told what code asked of ``s`` (``reboot lobby``...), from sclang's reader thread."""
        self._on_recompiled = on_recompiled
        self._config = config
        self._settings = settings
        self._view = view
        self._door = door
        self._on_exit = on_exit
        self.scsynth: Scsynth | None = None
        self.sclang: Sclang | None = None
        self.port: int | None = config.port
        self._lang_port: int | None = None
        self._spawned: Sclang | None = None
        """A started sclang not attached yet (:meth:`spawn_sclang`)."""
        self.stage: placement.Stage | None = None
        """The safety stage the running scsynth has (what its keeper puts back)."""

    def reconfigure(self, config: RoomConfig, settings: RoomSettings) -> None:
        """Start the next processes with these settings (the running ones are left alone)."""
        self._config, self._settings = config, settings
        if config.port is not None:
            self.port = config.port

    @property
    def settings(self) -> RoomSettings:
        """What the next processes start with."""
        return self._settings

    @property
    def outputs(self) -> int:
        """The output channels of the room's scsynth."""
        return self._config.outputs

    @property
    def osc(self) -> OscClient | None:
        """The running scsynth's OSC client."""
        return self.scsynth.osc if self.scsynth is not None else None

    @property
    def session(self) -> SclangSession | None:
        """The running sclang's session."""
        return self.sclang.session if self.sclang is not None else None

    # --- scsynth -----------------------------------------------------------------

    def _choose_port(self) -> int:
        if self._config.port is not None:
            if not udp_port_free(self._config.port):
                raise port_in_use(self.name, self._config.port)
            return self._config.port
        if self.port is not None and udp_port_free(self.port):
            return self.port  # the same port again: clients keep finding the room
        return free_udp_port()

    def start_scsynth(self, desired: DesiredState,
                      between: Callable[[Scsynth], None] = lambda scsynth: None,
                      spawn_sclang: bool = False) -> tuple[list[str], list[str]]:
        """Start scsynth and restore ``desired`` onto it; a busy auto port is picked again.

        SynthDefs first, then buffers, then ``between(scsynth)``, then the nodes (which
        may play the buffers). ``between`` is the place to re-attach a running sclang, so
        the restored nodes' ``/n_go`` reach it. Returns the nodes the restore had to drop
        (see :func:`restore_nodes`) and the buffers it could not load
        (:func:`restore_buffers`). ``spawn_sclang``: start sclang's process first
        (:meth:`spawn_sclang`); stopped again if scsynth does not start.
        """
        if spawn_sclang:
            self.spawn_sclang()
        try:
            return self._start_scsynth(desired, between)
        except BaseException:
            self.discard_spawned()
            raise

    def _start_scsynth(self, desired: DesiredState,
                       between: Callable[[Scsynth], None]) -> tuple[list[str], list[str]]:
        fixed = self._config.port is not None
        stage = stage_for(self._settings.safety, self._config.outputs, desired.gain_db,
                          self._view)
        for attempt in range(1 if fixed else PORT_TRIES):
            self.port = self._choose_port()
            options = ScsynthOptions(
                name=self.name, port=self.port, jack_server=self._settings.audio.jack_server,
                inputs=self._config.inputs, outputs=self._config.outputs,
                connect=self._config.connect, binary=self._settings.scsynth,
                extra_env=self._settings.extra_env, bind=self._settings.listen,
            )
            try:
                scsynth = Scsynth.start(options, self._view.console, self._on_exit,
                                        self._settings.boot_timeout, stage)
                break
            except PortInUse:
                if fixed or attempt == PORT_TRIES - 1:
                    raise
                self.port = None
        self.stage = stage
        keep_layout(scsynth.osc, self._view, lambda: self.stage)
        try:
            restore_synthdefs(scsynth.osc, desired)
            lost = restore_buffers(scsynth.osc, desired)
            between(scsynth)
            dropped = restore_nodes(scsynth.osc, desired)
        except OscTimeout as err:
            scsynth.stop()
            raise BootTimeout(f"room {self.name!r}: scsynth stopped answering while "
                              f"its state was restored: {err}") from err
        except BaseException:
            scsynth.stop()  # never leave a started scsynth holding the port
            raise
        osc = scsynth.osc
        osc.on_node_end = lambda node_id: self._node_ended(node_id, osc)
        osc.track_synths(_lost_if_crashed)
        self.scsynth = scsynth
        self._door.scsynth.open(scsynth.osc)
        self._view.update(port=scsynth.port, scsynth_pid=scsynth.pid)
        return dropped, lost

    def _node_ended(self, node_id: int, osc: OscClient) -> None:
        # Every synth's end is announced; only named nodes matter (MIDI voices, the
        # bulk of them, and unnamed synths end by design).
        if PERSISTENT_NODE_BASE <= node_id < UNNAMED_NODE_BASE:
            self._on_node_end(node_id, osc)

    def stop_scsynth(self, graceful: bool = True,
                     lost: Lost | None = None) -> None:
        """Stop scsynth (``/quit``, then signals; or SIGKILL at once); none running is fine.

        ``lost``: told the synths scsynth last said it ran (it crashed: they are gone), and
        when each began (of those whose start was seen).
        """
        osc = self.osc
        if lost is not None and osc is not None and osc.last_synths is not None:
            lost(osc.last_synths, osc.synth_starts)
        scsynth, self.scsynth = self.scsynth, None
        self._door.scsynth.shut()
        self._view.stage_readings.add(None)
        if scsynth is not None:
            scsynth.osc.on_notice = None  # its ends on the way out are not to be repaired
            scsynth.stop(graceful)
        self._view.update(scsynth_pid=None)

    # --- sclang ------------------------------------------------------------------

    def spawn_sclang(self) -> None:
        """Start the next sclang's process now, to attach once scsynth runs (:meth:`start_sclang`).

        Its class library compiles (the longest part of a room's boot) while scsynth
        starts and takes its state, rather than after.
        """
        self.discard_spawned()
        # The same lang port across restarts: scsynth knows the client by its
        # address, so a new one would take another of its 4 login slots each time.
        early = self._settings.early_sclang
        if early is not None and early.waiting():
            self._lang_port = early.lang_port  # taken below when it is what would start
        elif self._lang_port is None or not udp_port_free(self._lang_port):
            self._lang_port = free_udp_port()
        self._spawned = Sclang.spawn(
            name=self.name, lang_port=self._lang_port, console=self._view.console,
            on_exit=self._on_exit, timeout=self._settings.sclang_timeout,
            binary=self._settings.sclang, extra_env=self._settings.extra_env,
            on_server_request=self._on_server_request, on_recompiled=self._on_recompiled,
            synthdescs=self._synthdescs(),
            server_failures=self._server_failures, on_pattern=self.on_pattern, early=early)
        self._view.update(sclang_state="starting", lang_port=self._lang_port)

    def discard_spawned(self) -> None:
        """Stop a spawned sclang that was not attached (its scsynth did not start)."""
        spawned, self._spawned = self._spawned, None
        if spawned is not None:
            spawned.stop(f"{self.name}: its scsynth did not start")

    def start_sclang(self) -> None:
        """Start sclang (or take the one :meth:`spawn_sclang` started) and attach its
        default server to the running scsynth."""
        scsynth = self.scsynth
        if scsynth is None:
            self.discard_spawned()
            raise BootError(f"room {self.name!r}: sclang needs its scsynth, which is "
                            "not running")
        sclang, self._spawned = self._spawned, None
        if sclang is None or not sclang.process.alive():
            if sclang is not None:
                sclang.stop(f"{self.name}: replaced")
            self.spawn_sclang()
            sclang, self._spawned = self._spawned, None
        assert sclang is not None
        self._view.update(sclang_state="starting", lang_port=self._lang_port)
        self.free_leftovers()
        sclang.server_host = scsynth.host
        sclang.attach_when_ready(scsynth.port, abort=scsynth.trouble)
        self.sclang = sclang
        self._client_id = sclang.client_id
        self._door.sclang.open(sclang.session)
        self._view.update(sclang_state="ready", sclang_pid=sclang.pid)
        self.on_sclang_started()

    def free_leftovers(self) -> list[int]:
        """Free what the last sclang left on scsynth (its patterns' synths, its proxies' groups).

        A new sclang allocates node ids from the same client range again, and nothing would
        release a note the dead one started. Returns the ids freed.
        """
        osc = self.osc
        if osc is None:
            return []
        try:
            reply = osc.request(commands.Cmd.G_QUERY_TREE, 0, 0,
                                reply=commands.Reply.QUERY_TREE, timeout=2.0)
            nodes = tree_nodes(reply.args)
        except (OscError, OscTimeout, OscFailure, ValueError) as err:
            log.warning("%s: could not read the node tree to free sclang's leftovers: %s",
                        self.name, err)
            return []
        leftovers = client_leftovers(nodes, self._client_id)
        if leftovers:
            osc.send(commands.n_free(*leftovers))
            log.info("%s: freed %d nodes the last sclang left", self.name, len(leftovers))
        return leftovers

    def _server_failures(self, since: int, sent: tuple[str, ...]) -> tuple[str, ...]:
        """scsynth's failures of the commands ``sent`` after ``since``, once it performed
        them (a thread of the request's; the scsynth of the moment)."""
        osc = self.osc
        if osc is None:
            return ()
        return failures_since(osc, self._view.console, since, sent)

    def _synthdescs(self) -> str | None:
        try:
            where = self._settings.synthdescs()
        except OSError as err:  # patterns lose the library's controls, the room still plays
            log.warning("%s: the SynthDescs cannot be written: %s", self.name, err)
            return None
        return None if where is None else str(where)

    def read_descs(self, names: list[str]) -> None:
        """Have the running sclang read these library SynthDefs into its SynthDescLib again.

        Sent as scorch's own code, after anything already sent, so code sent next sees them.
        """
        session, where = self.session, self._synthdescs()
        if session is not None and where is not None:
            session.submit(protocol.read_descs(where, names), timeout=5.0, raw=True)

    def stop_sclang(self, error: str = "sclang stopped") -> None:
        """Stop sclang, failing the code in flight with ``error``."""
        sclang, self.sclang = self.sclang, None
        self._door.sclang.shut()
        if sclang is not None:
            sclang.stop(f"{self.name}: {error}")
        self._view.update(sclang_state="down", sclang_pid=None)

    def stop(self) -> None:
        """Stop sclang, then scsynth."""
        self.discard_spawned()
        self.stop_sclang()
        self.stop_scsynth()

    def running(self) -> bool:
        """True while either process runs."""
        return self.scsynth is not None or self.sclang is not None


def _lost_if_crashed(node_id: int) -> bool:
    """A synth a crash would lose for good: neither a named node nor a MIDI voice (restored
    or played again); its SynthDef is worth a node tree, so the loss can name it."""
    return not (FIRST_NODE_ID <= node_id < FIRST_NODE_ID + NODE_ID_SPAN
                or PERSISTENT_NODE_BASE <= node_id < UNNAMED_NODE_BASE)
