"""The ``scorch`` command: run an installation, check the machine, serve MCP, operate it."""

from __future__ import annotations

import argparse
import contextlib
import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from scorch.cli.report import add_parser as report_parser
from scorch.errors import ConfigError, ScorchError

log = logging.getLogger("scorch")


def _setup_logging(verbose: bool) -> None:
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.INFO, stream=sys.stderr,
        format="%(asctime)s %(levelname)-7s %(name)s: %(message)s",
    )


def cmd_run(args: argparse.Namespace) -> int:
    """Boot every room, print the status table, run until Ctrl-C or SIGTERM.

    SIGHUP re-reads the config and applies what changed (as ``scorch reload``).
    ``--resume`` starts from the last autosaved session instead of the config's nodes.
    Under systemd (``Type=notify``) it tells the manager when it is ready, how
    the rooms are, that it is alive (``WatchdogSec=``), and when it stops.
    """
    from scorch.config import find_config, room_names
    from scorch.primitives.sclang import guard_env, start_early

    path = find_config(args.config)
    # Before the config's models are imported and it is checked (a third of a second);
    # a room the checked config does not have, or has otherwise, does not take one.
    early = start_early(room_names(path, args.host), guard_env(path, args.host))
    try:
        from scorch.config import load_config

        config = load_config(path).for_host(args.host)
        from scorch.cli.running import Runner  # most of a second to import: they compile

        return Runner(config, args.boot_timeout, args.status_every, resume=args.resume,
                      early=early).run()
    finally:  # those no room took (none was, when the config did not load)
        for process in early.values():
            process.discard()


def cmd_service_install(args: argparse.Namespace) -> int:
    """Write a systemd unit that runs ``scorch run`` with this config."""
    from scorch.cli.service_unit import next_steps, scorch_executable, unit_path, unit_text
    from scorch.config import find_config, load_config

    config_path = find_config(args.config).resolve()
    # A unit for a config (or a host) that does not load would only fail later.
    load_config(config_path).for_host(args.host)
    path = Path(args.output) if args.output else unit_path(args.user, args.name)
    text = unit_text(scorch_executable(), config_path, args.user, args.host, args.resume)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as err:
        print(f"scorch: cannot write {path}: {err.strerror}"
              + ("; use --user, or run with sudo" if not args.user else ""), file=sys.stderr)
        return 1
    print(next_steps(path, args.user, args.name))
    return 0


def cmd_bridge(args: argparse.Namespace) -> int:
    """Carry the control socket's wire over stdin and stdout (``ssh HOST scorch bridge``)."""
    from scorch.config import find_config, load_config
    from scorch.wire import Bridge, socket_path

    config = load_config(find_config(args.config)).for_host(args.host)
    return Bridge(socket_path(config.state_path()), sys.stdin.buffer, sys.stdout.buffer).run()


def cmd_doctor(args: argparse.Namespace) -> int:
    """Check binaries, MIDI APIs and ports; print the install command for what is missing."""
    from scorch.config import find_config, load_config
    from scorch.machine import report, run_checks

    config = None
    try:
        config = load_config(find_config(args.config))
    except ConfigError as err:
        print(f"config: {err}")
    checks = run_checks(config)
    print(report(checks))
    return 0 if all(c.ok for c in checks) else 1


def cmd_mcp(args: argparse.Namespace) -> int:
    """Serve MCP over stdio for Claude Desktop (the handshake is answered before the SDK loads).

    ``--http [ADDR:PORT]``: over streamable HTTP instead, for any number of clients.
    """
    if args.http is not None:
        from mcp_server import serve_http
        from scorch.config import HTTP_HOST, HTTP_PORT, find_config, parse_listen

        try:
            host, port = parse_listen(args.http) if args.http else (HTTP_HOST, HTTP_PORT)
        except ValueError as err:
            print(f"scorch mcp --http: {err}", file=sys.stderr)
            return 2
        serve_http(find_config(args.config), host, port, args.tools)
        return 0
    from mcp_server import EarlyFront, HandshakeCache
    from scorch.config import tools

    if args.config:  # as find_config says, without importing what finds the others
        path = Path(args.config)
    else:
        from scorch.config import find_config

        path = find_config(args.config)
    # The handshake's answers depend on the tools chosen: read the choice first (the file's
    # text, no more), so that the early answers are those of the server that follows.
    front = EarlyFront(HandshakeCache(tools=tools.key(tools.requested(path, args.tools))))
    front.start()
    from mcp_server import hosted_here
    from scorch.config import load_config
    from scorch.primitives.sclang import guard_env, start_early

    early, config = {}, None
    with contextlib.suppress(ConfigError):  # the server says the mistakes in every tool
        config = load_config(path)
        if hosted_here(config):
            early = start_early(config.instances, guard_env(config.source, config.host))
    from mcp_server import serve

    serve(path, front, early, config, args.tools)
    return 0


