"""What the MCP tools call: one method table, served locally or over the control socket.

:class:`LocalBackend` wraps an :class:`~scorch.service.orchestra.Orchestra` and returns
JSON-ready dicts and lists. The control socket serves that same object, and
:class:`RemoteBackend` forwards the same method names to it, so a hosted and an
attached ``scorch mcp`` give the same answers by construction.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from scorch.errors import InstanceNotReady, NodeNotFound
from scorch.primitives.sclang_protocol import ExecuteResult, SclangError
from scorch.primitives.synthdef_library import ParamSpec, SynthDefInfo
from scorch.state.events import Event

if TYPE_CHECKING:
    from scorch.service.orchestra import Orchestra

#: Every method a backend offers; the control socket serves exactly these.
METHODS = (
    "ping", "instances", "status", "execute", "stop", "instance_action", "console",
    "wait_for", "synthdefs", "describe_synthdef", "load_synthdef", "play", "set",
    "release", "events", "midi",
)

MIDI_ACTIONS = ("ports", "routes", "map", "unmap", "learn", "send", "panic")


class BadArgument(ValueError):
    """A tool argument that cannot be used; the message says which and why."""


class Backend(Protocol):
    """The method table the tools use (see :data:`METHODS`)."""

    def ping(self) -> dict[str, Any]: ...
    def instances(self) -> list[dict[str, Any]]: ...
    def status(self, selector: str) -> list[dict[str, Any]]: ...
    def execute(self, selector: str, code: str, timeout: float) -> list[dict[str, Any]]: ...
    def stop(self, selector: str) -> dict[str, list[str]]: ...
    def instance_action(self, name: str, action: str) -> dict[str, Any]: ...
    def console(self, name: str, lines: int, clear: bool) -> list[dict[str, Any]]: ...
    def wait_for(self, name: str, pattern: str, timeout: float,
                 since: int | None) -> dict[str, Any] | None: ...
    def synthdefs(self) -> list[dict[str, Any]]: ...
    def describe_synthdef(self, name: str) -> dict[str, Any]: ...
    def load_synthdef(self, selector: str, name: str) -> list[str]: ...
    def play(self, name: str, synthdef: str, params: dict[str, float],
             node: str | None) -> dict[str, Any]: ...
    def set(self, name: str, node: str, params: dict[str, float]) -> dict[str, Any]: ...
    def release(self, name: str, node: str) -> dict[str, Any]: ...
    def events(self, selector: str, since: int) -> list[dict[str, Any]]: ...
    def midi(self, action: str, args: dict[str, Any]) -> Any: ...


# --- conversions -------------------------------------------------------------


def error_dict(error: SclangError) -> dict[str, Any]:
    """A JSON-ready sclang error, with the rendered text a person reads."""
    return {"kind": error.kind, "message": error.message, "line": error.line,
            "char": error.char, "context": error.context, "receiver": error.receiver,
            "call_stack": list(error.call_stack), "text": error.describe()}


def result_dict(result: ExecuteResult) -> dict[str, Any]:
    """A JSON-ready execute result."""
    return {"instance": result.instance, "ok": result.ok, "value": result.value,
            "posted": list(result.posted), "warnings": list(result.warnings),
            "elapsed_ms": round(result.elapsed * 1000, 3),
            "error": error_dict(result.error) if result.error is not None else None}


def param_dict(param: ParamSpec) -> dict[str, Any]:
    """A JSON-ready param spec."""
    return {"name": param.name, "default": param.default, "min": param.minval,
            "max": param.maxval, "warp": param.warp, "step": param.step,
            "units": param.units, "description": param.description}


def synthdef_dict(info: SynthDefInfo, params: bool = True) -> dict[str, Any]:
    """A JSON-ready SynthDef description."""
    out: dict[str, Any] = {"name": info.name, "description": info.description,
                           "category": info.category, "sustained": info.sustained,
                           "pitched": info.pitched}
    if params:
        out["params"] = [param_dict(p) for p in info.params]
    return out


def event_dict(event: Event) -> dict[str, Any]:
    """A JSON-ready lifecycle event (details kept apart from the fixed fields)."""
    return {"seq": event.seq, "time": event.time, "instance": event.instance,
            "kind": str(event.kind), "message": event.message,
            "details": {k: _plain(v) for k, v in event.details.items()}}


def _plain(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return str(value)


def row(status: dict[str, Any]) -> dict[str, Any]:
    """The list_instances row of one instance from its status."""
    server = status.get("server") or {}
    return {"name": status["name"], "group": status["group"], "state": status["state"],
            "since": status["since"], "port": status["port"],
            "cpu": server.get("avg_cpu"), "peak_cpu": server.get("peak_cpu"),
            "synths": server.get("synths"), "uptime": status["uptime"],
            "restarts": status["restarts_in_window"],
            "restart_budget_left": status["restart_budget_left"],
            "reason": status["reason"], "nodes": list(status["nodes"])}


# --- the local backend -------------------------------------------------------


class LocalBackend:
    """The method table over an Orchestra in this process; thread-safe as the facade is."""

    def __init__(self, orchestra: Orchestra | None = None) -> None:
        self.orchestra = orchestra
        self.unavailable: str | None = None
        """Why there is no orchestra (its start failed), told to every caller."""
        self.mode = "hosted"

    @property
    def _orch(self) -> Orchestra:
        if self.orchestra is None:
            raise InstanceNotReady(self.unavailable or "scorch is not started yet")
        return self.orchestra

    def ping(self) -> dict[str, Any]:
        """Who answers: the config file, the instances and when the orchestra started."""
        orch = self._orch
        return {"config": str(orch.config.source) if orch.config.source else None,
                "instances": orch.names(), "started_at": orch.started_at}

    def instances(self) -> list[dict[str, Any]]:
        """One row per instance (no process is waited on)."""
        return [row(s) for s in self._orch.instances()]

    def status(self, selector: str) -> list[dict[str, Any]]:
        """Full status of each instance ``selector`` names, with its named nodes' values."""
        orch = self._orch
        out = []
        for name in orch.resolve(selector):
            status = orch.status(name)
            status["server"] = _plain(status["server"])
            try:
                status["nodes"] = orch.nodes(name)
            except InstanceNotReady:
                status["nodes"] = {n: {} for n in status["nodes"]}
            out.append(status)
        return out

    def execute(self, selector: str, code: str, timeout: float) -> list[dict[str, Any]]:
        """Run code on each instance ``selector`` names; one result each."""
        if not code.strip():
            raise BadArgument("code is empty: give SuperCollider code to run")
        return [result_dict(r) for r in self._orch.execute(selector, code, timeout)]

    def stop(self, selector: str) -> dict[str, list[str]]:
        """CmdPeriod on each instance; returns the named nodes that were forgotten."""
        return self._orch.stop_sound(selector)

    def instance_action(self, name: str, action: str) -> dict[str, Any]:
        """Boot, quit or restart one instance; return its status afterwards."""
        orch = self._orch
        actions: dict[str, Callable[[str], None]] = {
            "boot": orch.boot, "quit": orch.quit, "restart": orch.restart}
        if action not in actions:
            raise BadArgument(f"action must be one of {', '.join(actions)}, found {action!r}")
        orch.view(name)
        actions[action](name)
        return self.status(name)[0]

    def console(self, name: str, lines: int, clear: bool) -> list[dict[str, Any]]:
        """The last console lines of one instance (sclang, scsynth), oldest first."""
        if lines < 0:
            raise BadArgument(f"lines must be 0 or more, found {lines}")
        return [line._asdict() for line in self._orch.console(name, lines, clear=clear)]

    def wait_for(self, name: str, pattern: str, timeout: float,
                 since: int | None) -> dict[str, Any] | None:
        """Wait for a console line matching ``pattern``; None when none came in time."""
        try:
            re.compile(pattern)
        except re.error as err:
            raise BadArgument(f"pattern is not a valid regular expression: {err}") from None
        line = self._orch.wait_for(name, pattern, timeout, since=since)
        return line._asdict() if line is not None else None

    def synthdefs(self) -> list[dict[str, Any]]:
        """Every library SynthDef with its description and param specs."""
        return [synthdef_dict(info) for info in self._orch.synthdefs()]

    def describe_synthdef(self, name: str) -> dict[str, Any]:
        """One SynthDef's description and param specs."""
        return synthdef_dict(self._orch.library.info(name))

    def load_synthdef(self, selector: str, name: str) -> list[str]:
        """Load a SynthDef on each instance ``selector`` names (now and after restarts)."""
        return self._orch.load_synthdef(selector, name)

    def play(self, name: str, synthdef: str, params: dict[str, float],
             node: str | None) -> dict[str, Any]:
        """Start a synth (named and persistent when ``node`` is given)."""
        orch = self._orch
        orch.view(name)
        if node is not None and not re.match(r"^[A-Za-z][A-Za-z0-9_-]*$", node):
            raise BadArgument(f"node name {node!r} must start with a letter: letters, digits, _ -")
        warnings = _check_params(orch.library.info(synthdef), params)
        out = dict(orch.play(name, synthdef, params, node))
        out["instance"] = name
        out["warnings"] = warnings
        return out

    def set(self, name: str, node: str, params: dict[str, float]) -> dict[str, Any]:
        """Set params of a named node; returns all its current values."""
        orch = self._orch
        if not params:
            raise BadArgument("params is empty: give at least one name and value")
        nodes = orch.nodes(name)
        if node not in nodes:
            raise NodeNotFound(f"instance {name!r} has no node {node!r}; named nodes: "
                               f"{', '.join(nodes) or '(none)'}")
        warnings = _check_params(orch.library.info(str(nodes[node]["synthdef"])), params)
        values = orch.set(name, node, params)
        return {"instance": name, "node": node, "params": values, "warnings": warnings}

    def release(self, name: str, node: str) -> dict[str, Any]:
        """Release a named node and forget it."""
        self._orch.release(name, node)
        return {"instance": name, "node": node, "released": True}

    def events(self, selector: str, since: int) -> list[dict[str, Any]]:
        """Lifecycle events (boots, crashes, restarts) after ``since``, oldest first."""
        return [event_dict(e) for e in self._orch.events(selector, since)]

    def midi(self, action: str, args: dict[str, Any]) -> Any:
        """One MIDI action through the facade's ``midi_*`` methods."""
        orch: Any = self._orch
        if not hasattr(orch, "midi_ports"):
            raise InstanceNotReady("MIDI is not available in this scorch (no MIDI router)")
        if action == "ports":
            return _plain(orch.midi_ports())
        if action == "routes":
            return _plain(orch.midi_routes())
        if action == "map":
            return _plain(orch.midi_map(_need(args, "spec", action)))
        if action == "unmap":
            orch.midi_unmap(_need(args, "route_id", action))
            return {"unmapped": args["route_id"]}
        if action == "learn":
            return _plain(orch.midi_learn(float(args.get("timeout_s") or 10.0)))
        if action == "send":
            orch.midi_send(_need(args, "port", action), _need(args, "message", action))
            return {"sent": True}
        if action == "panic":
            orch.midi_panic()
            return {"panic": True}
        raise BadArgument(f"action must be one of {', '.join(MIDI_ACTIONS)}, found {action!r}")


