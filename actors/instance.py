"""The Instance actor: owns one scsynth, the sclang attached to it, and what they should play.

Every method runs in the actor's own thread, which also starts the processes
(so Linux's parent-death signal is tied to a thread that lives as long as they
should). Process exits arrive from reader threads as ``tell``s; restarts wait on
``threading.Timer``s that ``tell`` back, so stopping never waits out a backoff.
"""

from __future__ import annotations

import contextlib
import logging
import signal
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field, replace

import pykka

from scorch.config import AudioConfig, InstanceConfig, WatchdogConfig
from scorch.errors import (
    BootError,
    BootTimeout,
    InstanceFailed,
    InstanceNotReady,
    NodeNotFound,
    OscTimeout,
    PortInUse,
)
from scorch.primitives import commands
from scorch.primitives.netports import free_udp_port, udp_port_free
from scorch.primitives.osc_client import OscClient
from scorch.primitives.process import ManagedProcess
from scorch.primitives.sclang import Sclang
from scorch.primitives.sclang_protocol import ExecuteResult
from scorch.primitives.sclang_session import SclangSession
from scorch.primitives.scsynth import Scsynth, ScsynthOptions, port_in_use
from scorch.state.desired import DesiredState, NodeState, new_node_message
from scorch.state.events import Kind, State
from scorch.state.view import InstanceView

log = logging.getLogger(__name__)



@dataclass(frozen=True)
class InstanceSettings:
    """What an instance needs from the rest of the installation."""

    audio: AudioConfig
    watchdog: WatchdogConfig
    compiled_synthdef: Callable[[str], bytes]
    """Return a SynthDef's compiled bytes by name (raise KeyError if unknown)."""
    all_synthdefs: Callable[[], list[str]]
    jack_alive: Callable[[], bool] = lambda: True
    """False while the JACK server scorch owns is down (then restarts wait for it)."""
    on_ready: Callable[[str], None] = lambda name: None
    """Told the instance's name each time it is READY (the MIDI router re-reads targets)."""
    startup_code: str | None = None
    scsynth: str = "scsynth"
    sclang: str = "sclang"
    boot_timeout: float = 10.0
    sclang_timeout: float = 20.0
    extra_env: dict[str, str] = field(default_factory=dict)


