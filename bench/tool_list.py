"""What a model carries before its first word: `tools/list` and the instructions, before and now.

Characters of name + description + input schema per tool (as the repository's
before-stop hook counts them: compact JSON), of the output schemas and of the
`initialize` instructions; tokens estimated as characters / 4. Now: through a real
``mcp.Client`` (in memory) for all the tools and each profile of ``[mcp] tools``.
Before: the handshake recorded at a git revision (``mcp_server/handshake.json``, the
SDK's own answers then), by default where this branch left main.

``python -m bench.tool_list [--before REV] [--write]`` (``--write``: BENCHMARKS.md's
section too).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp import Client

from bench.report import write_section
from mcp_server.schemas import size
from mcp_server.server import build_server
from mcp_server.tools import choose
from scorch.api.local import LocalService
from scorch.config.tools import ALL, PROFILES

ROOT = Path(__file__).resolve().parent.parent
GOALS = {"all": 48_000, "profile": 24_000, "tool": 4_000, "outputs": 24_000,
         "instructions": 3_000}
Figures = dict[str, Any]


def measure(tools: list[dict[str, Any]], instructions: str) -> Figures:
    """Each tool's characters, the outputs' and the instructions'."""
    return {"tools": {t["name"]: size(t["name"], t.get("description"), t.get("inputSchema"))
                      for t in tools},
            "outputs": {t["name"]: len(json.dumps(t["outputSchema"], separators=(",", ":")))
                        for t in tools if t.get("outputSchema")},
            "instructions": len(instructions)}


async def now(choice: str) -> Figures:
    """The figures of a server of ``choice`` (``all`` or a profile), through ``mcp.Client``."""
    server = build_server(LocalService(), listed=choose(choice, "bench"))
    async with Client(server) as client:
        listed = (await client.list_tools()).tools
        tools = [t.model_dump(by_alias=True, exclude_none=True) for t in listed]
        return measure(tools, client.instructions or "")


def before(revision: str) -> Figures:
    """The figures of the handshake recorded at ``revision``."""
    text = subprocess.run(["git", "show", f"{revision}:mcp_server/handshake.json"], cwd=ROOT,
                          capture_output=True, text=True, check=True).stdout
    answers = json.loads(text)["answers"]
    return measure(answers["tools/list"]["tools"],
                   answers["initialize 2025-06-18"].get("instructions", ""))


def base() -> str:
    """Where this branch left main (HEAD on main itself)."""
    return subprocess.run(["git", "merge-base", "HEAD", "main"], cwd=ROOT, capture_output=True,
                          text=True, check=True).stdout.strip()[:12]


def tokens(chars: int) -> str:
    return f"{chars:,} ({chars // 4:,} tokens)"


def report(old: Figures, new: dict[str, Figures], revision: str, command: str) -> str:
    """BENCHMARKS.md's section: totals, profiles, then tool by tool."""
    every = new[ALL]
    lines = [
        "## Tool list (issue 38)", "",
        "What a conversation carries before its first word: characters of name + description + "
        "input schema per tool (compact JSON, as the before-stop hook counts them), of the "
        "output schemas, and of the `initialize` instructions; tokens estimated as "
        "characters / 4. Now: through a real `mcp.Client` for all the tools and each "
        f"profile (`[mcp] tools`); before: the SDK's answers recorded at {revision} "
        f"(`mcp_server/handshake.json`). `{command}`.", "",
        "| list | tools | name + description + input schema | largest tool | output schemas "
        "| instructions | goal |", "|---|---|---|---|---|---|---|"]

    def row(label: str, figures: Figures, goal: int) -> str:
        sizes = figures["tools"]
        big = max(sizes, key=sizes.get)
        total = sum(sizes.values())
        met = ("met" if total <= goal and sizes[big] <= GOALS["tool"]
               and sum(figures["outputs"].values()) <= GOALS["outputs"]
               and figures["instructions"] <= GOALS["instructions"] else "MISSED")
        return (f"| {label} | {len(sizes)} | {tokens(total)} | {big} {sizes[big]:,} | "
                f"{tokens(sum(figures['outputs'].values()))} | {figures['instructions']:,} | "
                f"<= {goal:,}, a tool <= {GOALS['tool']:,}: {met} |")

    lines.append(row("all, before", old, GOALS["all"]))
    lines.append(row("all, now", every, GOALS["all"]))
    lines += [row(f"profile `{name}`", new[name], GOALS["profile"]) for name in PROFILES]
    lines += ["", f"Output schemas at most {GOALS['outputs']:,} in all (each the answer's "
              "shape: fields, types, null, enums, three levels deep), instructions at most "
              f"{GOALS['instructions']:,}. The profiles' tools (the panel's `live` and `fader` "
              "come with `listen` and `status`, which show it): "
              + "; ".join(f"`{name}`: {', '.join(sorted(new[name]['tools']))}"
                          for name in PROFILES) + ".", "",
              "| tool | before | now | output before | output now |", "|---|---|---|---|---|"]
    for name in [*old["tools"], *(name for name in every["tools"] if name not in old["tools"])]:
        lines.append(f"| `{name}` | {_figure(old['tools'], name)} | "
                     f"{_figure(every['tools'], name)} | {_figure(old['outputs'], name)} | "
                     f"{_figure(every['outputs'], name)} |")
    return "\n".join(lines) + "\n"


def _figure(figures: dict[str, int], name: str) -> str:
    """A tool's figure, or a dash where the tool was not listed then."""
    return f"{figures[name]:,}" if name in figures else "-"


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.tool_list")
    parser.add_argument("--before", help="the git revision to compare with (default: where "
                        "this branch left main)")
    parser.add_argument("--write", action="store_true", help="update BENCHMARKS.md")
    args = parser.parse_args()
    revision = args.before or base()
    new = {choice: anyio.run(now, choice) for choice in (ALL, *PROFILES)}
    command = " ".join(["python -m bench.tool_list",
                        *(["--before", args.before] if args.before else []), "--write"])
    section = report(before(revision), new, revision, command)
    print(section)
    if args.write:
        write_section(section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
