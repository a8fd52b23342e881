"""The operator's commands, derived from the API schema: ``scorch COMMAND ...`` per operation.

Each operation with a ``command`` becomes a subcommand: its ``positional``
arguments are taken in order, every other argument is an option named after it
(``--timeout-s 5``), and the call goes to the running ``scorch run`` of the
config through its control socket. Values that are not text are read as JSON
(``--params '{"freq": 220}'``, ``--clear true``).

Exit status: 0 done, 1 the operation failed (the message says why), 2 bad
arguments, 3 no ``scorch run`` answers for this config (as ``systemctl status``).
"""

from __future__ import annotations

import argparse
import json
import sys
import types
import typing
from typing import Any

from pydantic.fields import FieldInfo

from scorch.config import find_config, load_config
from scorch.errors import InvalidRequest, NotRunning, ScorchError
from scorch.service.api import Operation
from scorch.service.ops import OPERATIONS

EXIT_FAILED, EXIT_USAGE, EXIT_NOT_RUNNING = 1, 2, 3


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add a subcommand for every operation that has one."""
    for op in OPERATIONS.values():
        if op.command is None:
            continue
        parser = sub.add_parser(op.command, help=op.summary, description=op.doc)
        parser.add_argument("--config", help="the installation's config file")
        parser.add_argument("--json", action="store_true", help="print the answer as JSON")
        for name in op.positional:
            field = op.args.model_fields[name]
            parser.add_argument(name, help=field.description,
                                nargs=None if field.is_required() else "?")
        for name, field in op.args.model_fields.items():
            if name not in op.positional:
                parser.add_argument(f"--{name.replace('_', '-')}", dest=name,
                                    help=field.description, metavar=_metavar(field))
        parser.set_defaults(func=lambda args, op=op: run_command(op, args))


def _metavar(field: FieldInfo) -> str:
    return "TEXT" if _is_text(field) else "JSON"


def _is_text(field: FieldInfo) -> bool:
    """True when the argument is text (otherwise the command line gives JSON)."""
    annotation = field.annotation
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        annotation = next(a for a in typing.get_args(annotation) if a is not type(None))
    if typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    if typing.get_origin(annotation) is typing.Literal:
        return all(isinstance(v, str) for v in typing.get_args(annotation))
    return annotation is str


def arguments(op: Operation[Any, Any], parsed: argparse.Namespace) -> dict[str, Any]:
    """The operation's arguments from the command line (only those given)."""
    out: dict[str, Any] = {}
    for name, field in op.args.model_fields.items():
        value = getattr(parsed, name, None)
        if value is None:
            continue
        if _is_text(field):
            out[name] = value
            continue
        try:
            out[name] = json.loads(value)
        except ValueError:
            raise InvalidRequest(f"{name}: expected JSON (a number, true/false, a list or an "
                                 f"object), found {value!r}") from None
    return out


def run_command(op: Operation[Any, Any], parsed: argparse.Namespace) -> int:
    """Call the operation on the running installation and print its answer."""
    from scorch.service.remote import RemoteService
    from scorch.service.wire import find_running

    config = load_config(find_config(parsed.config))
    path = find_running(config.state_path())
    if path is None:
        print(f"scorch: no `scorch run` answers for {config.source or 'the default config'} "
              f"(looked for {config.state_path() / 'control.sock'}); start it with "
              "`scorch run` or `systemctl start scorch`", file=sys.stderr)
        return EXIT_NOT_RUNNING
    service = RemoteService(path)
    try:
        result = service.call(op.name, arguments(op, parsed))
    except InvalidRequest as err:
        print(f"scorch {op.command}: {err}", file=sys.stderr)
        return EXIT_USAGE
    except NotRunning as err:
        print(f"scorch: {err}", file=sys.stderr)
        return EXIT_NOT_RUNNING
    except ScorchError as err:
        print(f"scorch {op.command}: {err}", file=sys.stderr)
        return EXIT_FAILED
    finally:
        service.close()
    print(result.model_dump_json(indent=2) if parsed.json else result.text())
    failure = result.failure()
    if failure is not None:
        print(failure, file=sys.stderr)
        return EXIT_FAILED
    return 0
