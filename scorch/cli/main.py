"""The ``scorch`` command: run an installation, check the machine, serve MCP, operate it."""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
from collections.abc import Sequence
from types import FrameType

from scorch.cli.commands import add_commands
from scorch.config import find_config, load_config
from scorch.errors import ConfigError, ScorchError

log = logging.getLogger("scorch")


def _setup_logging(verbose: bool) -> None:
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.INFO, stream=sys.stderr,
        format="%(asctime)s %(levelname)-7s %(name)s: %(message)s",
    )


def cmd_run(args: argparse.Namespace) -> int:
    """Boot every instance, print the status table, run until Ctrl-C or SIGTERM."""
    from scorch.primitives.process import pid_alive
    from scorch.service.control_socket import ControlServer
    from scorch.service.local import LocalService
    from scorch.service.orchestra import Orchestra

    config = load_config(find_config(args.config))
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        log.info("%s: stopping", signal.Signals(signum).name)
        stop.set()

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    orchestra = Orchestra(config)
    service = LocalService(orchestra)
    control: ControlServer | None = None
    left: list[int] = []
    try:
        errors = orchestra.start(timeout=args.boot_timeout)
        for name, error in errors.items():
            if error:
                log.error("instance %r failed to boot: %s", name, error)
        if args.resume and orchestra.resume() is None:
            log.warning("--resume: no autosave in %s yet; starting from the config",
                        orchestra.sessions.folder)
        orchestra.start_autosave()
        print(service.call("list_instances", {}).text(), flush=True)
        control = ControlServer(orchestra, config.state_path())
        control.start()
        log.info("running %s; control socket %s; Ctrl-C stops", config.source, control.path)
        while not stop.wait(args.status_every or None):
            print(service.call("list_instances", {}).text(), flush=True)
    finally:
        if control is not None:
            control.stop()
        started = [pid for pid in orchestra.pids().values() if pid]
        orchestra.stop()
        left = [pid for pid in started if pid_alive(pid)]
        if left:
            log.error("stopped, but these processes are still running: %s", left)
        else:
            log.info("stopped; none of its %d processes is left", len(started))
    return 1 if left else 0


def cmd_doctor(args: argparse.Namespace) -> int:
    """Check binaries, MIDI APIs and ports; print the install command for what is missing."""
    from scorch.cli.doctor import report, run_checks

    config = None
    try:
        config = load_config(find_config(args.config))
    except ConfigError as err:
        print(f"config: {err}")
    checks = run_checks(config)
    print(report(checks))
    return 0 if all(c.ok for c in checks) else 1


def cmd_mcp(args: argparse.Namespace) -> int:
    """Serve MCP over stdio for Claude Desktop."""
    from mcp_server.server import serve

    serve(find_config(args.config))
    return 0


def cmd_claude_config(args: argparse.Namespace) -> int:
    """Print the Claude Desktop JSON snippet for this checkout."""
    from mcp_server.claude_config import snippet

    print(snippet(find_config(args.config).resolve()))
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand."""
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
    run.set_defaults(func=cmd_run)
    doctor = sub.add_parser("doctor", help="check this machine")
    doctor.add_argument("--config")
    doctor.set_defaults(func=cmd_doctor)
    mcp = sub.add_parser("mcp", help="serve MCP over stdio (Claude Desktop)")
    mcp.add_argument("--config")
    mcp.set_defaults(func=cmd_mcp)
    claude = sub.add_parser("claude-config", help="print the Claude Desktop config snippet")
    claude.add_argument("--config")
    claude.set_defaults(func=cmd_claude_config)
    add_commands(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``scorch`` console script."""
    args = build_parser().parse_args(argv)
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