def cmd_claude_config(args: argparse.Namespace) -> int:
    """Print the Claude Desktop JSON snippet; ``--install`` writes it into Claude's config.

    ``--http [ADDR:PORT]``: the entry of a client of MCP over HTTP, with the token.
    """
    from mcp_server import InstallRefused, desktop_config_path, install, snippet
    from scorch.config import find_config

    config = find_config(args.config).resolve()
    new = None
    if args.http is not None:
        try:
            new = _http_entry(config, args.http)
        except (ConfigError, ValueError) as err:
            print(f"scorch claude-config --http: {err}", file=sys.stderr)
            return 2
        if args.install and not args.path:
            print("scorch claude-config --install --http: say which client's file with --path "
                  "(Claude Code: a project's .mcp.json); Claude Desktop's own takes stdio entries "
                  "only", file=sys.stderr)
            return 2
    if not args.install:
        print(snippet(config, new))
        return 0
    try:
        path, backup = install(config, Path(args.path) if args.path else desktop_config_path(),
                               args.name, new)
    except (InstallRefused, OSError) as err:
        print(f"scorch: {err}", file=sys.stderr)
        return 1
    if new is not None:
        print(f"wrote the {args.name!r} entry (its URL and token) into {path}"
              + (f" (the previous file is {backup})" if backup else ""))
        return 0
    print(f"wrote the {args.name!r} entry into {path}"
          + (f" (the previous file is {backup})" if backup else "")
          + "; restart Claude Desktop to start it")
    return 0


def _http_entry(config_path: Path, where: str) -> dict[str, Any]:
    """The HTTP client's entry for the installation at ``where`` (else ``[mcp] http``)."""
    import socket

    from mcp_server import http_entry, url
    from scorch.config import HTTP_HOST, HTTP_PORT, load_config, parse_listen
    from scorch.wire import WILDCARDS, is_loopback, load_token

    config = load_config(config_path)
    host, port = parse_listen(where) if where else config.mcp.listen() or (HTTP_HOST, HTTP_PORT)
    opened = config.mcp.open_loopback and is_loopback(host)
    token = None if opened else load_token(config.state_path())
    # Every address: a client names the machine (a name its Host check knows).
    return http_entry(url(socket.gethostname() if host in WILDCARDS else host, port), token)


def cmd_init(args: argparse.Namespace) -> int:
    """Write a commented starter config.toml (never over an existing one)."""
    from scorch.config import user_config, write_starter

    try:
        written = write_starter(Path(args.dir) if args.dir else user_config())
    except ConfigError as err:
        print(f"scorch: {err}", file=sys.stderr)
        return 1
    print(f"wrote {written}: edit it, then `scorch run --config {written}`")
    return 0


def _mcp_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config")
    parser.add_argument("--http", nargs="?", const="", metavar="ADDR:PORT",
                        help="serve streamable HTTP at http://ADDR:PORT/mcp instead of stdio "
                        "(default 127.0.0.1:57180; off loopback every request needs the "
                        "state folder's http-token)")
    parser.add_argument("--tools", metavar="CHOICE",
                        help="the tools to list: all, a profile (play, installation, code) or "
                        "tool names separated by commas (default: the config's [mcp] tools)")


#: The commands written here; every other one is an operation's (:mod:`scorch.cli.commands`).
OWN_COMMANDS = frozenset({"run", "service", "bridge", "doctor", "mcp", "claude-config", "init",
                          "report"})


