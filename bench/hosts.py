"""Benchmark several hosts: the start spread of one ``at`` across two hosts, and status latency.

Run with ``python -m bench.hosts`` (about a minute). Every host is a real
``scorch run --host NAME`` (``via = "local"``); they join one private
JACK server (``driver = "jack"``), so one more scsynth, the listener, hears
both rooms on its two inputs, sample by sample.

- Start spread: each trial gives both rooms, on their two hosts, the same
  time through a coordinator, and the listener reports the sample at which
  each room's sound began (``Phasor`` latched by the onset, ``SendReply``).
  Three ways: ``execute`` with ``at`` (sclang runs it on its SystemClock,
  inside a bundle stamped ``at``: a click through ``OffsetOut``, so
  sample-accurate), ``play`` with ``at`` (scorch's own timestamped bundle of
  the library's ``sine``, which starts on a block boundary as any ``Out``
  synth does), and the baseline: the same ``execute`` with no time, sent at
  once to both hosts. Both hosts share this machine's clock, so this measures
  scsynth's own mapping of times to samples and the path through scorch; on
  separate machines chrony's offset (``scorch doctor``) adds to it.
- Status latency: ``list_instances`` through one coordinator over 1 host and
  over 4 (each its own ``scorch run``), over the control socket (``local``),
  and over ssh to a private sshd on loopback when one can run here.

The figures replace the ``## Several hosts`` section of BENCHMARKS.md
(``--no-write`` to skip).
"""

from __future__ import annotations

import argparse
import platform
import socket
import statistics
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bench.report import write_section
from scorch.api.coordinator import Coordinator
from scorch.config.installation import Config, load_config
from scorch.primitives.osc import decode_packet, encode_message
from scorch.primitives.scsynth.server import Scsynth, ScsynthOptions
from scorch.primitives.synthdefs.library import SynthDefLibrary
from scorch.primitives.system.console import Console
from scorch.primitives.system.udp_ports import free_udp_port
from tests.support.harness import jack_server
from tests.support.hosts.harness import ScorchRun, Sshd, free_tcp_port

ROOT = Path(__file__).resolve().parent.parent
LISTENER = "hostsbench-listen"
LISTEN_DEF = "hostsbench_onsets"
CLICK_DEF = "hostsbench_click"
#: The listener's node; its Phasor starts from 0 with each trial (float32: exact to 2**24).
LISTEN_NODE = 5000
LISTEN_SOURCE = f"""SynthDef(\\{LISTEN_DEF}, {{ |thresh = 0.05|
  var in = SoundIn.ar([0, 1]), count = Phasor.ar(0, 1, 0, 16777216);
  var trig = Trig1.ar(in.abs > thresh, 0.5);
  SendReply.ar(trig[0], '/onset', [0, count]);
  SendReply.ar(trig[1], '/onset', [1, count]);
}}, metadata: (
  description: "Benchmark listener: the sample each input's sound begins at", category: \\fx,
  specs: (thresh: ControlSpec(0, 1, \\lin, 0, 0.05)), descriptions: (thresh: "Onset level")
))
"""
CLICK = (f"SynthDef(\\{CLICK_DEF}, {{ OffsetOut.ar(0, Impulse.ar(0) * "
         "EnvGen.kr(Env([1, 1], [0.02]), doneAction: 2)) }).add; \\ok")


def room(name: str, host: str, listener_input: int) -> str:
    return textwrap.dedent(f"""
        [instances.{name}]
        host = "{host}"
        synthdefs = ["sine"]
        connect = ["scorch-{LISTENER}:in_{listener_input}"]
        """)


def host_table(name: str, jack: str, extra: str = "") -> str:
    return textwrap.dedent(f"""
        [hosts.{name}]
        via = "local"
        [hosts.{name}.audio]
        driver = "jack"
        jack_server = "{jack}"
        """) + extra


def config_text(folder: Path, jack: str, hosts: list[str], extra: dict[str, str]) -> str:
    text = textwrap.dedent(f"""
        state_dir = "{folder / 'state'}"
        [audio]
        driver = "jack"
        jack_server = "{jack}"
        [docs]
        build = "on-demand"
        [midi]
        enabled = false
        """)
    for index, host in enumerate(hosts):
        text += host_table(host, jack, extra.get(host, ""))
        text += room(f"room{index}", host, 1 + index % 2)
    return text


@contextmanager
def running(config: Config, path: Path, folder: Path) -> Iterator[dict[str, ScorchRun]]:
    """A ``scorch run --host`` per host of ``config``, one after another; stopped after."""
    runs: dict[str, ScorchRun] = {}
    try:
        for host in config.hosts:
            runs[host] = ScorchRun(path, host, folder / f"{host}.log")
            runs[host].wait_serving(config.host_state_path(host))
        yield runs
    finally:
        for run in runs.values():
            run.stop()


