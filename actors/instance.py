"""The Instance actor: owns one scsynth, the sclang attached to it, and what they should play.

Every method runs in the actor's own thread, which also starts the processes
(:class:`~actors.processes.Processes`), so Linux's parent-death signal is tied
to a thread that lives as long as they should. Process exits arrive from reader
threads and hangs from the watchdog, as ``tell``s. Restarts are the keeper's
(:class:`~actors.keeper.Keeper`): it waits out the backoff in its own thread and
asks this actor to start what is down, so stopping never waits out a backoff.
"""

from __future__ import annotations

import contextlib
import logging
import signal
import threading
import time
from concurrent.futures import Future
from dataclasses import replace

import pykka

from actors.keeper import Keeper
from actors.processes import InstanceSettings, Processes
from scorch.config import InstanceConfig
from scorch.errors import (
    BootError,
    InstanceFailed,
    InstanceNotReady,
    InvalidRequest,
    NodeNotFound,
    OscFailure,
    OscTimeout,
)
from scorch.primitives import commands
from scorch.primitives.osc_client import OscClient
from scorch.primitives.process import ManagedProcess
from scorch.primitives.sclang_protocol import ExecuteResult
from scorch.state.desired import DesiredState, NodeState, new_node_message
from scorch.state.events import Kind, State
from scorch.state.view import InstanceView

log = logging.getLogger(__name__)

#: How long the keeper waits for this actor to start what is down.
RESTART_ASK = 120.0
#: A named node's end counts once its scsynth still answers this much later.
NODE_END_GRACE = 0.3
_WARN = (Kind.CRASHED, Kind.HUNG, Kind.FAILED, Kind.BOOT_FAILED, Kind.STARTUP_ERROR)

