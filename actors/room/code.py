"""Code to one room's sclang: user requests, their timeouts, and scorch's own code.

:class:`Code` belongs to the Room actor, which exposes it to proxies as a
traversable attribute (``proxy.code.submit(...)``): every method runs in the
actor's thread.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from concurrent.futures import Future

from actors.room.processes import Processes
from scorch.errors import BootError, ScorchError
from scorch.primitives.sclang import ExecuteResult, Silenced, parse_silenced
from scorch.primitives.scsynth import Cmd, Reply, tree_nodes
from scorch.state import DesiredState, Kind, RoomView, Stopped, synth_count

#: The least time a request is given, even when its caller's deadline is (nearly) past.
MIN_LEFT = 0.05

Event = Callable[..., None]


class Code:
    """Requests to sclang (actor thread)."""

    def __init__(self, name: str, processes: Processes, desired: DesiredState,
                 view: RoomView, event: Event, require_ready: Callable[..., None],
                 crashed: Callable[[str], None]) -> None:
        self.name = name
        self._processes = processes
        self._desired = desired
        self._view = view
        self._event = event
        self._require_ready = require_ready
        self._crashed = crashed
        """Tells the actor that sclang failed, and how (its keeper restarts it)."""

    def submit(self, code: str, timeout: float, check_only: bool = False,
               at: float | None = None, deadline: float | None = None,
               ) -> tuple[int, Future[ExecuteResult]]:
        """Send code to sclang; return the request number and a future for the result.

        ``at``: a Unix time scsynth hears the code's messages at (scheduled in sclang).
        ``deadline``: the caller's (``time.monotonic()``), when it gives up: the time
        left then, not ``timeout`` again, is the request's, so that an answer due just
        before it (code that returned while a routine holds sclang) reaches the caller
        even when this ask waited in the mailbox or for a restore.
        """
        self._require_ready(need_sclang=True)
        session = self._processes.session
        assert session is not None
        if deadline is not None:
            timeout = max(MIN_LEFT, min(timeout, deadline - time.monotonic()))
        return session.submit(code, timeout, check_only=check_only, at=at)

    def execute_timed_out(self, request: int, timeout: float) -> None:
        """A caller gave up on a request: sclang is stuck, so restart it (scsynth plays on)."""
        session = self._processes.session
        if session is None or not session.is_pending(request):
            return  # finished meanwhile, or sclang was already restarted
        self._event(Kind.SCLANG_RESTARTED,
                    f"code did not finish within {timeout:g} s; restarting sclang: its routines "
                    "and patterns stop (Pdef, Tdef, Ndef come back on the next bar), the synths "
                    "on scsynth play on", reason="timeout", request=request)
        self._processes.stop_sclang(error=f"sclang restarted (execute timed out after "
                                         f"{timeout:g} s)")
        if self._processes.scsynth is None:
            return
        try:
            self._processes.start_sclang()
        except BootError as err:
            self._crashed(f"restart failed: {err}")
            return
        self._view.restarted("sclang")

    def silence(self, stop_routines: bool, free_nodes: Callable[[], list[str]]) -> Stopped:
        """Free every node (``free_nodes``: the named ones, forgotten), with ``stop_routines``
        after CmdPeriod in sclang; say what was stopped."""
        synths = self._synths()
        told: Silenced | None = None
        session = self._processes.session
        if stop_routines and session is not None:
            # CmdPeriod frees the tree and sclang makes its default groups again: wait for
            # it, so a play right after finds group 1.
            _, future = session.submit("ScorchPatterns.silence", timeout=5.0, raw=True)
            with contextlib.suppress(Exception):
                told = parse_silenced(future.result(timeout=5.0).value or "")
        return Stopped(nodes=tuple(free_nodes()), synths=synths,
                       patterns=told.patterns if told else (),
                       routines=told.routines if told else None)

    def _synths(self) -> int | None:
        """The room's synths on scsynth now (None: it does not answer)."""
        osc = self._processes.osc
        if osc is None:
            return None
        try:
            reply = osc.request(Cmd.G_QUERY_TREE, 0, 0, reply=Reply.QUERY_TREE, timeout=2.0)
            return synth_count(tree_nodes(reply.args))
        except (ScorchError, ValueError):
            return None

    def run_startup(self) -> None:
        """Run the startup code (after boot and after every scsynth restart)."""
        code = self._desired.startup_code
        session = self._processes.session
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

    def resend_lang_synthdefs(self) -> None:
        """SynthDefs made in sclang live in its SynthDescLib: send them to the new scsynth
        (the library's, there too, are scorch's to restore)."""
        session = self._processes.session
        if session is not None:
            session.submit(
                "SynthDescLib.global.synthDescs.do { |d| d.def !? { |def| "
                "if(def.isKindOf(ScorchSynthDef).not) { def.send(s) } } };",
                timeout=5.0, raw=True)

    def recompiled(self) -> None:
        """Install the evaluator and attach ``s`` again after sclang recompiled its library."""
        sclang, port = self._processes.sclang, self._processes.port
        if sclang is None or port is None:
            return
        self._processes.free_leftovers()  # the new library allocates the same node ids
        try:
            sclang.install_and_attach(port)
        except (BootError, OSError) as err:
            self._crashed(f"did not come back after a recompile ({err})")
            return
        self._event(Kind.RESTORED, "sclang recompiled its class library and attached again",
                    process="sclang")
        self._processes.on_sclang_started()