class Listener:
    """The third scsynth: both rooms' outputs on its inputs, onsets reported by sample."""

    def __init__(self, jack: str, folder: Path) -> None:
        sources = folder / "scd"
        sources.mkdir(exist_ok=True)
        (sources / f"{LISTEN_DEF}.scd").write_text(LISTEN_SOURCE)
        library = SynthDefLibrary(sources, cache_dir=folder / "cache")
        assert not library.errors, library.errors
        options = ScsynthOptions(name=LISTENER, port=free_udp_port(), jack_server=jack,
                                 inputs=2, outputs=0)
        self.server = Scsynth.start(options, Console(), lambda proc, code: None, 10.0)
        self.server.osc.send(encode_message("/d_recv", library.compiled(LISTEN_DEF)))
        self.server.osc.sync()
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.address = ("127.0.0.1", options.port)
        self.sock.sendto(encode_message("/notify", 1, 1), self.address)  # client 1: ours
        self.sample_rate = self.server.osc.status().nominal_sample_rate

    def arm(self) -> None:
        """A fresh listener synth: its count starts at 0, no onset heard yet."""
        self.server.osc.send(encode_message("/n_free", LISTEN_NODE))
        self.server.osc.send(encode_message("/s_new", LISTEN_DEF, LISTEN_NODE, 0, 0))
        self.server.osc.sync()
        self._drain()

    def _drain(self) -> None:
        try:
            while True:
                self.sock.recv(65536)
        except TimeoutError:
            pass

    def onsets(self, timeout: float) -> dict[int, float]:
        """The sample each input's sound began at, by input (0 and 1)."""
        found: dict[int, float] = {}
        deadline = time.monotonic() + timeout
        while len(found) < 2 and time.monotonic() < deadline:
            try:
                data = self.sock.recv(65536)
            except TimeoutError:
                continue
            for message in decode_packet(data):
                if message.address == "/onset":
                    channel, count = int(message.args[2]), float(message.args[3])  # type: ignore[arg-type]
                    found.setdefault(channel, count)
        return found

    def close(self) -> None:
        self.sock.close()
        self.server.stop()


def spread(coordinator: Coordinator, listener: Listener, how: str, trials: int) -> list[float]:
    """Start spreads in samples, one per trial, of ``how``.

    ``exec_at``/``exec_now``: one ``execute`` on both rooms, with a time or without;
    ``play_at``/``play_now``: two ``play`` calls, one per room, with one time or without
    (as a person starting two rooms would).
    """
    out: list[float] = []
    misses = 0
    while len(out) < trials:
        assert misses <= trials, f"{how}: {misses} trials heard nothing"
        listener.arm()
        at = time.time() + 0.4
        if how.startswith("exec"):
            timed = {"at": at} if how == "exec_at" else {}
            coordinator.call("execute", {"instance": "*", **timed,
                                         "code": f"Synth(\\{CLICK_DEF})"})
        else:
            timed = {"at": at} if how == "play_at" else {}
            for name in ("room0", "room1"):
                coordinator.call("play", {"instance": name, "synthdef": "sine", **timed,
                                          "params": {"atk": 0.001, "amp": 1.0, "freq": 2000},
                                          "name": "tone"})
        found = listener.onsets(3.0)
        if how.startswith("play"):
            for name in ("room0", "room1"):
                coordinator.call("release", {"instance": name, "node": "tone"})
            time.sleep(0.4)  # its release
        time.sleep(0.15)
        if set(found) != {0, 1}:
            misses += 1  # a click the listener missed (rare): the trial is not counted
            continue
        out.append(abs(found[0] - found[1]))
    MISSES[how] = misses
    return out


#: Trials per way in which the listener did not hear both rooms (not counted).
MISSES: dict[str, int] = {}


def latency(coordinator: Coordinator, samples: int) -> list[float]:
    """Milliseconds per ``list_instances`` through ``coordinator``, after a warm-up."""
    for _ in range(10):
        coordinator.call("list_instances", {})
    out = []
    for _ in range(samples):
        started = time.perf_counter()
        listed = coordinator.call("list_instances", {})
        out.append((time.perf_counter() - started) * 1000)
        assert {h.state for h in listed.hosts} == {"CONNECTED"}, listed.hosts  # type: ignore[attr-defined]
    return out


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def measure(folder: Path, trials: int, samples: int) -> dict[str, Any]:
    results: dict[str, Any] = {}
    with jack_server("scorch-bench-hosts") as jack:
        listener = Listener(jack, folder)
        try:
            path = folder / "spread.toml"
            path.write_text(config_text(folder, jack, ["north", "south"], {}))
            config = load_config(path)
            with running(config, path, folder):
                coordinator = Coordinator(config)
                try:
                    coordinator.call("execute", {"instance": "*", "code": CLICK})
                    time.sleep(0.5)  # .add sends the SynthDef: let both servers take it
                    results["rate"] = listener.sample_rate
                    # The clicks first: an untimed OffsetOut click on a server that has run
                    # timestamped bundles since was not heard here (scsynth's sample offset).
                    for how in ("exec_now", "exec_at", "play_now", "play_at"):
                        results[how] = spread(coordinator, listener, how, trials)
                finally:
                    coordinator.close()
        finally:
            listener.close()
        hosts = ["h1", "h2", "h3", "h4"]
        path = folder / "status.toml"
        path.write_text(config_text(folder / "status", jack, hosts, {}))
        config = load_config(path)
        with running(config, path, folder):
            for count in (1, 4):
                coordinator = Coordinator(config, only=list(hosts[:count]))
                try:
                    results[f"local{count}"] = latency(coordinator, samples)
                finally:
                    coordinator.close()
            results["ssh"] = ssh_latency(folder, config, samples)
    return results