def build_parser(argv: Sequence[str] = ()) -> argparse.ArgumentParser:
    """The argument parser for ``argv``: scorch's own commands, and the operation it names.

    Every operation's command only when ``argv`` names none (``scorch --help``) or one
    unknown: their models take about a second of a core to import, which ``scorch run``
    would pay before its first room starts, and every ``scorch status`` too.
    """
    parser = argparse.ArgumentParser(prog="scorch", description=__doc__)
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="boot the installation and keep it running")
    run.add_argument("--config", help="config file (default: ./config.toml, else the embedded one)")
    run.add_argument("--boot-timeout", type=float, default=60.0)
    run.add_argument("--resume", action="store_true",
                     help="start from the last autosaved session (sessions/autosave.toml)")
    run.add_argument("--status-every", type=float, default=0.0,
                     help="print the status table every N seconds (0: only after boot)")
    run.add_argument("--host", help="run only this [hosts.NAME]'s rooms and MIDI routes "
                     "(default: the rooms without a host)")
    run.set_defaults(func=cmd_run)
    service = sub.add_parser("service", help="run scorch as a systemd service")
    service_sub = service.add_subparsers(dest="service_command", required=True)
    install = service_sub.add_parser("install", help="write a systemd unit for this config")
    install.add_argument("--config", help="the installation's config file")
    install.add_argument("--user", action="store_true",
                         help="a user unit (~/.config/systemd/user), no root needed")
    install.add_argument("--name", default="scorch", help="the unit's name (default: scorch)")
    install.add_argument("--output", help="write the unit here instead")
    install.add_argument("--host", help="the unit runs `scorch run --host NAME`: this "
                         "[hosts.NAME]'s rooms")
    install.add_argument("--resume", action="store_true",
                         help="every start comes back from the last autosave (what was "
                         "played, loaded and mapped at run time), not from the config alone")
    install.set_defaults(func=cmd_service_install)
    bridge = sub.add_parser("bridge", help="the control socket over stdin/stdout, for a "
                            "coordinator's `ssh HOST scorch bridge`")
    bridge.add_argument("--config")
    bridge.add_argument("--host", help="the [hosts.NAME] whose `scorch run` to reach")
    bridge.set_defaults(func=cmd_bridge)
    doctor = sub.add_parser("doctor", help="check this machine")
    doctor.add_argument("--config")
    doctor.set_defaults(func=cmd_doctor)
    report_parser(sub)
    mcp = sub.add_parser("mcp", help="serve MCP over stdio (Claude Desktop) or HTTP")
    _mcp_arguments(mcp)
    mcp.set_defaults(func=cmd_mcp)
    claude = sub.add_parser("claude-config", help="print the Claude Desktop config snippet")
    claude.add_argument("--config")
    claude.add_argument("--install", action="store_true",
                        help="write the entry into Claude Desktop's config file (backed up)")
    claude.add_argument("--path", help="that file (default: Claude Desktop's own on this "
                        "system, or $SCORCH_CLAUDE_CONFIG)")
    claude.add_argument("--name", default="scorch", help="the entry's name (default: scorch)")
    claude.add_argument("--http", nargs="?", const="", metavar="ADDR:PORT",
                        help="the entry of a client of MCP over HTTP (Claude Code's .mcp.json): "
                        "its URL (default: [mcp] http, else 127.0.0.1:57180) and the token; "
                        "with --install, into --path")
    claude.set_defaults(func=cmd_claude_config)
    init = sub.add_parser("init", help="write a commented starter config.toml")
    init.add_argument("dir", nargs="?", help="a folder, or a .toml file (default: the user's "
                      "config folder, where scorch looks when no --config is given)")
    init.set_defaults(func=cmd_init)
    command = _command(argv)
    if command not in OWN_COMMANDS:
        from scorch.cli.commands import add_commands  # the operations' commands: pydantic

        add_commands(sub, command)
    return parser


def _command(argv: Sequence[str]) -> str | None:
    """The subcommand ``argv`` names: its first word that is not an option."""
    return next((word for word in argv if not word.startswith("-")), None)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``scorch`` console script."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["mcp"]:
        # Claude Desktop waits for the handshake: parse nothing else, import nothing more.
        mcp = argparse.ArgumentParser(prog="scorch mcp")
        _mcp_arguments(mcp)
        mcp.add_argument("-v", "--verbose", action="store_true", help="debug logging")
        args = mcp.parse_args(argv[1:])
        args.func = cmd_mcp
    else:
        args = build_parser(argv).parse_args(argv)
    _setup_logging(args.verbose)
    try:
        return int(args.func(args))
    except ConfigError as err:
        print(f"scorch: bad config:\n{err}", file=sys.stderr)
        return 2
    except ScorchError as err:
        print(f"scorch: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