class Instance(pykka.ThreadingActor):
    """One named SuperCollider instance: scsynth, sclang, desired state, restarts."""

    def __init__(self, name: str, config: InstanceConfig, settings: InstanceSettings,
                 view: InstanceView) -> None:
        super().__init__()
        self.name = name
        self.config = config
        self.settings = settings
        self.view = view
        self.desired = DesiredState(startup_code=settings.startup_code)
        self.policy = settings.watchdog.restart_policy()
        self._scsynth: Scsynth | None = None
        self._sclang: Sclang | None = None
        self._port: int | None = config.port
        self._lang_port: int | None = None
        self._timer: threading.Timer | None = None
        self._hung: set[str] = set()
        self._self_proxy: InstanceProxy | None = None

    # --- helpers -------------------------------------------------------------

    @property
    def _me(self) -> InstanceProxy:
        if self._self_proxy is None:
            self._self_proxy = self.actor_ref.proxy()
        return self._self_proxy

    def _event(self, kind: Kind, message: str, **details: object) -> None:
        self.view.events.add(kind, message, **details)
        level = logging.WARNING if kind in (Kind.CRASHED, Kind.HUNG, Kind.FAILED,
                                             Kind.BOOT_FAILED, Kind.STARTUP_ERROR) else logging.INFO
        log.log(level, "[%s] %s: %s", self.name, kind, message)

    def _state(self) -> State:
        return self.view.snapshot.state

    def _set_state(self, state: State, reason: str = "") -> None:
        now = time.monotonic()
        self.view.update(
            state=state, reason=reason,
            restarts_in_window=self.policy.restarts_in_window(now),
            restart_budget_left=self.policy.budget_left(now),
        )

    def _publish_nodes(self) -> None:
        """Show the named nodes and their values to readers (a copy: they read it unlocked)."""
        self.view.nodes = {name: replace(node, params=dict(node.params))
                           for name, node in self.desired.nodes.items()}
        self.view.update(nodes=tuple(self.desired.nodes))

    # --- lifecycle -----------------------------------------------------------

    def on_start(self) -> None:
        """Load the config's SynthDefs and nodes into the desired state (actor thread)."""
        wanted = self.config.synthdefs
        names = self.settings.all_synthdefs() if wanted == "all" else list(wanted)
        for name in names:
            try:
                self.desired.add_synthdef(name, self.settings.compiled_synthdef(name))
            except KeyError as err:
                self._event(Kind.BOOT_FAILED, f"SynthDef {name!r} from the config: {err}")
        for node_name, node in self.config.nodes.items():
            if node.synthdef not in self.desired.synthdefs:
                try:
                    self.desired.add_synthdef(node.synthdef,
                                              self.settings.compiled_synthdef(node.synthdef))
                except KeyError as err:
                    self._event(Kind.BOOT_FAILED, f"node {node_name!r}: {err}")
                    continue
            self.desired.add_node(node_name, node.synthdef, dict(node.params))
        self._publish_nodes()

    def on_stop(self) -> None:
        """Stop both processes when the actor stops (actor thread)."""
        self._shutdown()

    def boot(self) -> None:
        """Start scsynth, restore the desired state, attach sclang; raise BootError on failure."""
        if self._state() in (State.READY, State.BOOTING):
            return
        self._cancel_timer()
        self._shutdown_quietly()  # RESTARTING may have left one of the two running
        self.policy.reset()
        self._set_state(State.BOOTING)
        self._event(Kind.BOOTING, f"booting on port {self._port or 'auto'}")
        started = time.monotonic()
        try:
            self._start_scsynth()
            self._start_sclang()
        except Exception as err:
            self._shutdown_quietly()
            reason = str(err) if isinstance(err, BootError) else f"{type(err).__name__}: {err}"
            self._event(Kind.BOOT_FAILED, reason)
            self._set_state(State.FAILED, reason)
            if isinstance(err, BootError):
                raise
            raise BootError(f"instance {self.name!r} could not boot: {reason}") from err
        self._ready(f"ready in {time.monotonic() - started:.2f} s")
        self._run_startup()

    def _ready(self, message: str) -> None:
        self.policy.ready(time.monotonic())
        self._set_state(State.READY)
        self.view.update(booted_at=time.time())
        self._event(Kind.READY, message, port=self._port)
        self.settings.on_ready(self.name)

    def quit(self) -> None:
        """Stop both processes on purpose; the instance stays STOPPED until booted."""
        self._shutdown()

    def _shutdown(self) -> None:
        self._cancel_timer()
        if self._state() in (State.STOPPED,) and not self._scsynth and not self._sclang:
            return
        self._set_state(State.STOPPING)
        self._shutdown_quietly()
        self._set_state(State.STOPPED)
        self._event(Kind.STOPPED, "stopped")

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    # --- processes -----------------------------------------------------------

    @property
    def _osc(self) -> OscClient | None:
        return self._scsynth.osc if self._scsynth is not None else None

    @property
    def _session(self) -> SclangSession | None:
        return self._sclang.session if self._sclang is not None else None

    def _choose_port(self) -> int:
        if self.config.port is not None:
            if not udp_port_free(self.config.port):
                raise port_in_use(self.name, self.config.port)
            return self.config.port
        if self._port is not None and udp_port_free(self._port):
            return self._port  # the same port again: clients keep finding the room
        return free_udp_port()

    def _start_scsynth(self) -> None:
        """Start scsynth and restore the desired state; a busy auto port is picked again."""
        fixed = self.config.port is not None
        for attempt in range(1 if fixed else 3):
            self._port = self._choose_port()
            options = ScsynthOptions(
                name=self.name, port=self._port, jack_server=self.settings.audio.jack_server,
                inputs=self.config.inputs, outputs=self.config.outputs,
                connect=self.config.connect, binary=self.settings.scsynth,
                extra_env=self.settings.extra_env,
            )
            try:
                scsynth = Scsynth.start(options, self.view.console, self._on_exit,
                                        self.settings.boot_timeout)
                break
            except PortInUse:
                if fixed or attempt == 2:
                    raise
                self._port = None
        try:
            self._restore(scsynth.osc)
        except OscTimeout as err:
            scsynth.stop()
            raise BootTimeout(f"instance {self.name!r}: scsynth stopped answering while "
                              f"its state was restored: {err}") from err
        self._scsynth = scsynth
        self.view.osc = scsynth.osc
        self.view.update(port=scsynth.port, scsynth_pid=scsynth.pid)

    def _restore(self, osc: OscClient) -> None:
        """Replay SynthDefs, then named nodes with their last values; wait for /synced."""
        for packet in self.desired.synthdef_messages():
            osc.send(packet)
        osc.sync(timeout=5.0)
        for packet in self.desired.node_messages():
            osc.send(packet)
        osc.sync(timeout=5.0)
        osc.status(timeout=2.0)  # the cached status now counts the restored nodes

    def _stop_scsynth(self) -> None:
        scsynth, self._scsynth = self._scsynth, None
        self.view.osc = None
        if scsynth is not None:
            scsynth.stop()
        self.view.update(scsynth_pid=None)

    def _start_sclang(self) -> None:
        # The same lang port across restarts: scsynth knows the client by its
        # address, so a new one would take another of its 4 login slots each time.
        if self._lang_port is None or not udp_port_free(self._lang_port):
            self._lang_port = free_udp_port()
        assert self._port is not None
        self.view.update(sclang_state="starting", lang_port=self._lang_port)
        sclang = Sclang.start(
            name=self.name, lang_port=self._lang_port, server_port=self._port,
            console=self.view.console, on_exit=self._on_exit,
            timeout=self.settings.sclang_timeout, binary=self.settings.sclang,
            extra_env=self.settings.extra_env,
        )
        self._sclang = sclang
        self.view.sclang = sclang.session
        self.view.update(sclang_state="ready", sclang_pid=sclang.pid)

    def _stop_sclang(self, error: str = "sclang stopped") -> None:
        sclang, self._sclang = self._sclang, None
        self.view.sclang = None
        if sclang is not None:
            sclang.stop(f"{self.name}: {error}")
        self.view.update(sclang_state="down", sclang_pid=None)

    def _run_startup(self) -> None:
        """Run the startup code (after boot and after every scsynth restart)."""
        code = self.desired.startup_code
        if not code or self._session is None:
            return
        _, future = self._session.submit(code)
        future.add_done_callback(self._startup_done)

    def _startup_done(self, future: Future[ExecuteResult]) -> None:
        try:
            result = future.result()
        except Exception as err:
            self._event(Kind.STARTUP_ERROR, f"startup code did not finish: {err}")
            return
        if not result.ok and result.error is not None:
            self._event(Kind.STARTUP_ERROR, result.error.describe())

    # --- code ----------------------------------------------------------------

    def _require_ready(self, need_sclang: bool = False) -> None:
        snap = self.view.snapshot
        if snap.state == State.FAILED:
            raise InstanceFailed(f"instance {self.name!r} is FAILED: {snap.reason}; "
                                 "boot it again once the cause is fixed")
        if snap.state != State.READY:
            raise InstanceNotReady(
                f"instance {self.name!r} is {snap.state} (since {time.ctime(snap.since)})"
                + ("; it comes back by itself, try again in a moment"
                   if snap.state in (State.RESTARTING, State.BOOTING) else "")
            )
        if need_sclang and self._session is None:
            raise InstanceNotReady(f"instance {self.name!r}: sclang is "
                                   f"{snap.sclang_state}; the sound goes on, try again shortly")

    def submit(self, code: str, timeout: float) -> tuple[int, Future[ExecuteResult]]:
        """Send code to sclang; return the request id and a future for the result."""
        self._require_ready(need_sclang=True)
        assert self._session is not None
        return self._session.submit(code, timeout)

    def execute_timed_out(self, request_id: int, timeout: float) -> None:
        """A caller gave up on a request: sclang is stuck, so restart it (scsynth plays on)."""
        session = self._session
        if session is None or not session.is_pending(request_id):
            return  # finished meanwhile, or sclang was already restarted
        self._event(Kind.SCLANG_RESTARTED,
                    f"code did not finish within {timeout:g} s; restarting sclang "
                    "(the sound on scsynth goes on)", reason="timeout", request=request_id)
        self._restart_sclang(reason=f"execute timed out after {timeout:g} s")

    def _restart_sclang(self, reason: str) -> None:
        self._stop_sclang(error=f"sclang restarted ({reason})")
        if self._scsynth is None:
            return
        try:
            self._start_sclang()
        except BootError as err:
            self._crashed("sclang", f"restart failed: {err}")

    # --- nodes ---------------------------------------------------------------

    def play(self, synthdef: str, params: dict[str, float], name: str | None) -> dict[str, object]:
        """Start a synth; with ``name`` it is a persistent node restored after restarts."""
        self._require_ready()
        assert self._osc is not None
        if synthdef not in self.desired.synthdefs:
            self.load_synthdef(synthdef)
        if name is None:
            # Unnamed: fire and forget, like a note; scsynth picks the node id.
            self._osc.send(new_node_message(NodeState("", synthdef, -1, dict(params))))
            return {"synthdef": synthdef, "node": None, "params": dict(params)}
        old = self.desired.nodes.get(name)
        if old is not None:
            self._osc.send(commands.n_free(old.node_id))
        node = self.desired.add_node(name, synthdef, params)
        self._osc.send(new_node_message(node))
        self._osc.sync(timeout=2.0)
        self._publish_nodes()
        return {"synthdef": synthdef, "node": name, "node_id": node.node_id,
                "params": dict(node.params)}

    def set_params(self, node: str, params: dict[str, float]) -> dict[str, float]:
        """Set a named node's parameters, now if it is up, and in the desired state always."""
        if node not in self.desired.nodes:
            raise NodeNotFound(f"instance {self.name!r} has no node {node!r}; named nodes: "
                               f"{', '.join(self.desired.nodes) or '(none)'}")
        state = self.desired.set_params(node, params)
        if self._osc is not None and self._state() == State.READY:
            self._osc.send(commands.n_set(state.node_id, params))
        self._publish_nodes()
        return dict(state.params)

    def remember_params(self, node: str, params: dict[str, float]) -> None:
        """Keep values someone else already sent (the MIDI router) for later restores."""
        if node in self.desired.nodes:
            self.desired.set_params(node, params)
            self._publish_nodes()

    def release(self, node: str) -> None:
        """Release a named node (gate 0, then free after its release) and forget it."""
        state = self.desired.remove_node(node)
        if state is None:
            raise NodeNotFound(f"instance {self.name!r} has no node {node!r}")
        if self._osc is not None:
            # gate 0 lets sustained sounds fade; /n_free later would cut the tail.
            self._osc.send(commands.release(state.node_id))
        self._publish_nodes()

    def load_synthdef(self, name: str) -> None:
        """Load a library SynthDef now and on every later boot."""
        data = self.settings.compiled_synthdef(name)
        self.desired.add_synthdef(name, data)
        if self._osc is not None:
            self._osc.send(commands.d_recv(data))
            self._osc.sync(timeout=5.0)

    def silence(self, stop_routines: bool) -> list[str]:
        """Free every node (and with ``stop_routines``, run CmdPeriod in sclang)."""
        self._require_ready()
        forgotten = [n.name for n in self.desired.clear_nodes()]
        self._publish_nodes()
        if stop_routines and self._session is not None:
            self._session.submit("CmdPeriod.run;", timeout=5.0)
        assert self._osc is not None
        self._osc.send(commands.clear_sched())
        self._osc.send(commands.g_deep_free(commands.ROOT_NODE))
        self._osc.sync(timeout=2.0)
        return forgotten

    # --- supervision ---------------------------------------------------------

    def _on_exit(self, proc: ManagedProcess, code: int) -> None:
        """Called in the reader thread when a process exits: hand it to the actor."""
        if not proc.stopping:
            with contextlib.suppress(pykka.ActorDeadError):
                self._me.process_exited(proc.name, proc)

    def process_exited(self, kind: str, proc: ManagedProcess) -> None:
        """A process exited without being asked to: a crash, whatever its exit code."""
        current = [x.process for x in (self._scsynth, self._sclang) if x is not None]
        if proc not in current:
            return  # a process already replaced
        how = proc.describe_exit()
        if kind in self._hung:
            how += " after it hung"
            self._hung.discard(kind)
        self._crashed(kind, how)

    def hung(self, kind: str, pid: int, silent_for: float) -> None:
        """The watchdog heard nothing from ``kind`` (``pid``) for ``silent_for`` s: kill it."""
        running = self._scsynth if kind == "scsynth" else self._sclang
        if running is None or running.pid != pid or self._state() != State.READY:
            return  # already replaced (e.g. sclang restarted after a timeout)
        proc = running.process
        self._hung.add(kind)
        self._event(Kind.HUNG, f"{kind} did not answer for {silent_for:.2f} s; killing it",
                    process=kind, pid=proc.pid)
        proc.signal_group(signal.SIGKILL)

    def _crashed(self, kind: str, how: str) -> None:
        tail = [line.text for line in self.view.console.tail(10, source=kind)]
        self.view.update(last_crash=f"{kind} {how}")
        self._event(Kind.CRASHED, f"{kind} {how}", process=kind, last_lines=tail)
        if kind == "sclang":
            self._stop_sclang(error=f"sclang crashed ({how})")
        else:
            # sclang stays: it re-attaches to the new scsynth (restart_process).
            self._stop_scsynth()
        self._schedule_restart(kind)

    def _schedule_restart(self, kind: str) -> None:
        if kind == "scsynth" and not self.settings.jack_alive():
            # Not this instance's fault: wait for the supervisor's jack_restarted
            # (or jack_failed, when the JACK server cannot be kept up).
            self._set_state(State.RESTARTING, "waiting for the JACK server to come back")
            self._event(Kind.RESTARTING, "the JACK server died; waiting for it to come back",
                        process="jackd")
            return
        decision = self.policy.crashed(time.monotonic())
        if not decision.restart:
            self._fail(decision.reason)
            return
        if kind == "scsynth":
            self._set_state(State.RESTARTING, f"scsynth restart {decision.attempt}")
        else:
            self.view.update(sclang_state="restarting")
        self._event(Kind.RESTARTING, f"restarting {kind} in {decision.delay:.2f} s "
                    f"(attempt {decision.attempt})", process=kind, attempt=decision.attempt,
                    delay=decision.delay)
        self._cancel_timer()
        self._timer = threading.Timer(decision.delay, self._restart_due, (kind,))
        self._timer.daemon = True
        self._timer.start()

    def _restart_due(self, kind: str) -> None:
        with contextlib.suppress(pykka.ActorDeadError):
            self._me.restart_process(kind)

    def restart_process(self, kind: str) -> None:
        """Restart after a backoff: scsynth (then restore and re-attach) or sclang only."""
        self._timer = None
        if self._state() in (State.STOPPED, State.STOPPING, State.FAILED):
            return
        started = time.monotonic()
        old_port = self._port
        try:
            if kind == "scsynth" or self._scsynth is None:
                self._start_scsynth()
            if self._sclang is None or not self._sclang.process.alive():
                self._stop_sclang()
                self._start_sclang()
            elif kind == "scsynth":
                self._reattach_sclang(moved=self._port != old_port)
        except Exception as err:  # told, not asked: nobody would read it from the future
            failed = "scsynth" if self._scsynth is None else "sclang"
            if failed == "sclang":
                self._stop_sclang()  # a failed scsynth start cleaned up after itself
            self.view.update(last_crash=f"restart failed: {err}")
            self._event(Kind.CRASHED, f"restart of {failed} failed: {err}", process=failed)
            self._schedule_restart(failed)
            return
        took = time.monotonic() - started
        self._ready(f"{kind} restarted in {took:.2f} s")
        if kind == "scsynth":
            restored = (f"restored {len(self.desired.synthdefs)} SynthDefs and "
                        f"{len(self.desired.nodes)} nodes")
        else:
            restored = "sclang is back; scsynth played on"
        self._event(Kind.RESTORED, restored, process=kind, nodes=list(self.desired.nodes),
                    took=took)
        if kind == "scsynth":
            self._resend_lang_synthdefs()
            self._run_startup()

    def _reattach_sclang(self, moved: bool) -> None:
        """Point the running sclang at the new scsynth (its Server object reconnects)."""
        if self._sclang is not None and moved and self._port is not None:
            self._sclang.repoint(self._port)

    def _resend_lang_synthdefs(self) -> None:
        """SynthDefs added from sclang code live in its SynthDescLib: send them again."""
        if self._session is not None:
            self._session.submit(
                "SynthDescLib.global.synthDescs.do { |d| d.def !? { |def| def.send(s) } };",
                timeout=5.0,
            )

    def _shutdown_quietly(self) -> None:
        self._stop_sclang()
        self._stop_scsynth()

    def _fail(self, reason: str) -> None:
        self._shutdown_quietly()
        self._set_state(State.FAILED, reason)
        self._event(Kind.FAILED, f"gave up: {reason}", reason=reason)

    def jack_failed(self, reason: str) -> None:
        """The JACK server could not be kept up: this instance cannot play either."""
        if self._state() not in (State.STOPPED, State.STOPPING, State.FAILED):
            self._cancel_timer()
            self._fail(reason)

    def jack_restarted(self) -> None:
        """The JACK server is back: restart scsynth if it is down because of it."""
        if self._state() == State.RESTARTING and self._scsynth is None and self._timer is None:
            self._schedule_restart("scsynth")


InstanceProxy = pykka.ActorProxy[Instance]