def ssh_latency(folder: Path, local: Config, samples: int) -> dict[str, list[float]] | str:
    """The same 1 and 4 hosts, each reached over ssh to a private sshd on loopback."""
    try:
        sshd = Sshd(folder / "sshd", "127.0.0.1", free_tcp_port())
    except BaseException as err:  # pytest.skip's exception where sshd cannot run
        return f"not measured: {err}"
    try:
        assert local.source is not None
        text = local.source.read_text()
        for host in local.hosts:
            table = sshd.host_table(host, local.source, local.hosts[host].audio.jack_server or "")
            # The bridge reads the local config there, so finds the running scorch run.
            table = table.split(f"[hosts.{host}.audio]")[0]
            text = text.replace(f'[hosts.{host}]\nvia = "local"\n', table.strip() + "\n")
        path = folder / "status-ssh.toml"
        path.write_text(text)
        config = load_config(path)
        out = {}
        for count in (1, 4):
            coordinator = Coordinator(config, only=list(config.hosts)[:count])
            try:
                out[f"ssh{count}"] = latency(coordinator, samples)
            finally:
                coordinator.close()
        return out
    finally:
        sshd.stop()


def report(results: dict[str, Any], trials: int) -> str:
    rate = results["rate"]
    block = 64 / rate * 1000
    lines = ["## Several hosts", "",
             f"`python -m bench.hosts` on {platform.node()} ({platform.machine()}, "
             f"{platform.python_version()}), {time.strftime('%Y-%m-%d')}. Each host a real "
             "`scorch run --host` (`local` transport) on one private JACK server, so a third "
             "scsynth hears both rooms sample by sample. One 64-frame block is "
             f"{block:.2f} ms at {rate:g} Hz. Trials in which the listener missed a room "
             f"were left out: {sum(MISSES.values())} in all.", "",
             f"Start spread across two hosts ({trials} trials each; samples between the two "
             "rooms' first sample of sound):", "",
             "| how | mean | median | max | mean ms | at most one block apart |",
             "|---|---|---|---|---|---|"]
    for how, label in (("exec_at", "`execute '*'` with `at` (sclang; an OffsetOut click)"),
                       ("exec_now", "`execute '*'` with no time (both hosts at once)"),
                       ("play_at", "`play` per room, one `at` (scorch's bundle; `sine`)"),
                       ("play_now", "baseline: `play` per room, no time")):
        values = results[how]
        mean = statistics.fmean(values)
        within = sum(v <= 64 for v in values)
        lines.append(f"| {label} | {mean:.1f} | {statistics.median(values):.0f} | "
                     f"{max(values):.0f} | {mean / rate * 1000:.3f} | "
                     f"{within}/{len(values)} |")
    base = statistics.fmean(results["play_now"])
    timed = statistics.fmean(results["play_at"])
    click = statistics.median(results["exec_at"])
    lines += ["", f"Two rooms started by two calls: {timed:.1f} samples apart on average with "
              f"one `at`, {base:.1f} without (the time between the calls): "
              f"{base / max(timed, 0.1):.1f} times closer. `sine` (as any `Out` synth) starts "
              "on a block boundary, so two rooms are 0 or 64 samples apart; the click's "
              f"`OffsetOut` starts within the block: {click:.0f} samples at the median is "
              "what remains of scsynth's and sclang's own mapping of a time to a sample. "
              "`execute` with no time is stamped by each sclang's own `s.latency`, so both at "
              "once land together here, as far as the two calls are apart. Both hosts share "
              "one clock here; on separate machines chrony's offset (`scorch doctor`) adds "
              "to all of these.", "",
              "Status latency: `list_instances` through one coordinator, ms "
              "(the hosts are asked in parallel):", "",
              "| hosts | transport | median | p95 | ratio to 1 host |", "|---|---|---|---|---|"]
    rows = [("local", results["local1"], results["local4"])]
    ssh = results["ssh"]
    if isinstance(ssh, dict):
        rows.append(("ssh (loopback sshd)", ssh["ssh1"], ssh["ssh4"]))
    for via, one, four in rows:
        for count, values in ((1, one), (4, four)):
            ratio = statistics.median(values) / statistics.median(one)
            lines.append(f"| {count} | {via} | {statistics.median(values):.2f} | "
                         f"{pct(values, 0.95):.2f} | {ratio:.2f} |")
    if not isinstance(ssh, dict):
        lines.append(f"| - | ssh | {ssh} | | |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="scorch-bench-hosts-") as tmp:
        results = measure(Path(tmp), args.trials, args.samples)
    section = report(results, args.trials)
    print(section)
    if not args.no_write:
        write_section(section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
