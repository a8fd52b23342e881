"""The rooms: each room's status, life, code, named nodes and console.

Reads go to the rooms' thread-safe views, so they never wait behind a busy
actor; commands go to the actors through :meth:`Tree.ask <scorch.app.tree.Tree.ask>`.
"""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import replace
from typing import TypeVar

from scorch.app.models import NodeInfo, RoomStatus, StageInfo
from scorch.app.tree import ASK, RESTORE_WAIT, Tree
from scorch.errors import (
    InvalidRequest,
    NodeNotFound,
    RoomFailed,
    RoomNotReady,
    ScorchError,
)
from scorch.primitives.input import compile_pattern
from scorch.primitives.sclang import ExecuteResult, SclangError
from scorch.primitives.synthdefs import SynthDefInfo
from scorch.primitives.system import ConsoleLine
from scorch.state import CodeRun, Event, RoomView, StageState, State, Stopped

T = TypeVar("T")


#: Seconds an execute waits, after its result, for the room's actor to take what sclang
#: printed before it (``Rooms._caught_up``).
CATCH_UP = 2.0
#: What an execute timeout stops, and what goes on.
TIMEOUT_STOPS = ("every routine and pattern stops with the interpreter (Pdef, Pbindef, Tdef "
                 "and Ndef are defined again and resume on the next bar; a plain Routine or "
                 "Pbind.play does not come back); the synths already on scsynth play on")

#: sclang code whose value is the bytes of SynthDef NAME as its SynthDescLib holds them (hex).
_SENT_BYTES = ("SynthDescLib.global.at(\\NAME) !? { |d| d.def !? { |sd| sd.asBytes.collect { "
               "|b| (b & 255).asHexString(2) }.join } } ? \"none\"")


