"""The Room actor: owns one scsynth, the sclang attached to it, and what they should play.

Every method runs in the actor's own thread, which also starts the processes
(:class:`~actors.room.processes.Processes`), so Linux's parent-death signal is tied to a thread
that lives as long as they should. Process exits arrive from reader threads and hangs from the
watchdog, as ``tell``s. Each process has a :class:`~actors.keeper.Keeper` that waits out the
backoff in its own thread and asks this actor to start it again: scsynth's restart restores the
desired state and re-attaches sclang; sclang's never touches scsynth, so a failing sclang leaves
the room DEGRADED, never FAILED. Named nodes: ``proxy.nodes``; code to sclang: ``proxy.code``.
"""

from __future__ import annotations

import contextlib
import logging
import signal
import time

import pykka

from actors.keeper import Keeper
from actors.room.buffers import Buffers
from actors.room.code import Code
from actors.room.gain import StageControl
from actors.room.nodes import Nodes
from actors.room.patterns import Patterns
from actors.room.processes import Processes, RoomSettings
from scorch.config import RoomChanges, RoomConfig
from scorch.errors import BootError
from scorch.primitives.scsynth import OscClient, Scsynth
from scorch.primitives.system import ManagedProcess
from scorch.state import (
    SOUNDING,
    BufferState,
    Bus,
    DesiredState,
    Door,
    Kind,
    RoomView,
    State,
    Stopped,
)

log = logging.getLogger(__name__)

#: How long a keeper waits for this actor to start what is down.
RESTART_ASK = 120.0
_WARN = (Kind.CRASHED, Kind.HUNG, Kind.FAILED, Kind.DEGRADED, Kind.BOOT_FAILED,
         Kind.STARTUP_ERROR, Kind.BUFFER_LOST)
_DOWN = (State.STOPPED, State.STOPPING, State.FAILED)

__all__ = ["Room", "RoomSettings"]


