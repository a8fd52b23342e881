"""execute against a bare sclang on the help's examples: how often they agree, and why not.

Run: ``.venv/bin/python -m bench.execute_diff [--units N | --all]``. One room
and one plain sclang (each on its own scsynth, on a private JACK server) run
the hand-made cases of issue 18 and N examples from SuperCollider's installed
class help (a seeded sample; ``--all`` runs every one, about 9,000), each twice
on each side. Writes the "execute against bare sclang" section of BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import collections
import tempfile
import time
from pathlib import Path

from bench.report import write_section
from scorch.config import parse_config
from scorch.service.orchestra import Orchestra
from tests.differential import CASES, BareSclang, Verdict, help_units, run_units
from tests.harness import Scsynth, compile_test_synthdefs


def run(units: int | None) -> tuple[list[Verdict], float, int]:
    """The verdicts, the seconds they took, and how many help units were eligible."""
    eligible = len(help_units())
    corpus = CASES + help_units(units)
    jack = "scorch-bench-diff"  # the room's own jackd; the bare scsynth joins it
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


def report(verdicts: list[Verdict], took: float, eligible: int, command: str) -> str:
    same = sum(v.same and not v.nondeterministic for v in verdicts)
    varied = [v for v in verdicts if v.nondeterministic]
    unexplained = [v for v in verdicts if not v.same and not v.nondeterministic]
    cases = sum(v.unit.source.startswith("case:") for v in verdicts)
    lines = [
        "## execute against bare sclang",
        "",
        f"`{command}` ({time.strftime('%Y-%m-%d')}): the same code through `execute` and "
        "through a plain sclang fed as the IDE feeds it (`\\x0c`), each unit twice on each "
        f"side. Units: {cases} hand-made cases of issue 18 and {len(verdicts) - cases} "
        f"examples sampled from the {eligible} runnable units of SuperCollider's class help "
        "(units that would touch files, processes, windows, hardware, or the server's own "
        "life are left out). Compared: value, posted lines, error kind, message, line, char.",
        "",
        "| what | units |",
        "|---|---|",
        f"| compared | {len(verdicts)} |",
        f"| agree exactly | {same} |",
        f"| sclang's own two runs differ (named below) | {len(varied)} |",
        f"| differ without explanation | {len(unexplained)} |",
        f"| time | {took:.0f} s |",
        "",
        "Where sclang itself varies from run to run, the unit is not counted as a "
        "difference: random numbers and choices (`rand`, `coin`, `Prand`...), state the "
        "code changes as it runs (a variable it grows, a buffer it allocates), and the "
        "PROTECTED CALL STACK sclang prints only for the first error made inside try.",
    ]
    reasons = collections.Counter(v.reason.split(":")[0] for v in unexplained)
    if unexplained:
        lines += ["", "Unexplained differences:", ""]
        lines += [f"- {v.unit.source}: {v.reason[:200]}" for v in unexplained[:20]]
        lines += [f"- by kind: {dict(reasons)}"]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--units", type=int, default=1500, help="help examples to sample")
    parser.add_argument("--all", action="store_true", help="every runnable help example")
    args = parser.parse_args()
    verdicts, took, eligible = run(None if args.all else args.units)
    command = ".venv/bin/python -m bench.execute_diff" + (" --all" if args.all else
                                                            f" --units {args.units}")
    text = report(verdicts, took, eligible, command)
    print(text)
    write_section(text)


if __name__ == "__main__":
    main()
