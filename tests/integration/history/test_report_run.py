"""scorch report over a real run: a room's scsynth killed by its pid shows as a restart,
its silence and its limiting spell as their seconds."""

from __future__ import annotations

import csv
import io
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from scorch.api.local import LocalService
from scorch.app.history.store import HISTORY_FILE, History
from scorch.app.orchestra import Orchestra
from scorch.cli.main import main
from scorch.config.installation import Config
from scorch.errors import InvalidRequest
from scorch.state.events import Kind
from tests.conftest import MakeConfig

Start = Callable[[Config], Orchestra]


@pytest.mark.integration
def test_a_crash_in_a_real_run_is_kept_and_reported(
        make_config: MakeConfig, start_orchestra: Start, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    config = make_config("""
        [instances.lobby]
        [instances.lobby.watch]
        expect_sound = true
        silence_s = 1
        limit_s = 1
        [watchdog]
        interval = 0.25
        missed = 8
        backoff_min = 0.05
        backoff_max = 1
        """, tag="rep")
    orch = start_orchestra(config)
    view = orch.views["lobby"]
    pid = view.snapshot.scsynth_pid
    assert pid is not None
    mark = view.events.mark()
    os.kill(pid, signal.SIGKILL)
    restored = view.events.wait_for((Kind.RESTORED, Kind.FAILED), mark, 20.0)
    assert restored is not None and restored.kind == Kind.RESTORED
    orch.recorder.flush()  # what the thread does each second, now

    history = History(config.state_path() / HISTORY_FILE)
    kinds = [e.kind for e in history.events() if e.room == "lobby"]
    history.close()
    assert kinds.index("READY") < kinds.index("CRASHED") < kinds.index("RESTORED")

    time.sleep(1.0)  # up again a while: a share of the last 10 s the report can show
    assert view.stage_readings.last is not None  # the safety stage reports each period
    orch.recorder.sample(time.time())  # what the thread does every SAMPLE_S, now
    assert main(["report", "--config", str(tmp_path / "config.toml"), "--since", "10s"]) == 0
    table = capsys.readouterr().out
    row = next(line for line in table.splitlines() if line.startswith("lobby"))
    assert "CRASHED scsynth" in row and row.split()[2] == "1", table
    assert 0.0 < float(row.split()[1]) < 100.0, table  # down while it restarted

    answer = LocalService(orch).call("events", {"report": "10s"})
    assert answer.events == [] and "1x CRASHED scsynth" in answer.text()  # type: ignore[attr-defined]
    with pytest.raises(InvalidRequest, match="report 'soon'"):
        LocalService(orch).call("events", {"report": "soon"})

    # silent from its boot (nothing plays in it), then held at the ceiling for a while
    assert view.events.wait_for(Kind.SOUND_SILENT, 0, 10.0) is not None
    loud = view.events.mark()
    played = orch.rooms.execute_one("lobby", "~noise = { WhiteNoise.ar(10 ! 2) }.play; 1", 10.0)
    assert played.ok, played.error
    limiting = view.events.wait_for(Kind.SOUND_LIMITING, loud, 10.0)
    assert limiting is not None, [e.kind for e in view.events.since(loud)]
    time.sleep(1.0)
    assert orch.rooms.execute_one("lobby", "~noise.free; 1", 10.0).ok
    ended = view.events.wait_for(Kind.SOUND_OK, limiting.seq, 10.0)
    assert ended is not None and ended.details["fault"] == "limiting"
    orch.recorder.flush()

    assert main(["report", "--config", str(tmp_path / "config.toml"), "--csv"]) == 0
    [line] = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert line["room"] == "lobby" and line["restarts"] == "1"
    assert float(line["silent_s"]) >= 1.0, line  # from its SOUND_SILENT to the noise's OK
    assert 2.0 <= float(line["limiting_s"]) <= 10.0, line  # a second to say it, one held
    assert float(line["peak_dbfs"]) <= 0.0  # silent rooms read the floor, -90