class Rooms:
    """Every room by name, group or ``"*"``: read, boot, run code, play (any thread)."""

    def __init__(self, tree: Tree) -> None:
        self._tree = tree

    # --- names ---------------------------------------------------------------

    def names(self) -> list[str]:
        """Room names in config order."""
        return self._tree.names()

    def resolve(self, selector: str) -> list[str]:
        """A room name, a group name or ``"*"`` to room names."""
        return self._tree.resolve(selector)

    def view(self, name: str) -> RoomView:
        """The view of one room; RoomNotFound lists the known names."""
        return self._tree.view(name)

    # --- reading -------------------------------------------------------------

    def status(self, name: str, live: bool = True) -> RoomStatus:
        """State, /status.reply fields, pids, uptime, restart budget and nodes of one room."""
        view = self.view(name)
        snap = view.snapshot
        nodes = view.nodes
        door = self._tree.door(name).scsynth
        server = door.last_status
        if live and door.is_open:
            with contextlib.suppress(ScorchError):  # a timeout, or the scsynth just went
                server = door.status(timeout=0.5)
        return RoomStatus.of(snap, nodes, server, self._tree.config.host,
                                 StageInfo.of(view.stage, view.stage_readings.last),
                                 view.sound if view.stage_readings.last is not None else None)

    def statuses(self, live: bool = False) -> list[RoomStatus]:
        """Every room's status; ``live`` asks each scsynth instead of the cache."""
        return [self.status(name, live=live) for name in self.names()]

    def nodes(self, name: str) -> dict[str, NodeInfo]:
        """Named persistent nodes of a room with their SynthDef, id and last values.

        Read from the room's view, so it answers while the actor is busy booting.
        """
        return {node.name: NodeInfo.of(node) for node in self.view(name).nodes.values()}

    def node(self, name: str, node: str, what: str) -> NodeInfo:
        """One named node, once its room is up; NodeNotFound names the room's others.

        A booting room publishes its nodes as it restores them: ``what`` (the call)
        waits for it as a call without a timeout of its own does.
        """
        self._ready(name, what)
        nodes = self.nodes(name)
        if node not in nodes:
            raise NodeNotFound(f"room {name!r} has no node {node!r}; named nodes: "
                               f"{', '.join(nodes) or '(none)'}", name=node, known=nodes)
        return nodes[node]

    def sounding(self, selector: str) -> dict[str, list[str]]:
        """What each room of ``selector`` plays that silencing it would stop (a dry run's
        answer): its named nodes and the patterns that play."""
        out = {}
        for name in self.resolve(selector):
            view = self.view(name)
            out[name] = ([f"node {n.name} ({n.synthdef})" for n in view.nodes.values()]
                         + [f"{p.kind} {p.name}" for p in view.patterns.values() if p.playing])
        return out

    def pids(self) -> dict[str, int | None]:
        """Process ids by role: ``jackd`` and ``NAME.scsynth``, ``NAME.sclang``."""
        out: dict[str, int | None] = {}
        supervisor = self._tree.supervisor
        if supervisor is not None:
            out["jackd"] = supervisor.jack_pid().get(timeout=ASK)
        for name, view in self._tree.views.items():
            out[f"{name}.scsynth"] = view.snapshot.scsynth_pid
            out[f"{name}.sclang"] = view.snapshot.sclang_pid
        return out

    def console(self, name: str, lines: int = 50, since: int | None = None,
                clear: bool = False) -> list[ConsoleLine]:
        """The last ``lines`` console lines (or those after mark ``since``)."""
        console = self.view(name).console
        out = console.since(since) if since is not None else console.tail(lines)
        if clear:
            console.clear()
        return out

    def wait_for(self, name: str, pattern: str, timeout: float,
                 since: int | None = None) -> ConsoleLine | None:
        """Wait until the console shows a line matching ``pattern``."""
        return self.view(name).console.wait_for(compile_pattern(pattern), timeout, since=since)

    def events(self, selector: str = "*", since: int = 0) -> list[Event]:
        """Lifecycle events of the rooms ``selector`` names, oldest first."""
        names = self.resolve(selector)
        events = [e for name in names for e in self._tree.views[name].events.since(since)]
        return sorted(events, key=lambda e: e.seq)

    # --- life ----------------------------------------------------------------

    def boot(self, name: str, timeout: float = 60.0) -> None:
        """Boot a room that is STOPPED or FAILED; wait until READY or given up."""
        view = self.view(name)
        deadline = time.monotonic() + timeout
        self._tree.await_ready([name], deadline, "instance boot")
        mark = view.events.mark()
        self._tree.ask(name, lambda p: p.boot(), timeout=max(0.0, deadline - time.monotonic()))
        if view.snapshot.state == State.READY:
            return
        error = view.wait_settled(mark, deadline - time.monotonic())
        if error is not None:
            raise RoomFailed(f"room {name!r} did not boot: {error}")

    def quit(self, name: str) -> None:
        """Stop a room's processes; it stays STOPPED."""
        self._tree.ask(name, lambda p: p.quit(), timeout=30.0)

    def restart(self, name: str, timeout: float = 60.0) -> None:
        """Quit and boot again."""
        self.quit(name)
        self.boot(name, timeout)

    def _ready(self, name: str, what: str) -> None:
        """Wait for a booting or restoring room as long as a call without a timeout may."""
        self._tree.await_ready([name], time.monotonic() + RESTORE_WAIT, what)

    # --- code ----------------------------------------------------------------

    def _when_settled(self, name: str, deadline: float, ask: Callable[[], T]) -> T:
        """``ask()`` once the room is settled; again if it started restoring meanwhile."""
        while True:
            self._tree.await_ready([name], deadline, "execute", need_sclang=True)
            try:
                return ask()
            except RoomFailed:
                raise
            except RoomNotReady:
                snap = self._tree.views[name].snapshot
                restoring = snap.state in (State.BOOTING, State.RESTARTING) or (
                    snap.sclang_state in ("starting", "restarting"))
                if not restoring or time.monotonic() >= deadline:
                    raise

    def execute(self, selector: str, code: str, timeout: float = 10.0,
                check_only: bool = False, at: float | None = None) -> list[ExecuteResult]:
        """Run code on every room ``selector`` names; one result each, in order.

        ``check_only``: compile the code without running it (a syntax check).
        ``at``: compile now, and run it so that scsynth hears it at this Unix time.
        """
        names = self.resolve(selector)
        deadline = time.monotonic() + timeout
        submitted: list[tuple[str, tuple[int, Future[ExecuteResult]] | ScorchError]] = []
        for name in names:
            def submit(name: str = name) -> tuple[int, Future[ExecuteResult]]:
                return self._tree.ask(name, lambda p: p.code.submit(
                    code, timeout, check_only, at, deadline))
            try:
                submitted.append((name, self._when_settled(name, deadline, submit)))
            except ScorchError as err:
                submitted.append((name, err))
        results = []
        for name, item in submitted:
            if isinstance(item, ScorchError):
                results.append(_failed(name, "unavailable", str(item)))
                continue
            request_id, future = item
            try:
                result = future.result(timeout=max(0.0, deadline - time.monotonic()))
                results.append(replace(result, answered=time.time()))
                self._caught_up(name)
            except FutureTimeout:
                self._tree.room(name).code.execute_timed_out(request_id, timeout)
                results.append(_failed(
                    name, "timeout",
                    f"code did not finish within {timeout:g} s; sclang is being restarted: "
                    f"{TIMEOUT_STOPS}", elapsed=timeout))
            except ScorchError as err:
                results.append(_failed(name, "interrupted", str(err)))
        return results

    def _caught_up(self, name: str) -> None:
        """Wait until room ``name``'s actor took what sclang printed before the result.

        The result reaches the caller from sclang's reader thread; the records printed
        before it (a pattern defined, one gone) reach the room through its actor's
        mailbox. While one is on its way, one more call through that mailbox comes after
        it: once it answers, the room shows what the code did, for the very next call to
        read. A room whose actor is busy longer than :data:`CATCH_UP` gets the result
        anyway. With none on its way (most code), nothing is asked.
        """
        view = self.view(name)
        if view.records_taken >= view.records_handed:
            return
        with contextlib.suppress(ScorchError):
            self._tree.ask(name, lambda p: p.patterns.publish(), timeout=CATCH_UP)

    def execute_one(self, name: str, code: str, timeout: float = 10.0) -> ExecuteResult:
        """Run code on one room."""
        self.view(name)
        return self.execute(name, code, timeout)[0]

    def ran(self, name: str, run: CodeRun) -> None:
        """Note a code request the history kept, so that a crash names the code that made
        the synths it lost; a room nobody has is no error."""
        view = self._tree.views.get(name)
        if view is not None:
            view.code_runs.ran(run)

    # --- sound ---------------------------------------------------------------

    def stop_sound(self, selector: str) -> dict[str, Stopped]:
        """CmdPeriod: stop routines and free every node; named nodes are forgotten. Say what
        each room stopped."""
        return self._silence(selector, stop_routines=True)

    def free_all(self, selector: str) -> dict[str, list[str]]:
        """Free every node on the server (routines in sclang go on); the named nodes forgotten."""
        return {name: list(stopped.nodes)
                for name, stopped in self._silence(selector, stop_routines=False).items()}

    def _silence(self, selector: str, stop_routines: bool) -> dict[str, Stopped]:
        stopped = {}
        for name in self.resolve(selector):
            self._ready(name, "stop")
            stopped[name] = self._tree.ask(name, lambda p: p.silence(stop_routines))
        self._tree.settled()
        return stopped

    def play(self, name: str, synthdef: str, params: dict[str, float] | None = None,
             node: str | None = None, at: float | None = None, target: str | None = None,
             add_action: str = "tail", by: str = "play") -> dict[str, object]:
        """Start a synth of the library or of a SynthDef the room's code added; with
        ``node`` it is named and restored after restarts (with the SynthDef's bytes).

        ``at``: scsynth starts it at this Unix time (a timestamped bundle). ``target``:
        a named node to start it ``before`` or ``after`` (``add_action``), else at the
        ``head`` or ``tail`` of the default group.
        """
        library = self._tree.library
        self._ready(name, "play")
        sent = synthdef not in library
        compiled = self._sent_synthdef(name, synthdef) if sent else library.compiled(synthdef)
        # Every control starts at its default unless given: its start announces them all.
        defaults = {} if sent else {p.name: p.default for p in library.info(synthdef).params}
        played = self._tree.ask(name, lambda p: p.nodes.play(
            synthdef, dict(params or {}), node, compiled, at, target, add_action, sent,
            defaults, by))
        self._tree.settled()
        return played

    def _sent_synthdef(self, name: str, synthdef: str) -> bytes:
        """The bytes of a SynthDef the room's sclang knows (``SynthDef(...).add``), from its
        SynthDescLib; InvalidRequest when it knows none of that name."""
        result = self.execute_one(name, _SENT_BYTES.replace("NAME", synthdef), timeout=10.0)
        text = (result.value or "").strip().strip('"')
        if not result.ok or not re.fullmatch(r"(?:[0-9A-F]{2})+", text):
            raise InvalidRequest(
                f"room {name!r} knows no SynthDef {synthdef!r}: it is not in the library "
                f"({', '.join(self._tree.library.names())}) nor added by code "
                f"(SynthDef(\\{synthdef}, {{ ... }}).add; a def sent with .send keeps no "
                "bytes in sclang to restore it from)")
        return bytes.fromhex(text)

    def set(self, name: str, node: str, params: dict[str, float],
            at: float | None = None, by: str = "set") -> dict[str, float]:
        """Set a named node's parameters (kept for restarts); ``at``: at that Unix time.
        ``by``: which way the change came, as its announcement says."""
        self._ready(name, "set")
        values = self._tree.ask(name, lambda p: p.nodes.set_params(node, dict(params), at, by))
        self._tree.settled()
        return values

    def set_gain(self, name: str, db: float, fade: float) -> StageState:
        """Fade the master gain in ``name``'s safety stage to ``db`` over ``fade`` seconds."""
        self._ready(name, "gain")
        return self._tree.ask(name, lambda p: p.stage.set_gain(db, fade))

    def place(self, name: str, node: str, target: str | None,
              add_action: str, by: str = "place") -> dict[str, object]:
        """Move a named node before or after named node ``target``, or to the head or tail
        of the default group; it keeps that place through restores."""
        self._ready(name, "place")
        return self._tree.ask(name, lambda p: p.nodes.place(node, target, add_action, by))

    def set_values(self, name: str, values: dict[str, dict[str, float]],
                   by: str = "scene") -> list[str]:
        """Set params of several named nodes of one room at once; return those it lacks.

        Not settled: a timed morph sends 30 a second, and the router takes them as they come.
        """
        return self._tree.ask(name, lambda p: p.nodes.set_many(values, by))

    def release(self, name: str, node: str, at: float | None = None,
                by: str = "release") -> None:
        """Release a named node; ``at``: its fade begins at that Unix time."""
        self._ready(name, "release")
        self._tree.ask(name, lambda p: p.nodes.release(node, at, by))
        self._tree.settled()

    # --- SynthDefs -----------------------------------------------------------

    def synthdefs(self) -> list[SynthDefInfo]:
        """Every SynthDef of the library."""
        return self._tree.library.all()

    def synthdef_names(self, name: str) -> list[str]:
        """The SynthDefs room ``name`` knows by scorch: the library's and those its code sent."""
        return sorted({*self._tree.library.names(), *self.view(name).synthdefs})

    def load_synthdef(self, selector: str, synthdef: str) -> list[str]:
        """Load a library SynthDef into rooms (and on their later boots)."""
        library = self._tree.library
        library.info(synthdef)
        names = self.resolve(selector)
        compiled = library.compiled(synthdef)
        for name in names:
            self._ready(name, "synthdefs load")
            self._tree.ask(name, lambda p: p.nodes.load_synthdef(synthdef, compiled))
        return names


def _failed(name: str, kind: str, message: str, elapsed: float = 0.0) -> ExecuteResult:
    return ExecuteResult(ok=False, error=SclangError(kind=kind, message=message),
                         elapsed=elapsed, room=name)
