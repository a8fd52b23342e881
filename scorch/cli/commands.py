"""The operator's commands, derived from the API schema: ``scorch COMMAND ...`` per operation.

Each operation with a ``command`` becomes a subcommand: its ``positional``
arguments are taken in order, every other argument is an option named after it
(``--timeout-s 5``), and the call goes to the running ``scorch run`` of the
config through its control socket. Values that are not text are read as JSON
(``--params '{"freq": 220}'``, ``--clear true``). An operation's ``CliForm``
adds one-letter options (``-n``), ``-f`` to follow, aliases (``scorch boot
ROOM``) and arguments read from a file or stdin (``scorch exec ROOM -``).
Read-only operations that do not wait take ``--watch`` (again every second); an
operation with actions takes it for its read-only actions only. An alias that
fixes the action (``scorch boot``) takes only that action's arguments.

Exit status: 0 done, 1 the operation failed (the message says why), 2 bad
arguments, 3 no ``scorch run`` answers for this config (as ``systemctl status``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import types
import typing
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic.fields import FieldInfo

from scorch.api import Operation, Result, Service
from scorch.api.ops import load_all, of_command
from scorch.config import find_config, load_config
from scorch.errors import InvalidRequest, NotRunning, ScorchError

EXIT_FAILED, EXIT_USAGE, EXIT_NOT_RUNNING = 1, 2, 3
#: Seconds between two looks of ``-f`` and of ``--watch``.
FOLLOW_EVERY = 0.5
WATCH_EVERY = 1.0


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser],
                 only: str | None = None) -> None:
    """Add a subcommand for every operation that has one, and for its aliases.

    ``only``: just this command, when it is an operation's (its one module imported, instead
    of every operation's models: half a second less).
    """
    op = of_command(only) if only is not None else None
    if op is not None and _add_matching(sub, only, [op]):
        return
    _add_matching(sub, None, load_all().values())


def _add_matching(sub: argparse._SubParsersAction[argparse.ArgumentParser], only: str | None,
                  operations: Iterable[Operation[Any, Any]]) -> bool:
    """Add the commands and aliases of ``operations`` (``only`` that one); True if any."""
    added = False
    for op in list(operations):
        if op.command is not None and only in (None, op.command):
            _add(sub, op, op.command, {})
            added = True
        for alias, fixed in op.cli.aliases.items():
            if only in (None, alias):
                _add(sub, op, alias, dict(fixed))
                added = True
    return added


def _add(sub: argparse._SubParsersAction[argparse.ArgumentParser], op: Operation[Any, Any],
         command: str, fixed: dict[str, Any]) -> None:
    same = " ".join(str(value) if key in op.positional else f"--{key} {value}"
                    for key, value in fixed.items())
    parser = sub.add_parser(
        command, description=op.doc,
        help=f"`scorch {op.command} {same}`: {op.summary}" if fixed else op.summary)
    parser.add_argument("--config", help="the installation's config file")
    parser.add_argument("--json", action="store_true", help="print the answer as JSON")
    parser.add_argument("--host", help="several hosts: only this [hosts.NAME] (default: "
                        "every host)")
    fields = _fields(op, fixed)
    for name in op.positional:
        if name in fixed or name not in fields:
            continue
        field = fields[name]
        help_text = field.description or ""
        if name in op.cli.files:
            help_text += " (- reads it from stdin; the path of a file reads that file)"
        parser.add_argument(name, help=help_text, nargs=None if field.is_required() else "?")
    for name, field in fields.items():
        if name in op.positional or name in fixed or name == op.cli.follow:
            continue
        flags = [f"--{name.replace('_', '-')}"]
        if name in op.cli.short:
            flags.insert(0, f"-{op.cli.short[name]}")
        parser.add_argument(*flags, dest=name, help=field.description,
                            metavar=_metavar(field))
    if op.cli.follow:
        parser.add_argument("-f", "--follow", action="store_true",
                            help="keep printing what comes, until Ctrl-C")
    elif op.waits is None and _may_watch(op, fixed):
        parser.add_argument("--watch", action="store_true",
                            help="print it again every second, until Ctrl-C" + (
                                "" if op.access.read_only or fixed else " (read-only actions: "
                                + ", ".join(n for n, m in op.actions.items()
                                            if m.access.read_only) + ")"))
    parser.set_defaults(func=lambda args: run_command(op, args, command, fixed))


def _fields(op: Operation[Any, Any], fixed: dict[str, Any]) -> dict[str, FieldInfo]:
    """The arguments a command takes: its action's own when it fixes one, else all."""
    if op.actions and fixed.get("action") in op.actions:
        return dict(op.actions[fixed["action"]].model_fields)
    return dict(op.fields)


def _may_watch(op: Operation[Any, Any], fixed: dict[str, Any]) -> bool:
    """True when the command may be read again and again: it, or an action of it, only reads."""
    if op.actions and fixed.get("action") in op.actions:
        return op.actions[fixed["action"]].access.read_only
    return op.access.read_only or any(m.access.read_only for m in op.actions.values())


def _metavar(field: FieldInfo) -> str:
    if _is_text(field):
        return "TEXT"
    return {int: "N", float: "NUMBER", bool: "true|false"}.get(_bare(field.annotation), "JSON")


def _bare(annotation: Any) -> Any:
    """The type under Optional and Annotated, however nested."""
    while True:
        origin = typing.get_origin(annotation)
        if origin in (typing.Union, types.UnionType):
            annotation = next(a for a in typing.get_args(annotation) if a is not type(None))
        elif origin is typing.Annotated:
            annotation = typing.get_args(annotation)[0]
        else:
            return annotation