class Room(pykka.ThreadingActor):
    """One named room: scsynth, sclang, desired state, restarts."""

    def __init__(self, name: str, config: RoomConfig, settings: RoomSettings,
                 view: RoomView, door: Door, bus: Bus) -> None:
        super().__init__()
        self.name = name
        self.config = config
        self.settings = settings
        self.view = view
        self.desired = DesiredState(startup_code=settings.startup_code)
        self.processes = Processes(name, config, settings, view, door, self._on_exit,
                                   self._on_node_end, self._on_server_request, self._on_recompiled)
        self.nodes = pykka.traversable(Nodes(
            name, self.desired, self.processes, view, bus, self._event,
            lambda: settings.on_changed(name), self._require_ready))
        self.buffers = pykka.traversable(Buffers(
            name, self.desired, self.processes, view, bus, self._require_ready))
        self.code = pykka.traversable(Code(
            name, self.processes, self.desired, view, self._event, self._require_ready,
            lambda how: self._crashed("sclang", how)))
        self.patterns = pykka.traversable(Patterns(
            name, self.desired, self.processes, view, bus, self._event, settings))
        self.stage = pykka.traversable(StageControl(name, self.desired, self.processes, view, bus))
        self._keepers: dict[str, Keeper] = {}
        self._hung: set[str] = set()

    # --- helpers -------------------------------------------------------------

    def _event(self, kind: Kind, message: str, **details: object) -> None:
        self.view.events.add(kind, message, **details)
        if kind == Kind.RESTORED:  # a new sclang, nodes back: the conductor, router look now
            self.settings.on_changed(self.name)
        log.log(logging.WARNING if kind in _WARN else logging.INFO,
                "[%s] %s: %s", self.name, kind, message)

    def _state(self) -> State:
        return self.view.snapshot.state

    def _set_state(self, state: State, reason: str = "") -> None:
        now = time.monotonic()
        counts = [k.intensity for k in self._keepers.values()]
        self.view.update(state=state, reason=reason,
                         restarts_in_window=sum(i.restarts_in_window(now) for i in counts),
                         restart_budget_left=min((i.budget_left(now) for i in counts),
                                                 default=self.settings.watchdog.max_restarts))

    # --- lifecycle -----------------------------------------------------------

    def on_start(self) -> None:
        """Load the config's SynthDefs and nodes into the desired state (actor thread); with a
        seed (``--resume``) its nodes and buffers replace the config's from the first boot."""
        self.nodes.bind(self.actor_ref.proxy().nodes)
        self.patterns.bind(self.actor_ref.proxy().patterns.recorded)
        wanted = self.config.synthdefs
        names = self.settings.all_synthdefs() if wanted == "all" else list(wanted)
        seed = self.settings.seed
        nodes = ({n: (s.synthdef, dict(s.params)) for n, s in seed.nodes.items()}
                 if seed is not None else
                 {n: (c.synthdef, dict(c.params)) for n, c in self.config.nodes.items()})
        for synthdef, _ in nodes.values():
            if synthdef not in names:
                names.append(synthdef)
        for name in names:
            try:
                self.desired.add_synthdef(name, self.settings.compiled_synthdef(name))
            except KeyError as err:
                self._event(Kind.BOOT_FAILED, f"SynthDef {name!r} from the config: {err}")
        for node_name, (synthdef, params) in nodes.items():
            if synthdef in self.desired.synthdefs:
                self.desired.add_node(node_name, synthdef, params)
        for buf_name, buf in (seed.buffers.items() if seed is not None else ()):
            self.desired.buffers[buf_name] = BufferState(buf_name, buf.bufnum, buf.path)
        self.nodes.publish()
        self.buffers.publish()

    def on_stop(self) -> None:
        """Stop both processes when the actor stops (actor thread)."""
        self.nodes.unbind()
        self._shutdown()

    def boot(self) -> None:
        """Start scsynth, restore the desired state and attach sclang.

        Returns once the first try is over: READY, or RESTARTING while the keeper
        retries under the restart policy (FAILED when it gives up). Callers wait
        for READY or FAILED on the room's events.
        """
        if self._state() in SOUNDING:
            return
        self._halt_keepers()
        self.processes.stop()  # RESTARTING may have left one of the two running
        self._keepers = {kind: self._keeper(kind) for kind in ("scsynth", "sclang")}
        self._set_state(State.BOOTING)
        self._event(Kind.BOOTING, f"booting on port {self.processes.port or 'auto'}")
        started = time.monotonic()
        try:
            self._start_scsynth(spawn_sclang=True)  # sclang compiles while scsynth starts
        except Exception as err:
            reason = _reason(err)
            self._event(Kind.BOOT_FAILED, reason)
            self._set_state(State.RESTARTING, reason)
            self._keepers["scsynth"].start(fault=reason)
            self._keepers["sclang"].start(fault="waiting for scsynth")
            self.view.update(sclang_state="restarting")
            return
        self._keepers["scsynth"].start()
        try:
            self.processes.start_sclang()
        except Exception as err:  # sclang's keeper tries again
            self._event(Kind.BOOT_FAILED, f"sclang: {_reason(err)}", process="sclang")
            self.view.update(sclang_state="restarting")
            self._keepers["sclang"].start(fault=_reason(err))
            scsynth = self.processes.scsynth
            trouble = scsynth.trouble() if scsynth is not None else "scsynth is gone"
            if trouble is not None:  # the fault was scsynth's: restart it, then sclang
                self._scsynth_fault(trouble)
                return
            self._ready(f"scsynth ready in {time.monotonic() - started:.2f} s; sclang not yet")
            return
        self._keepers["sclang"].start()
        self._ready(f"ready in {time.monotonic() - started:.2f} s")
        self.code.run_startup()

    def _ready(self, message: str) -> None:
        self._set_state(State.READY)
        self.view.update(booted_at=time.time())
        self._event(Kind.READY, message, port=self.processes.port)
        self.settings.on_changed(self.name)

    def quit(self) -> None:
        """Stop both processes on purpose; the room stays STOPPED until booted."""
        self._shutdown()

    def _shutdown(self) -> None:
        self._halt_keepers()
        if self._state() == State.STOPPED and not self.processes.running():
            return
        self._set_state(State.STOPPING)
        self.processes.stop()
        self._set_state(State.STOPPED)
        self._event(Kind.STOPPED, "stopped")

    def reconfigure(self, config: RoomConfig, settings: RoomSettings, room: RoomChanges) -> None:
        """Take a reloaded config: SynthDefs and nodes now, a restart if scsynth's own
        settings changed (its desired state comes back with it), the rest from next boot."""
        self.config, self.settings = config, settings
        self.processes.reconfigure(config, settings)
        if room.group:
            self.view.update(group=config.group)
        sounding = self._state() in SOUNDING
        self.nodes.reconfigure(settings, room, sounding)
        if room.restart_for and sounding:
            self._event(Kind.BOOTING, f"restarting for the reloaded config "
                        f"({', '.join(room.restart_for)} changed)")
            self._shutdown()
            self.boot()

    # --- supervision ---------------------------------------------------------

    def _keeper(self, kind: str) -> Keeper:
        """The keeper of one process: restarts it after faults, under the [watchdog] policy."""
        me = self.actor_ref.proxy()
        can_start = self.settings.jack_alive if kind == "scsynth" else (
            lambda: self.processes.scsynth is not None)  # sclang needs its scsynth
        policy = self.settings.watchdog
        return Keeper(
            f"{self.name}-{kind}", policy.backoff(), policy.intensity(),
            restart=lambda: me.restart(kind).get(timeout=RESTART_ASK),
            gave_up=lambda reason: me.give_up(kind, reason),
            retrying=lambda delay, attempt, failure: me.retrying(kind, delay, attempt, failure),
            can_start=can_start,
        )

    def _halt_keepers(self) -> None:
        keepers, self._keepers = self._keepers, {}
        for keeper in keepers.values():
            keeper.halt()

    def _fault(self, kind: str, what: str) -> None:
        keeper = self._keepers.get(kind)
        if keeper is not None:
            keeper.fault(what)

    def _on_exit(self, proc: ManagedProcess, code: int) -> None:
        """Called in the reader thread when a process exits: hand it to the actor."""
        if not proc.stopping:
            with contextlib.suppress(pykka.ActorDeadError):
                self.actor_ref.proxy().process_exited(proc.name, proc)

    def process_exited(self, kind: str, proc: ManagedProcess) -> None:
        """A process exited without being asked to: a crash, whatever its exit code."""
        running = (self.processes.scsynth, self.processes.sclang)
        if proc not in [x.process for x in running if x is not None]:
            return  # a process already replaced
        how = proc.describe_exit()
        if kind in self._hung:
            how += " after it hung"
            self._hung.discard(kind)
        self._crashed(kind, how)

    def hung(self, kind: str, pid: int, silent_for: float) -> None:
        """The watchdog heard nothing from ``kind`` (``pid``) for ``silent_for`` s: kill it."""
        running = self.processes.scsynth if kind == "scsynth" else self.processes.sclang
        if running is None or running.pid != pid or self._state() not in SOUNDING:
            return  # already replaced (e.g. sclang restarted after a timeout)
        proc = running.process
        self._hung.add(kind)
        self._event(Kind.HUNG, f"{kind} did not answer for {silent_for:.2f} s; killing it",
                    process=kind, pid=proc.pid)
        proc.signal_group(signal.SIGKILL)

    def _crashed(self, kind: str, how: str) -> None:
        tail = [line.text for line in self.view.console.tail(10, source=kind)]
        # The state first: a caller that sees the crash also sees the restart coming.
        if kind == "sclang":
            self.view.update(sclang_state="restarting", last_crash=f"{kind} {how}")
        else:
            waiting = "" if self.settings.jack_alive() else "waiting for the JACK server"
            self.view.update(last_crash=f"{kind} {how}")
            self._set_state(State.RESTARTING, waiting or f"scsynth {how}")
        self._event(Kind.CRASHED, f"{kind} {how}", process=kind, last_lines=tail)
        if kind == "sclang":
            self.processes.stop_sclang(error=f"sclang crashed ({how})")
        else:
            self.processes.stop_scsynth(lost=self.nodes.lost)  # sclang stays: it re-attaches
        self._fault(kind, f"{kind} {how}")

    def _scsynth_fault(self, trouble: str) -> None:
        """scsynth failed while sclang attached to it: a crash of scsynth (killed if stopped)."""
        scsynth = self.processes.scsynth
        if scsynth is not None and scsynth.process.alive():
            scsynth.process.signal_group(signal.SIGKILL)  # stopped: it would never answer
        self._crashed("scsynth", f"{trouble.removeprefix('scsynth ')} while sclang attached")

    def retrying(self, kind: str, delay: float, attempt: int, failure: str) -> None:
        """A keeper waits ``delay`` seconds before restart ``attempt`` (keeper's tell)."""
        if self._state() in _DOWN:
            return
        self._set_state(self._state(), self.view.snapshot.reason)
        self._event(Kind.RESTARTING, f"restarting {kind} in {delay:.2f} s (attempt {attempt})",
                    process=kind, attempt=attempt, delay=delay, failure=failure)

    def restart(self, kind: str) -> None:
        """Start ``kind`` again (asked by its keeper); raise when the start fails."""
        if self._state() in _DOWN:
            return
        started = time.monotonic()
        try:
            if kind == "scsynth":
                self._start_scsynth()
            else:
                self.processes.stop_sclang()
                self.processes.start_sclang()
        except Exception as err:
            self.view.update(last_crash=f"restart failed: {err}")
            self._event(Kind.CRASHED, f"restart of {kind} failed: {err}", process=kind)
            if kind == "sclang":
                self.processes.stop_sclang()  # a failed scsynth start cleaned up after itself
            raise
        took = time.monotonic() - started
        self.view.restarted(kind)
        if kind == "scsynth" or self._state() != State.READY:
            self._ready(f"{kind} restarted in {took:.2f} s")
        else:  # READY all along: the counts of restarts change all the same
            self._set_state(State.READY)
        restored = (f"restored {len(self.desired.synthdefs)} SynthDefs, "
                    f"{len(self.desired.buffers)} buffers and "
                    f"{len(self.desired.nodes)} nodes" if kind == "scsynth"
                    else "sclang is back; scsynth played on")
        self._event(Kind.RESTORED, restored, process=kind, nodes=list(self.desired.nodes),
                    took=took)
        if kind == "scsynth":
            self.code.resend_lang_synthdefs()
            self.patterns.restore(("Ndef",))
            self.code.run_startup()

    def _start_scsynth(self, spawn_sclang: bool = False) -> None:
        """Start scsynth, restoring onto it and re-attaching a running sclang on the way."""
        dropped, lost = self.processes.start_scsynth(self.desired, self._reattach, spawn_sclang)
        sclang_keeper = self._keepers.get("sclang")
        if sclang_keeper is not None:
            sclang_keeper.wake()  # it may have waited for an scsynth to attach to
        if dropped:
            self.nodes.dropped(dropped)
            self._event(Kind.NODE_ENDED, f"not restored: {', '.join(dropped)} (a value OSC "
                        "cannot carry); they are forgotten", nodes=dropped)
        if lost:
            self._event(Kind.BUFFER_LOST, "buffers not restored: " + "; ".join(lost)
                        + " (tried again at the next restore)", buffers=lost)
        self.buffers.publish()

    def _reattach(self, scsynth: Scsynth) -> None:
        """Between the SynthDefs and the nodes: sclang follows the new scsynth."""
        sclang = self.processes.sclang
        if sclang is None or not sclang.process.alive():
            return
        try:
            sclang.reattach(scsynth.port, scsynth.trouble)
        except BootError as err:
            if scsynth.trouble() is not None:
                raise  # scsynth's fault: its start fails and is retried; sclang waits for it
            self._crashed("sclang", f"did not re-attach ({err})")  # sclang's: restart it alone

    def give_up(self, kind: str, reason: str) -> None:
        """A keeper spent its restart budget.

        scsynth: the room is FAILED, with the reason, until booted again. sclang:
        the room is DEGRADED, its sound plays on, and a restart brings sclang back.
        """
        if self._state() in (State.STOPPED, State.STOPPING, State.FAILED):
            return
        if kind == "sclang" and self.processes.scsynth is not None:
            self._keepers.pop("sclang", None)
            self.view.update(sclang_state="failed")
            self._set_state(State.DEGRADED, f"sclang gave up: {reason}")
            self._event(Kind.DEGRADED, f"sclang gave up: {reason}; the sound plays on; "
                        "`instance restart` brings sclang back", reason=reason)
            return
        self._halt_keepers()
        self._fail(reason)

    def _fail(self, reason: str) -> None:
        self.processes.stop()
        self._set_state(State.FAILED, reason)
        self._event(Kind.FAILED, f"gave up: {reason}", reason=reason)

    def jack_failed(self, reason: str) -> None:
        """The JACK server could not be kept up: this room cannot play either."""
        if self._state() not in _DOWN:
            self._halt_keepers()
            self._fail(reason)

    def jack_restarted(self) -> None:
        """The JACK server is back: scsynth's keeper may start it again."""
        keeper = self._keepers.get("scsynth")
        if keeper is not None:
            keeper.wake()

    # --- what code asks of the server ------------------------------------------------

    def _on_server_request(self, what: str) -> None:
        """sclang's ``s`` was asked to quit, boot, reboot... (reader thread): tell the actor."""
        with contextlib.suppress(pykka.ActorDeadError):
            self.actor_ref.proxy().server_request(what)

    def server_request(self, what: str) -> None:
        """Carry out ``s.reboot`` from code (restart scsynth, restore, re-attach); note others.

        ``s.quit``, ``0.exit`` and the class library's kill of every scsynth on the
        machine were refused in sclang, which told the user why; they are recorded here.
        """
        verb = what.split(" ", 1)[0]
        self._event(Kind.SERVER_REQUEST, f"code asked: {what}", request=what)
        if verb != "reboot" or self._state() not in SOUNDING:
            return
        # No /quit: its node ends would make sclang forget the nodes the restore brings back.
        self.processes.stop_scsynth(graceful=False)
        self._set_state(State.RESTARTING, "s.reboot from code")
        try:
            self._start_scsynth()
        except Exception as err:
            self._fault("scsynth", f"s.reboot: {_reason(err)}")
            return
        self.view.restarted("scsynth")
        self._ready("scsynth restarted for s.reboot")
        self._event(Kind.RESTORED, f"restored {len(self.desired.nodes)} nodes after s.reboot",
                    process="scsynth", nodes=list(self.desired.nodes))
        self.code.resend_lang_synthdefs()
        self.patterns.restore(("Ndef",))
        self.code.run_startup()

    def _on_recompiled(self) -> None:
        """sclang recompiled its class library (reader thread): its ``s`` is gone."""
        with contextlib.suppress(pykka.ActorDeadError):
            self.actor_ref.proxy().code.recompiled()

    # --- code ----------------------------------------------------------------

    def _require_ready(self, need_sclang: bool = False) -> None:
        self.view.snapshot.require_ready(self.processes.session is not None, need_sclang)

    def silence(self, stop_routines: bool) -> Stopped:
        """Free every node (and with ``stop_routines``, run CmdPeriod in sclang first); say
        what that stopped."""
        return self.code.silence(stop_routines, self.nodes.silence)

    def _on_node_end(self, node_id: int, osc: OscClient) -> None:
        """A named node's id ended on scsynth (OSC receive thread): hand it to the actor."""
        with contextlib.suppress(pykka.ActorDeadError):
            self.actor_ref.proxy().nodes.ended(node_id, osc)


def _reason(err: Exception) -> str:
    return str(err) if isinstance(err, BootError) else f"{type(err).__name__}: {err}"