def _need(args: dict[str, Any], key: str, action: str) -> Any:
    if args.get(key) is None:
        raise BadArgument(f"midi action {action!r} needs the argument {key!r}")
    return args[key]


def _check_params(info: SynthDefInfo, params: dict[str, float]) -> list[str]:
    """Refuse params the SynthDef lacks; warn about values outside their spec."""
    known = {p.name: p for p in info.params}
    unknown = [name for name in params if name not in known]
    if unknown:
        raise BadArgument(f"SynthDef {info.name!r} has no param {', '.join(map(repr, unknown))}; "
                          f"its params: {', '.join(known)}")
    return [f"{name}={value:g} is outside {spec.minval:g}..{spec.maxval:g} {spec.units}".rstrip()
            for name, value in params.items()
            if not (spec := known[name]).minval <= value <= spec.maxval]


# --- the remote backend ------------------------------------------------------


class RemoteBackend:
    """The same method table, forwarded to a running ``scorch run`` over its control socket."""

    def __init__(self, path: Path) -> None:
        from scorch.control import ControlClient  # here: scorch.control imports this module

        self.path = path
        self.client = ControlClient(path, errors={"BadArgument": BadArgument})
        self.mode = "attached"

    def _call(self, method: str, wait: float = 30.0, **args: Any) -> Any:
        """Call ``method`` remotely, giving the installation ``wait`` seconds to answer."""
        return self.client.call(method, args, timeout=wait)

    def ping(self) -> dict[str, Any]:
        return self._call("ping", 5.0)  # type: ignore[no-any-return]

    def instances(self) -> list[dict[str, Any]]:
        return self._call("instances")  # type: ignore[no-any-return]

    def status(self, selector: str) -> list[dict[str, Any]]:
        return self._call("status", selector=selector)  # type: ignore[no-any-return]

    def execute(self, selector: str, code: str, timeout: float) -> list[dict[str, Any]]:
        return self._call("execute", timeout + 30.0,  # type: ignore[no-any-return]
                          selector=selector, code=code, timeout=timeout)

    def stop(self, selector: str) -> dict[str, list[str]]:
        return self._call("stop", selector=selector)  # type: ignore[no-any-return]

    def instance_action(self, name: str, action: str) -> dict[str, Any]:
        return self._call("instance_action", 200.0,  # type: ignore[no-any-return]
                          name=name, action=action)

    def console(self, name: str, lines: int, clear: bool) -> list[dict[str, Any]]:
        return self._call("console", name=name, lines=lines,  # type: ignore[no-any-return]
                          clear=clear)

    def wait_for(self, name: str, pattern: str, timeout: float,
                 since: int | None) -> dict[str, Any] | None:
        return self._call("wait_for", timeout + 30.0,  # type: ignore[no-any-return]
                          name=name, pattern=pattern, timeout=timeout, since=since)

    def synthdefs(self) -> list[dict[str, Any]]:
        return self._call("synthdefs")  # type: ignore[no-any-return]

    def describe_synthdef(self, name: str) -> dict[str, Any]:
        return self._call("describe_synthdef", name=name)  # type: ignore[no-any-return]

    def load_synthdef(self, selector: str, name: str) -> list[str]:
        return self._call("load_synthdef", selector=selector,  # type: ignore[no-any-return]
                          name=name)

    def play(self, name: str, synthdef: str, params: dict[str, float],
             node: str | None) -> dict[str, Any]:
        return self._call("play", name=name, synthdef=synthdef,  # type: ignore[no-any-return]
                          params=params, node=node)

    def set(self, name: str, node: str, params: dict[str, float]) -> dict[str, Any]:
        return self._call("set", name=name, node=node,  # type: ignore[no-any-return]
                          params=params)

    def release(self, name: str, node: str) -> dict[str, Any]:
        return self._call("release", name=name, node=node)  # type: ignore[no-any-return]

    def events(self, selector: str, since: int) -> list[dict[str, Any]]:
        return self._call("events", selector=selector,  # type: ignore[no-any-return]
                          since=since)

    def midi(self, action: str, args: dict[str, Any]) -> Any:
        wait = float(args.get("timeout_s") or 10.0) + 30.0
        return self._call("midi", wait, action=action, args=args)