def _is_text(field: FieldInfo) -> bool:
    """True when the argument is text (otherwise the command line gives JSON)."""
    annotation = _bare(field.annotation)
    if typing.get_origin(annotation) is typing.Literal:
        return all(isinstance(v, str) for v in typing.get_args(annotation))
    return annotation is str


def arguments(op: Operation[Any, Any], parsed: argparse.Namespace) -> dict[str, Any]:
    """The operation's arguments from the command line (only those given)."""
    out: dict[str, Any] = {}
    for name, field in op.fields.items():
        value = getattr(parsed, name, None)
        if value is None:
            continue
        if name in op.cli.files:
            value = _read_file_argument(name, value)
        if _is_text(field):
            out[name] = value
            continue
        try:
            out[name] = json.loads(value)
        except ValueError:
            raise InvalidRequest(f"{name}: expected JSON (a number, true/false, a list or an "
                                 f"object), found {value!r}") from None
    return out


def _read_file_argument(name: str, value: str) -> str:
    """``-``: stdin; the path of an existing file: its text; anything else as it is."""
    if value == "-":
        return sys.stdin.read()
    path = Path(value)
    if "\n" not in value and len(value) < 4096 and path.is_file():
        try:
            return path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as err:
            raise InvalidRequest(f"{name}: cannot read {value}: {err}") from None
    return value


def run_command(op: Operation[Any, Any], parsed: argparse.Namespace, command: str,
                fixed: dict[str, Any]) -> int:
    """Call the operation on the running installation and print its answer.

    A config with ``[hosts]``: the coordinator asks every host (``--host``: one).
    """
    from scorch.api import RemoteService
    from scorch.wire import find_running

    config = load_config(find_config(parsed.config))
    service: Service
    if config.hosts:
        from scorch.api import Coordinator

        only = None
        if parsed.host is not None:
            config.for_host(parsed.host)  # ConfigError names the hosts there are
            only = [parsed.host]
        service = Coordinator(config, only=only)
    elif parsed.host is not None:
        print(f"scorch {command}: --host {parsed.host}: {config.source or 'the config'} has "
              "no [hosts] table", file=sys.stderr)
        return EXIT_USAGE
    else:
        path = find_running(config.state_path())
        if path is None:
            print(f"scorch: no `scorch run` answers for {config.source or 'the default config'} "
                  f"(looked for {config.state_path() / 'control.sock'}); start it with "
                  "`scorch run` or `systemctl start scorch`", file=sys.stderr)
            return EXIT_NOT_RUNNING
        service = RemoteService(path)
    try:
        args = {**arguments(op, parsed), **fixed}
        if getattr(parsed, "follow", False):
            return _follow(service, op, args, parsed.json)
        if getattr(parsed, "watch", False):
            access = op.access_of(op.parse(args))
            if not access.read_only:
                raise InvalidRequest(f"--watch repeats a read; {op.name} {args.get('action')} "
                                     f"is not read-only ({access.word})")
            return _watch(service, op, args, parsed.json)
        return _print(service.call(op.name, args), parsed.json)
    except ScorchError as err:
        if parsed.json:  # what a program reads: the code, retryable, the argument at fault
            print(json.dumps({"error": err.info()}), flush=True)
        if isinstance(err, InvalidRequest):
            print(f"scorch {command}: {err}", file=sys.stderr)
            return EXIT_USAGE
        if isinstance(err, NotRunning):
            print(f"scorch: {err}", file=sys.stderr)
            return EXIT_NOT_RUNNING
        print(f"scorch {command}: {err}", file=sys.stderr)
        return EXIT_FAILED
    finally:
        close = getattr(service, "close", None)
        if close is not None:
            close()


def _print(result: Result, as_json: bool) -> int:
    text = result.model_dump_json(indent=2) if as_json else result.text()
    if text:
        print(text, flush=True)
    failure = result.failure()
    if failure is not None:
        print(failure, file=sys.stderr)
        return EXIT_FAILED
    hosts = getattr(result, "hosts", None)
    if hosts and not any(host.state == "CONNECTED" for host in hosts):
        print("scorch: no host answers (see the hosts above)", file=sys.stderr)
        return EXIT_NOT_RUNNING
    return 0


def _follow(service: Service, op: Operation[Any, Any], args: dict[str, Any],
            as_json: bool) -> int:
    """Print the answer, then what is new since its cursor, every half second."""
    assert op.cli.follow is not None
    while True:
        result = service.call(op.name, args)
        dumped = result.model_dump(mode="json")
        if as_json:
            for entry in dumped.get("entries", []):
                print(json.dumps(entry), flush=True)
        elif text := result.text():
            print(text, flush=True)
        args = {**args, op.cli.follow: dumped["cursor"]}
        time.sleep(FOLLOW_EVERY)


def _watch(service: Service, op: Operation[Any, Any], args: dict[str, Any],
           as_json: bool) -> int:
    """Print the answer again every second; on a terminal, in place of the last one."""
    clear = "\x1b[H\x1b[2J" if sys.stdout.isatty() else ""
    while True:
        result = service.call(op.name, args)
        text = result.model_dump_json(indent=2) if as_json else result.text()
        stamp = time.strftime("%H:%M:%S")
        print(f"{clear}{stamp}  scorch {op.command} (every {WATCH_EVERY:g} s; Ctrl-C ends)"
              f"\n{text}", flush=True)
        time.sleep(WATCH_EVERY)