__all__ = ["Instance", "InstanceProxy", "InstanceSettings"]


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
        self.intensity = settings.watchdog.intensity()
        self.backoff = settings.watchdog.backoff()
        self.processes = Processes(name, config, settings, view, self._on_exit,
                                   self._on_node_end)
        self._keeper: Keeper | None = None
        self._hung: set[str] = set()
        self._down: set[str] = set()
        """Processes that crashed and wait for the keeper to restart them."""

    # --- helpers -------------------------------------------------------------

    def _event(self, kind: Kind, message: str, **details: object) -> None:
        self.view.events.add(kind, message, **details)
        log.log(logging.WARNING if kind in _WARN else logging.INFO,
                "[%s] %s: %s", self.name, kind, message)

    def _state(self) -> State:
        return self.view.snapshot.state

    def _set_state(self, state: State, reason: str = "") -> None:
        now = time.monotonic()
        self.view.update(state=state, reason=reason,
                         restarts_in_window=self.intensity.restarts_in_window(now),
                         restart_budget_left=self.intensity.budget_left(now))

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
        """Start scsynth, restore the desired state and attach sclang.

        Returns once the first try is over: READY, or RESTARTING while the keeper
        retries under the restart policy (FAILED when it gives up). Callers wait
        for READY or FAILED on the instance's events.
        """
        if self._state() in (State.READY, State.BOOTING):
            return
        self._halt_keeper()
        self.processes.stop()  # RESTARTING may have left one of the two running
        self.intensity.reset()
        self._set_state(State.BOOTING)
        self._event(Kind.BOOTING, f"booting on port {self.processes.port or 'auto'}")
        started = time.monotonic()
        try:
            self._start_missing()
        except Exception as err:
            reason = str(err) if isinstance(err, BootError) else f"{type(err).__name__}: {err}"
            self.processes.stop()
            self._event(Kind.BOOT_FAILED, reason)
            self._set_state(State.RESTARTING, reason)
            self._keep(fault=reason)
            return
        self._ready(f"ready in {time.monotonic() - started:.2f} s")
        self._run_startup()
        self._keep(fault=None)

    def _ready(self, message: str) -> None:
        self._set_state(State.READY)
        self.view.update(booted_at=time.time())
        self._event(Kind.READY, message, port=self.processes.port)
        self.settings.on_changed(self.name)

    def quit(self) -> None:
        """Stop both processes on purpose; the instance stays STOPPED until booted."""
        self._shutdown()

    def _shutdown(self) -> None:
        self._halt_keeper()
        if self._state() == State.STOPPED and not self.processes.running():
            return
        self._set_state(State.STOPPING)
        self.processes.stop()
        self._down.clear()
        self._set_state(State.STOPPED)
        self._event(Kind.STOPPED, "stopped")

    # --- supervision ---------------------------------------------------------

    def _keep(self, fault: str | None) -> None:
        """Hand the instance to a new keeper (after a boot, with the first fault if any)."""
        me = self.actor_ref.proxy()
        self._keeper = Keeper(
            self.name, self.backoff, self.intensity,
            restart=lambda: me.restart_missing().get(timeout=RESTART_ASK),
            gave_up=lambda reason: me.give_up(reason),
            retrying=lambda delay, attempt, failure: me.retrying(delay, attempt, failure),
            can_start=self.settings.jack_alive,
        )
        self._keeper.start(fault)

    def _halt_keeper(self) -> None:
        keeper, self._keeper = self._keeper, None
        if keeper is not None:
            keeper.halt()

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
            self.processes.stop_sclang(error=f"sclang crashed ({how})")
            self.view.update(sclang_state="restarting")
        else:
            # sclang stays: it re-attaches to the new scsynth (restart_missing).
            self.processes.stop_scsynth()
            waiting = "" if self.settings.jack_alive() else "waiting for the JACK server"
            self._set_state(State.RESTARTING, waiting or f"scsynth {how}")
        self._down.add(kind)
        if self._keeper is not None:
            self._keeper.fault(f"{kind} {how}")

    def retrying(self, delay: float, attempt: int, failure: str) -> None:
        """The keeper waits ``delay`` seconds before restart ``attempt`` (keeper's tell)."""
        if self._state() in (State.STOPPED, State.STOPPING, State.FAILED):
            return
        what = "scsynth" if "scsynth" in self._down or not self.processes.scsynth else "sclang"
        self._set_state(self._state(), self.view.snapshot.reason)
        self._event(Kind.RESTARTING, f"restarting {what} in {delay:.2f} s (attempt {attempt})",
                    process=what, attempt=attempt, delay=delay, failure=failure)

    def restart_missing(self) -> None:
        """Start what is down: scsynth (then restore and re-attach sclang), or sclang only.

        Asked by the keeper; raises when a start fails (the keeper tries again).
        """
        if self._state() in (State.STOPPED, State.STOPPING, State.FAILED):
            return
        started = time.monotonic()
        restarted_scsynth = self.processes.scsynth is None
        try:
            self._start_missing()
        except Exception as err:
            failed = "scsynth" if self.processes.scsynth is None else "sclang"
            if failed == "sclang":
                self.processes.stop_sclang()  # a failed scsynth start cleaned up after itself
            self.view.update(last_crash=f"restart failed: {err}")
            self._event(Kind.CRASHED, f"restart of {failed} failed: {err}", process=failed)
            raise
        self._down.clear()
        took = time.monotonic() - started
        what = "scsynth" if restarted_scsynth else "sclang"
        self._ready(f"{what} restarted in {took:.2f} s")
        if restarted_scsynth:
            restored = (f"restored {len(self.desired.synthdefs)} SynthDefs and "
                        f"{len(self.desired.nodes)} nodes")
        else:
            restored = "sclang is back; scsynth played on"
        self._event(Kind.RESTORED, restored, process=what, nodes=list(self.desired.nodes),
                    took=took)
        if restarted_scsynth:
            self._resend_lang_synthdefs()
            self._run_startup()

    def _start_missing(self) -> None:
        """Start scsynth if it is down (restoring onto it), then sclang if it is down."""
        processes = self.processes
        if processes.scsynth is None:
            old_port = processes.port
            dropped = processes.start_scsynth(self.desired)
            if dropped:
                self._publish_nodes()
                self._event(Kind.NODE_ENDED, f"not restored: {', '.join(dropped)} (a value "
                            "OSC cannot carry); they are forgotten", nodes=dropped)
            if processes.sclang is not None:
                processes.reattach(moved=processes.port != old_port)
        if processes.sclang is None or not processes.sclang.process.alive():
            processes.stop_sclang()
            processes.start_sclang()

    def _confirm_node_end(self, node_id: int, osc: OscClient) -> None:
        with contextlib.suppress(pykka.ActorDeadError):
            self.actor_ref.proxy().node_ended(node_id, osc, True)

    def give_up(self, reason: str) -> None:
        """The keeper spent the restart budget: FAILED, with the reason, until booted again."""
        if self._state() in (State.STOPPED, State.STOPPING):
            return
        self._keeper = None
        self._fail(reason)

    def _fail(self, reason: str) -> None:
        self.processes.stop()
        self._down.clear()
        self._set_state(State.FAILED, reason)
        self._event(Kind.FAILED, f"gave up: {reason}", reason=reason)

    def jack_failed(self, reason: str) -> None:
        """The JACK server could not be kept up: this instance cannot play either."""
        if self._state() not in (State.STOPPED, State.STOPPING, State.FAILED):
            self._halt_keeper()
            self._fail(reason)

    def jack_restarted(self) -> None:
        """The JACK server is back: the keeper may start scsynth again."""
        if self._keeper is not None:
            self._keeper.wake()

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
        if need_sclang and self.processes.session is None:
            raise InstanceNotReady(f"instance {self.name!r}: sclang is "
                                   f"{snap.sclang_state}; the sound goes on, try again shortly")

    def submit(self, code: str, timeout: float) -> tuple[int, Future[ExecuteResult]]:
        """Send code to sclang; return the request id and a future for the result."""
        self._require_ready(need_sclang=True)
        session = self.processes.session
        assert session is not None
        return session.submit(code, timeout)

    def execute_timed_out(self, request_id: int, timeout: float) -> None:
        """A caller gave up on a request: sclang is stuck, so restart it (scsynth plays on)."""
        session = self.processes.session
        if session is None or not session.is_pending(request_id):
            return  # finished meanwhile, or sclang was already restarted
        self._event(Kind.SCLANG_RESTARTED,
                    f"code did not finish within {timeout:g} s; restarting sclang "
                    "(the sound on scsynth goes on)", reason="timeout", request=request_id)
        self.processes.stop_sclang(error=f"sclang restarted (execute timed out after "
                                         f"{timeout:g} s)")
        if self.processes.scsynth is None:
            return
        try:
            self.processes.start_sclang()
        except BootError as err:
            self._crashed("sclang", f"restart failed: {err}")

    def _run_startup(self) -> None:
        """Run the startup code (after boot and after every scsynth restart)."""
        code = self.desired.startup_code
        session = self.processes.session
        if not code or session is None:
            return
        _, future = session.submit(code)
        future.add_done_callback(self._startup_done)

    def _startup_done(self, future: Future[ExecuteResult]) -> None:
        try:
            result = future.result()
        except Exception as err:
            self._event(Kind.STARTUP_ERROR, f"startup code did not finish: {err}")
            return
        if not result.ok and result.error is not None:
            self._event(Kind.STARTUP_ERROR, result.error.describe())

    def _resend_lang_synthdefs(self) -> None:
        """SynthDefs added from sclang code live in its SynthDescLib: send them again."""
        session = self.processes.session
        if session is not None:
            session.submit(
                "SynthDescLib.global.synthDescs.do { |d| d.def !? { |def| def.send(s) } };",
                timeout=5.0,
            )

    # --- nodes ---------------------------------------------------------------

    def play(self, synthdef: str, params: dict[str, float], name: str | None) -> dict[str, object]:
        """Start a synth; with ``name`` it is a persistent node restored after restarts.

        All or nothing: the node is recorded only once scsynth said it started
        (``/n_go``); a replaced node is freed only then.
        """
        self._require_ready()
        if synthdef not in self.desired.synthdefs:
            self.load_synthdef(synthdef)
        if name is None:
            node = NodeState("", synthdef, self.desired.unnamed_id(), dict(params))
        else:
            node = self.desired.new_node(name, synthdef, params)
        self._start_node(node)
        if name is None:
            return {"synthdef": synthdef, "node": None, "node_id": node.node_id,
                    "params": dict(params)}
        old = self.desired.keep(node)
        osc = self.processes.osc
        if old is not None and osc is not None:
            osc.send(commands.n_free(old.node_id))
        self._publish_nodes()
        return {"synthdef": synthdef, "node": name, "node_id": node.node_id,
                "params": dict(node.params)}

    def _start_node(self, node: NodeState) -> None:
        """``/s_new`` and wait for its ``/n_go``; a SynthDef the server lost is sent again."""
        osc = self.processes.osc
        assert osc is not None
        packet = new_node_message(node)  # raises before anything is sent or recorded
        for attempt in (1, 2):
            try:
                osc.exchange(packet, commands.Cmd.S_NEW, commands.Reply.N_GO, timeout=2.0,
                             match=lambda m: bool(m.args) and m.args[0] == node.node_id)
                return
            except OscFailure as err:
                if attempt == 1 and "SynthDef not found" in str(err) and \
                        node.synthdef in self.desired.synthdefs:
                    # Freed on the server (/d_free in code): send the library's again.
                    self._event(Kind.RESTORED, f"SynthDef {node.synthdef!r} was gone from "
                                "scsynth; sent it again", synthdef=node.synthdef)
                    osc.send(commands.d_recv(self.desired.synthdefs[node.synthdef]))
                    osc.sync(timeout=5.0)
                    continue
                raise InvalidRequest(f"instance {self.name!r}: scsynth did not start "
                                     f"{node.synthdef!r}: {err}") from err

    def set_params(self, node: str, params: dict[str, float]) -> dict[str, float]:
        """Set a named node's parameters, now if it is up, and in the desired state always."""
        current = self.desired.nodes.get(node)
        if current is None:
            raise NodeNotFound(f"instance {self.name!r} has no node {node!r}; named nodes: "
                               f"{', '.join(self.desired.nodes) or '(none)'}")
        packet = commands.n_set(current.node_id, params)  # raises before anything changes
        state = self.desired.set_params(node, params)
        osc = self.processes.osc
        if osc is not None and self._state() == State.READY:
            osc.send(packet)
        self._publish_nodes()
        return dict(state.params)

    def _on_node_end(self, node_id: int, osc: OscClient) -> None:
        """A named node's id ended on scsynth (OSC receive thread): hand it to the actor."""
        with contextlib.suppress(pykka.ActorDeadError):
            self.actor_ref.proxy().node_ended(node_id, osc)

    def node_ended(self, node_id: int, osc: OscClient, confirmed: bool = False) -> None:
        """A named node ended without scorch asking: forget it, so no restore replays it.

        A scsynth going down (jackd died, a quit) ends every node too; so the end
        counts only if, a moment later, the same scsynth still runs and answers.
        """
        node = self.desired.by_id(node_id)
        if node is None or osc is not self.processes.osc:
            return  # released, replaced or silenced by scorch, or that scsynth is gone
        if not confirmed:
            timer = threading.Timer(NODE_END_GRACE, self._confirm_node_end, (node_id, osc))
            timer.daemon = True
            timer.start()
            return
        scsynth = self.processes.scsynth
        try:
            alive = scsynth is not None and scsynth.process.poll_alive() and bool(
                osc.status(timeout=NODE_END_GRACE))
        except OscTimeout:
            alive = False
        if not alive:
            return  # the server is going down: its crash handling restores the node
        self.desired.remove_node(node.name)
        self._publish_nodes()
        self.settings.on_changed(self.name)
        self._event(Kind.NODE_ENDED, f"node {node.name!r} ({node.synthdef}, id {node_id}) "
                    "ended outside scorch (freed by code, s.freeAll, or its own envelope); "
                    "it is no longer restored", node=node.name, node_id=node_id)

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
        osc = self.processes.osc
        if osc is not None:
            # gate 0 lets sustained sounds fade; /n_free later would cut the tail.
            osc.send(commands.release(state.node_id))
        self._publish_nodes()

    def load_synthdef(self, name: str) -> None:
        """Load a library SynthDef now and on every later boot."""
        data = self.settings.compiled_synthdef(name)
        self.desired.add_synthdef(name, data)
        osc = self.processes.osc
        if osc is not None:
            osc.send(commands.d_recv(data))
            osc.sync(timeout=5.0)

    def silence(self, stop_routines: bool) -> list[str]:
        """Free every node (and with ``stop_routines``, run CmdPeriod in sclang)."""
        self._require_ready()
        forgotten = [n.name for n in self.desired.clear_nodes()]
        self._publish_nodes()
        session = self.processes.session
        if stop_routines and session is not None:
            session.submit("CmdPeriod.run;", timeout=5.0)
        osc = self.processes.osc
        assert osc is not None
        osc.send(commands.clear_sched())
        osc.send(commands.g_deep_free(commands.ROOT_NODE))
        osc.sync(timeout=2.0)
        return forgotten


InstanceProxy = pykka.ActorProxy[Instance]
