"""The Orchestra facade: every instance by name, for the CLI, MCP and MIDI layers.

Reads go to the instances' thread-safe views, so they never wait behind a busy
actor; commands go to the actors with a timeout on every ``ask``.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable
from concurrent.futures import TimeoutError as FutureTimeout
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pykka
from pydantic import ValidationError

from actors.conductor import ConductorProxy
from actors.instance.actor import InstanceProxy, InstanceSettings
from actors.instance.processes import load_timeout
from actors.router.actor import MidiRouterProxy
from actors.supervisor import Supervisor, SupervisorProxy
from actors.watchdog import WatchdogProxy
from midi.schema import ControlRoute, KeyRoute
from midi.voices import FIRST_NODE_ID, NODE_ID_SPAN
from scorch.app.knowledge import Knowledge
from scorch.app.scenes import SceneDirector
from scorch.app.sessions import (
    AUTOSAVE,
    FOLDER,
    Autosaver,
    Reading,
    SessionStore,
    canonical_route,
    parse,
    render,
)
from scorch.app.studio.studio import Studio
from scorch.config.changes import ConfigChanges, config_changes
from scorch.config.installation import Config, check_synthdefs, load_config
from scorch.errors import (
    BufferNotFound,
    InstanceFailed,
    InstanceNotFound,
    InstanceNotReady,
    InvalidRequest,
    MidiUnavailable,
    OscTimeout,
    ScorchError,
    SessionFileError,
    SessionNotFound,
    TempoUnavailable,
)
from scorch.primitives.console import Console, ConsoleLine
from scorch.primitives.patterns import compile_pattern
from scorch.primitives.samples import MB, resolve_sample, search_samples
from scorch.primitives.sclang.result import ExecuteResult, SclangError
from scorch.primitives.scsynth import commands
from scorch.primitives.scsynth.node_tree import tree_synths
from scorch.primitives.synthdefs.library import SynthDefInfo, SynthDefLibrary
from scorch.primitives.system.audio_driver import AudioChoice
from scorch.state import timing
from scorch.state.desired import SAMPLE_BUFFER_BASE, SAMPLE_BUFFER_COUNT, BufferState

if TYPE_CHECKING:
    from scorch.hosts.remote_rooms import HostRooms
from scorch.state.events import Event, State
from scorch.state.session import BufferSpec, Change, NodeSpec, RoomSpec, Session, diff
from scorch.state.tempo import INSTALLATION, TempoView
from scorch.state.view import InstanceView, Snapshot
from scorch.values import describe_errors

log = logging.getLogger(__name__)

ASK = 15.0  # seconds any ask to an actor may take before the call gives up
RESTORE_WAIT = 10.0  # seconds a call waits for a booting or restoring instance
HEALTH_ASK = 2.0  # seconds the health check waits, and the least lateness it forgives
RELOAD_TIMEOUT = 300.0  # seconds a reload may take (rooms restarted, one after another)


class Orchestra:
    """All the instances of one config, addressed by name, group or ``"*"``."""

    def __init__(self, config: Config, library: SynthDefLibrary | None = None,
                 hosted_by: str = "scorch run") -> None:
        self.config = config
        self.hosted_by = hosted_by
        """Which process runs the rooms: ``scorch run``, or ``scorch mcp`` for its session."""
        self.library = library if library is not None else SynthDefLibrary()
        check_synthdefs(config, set(self.library.names()), self.library.errors)
        self.views = {name: InstanceView(name, inst.group)
                      for name, inst in config.instances.items()}
        self.jack_console = Console()
        self._supervisor: SupervisorProxy | None = None
        self._proxies: dict[str, InstanceProxy] = {}
        self._router: MidiRouterProxy | None = None
        self._conductor: ConductorProxy | None = None
        self._tempo: TempoView | None = None
        self._watchdog: WatchdogProxy | None = None
        self.midi_error: str | None = "MIDI is not started"
        """Why MIDI is off, or None while the router runs."""
        self.started_at: float | None = None
        self.start_error: str | None = None
        """Why the tree could not be started, when it could not."""
        self._starting = False
        self._tree = threading.Event()
        """Set once the actors exist (or the start failed)."""
        self.sessions = SessionStore(config.state_path() / FOLDER)
        self.scenes = SceneDirector(self.views, self.library, self.resolve, self.set_values,
                                    config.state_path())
        self._autosaver: Autosaver | None = None
        self._autosaved: Session | None = None
        """What the last autosave held (unchanged: not written again)."""
        self._reload_lock = threading.Lock()
        self._remote: HostRooms | None = None
        """Other hosts' rooms, for MIDI routes here that play them (several hosts)."""
        self.knowledge = Knowledge(config)
        """The docs index, the execution history and the snippets (the knowledge ops')."""
        self.audio: AudioChoice | None = None
        """The audio driver that runs (``auto`` resolved) and why, once started."""
        self.studio = Studio(config.state_path(), self.views, self.library,
                             config.audio.sample_rate)
        """Recordings, listening and renders."""

    # --- lifecycle -----------------------------------------------------------

    def _settings(self, name: str, config: Config | None = None,
                  seed: Session | None = None) -> InstanceSettings:
        config = config or self.config
        inst = config.instances[name]
        startup = None
        if inst.startup is not None:
            startup = config.resolve_path(inst.startup).read_text()
        return InstanceSettings(
            audio=config.audio, watchdog=config.watchdog,
            compiled_synthdef=self.library.compiled, all_synthdefs=self.library.names,
            startup_code=startup, listen=config.listen_address(),
            seed=seed.rooms.get(name) if seed is not None else None,
        )

    def start(self, timeout: float = 60.0, seed: Session | None = None) -> dict[str, str | None]:
        """Start JACK and boot every instance in parallel; return boot errors by name.

        Calls made meanwhile (from other threads) wait for the tree, then for
        their instance; ``list_instances`` shows BOOTING. ``seed``: a session whose
        rooms boot with its nodes and buffers in place of the config's nodes.
        """
        marks = {name: view.events.mark() for name, view in self.views.items()}
        for view in self.views.values():
            view.update(state=State.BOOTING, reason="scorch is starting")
        self._starting = True
        settings = {name: self._settings(name, seed=seed) for name in self.config.instances}
        if self.config.hosts and self.config.midi.enabled:
            from scorch.hosts.remote_rooms import HostRooms

            # Polls nothing until a route asks for a room of another host.
            self._remote = HostRooms(self.config, self._remote_changed)
        try:
            self._supervisor = Supervisor.start(self.config, self.views, settings,
                                                self.jack_console, self.scenes.cue,
                                                self._remote).proxy()
            self._proxies = self._supervisor.start_tree().get(timeout=timeout)
            self._router = self._supervisor.router_proxy().get(timeout=ASK)
            self._conductor = self._supervisor.conductor_proxy().get(timeout=ASK)
            self._tempo = self._supervisor.tempo_view().get(timeout=ASK)
            self._watchdog = self._supervisor.watchdog_proxy().get(timeout=ASK)
            self.midi_error = self._supervisor.midi_status().get(timeout=ASK)
            self.audio = self._supervisor.audio_choice().get(timeout=ASK)
        except Exception as err:
            self.start_error = f"scorch could not start: {err}"
            for view in self.views.values():
                view.update(state=State.FAILED, reason=self.start_error)
            self._tree.set()
            self.stop()
            raise
        self._tree.set()
        self.started_at = time.time()
        deadline = time.monotonic() + timeout
        errors = {name: view.wait_settled(marks[name], deadline - time.monotonic())
                  for name, view in self.views.items()}
        # After the rooms are READY (or given up), so a docs build never slows their boot.
        self.knowledge.start()
        return errors

    def _remote_changed(self) -> None:
        """Another host's room moved (READY, port, nodes): the router looks again."""
        router = self._router
        if router is not None:
            router.refresh_targets()

    def start_autosave(self) -> None:
        """Save the session ``autosave`` every ``[sessions] autosave`` seconds, and at stop.

        Started once the installation holds what it should (after a resume), so a
        start that fails never overwrites the last good autosave.
        """
        if self._autosaver is not None:
            return
        interval = self.config.sessions.autosave
        self._autosaver = Autosaver(interval or float("inf"), self.autosave)
        if interval:
            self._autosaver.start()

    def autosave(self) -> bool:
        """Write the autosave session if the state changed since the last; True if written."""
        session = self.capture_session()
        if session == self._autosaved:
            return False
        self.sessions.write(AUTOSAVE, render(session, AUTOSAVE))
        self._autosaved = session
        return True

    def stop(self, timeout: float = 20.0) -> None:
        """Stop everything in reverse order; no process of scorch is left.

        The autosave session is written first, when autosave runs.
        """
        autosaver, self._autosaver = self._autosaver, None
        if autosaver is not None:
            autosaver.stop()
            try:
                self.autosave()
            except Exception:
                log.exception("the autosave at shutdown failed")
        self.scenes.stop()
        self.knowledge.stop()
        remote, self._remote = self._remote, None
        if remote is not None:
            remote.close()
        supervisor, self._supervisor = self._supervisor, None
        if supervisor is None:
            return
        try:
            self.studio.close()  # recordings end cleanly while their scsynth still runs
        except Exception:
            log.exception("recordings did not stop cleanly")
        try:
            supervisor.stop_all(timeout).get(timeout=timeout * 3)
        finally:
            supervisor.actor_ref.stop(timeout=timeout)
            self._proxies = {}
            self._router = None
            self._conductor = None
            self._tempo = None
            self._watchdog = None

    def reload(self, config: Config | None = None) -> tuple[ConfigChanges, dict[str, str]]:
        """Re-read the config file (or take ``config``) and apply what changed.

        A config that does not validate, or changes what a running installation
        cannot take, raises and changes nothing. Returns the changes and the rooms
        a change failed for (the rest are applied).
        """
        with self._reload_lock:
            supervisor = self._supervisor
            if supervisor is None or not self._tree.is_set():
                raise InstanceNotReady("scorch is not running yet; reload once it is")
            if config is None:
                config = load_config(self.config.source).for_host(self.config.host)
            check_synthdefs(config, set(self.library.names()), self.library.errors)
            changes = config_changes(self.config, config)
            if not changes:
                return changes, {}
            settings = {name: self._settings(name, config)
                        for name in (*changes.added, *changes.rooms)}
            if self._remote is not None:
                self._remote.update(config)
            for name in changes.added:
                view = InstanceView(name, config.instances[name].group)
                view.update(state=State.BOOTING, reason="added by a reload")
                self.views[name] = view
            failed = supervisor.apply(config, changes, settings).get(
                timeout=RELOAD_TIMEOUT)
            self.config = config
            for name in changes.removed:
                self.views.pop(name, None)
            self._proxies = supervisor.instance_proxies().get(timeout=ASK)
            self._router = supervisor.router_proxy().get(timeout=ASK)
            self._watchdog = supervisor.watchdog_proxy().get(timeout=ASK)
            self.midi_error = supervisor.midi_status().get(timeout=ASK)
            log.info("reloaded %s: %s", config.source or "the config",
                     "; ".join(changes.summary()))
            return changes, failed

    def health(self) -> str | None:
        """Why scorch's own machinery is not healthy, or None (systemd's watchdog asks).

        Healthy: the supervisor lives and the watchdog checked the rooms lately.
        Asked of the watchdog directly, so a supervisor busy with a reload is fine.
        """
        supervisor, watchdog = self._supervisor, self._watchdog
        if supervisor is None or watchdog is None or not supervisor.actor_ref.is_alive():
            return "not running"
        try:
            ticked = watchdog.ticked_at().get(timeout=HEALTH_ASK)
        except (pykka.Timeout, pykka.ActorDeadError):
            return "the watchdog does not answer"
        late = time.monotonic() - ticked
        limit = max(HEALTH_ASK, 4 * self.config.watchdog.interval)
        return f"the watchdog last checked {late:.1f} s ago" if late > limit else None

    def __enter__(self) -> Orchestra:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- names ---------------------------------------------------------------

    def names(self) -> list[str]:
        """Instance names in config order."""
        return list(self.views)

    def resolve(self, selector: str) -> list[str]:
        """An instance name, a group name or ``"*"`` to instance names."""
        return self.config.resolve(selector)

    def view(self, name: str) -> InstanceView:
        """The view of one instance; InstanceNotFound lists the known names."""
        try:
            return self.views[name]
        except KeyError:
            raise InstanceNotFound(name, self.names(), list(self.config.groups())) from None

    def _proxy(self, name: str) -> InstanceProxy:
        self.view(name)
        if self._starting:
            self._tree.wait(RESTORE_WAIT)  # the tree is being built: a moment
        proxy = self._proxies.get(name)
        if proxy is None:
            raise InstanceNotReady(f"instance {name!r} is not running: "
                                   f"{self.start_error or 'scorch is not started'}")
        return proxy

    def _ask(self, name: str, method: str, *args: Any, timeout: float = ASK) -> Any:
        """Ask instance ``name``'s actor (``"nodes.play"`` reaches its nodes) and wait."""
        target: Any = self._proxy(name)
        for part in method.split("."):
            target = getattr(target, part)
        try:
            return target(*args).get(timeout=timeout)
        except pykka.Timeout as err:
            raise InstanceNotReady(
                f"instance {name!r} did not answer within {timeout:g} s "
                f"(state {self.views[name].snapshot.state})"
            ) from err
        except pykka.ActorDeadError as err:
            raise InstanceNotReady(f"instance {name!r} is not running") from err

    # --- code ----------------------------------------------------------------

    def _settled(self, name: str, timeout: float, need_sclang: bool = False) -> None:
        """Wait while the instance boots or restores, up to ``timeout``; at once otherwise.

        A restore takes a fraction of a second: a call that arrives meanwhile waits
        for it rather than failing. Whatever the state then, the actor says it.
        """
        def settled(snap: Snapshot) -> bool:
            if snap.state in (State.BOOTING, State.RESTARTING):
                return False
            return not (need_sclang and snap.state == State.READY
                        and snap.sclang_state in ("starting", "restarting"))

        self.view(name).wait_until(settled, timeout)

    def _when_settled(self, name: str, deadline: float, ask: Callable[[], Any]) -> Any:
        """``ask()`` once the instance is settled; again if it started restoring meanwhile."""
        while True:
            self._settled(name, deadline - time.monotonic(), need_sclang=True)
            try:
                return ask()
            except InstanceFailed:
                raise
            except InstanceNotReady:
                snap = self.views[name].snapshot
                restoring = snap.state in (State.BOOTING, State.RESTARTING) or (
                    snap.sclang_state in ("starting", "restarting"))
                if not restoring or time.monotonic() >= deadline:
                    raise

    def execute(self, selector: str, code: str, timeout: float = 10.0,
                check_only: bool = False, at: float | None = None) -> list[ExecuteResult]:
        """Run code on every instance ``selector`` names; one result each, in order.

        ``check_only``: compile the code without running it (a syntax check).
        ``at``: compile now, and run it so that scsynth hears it at this Unix time.
        """
        names = self.resolve(selector)
        deadline = time.monotonic() + timeout
        submitted: list[tuple[str, Any]] = []
        for name in names:
            try:
                request_id, future = self._when_settled(
                    name, deadline, partial(self._ask, name, "code.submit", code, timeout,
                                            check_only, at, deadline))
                submitted.append((name, (request_id, future)))
            except ScorchError as err:
                submitted.append((name, err))
        results = []
        for name, item in submitted:
            if isinstance(item, Exception):
                results.append(_failed(name, "unavailable", str(item)))
                continue
            request_id, future = item
            try:
                results.append(future.result(timeout=max(0.0, deadline - time.monotonic())))
            except FutureTimeout:
                self._proxy(name).code.execute_timed_out(request_id, timeout)
                results.append(_failed(
                    name, "timeout",
                    f"code did not finish within {timeout:g} s; sclang is being restarted "
                    "(the sound on scsynth goes on)", elapsed=timeout))
            except ScorchError as err:
                results.append(_failed(name, "interrupted", str(err)))
        return results

    def execute_one(self, name: str, code: str, timeout: float = 10.0) -> ExecuteResult:
        """Run code on one instance."""
        self.view(name)
        return self.execute(name, code, timeout)[0]

    # --- sound ---------------------------------------------------------------

    def stop_sound(self, selector: str) -> dict[str, list[str]]:
        """CmdPeriod: stop routines and free every node; named nodes are forgotten."""
        return self._silence(selector, stop_routines=True)

    def free_all(self, selector: str) -> dict[str, list[str]]:
        """Free every node on the server (routines in sclang go on)."""
        return self._silence(selector, stop_routines=False)

    def _silence(self, selector: str, stop_routines: bool) -> dict[str, list[str]]:
        forgotten = {}
        for name in self.resolve(selector):
            self._settled(name, RESTORE_WAIT)
            forgotten[name] = self._ask(name, "silence", stop_routines)
            self._tell_router(name, None, None)
        return forgotten

    def when(self, at: float | timing.Quantum | None, delay: float | None,
             selector: str | None = None) -> float | None:
        """The Unix time of a timed request to ``selector``'s rooms (None: now).

        A beat or bar is on the grid those rooms play at: a group's own tempo, or the
        installation's; rooms on different grids have no common next bar (refused).
        See ``scorch.state.timing``.
        """
        scope = INSTALLATION
        if isinstance(at, str) and selector is not None:
            scopes = {self.config.tempo_scope(room) for room in self.resolve(selector)}
            if len(scopes) > 1:
                raise InvalidRequest(
                    f"{selector!r} spans rooms at different tempos ("
                    f"{', '.join(sorted(s or 'the installation' for s in scopes))}): "
                    f"{at} is not one moment for them; time them apart, or give a time")
            scope = scopes.pop()
        return timing.resolve(at, delay, time.time(), self.tempo_grid(scope))

    def tempo_grid(self, scope: str = INSTALLATION) -> timing.TempoGrid | None:
        """A beat grid in Unix time, for ``at = "next_beat"`` / ``"next_bar"``.

        The installation's, or a group's own (``scope``). None until the tempo runs
        (scorch is starting): beats are refused with a message, times and delays
        work. With Link the installation's grid is the Link session's, so the next
        bar is the same moment on every host.
        """
        view = self._tempo
        if view is None:
            return None
        line = view.get(scope)
        mono, wall = time.monotonic(), time.time()
        return timing.TempoGrid(line.bpm, line.beats_per_bar,
                                wall - line.beat_at(mono) * 60.0 / line.bpm)

    def play(self, name: str, synthdef: str, params: dict[str, float] | None = None,
             node: str | None = None, at: float | None = None) -> dict[str, Any]:
        """Start a synth; with ``node`` it is named and restored after restarts.

        ``at``: scsynth starts it at this Unix time (a timestamped bundle).
        """
        compiled = self.library.compiled(synthdef)
        self._settled(name, RESTORE_WAIT)
        played: dict[str, Any] = self._ask(name, "nodes.play", synthdef, dict(params or {}),
                                           node, compiled, at)
        if node is not None:
            # Every control starts at its default unless given: the router must know all,
            # and where the node now is.
            values = {p.name: p.default for p in self.library.info(synthdef).params}
            self._tell_router(name, node, {**values, **played["params"]}, moved=True)
        return played

    def set(self, name: str, node: str, params: dict[str, float],
            at: float | None = None) -> dict[str, float]:
        """Set a named node's parameters (kept for restarts); ``at``: at that Unix time."""
        values: dict[str, float] = self._ask(name, "nodes.set_params", node, dict(params), at)
        self._tell_router(name, node, params)
        return values

    def set_values(self, name: str, values: dict[str, dict[str, float]]) -> list[str]:
        """Set params of several named nodes of one instance at once; return those it lacks."""
        missing: list[str] = self._ask(name, "nodes.set_many", values)
        if self._router is not None:
            for node, params in values.items():
                if node not in missing:  # not waited for: a timed morph sends 30 a second
                    self._router.observe(name, node, params)
        return missing

    def release(self, name: str, node: str, at: float | None = None) -> None:
        """Release a named node; ``at``: its fade begins at that Unix time."""
        self._ask(name, "nodes.release", node, at)
        self._tell_router(name, node, None)

    def remember(self, name: str, node: str, params: dict[str, float]) -> bool:
        """Keep values another host's MIDI router sent to a named node (sends nothing)."""
        if node not in self.view(name).nodes:
            return False
        self._proxy(name).nodes.remember_params(node, dict(params))  # a tell: no wait
        self._tell_router(name, node, params)
        return True

    def _tell_router(self, name: str, node: str | None, values: dict[str, float] | None,
                     moved: bool = False) -> None:
        """Tell MIDI takeover where a node's params are now (None: the node is gone).

        Without this a knob in pickup mode compares against a value the node no
        longer has, and jumps or never picks up. ``moved``: the node has a new id.
        Waited for, so a knob moved right after the call sees the new values.
        """
        if self._router is None:
            return
        if values is None:
            self._router.forget(name, node).get(timeout=ASK)
            return
        assert node is not None
        self._router.observe(name, node, values, moved).get(timeout=ASK)

    def nodes(self, name: str) -> dict[str, dict[str, Any]]:
        """Named persistent nodes of an instance with their SynthDef, id and last values.

        Read from the instance's view, so it answers while the actor is busy booting.
        """
        return {node.name: {"synthdef": node.synthdef, "node_id": node.node_id,
                            "params": dict(node.params)}
                for node in self.view(name).nodes.values()}

    # --- buffers -------------------------------------------------------------

    def load_buffer(self, selector: str, path: str, name: str | None = None,
                    bufnum: int | None = None) -> list[dict[str, Any]]:
        """Read a sound file into a buffer on each instance, under one bufnum on all of them.

        ``path``: absolute, or relative to the ``[samples]`` folders. ``name``: the
        file's stem by default. A name already loaded keeps its bufnum.
        """
        folders = self.config.sample_folders()
        found = resolve_sample(path, folders, int(self.config.samples.max_mb * MB))
        name = name or buffer_name(found)
        names = self.resolve(selector)
        if bufnum is None:
            bufnum = self._common_bufnum(names, name)
        loaded = []
        for room in names:
            self._settled(room, RESTORE_WAIT)
            state = self._ask(room, "buffers.load", name, str(found), bufnum,
                              timeout=load_timeout([str(found)]) + ASK)
            loaded.append(buffer_row(room, state))
        return loaded

    def _common_bufnum(self, names: list[str], name: str) -> int | None:
        """A bufnum free on every instance (or the one they all give ``name``), else None."""
        held = {self.views[n].buffers[name].bufnum for n in names
                if name in self.views[n].buffers}
        if len(held) == 1 and all(name in self.views[n].buffers for n in names):
            return held.pop()
        used = {b.bufnum for n in names for b in self.views[n].buffers.values() if b.name != name}
        free = [b for b in range(SAMPLE_BUFFER_BASE, SAMPLE_BUFFER_BASE + SAMPLE_BUFFER_COUNT)
                if b not in used]
        return free[0] if free else None

    def free_buffer(self, selector: str, name: str) -> list[dict[str, Any]]:
        """Free buffer ``name`` on every instance of ``selector`` that holds it."""
        names = [n for n in self.resolve(selector) if name in self.views[n].buffers]
        if not names:
            known = sorted({b for n in self.resolve(selector) for b in self.views[n].buffers})
            raise BufferNotFound(f"no buffer {name!r} on {selector!r}; buffers: "
                                 f"{', '.join(known) or '(none)'}")
        return [buffer_row(room, self._ask(room, "buffers.free", name)) for room in names]

    def buffers(self, selector: str = "*") -> list[dict[str, Any]]:
        """Every loaded buffer of the instances ``selector`` names, by instance then bufnum."""
        return [buffer_row(room, buf) for room in self.resolve(selector)
                for buf in sorted(self.views[room].buffers.values(), key=lambda b: b.bufnum)]

    def search_samples(self, query: str, limit: int = 50) -> list[dict[str, Any]]:
        """Sound files in the ``[samples]`` folders whose path holds every word of ``query``."""
        folders = self.config.sample_folders()
        if not folders:
            raise InvalidRequest("the config has no [samples] paths to search: add "
                                 '`[samples] paths = ["/folder/of/samples"]`')
        return [{"path": str(f.path), "relative": f.relative, "folder": str(f.folder),
                 "megabytes": round(f.size / MB, 3)}
                for f in search_samples(query, folders, limit)]

    # --- sessions ------------------------------------------------------------

    def capture_session(self) -> Session:
        """Every room's named nodes and buffers, and the run-time MIDI routes, as they are now."""
        rooms = {
            name: RoomSpec(
                nodes={n.name: NodeSpec(n.synthdef, dict(n.params))
                       for n in view.nodes.values()},
                buffers={b.name: BufferSpec(b.path, b.bufnum) for b in view.buffers.values()})
            for name, view in self.views.items()}
        tempos = self._capture_tempos()
        if self._router is None:
            return Session(rooms=rooms, routes_known=False, tempos=tempos)
        routes = tuple(canonical_route(r["id"], r["type"], r["route"])
                       for r in self.midi_routes() if r["origin"] == "runtime")
        return Session(rooms=rooms, routes=routes, tempos=tempos)

    def _capture_tempos(self) -> dict[str, float]:
        """bpm by tempo scope, leaving out one that follows a MIDI clock coming in."""
        conductor = self._conductor
        if conductor is None:
            return {}
        tempos = {}
        for scope in [INSTALLATION, *self.config.tempo.groups]:
            state = conductor.state(scope).get(timeout=ASK)
            if state["source"] != "midi clock in":
                tempos[scope] = float(state["bpm"])
        return tempos

    def autosaved(self) -> Session | None:
        """The last autosave, read leniently; None if there is none or it cannot be read.

        Sound files are not checked, and what this installation no longer has (a
        room, a group, a SynthDef or param taken out of the config since) is left
        out with a warning: an installation always comes back. A file that cannot
        be read at all is set aside as ``autosave-unreadable.toml`` (``session diff``
        of it names its mistakes), with an error in the log, so the next autosave
        does not destroy it. Boot with the session as
        ``start(seed=...)``, then :meth:`resume` for what a seed cannot carry (MIDI
        routes, the tempo, and anything that failed).
        """
        try:
            text, path = self.sessions.read(AUTOSAVE)
            return parse(text, path, Reading(self.config, self.library, resume=True))
        except SessionNotFound:
            return None
        except SessionFileError as err:
            aside = self.sessions.path(f"{AUTOSAVE}-unreadable")
            self.sessions.path(AUTOSAVE).replace(aside)
            log.error("--resume: the autosave cannot be read; set aside as %s; starting from "
                      "the config: %s", aside, err)
            return None

    def resume(self, target: Session | None = None) -> list[tuple[Change, str]] | None:
        """Bring the installation to ``target`` (default: the last autosave); None if none.

        Sound files that are gone are skipped (reported with the other failures),
        so one missing sample does not keep an installation from coming back.
        """
        target = target if target is not None else self.autosaved()
        if target is None:
            return None
        changes = self.session_diff(target)
        if self.config.tempo.link:
            # The Link session's tempo is its peers' too: coming back must not pull it to
            # what it was here before the stop (a `session load` does set it).
            changes = [c for c in changes if not (c.action == "tempo" and c.scope == INSTALLATION)]
        failed = self.apply_changes(changes)
        log.info("resumed from the autosave: %d changes left after boot, %d failed",
                 len(changes), len(failed))
        for change, error in failed:
            log.error("resume: %s: %s", change.detail, error)
        return failed

    def param_defaults(self, synthdef: str) -> dict[str, float]:
        """A library SynthDef's params at their defaults (none for a SynthDef it lacks)."""
        if synthdef not in self.library:
            return {}
        return {p.name: p.default for p in self.library.info(synthdef).params}

    def session_diff(self, target: Session) -> list[Change]:
        """What loading ``target`` would change, in order."""
        current = self.capture_session()
        if not current.routes_known:
            target = Session(rooms=target.rooms, routes_known=False, tempos=target.tempos)
        return diff(current, target, self.param_defaults)

    def apply_changes(self, changes: list[Change]) -> list[tuple[Change, str]]:
        """Carry out ``changes`` in order; return those that failed, with why (the rest apply)."""
        failed = []
        for change in changes:
            try:
                self._apply(change)
            except ScorchError as err:
                failed.append((change, str(err)))
        return failed

    def _apply(self, change: Change) -> None:
        room, target = change.instance, change.target
        if change.action == "free":
            assert room is not None
            self._ask(room, "buffers.free", target)
        elif change.action == "load":
            assert room is not None and change.path is not None
            self.load_buffer(room, change.path, target, change.bufnum)
        elif change.action == "release":
            assert room is not None
            self.release(room, target)
        elif change.action == "play":
            assert room is not None and change.synthdef is not None
            self.play(room, change.synthdef, dict(change.params), target)
        elif change.action == "set":
            assert room is not None
            self.set(room, target, dict(change.params))
        elif change.action == "tempo":
            assert change.bpm is not None and change.scope is not None
            self.set_tempo(change.scope or None, bpm=change.bpm)
        elif change.action == "unmap":
            self.midi_unmap(target)
        elif change.action == "map":
            assert change.route is not None
            spec = {k: v for k, v in change.route.items() if k != "type"}
            self._midi().map((KeyRoute if change.route["type"] == "key" else ControlRoute
                              ).model_validate(spec)).get(timeout=ASK)

    # --- SynthDefs -----------------------------------------------------------

    def synthdefs(self) -> list[SynthDefInfo]:
        """Every SynthDef of the library."""
        return self.library.all()

    def load_synthdef(self, selector: str, synthdef: str) -> list[str]:
        """Load a library SynthDef into instances (and on their later boots)."""
        self.library.info(synthdef)
        names = self.resolve(selector)
        for name in names:
            self._ask(name, "nodes.load_synthdef", synthdef, self.library.compiled(synthdef))
        return names

    # --- lifecycle per instance ----------------------------------------------

    def boot(self, name: str, timeout: float = 60.0) -> None:
        """Boot an instance that is STOPPED or FAILED; wait until READY or given up."""
        view = self.view(name)
        mark = view.events.mark()
        self._ask(name, "boot", timeout=timeout)
        if view.snapshot.state == State.READY:
            return
        error = view.wait_settled(mark, timeout)
        if error is not None:
            raise InstanceFailed(f"instance {name!r} did not boot: {error}")

    def quit(self, name: str) -> None:
        """Stop an instance's processes; it stays STOPPED."""
        self._ask(name, "quit", timeout=30.0)

    def restart(self, name: str, timeout: float = 60.0) -> None:
        """Quit and boot again."""
        self.quit(name)
        self.boot(name, timeout)

    # --- MIDI ----------------------------------------------------------------

    def _midi(self) -> MidiRouterProxy:
        if self._router is None:
            raise MidiUnavailable(self.midi_error or "MIDI is off")
        return self._router

    def midi_ports(self) -> dict[str, Any]:
        """Open and missing MIDI ports, and every port the system offers."""
        return self._midi().ports().get(timeout=ASK)  # type: ignore[no-any-return]

    def midi_routes(self) -> list[dict[str, Any]]:
        """Every MIDI route, from the config and added at run time."""
        return self._midi().routes().get(timeout=ASK)  # type: ignore[no-any-return]

    def midi_map(self, spec: dict[str, Any]) -> dict[str, Any]:
        """Add a run-time route: a control (``cc``, ``nrpn``...) or keys (``synthdef``)."""
        kind = KeyRoute if "synthdef" in spec else ControlRoute
        try:
            route = kind.model_validate(spec)
        except ValidationError as err:
            problems = "; ".join(describe_errors(err, noun="key"))
            raise InvalidRequest(f"invalid MIDI route: {problems}") from err
        names = self.resolve(route.instance)
        route_id = self._midi().map(route).get(timeout=ASK)
        out: dict[str, Any] = {"id": route_id, "route": route.model_dump(mode="json")}
        if isinstance(route, ControlRoute):
            missing = [n for n in names if route.node not in self.views[n].nodes]
            if missing:
                out["warning"] = (f"no node {route.node!r} on {', '.join(missing)} yet: the "
                                  "route acts once one is played with that name")
        return out

    def midi_unmap(self, route_id: str) -> None:
        """Remove a run-time route by id."""
        try:
            self._midi().unmap(route_id).get(timeout=ASK)
        except (KeyError, ValueError) as err:
            raise InvalidRequest(str(err).strip("'\"")) from err

    def midi_learn(self, timeout_s: float = 10.0) -> dict[str, Any] | None:
        """Wait for the next control or note moved on any port (None on timeout)."""
        # The router arms the learn and answers at once; the future fills when a
        # control moves, so the router keeps serving while we wait.
        learned = self._midi().learn(timeout_s).get(timeout=ASK)
        return learned.result(timeout=timeout_s + ASK)  # type: ignore[no-any-return]

    def midi_send(self, port: str, message: dict[str, Any]) -> None:
        """Send a message such as ``{"type": "note_on", "note": 60, "velocity": 90}``."""
        fields = dict(message)
        kind = fields.pop("type", None) or fields.pop("kind", None)
        if not kind:
            raise InvalidRequest("MIDI message needs a 'type' (note_on, note_off, cc, program, "
                                 "clock, start, stop, continue)")
        try:
            self._midi().send(port, kind, **fields).get(timeout=ASK)
        except (KeyError, ValueError, TypeError) as err:
            raise InvalidRequest(f"cannot send to {port!r}: {err}") from err

    def midi_stats(self) -> dict[str, Any]:
        """The router's counters and hot-path timings."""
        stats: dict[str, Any] = self._midi().stats().get(timeout=ASK)
        return stats

    def midi_panic(self) -> dict[str, Any]:
        """All notes off everywhere: release every voice, lift pedals, all-notes-off out.

        Then every room's scsynth is asked which synths run in the MIDI voices' node id
        range, and each gets ``gate 0``: voices the router no longer knows (a router
        restarted, a release lost) are released too.
        """
        released = 0
        if self._router is not None:
            released = self._router.panic().get(timeout=ASK)
        swept: dict[str, int | None] = {}
        for name, view in self.views.items():
            osc = view.osc
            if osc is None:
                continue
            try:
                reply = osc.request(commands.Cmd.G_QUERY_TREE, 0, 0,
                                    reply=commands.Reply.QUERY_TREE, timeout=2.0)
            except ScorchError as err:
                log.warning("panic: %s did not list its synths: %s", name, err)
                swept[name] = None
                continue
            voices = [node for node, _ in tree_synths(reply.args)
                      if FIRST_NODE_ID <= node < FIRST_NODE_ID + NODE_ID_SPAN]
            for node in voices:
                osc.send(commands.release(node))
            swept[name] = len(voices)
        return {"released": released, "voices_in_rooms": swept,
                "midi": self.midi_error or "on"}

    # --- tempo ---------------------------------------------------------------

    def _tempo_scope(self, group: str | None) -> str:
        """The tempo scope of a group or room (checked), or the installation's."""
        if group is None:
            return ""
        self.resolve(group)  # InstanceNotFound names the known ones
        return self.config.tempo_scope(group)

    def _tempo_owner(self) -> ConductorProxy:
        if self._starting:
            self._tree.wait(RESTORE_WAIT)
        if self._conductor is None:
            raise TempoUnavailable(
                f"the tempo is not running: {self.start_error or 'scorch is not started'}")
        return self._conductor

    def tempo(self, group: str | None = None) -> dict[str, Any]:
        """The beat grid of the installation (or of a group with its own tempo) now."""
        scope = self._tempo_scope(group)
        return self._tempo_owner().state(scope).get(timeout=ASK)  # type: ignore[no-any-return]

    def set_tempo(self, group: str | None, bpm: float | None = None, beat: float | None = None,
                  transport: str | None = None) -> dict[str, Any]:
        """Set the tempo, move the beat, or start/stop/continue the transport."""
        scope = self._tempo_scope(group)
        if group is not None and scope == "":
            raise InvalidRequest(f"{group!r} plays at the installation's tempo: leave group out "
                                 f"to change that, or add [tempo.groups.<group>] to the config")
        owner = self._tempo_owner()
        return owner.set(scope, bpm, beat, transport).get(  # type: ignore[no-any-return]
            timeout=ASK)

    # --- reading -------------------------------------------------------------

    def status(self, name: str, live: bool = True) -> dict[str, Any]:
        """State, /status.reply fields, pids, uptime and restart budget of one instance."""
        view = self.view(name)
        snap = view.snapshot
        out: dict[str, Any] = {
            "name": snap.name, "group": snap.group, "host": self.config.host,
            "state": str(snap.state),
            "since": snap.since, "port": snap.port, "lang_port": snap.lang_port,
            "pids": {"scsynth": snap.scsynth_pid, "sclang": snap.sclang_pid},
            "sclang": snap.sclang_state,
            "uptime": (time.time() - snap.booted_at) if snap.booted_at and
            snap.state == State.READY else None,
            "restarts_in_window": snap.restarts_in_window,
            "restart_budget_left": snap.restart_budget_left,
            "last_crash": snap.last_crash or None, "reason": snap.reason or None,
            "nodes": list(snap.nodes),
        }
        osc = view.osc
        server = None
        if osc is not None:
            try:
                server = osc.status(timeout=0.5) if live else osc.last_status
            except OscTimeout:
                server = osc.last_status
        out["server"] = vars(server) if server is not None else None
        return out

    def pids(self) -> dict[str, int | None]:
        """Process ids by role: ``jackd`` and ``NAME.scsynth``, ``NAME.sclang``."""
        out: dict[str, int | None] = {}
        if self._supervisor is not None:
            out["jackd"] = self._supervisor.jack_pid().get(timeout=ASK)
        for name, view in self.views.items():
            out[f"{name}.scsynth"] = view.snapshot.scsynth_pid
            out[f"{name}.sclang"] = view.snapshot.sclang_pid
        return out

    def instances(self, live: bool = False) -> list[dict[str, Any]]:
        """One summary row per instance; ``live`` asks each scsynth instead of the cache."""
        return [self.status(name, live=live) for name in self.names()]

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
        """Lifecycle events of the instances ``selector`` names, oldest first."""
        names = self.resolve(selector)
        events = [e for name in names for e in self.views[name].events.since(since)]
        return sorted(events, key=lambda e: e.seq)


def buffer_name(path: Path) -> str:
    """A buffer name from a file's stem: letters, digits, _ and - only, starting with a letter."""
    stem = re.sub(r"[^A-Za-z0-9_-]", "_", path.stem)[:64]
    return stem if stem[:1].isalpha() else f"s{stem}"[:64]


def buffer_row(instance: str, buf: BufferState) -> dict[str, Any]:
    """One buffer as the API shows it."""
    return {"instance": instance, "name": buf.name, "bufnum": buf.bufnum, "frames": buf.frames,
            "channels": buf.channels, "sample_rate": buf.sample_rate,
            "seconds": round(buf.seconds, 6), "path": buf.path}


def _failed(name: str, kind: str, message: str, elapsed: float = 0.0) -> ExecuteResult:
    return ExecuteResult(ok=False, error=SclangError(kind=kind, message=message),
                         elapsed=elapsed, instance=name)
