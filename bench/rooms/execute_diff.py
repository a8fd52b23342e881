"""execute against a bare sclang on the help's examples: how often they agree, and why not.

Run: ``.venv/bin/python -m bench.rooms.execute_diff [--units N | --all]``. One room
and one plain sclang (each on its own scsynth, on a private JACK server) run
the hand-made cases of issue 18 and N examples from SuperCollider's installed
class help (a seeded sample; ``--all`` runs every one, about 9,000), each twice
on each side. Writes the "execute against bare sclang" section of BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import tempfile
import time
from pathlib import Path

from bench.report import write_section
from scorch.app.orchestra import Orchestra
from scorch.config.installation import parse_config
from tests.support.bare_sclang import BareSclang
from tests.support.differential import CASES, Verdict, guarded_units, help_units, run_units
from tests.support.harness import Scsynth, compile_test_synthdefs


def run(units: int | None) -> tuple[list[Verdict], float, int]:
    """The verdicts, the seconds they took, and how many help units were eligible."""
    eligible = len(help_units())
    sample = help_units(units)
    # every example that writes a file or runs a command: the guard's differences (issue 37)
    corpus = CASES + sample + [unit for unit in guarded_units() if unit not in sample]
    # the room's own jackd (the bare scsynth joins it); SCORCH_TEST_JACK keeps runs apart
    jack = os.environ.get("SCORCH_TEST_JACK", "scorch-bench") + "-diff"
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        text = (f'state_dir = "{folder / "state"}"\n[audio]\n'
                f'driver = "dummy"\njack_server = "{jack}"\n'
                "[midi]\nenabled = false\n[instances.room]\n")
        orch = Orchestra(parse_config(text, folder / "config.toml"))
        orch.start()
        server = Scsynth(jack, compile_test_synthdefs(folder / "defs"), "bare")
        bare = BareSclang(server.port, "room")
        started = time.monotonic()
        try:
            verdicts = run_units(orch, "room", bare, corpus, progress=True)
        finally:
            bare.close()
            server.close()
            orch.stop()
    return verdicts, time.monotonic() - started, eligible


def report(verdicts: list[Verdict], took: float, eligible: int, command: str,
           units_sampled: int) -> str:
    same = sum(v.same and not v.nondeterministic for v in verdicts)
    varied = [v for v in verdicts if v.nondeterministic]
    guarded = [v for v in verdicts if v.guarded]
    unexplained = [v for v in verdicts if not v.same and not v.nondeterministic and not v.guarded]
    cases = sum(v.unit.source.startswith("case:") for v in verdicts)
    lines = [
        "## execute against bare sclang",
        "",
        f"`{command}` ({time.strftime('%Y-%m-%d')}): the same code through `execute` and "
        "through a plain sclang fed as the IDE feeds it (`\\x0c`), each unit twice on each "
        "side, each run compared with its counterpart. "
        f"Units: {cases} hand-made cases of issue 18 and {len(verdicts) - cases} "
        f"examples of SuperCollider's class help: {units_sampled} sampled from its {eligible} "
        "runnable units (units that would touch files, processes, windows, hardware, or the "
        "server's own life are left out), and every runnable one that writes a file or runs "
        "a command, which scorch's guard refuses (issue 37). Compared: value, posted lines, "
        "error kind, message, line, char.",
        "",
        "| what | units |",
        "|---|---|",
        f"| compared | {len(verdicts)} |",
        f"| agree exactly, both runs | {same} |",
        f"| sclang itself varies, dies or runs out of time (named below) | {len(varied)} |",
        f"| refused by scorch's guard where the bare sclang wrote or ran it, the same up to "
        f"the refusal (named below) | {len(guarded)} |",
        f"| differ without explanation | {len(unexplained)} |",
        f"| time | {took:.0f} s |",
        "",
        "Every run starts from the same random seed on both sides, so `rand`, `coin` and "
        "`Prand` give the same numbers and are compared exactly; both sides give what the "
        "code left running the same 0.1 s before `CmdPeriod`; when either side's sclang "
        "hangs or dies, both are replaced, so the two interpreters always hold the same "
        "variables (the bare one keeps its language port, hence its client id). A unit whose "
        "state grows from run to run (a counter, a buffer) agrees when each run agrees with "
        "its counterpart. Where sclang itself varies, the unit is named, not counted:",
        "",
        "| why | units | of which scorch still agreed |",
        "|---|---|---|",
        *(f"| {why} | {len(group)} | {sum(v.same for v in group)} |"
          for why, group in sorted(_varied_by_why(varied).items(), key=lambda kv: -len(kv[1]))),
    ]
    for why, group in _varied_by_why(varied).items():
        lines += ["", f"{why[0].upper()}{why[1:]}:", ""]
        lines += [f"- {v.unit.source} (`{v.unit.code.splitlines()[0][:50]}`): "
                  f"{v.reason[:150]}" for v in group[:12]]
    if guarded:
        lines += ["", "Refused by scorch's guard ([security] sclang_shell = false, the default):",
                  ""]
        lines += [f"- {v.unit.source} (`{v.unit.code.splitlines()[0][:50]}`): "
                  f"{v.reason.split(': it ')[0]}" for v in guarded]
    reasons = collections.Counter(v.reason.split(":")[0] for v in unexplained)
    if unexplained:
        lines += ["", "Unexplained differences:", ""]
        lines += [f"- {v.unit.source}: {v.reason[:200]}" for v in unexplained[:20]]
        lines += [f"- by kind: {dict(reasons)}"]
    return "\n".join(lines)


def _why(verdict: Verdict) -> str:
    """The kind of variation in sclang itself that excused a unit."""
    for start, why in (("sclang itself died", "sclang itself died on it"),
                       ("sclang itself takes about the time limit",
                        "takes about the 5 s limit in sclang itself"),
                       ("sclang itself finished one of its two runs",
                        "sclang itself finished one of its two runs, not the other")):
        if verdict.reason.startswith(start):
            return why
    return "sclang's own two runs print different things, and scorch differs"


def _varied_by_why(varied: list[Verdict]) -> dict[str, list[Verdict]]:
    groups: dict[str, list[Verdict]] = collections.defaultdict(list)
    for verdict in varied:
        groups[_why(verdict)].append(verdict)
    return groups


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--units", type=int, default=1500, help="help examples to sample")
    parser.add_argument("--all", action="store_true", help="every runnable help example")
    parser.add_argument("--dump", type=Path, help="write every verdict to this JSON file")
    args = parser.parse_args()
    verdicts, took, eligible = run(None if args.all else args.units)
    if args.dump:
        args.dump.write_text(json.dumps([
            {"unit": v.unit.source, "code": v.unit.code, "same": v.same, "reason": v.reason,
             "nondeterministic": v.nondeterministic, "guarded": v.guarded, "bare": v.bare,
             "scorch": v.scorch, "notes": v.notes} for v in verdicts], indent=1))
    command = ".venv/bin/python -m bench.rooms.execute_diff" + (" --all" if args.all else
                                                            f" --units {args.units}")
    text = report(verdicts, took, eligible, command,
                  eligible if args.all else min(args.units, eligible))
    print(text)
    write_section(text)


if __name__ == "__main__":
    main()
