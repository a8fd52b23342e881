"""The render cache and Scores, with real scsynth -N and sclang runs, no room."""

from __future__ import annotations

from pathlib import Path

import pytest

from scorch.app.studio import renderer
from scorch.app.studio.renderer import Renderer
from scorch.errors import InvalidRequest
from scorch.primitives.synthdefs.library import SynthDefLibrary

pytestmark = pytest.mark.integration


def test_the_cache_keeps_the_newest_renders_only(
        tmp_path: Path, library: SynthDefLibrary, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(renderer, "KEEP_RENDERS", 2)
    render = Renderer(tmp_path, library, 48000)
    first, second, third = (render.synthdef("kick", {}, length, "wav", 1)
                            for length in (0.2, 0.3, 0.4))
    assert not first.path.exists() and not first.picture.exists()
    assert second.path.exists() and third.path.exists()
    assert len(list(tmp_path.glob("*.json"))) == 2
    assert render.synthdef("kick", {}, 0.4, "wav", 1).cached


def test_a_score_is_cut_at_its_duration_and_says_so(
        tmp_path: Path, library: SynthDefLibrary) -> None:
    code = ("Score([[0, [\\s_new, \\kick, 1000, 0, 0]], [0.2, [\\s_new, \\kick, 1001, 0, 0]], "
            "[5, [\\s_new, \\kick, 1002, 0, 0]]])")
    done = Renderer(tmp_path, library, 48000).code(code, 1.0, "flac", 2)
    assert done.report.seconds == pytest.approx(1.0, abs=0.002)
    assert done.report.channels == 2 and done.path.suffix == ".flac"
    assert done.warnings == ["1 bundle after 1 s left out"]
    assert len(done.report.onsets) == 2


def test_a_score_ending_at_zero_needs_a_duration(tmp_path: Path, library: SynthDefLibrary,
                                                 ) -> None:
    with pytest.raises(InvalidRequest, match="give `duration`"):
        Renderer(tmp_path, library, 48000).code("[[0, [\\s_new, \\kick, 1000, 0, 0]]]", None,
                                                "wav", 2)
