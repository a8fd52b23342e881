"""[alerts]: URLs with and without their own kinds, defaults, located errors, no secret shown."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scorch.config.alerts import DEFAULT_KINDS, AlertTarget
from scorch.config.installation import parse_config
from scorch.errors import ConfigError


def test_no_alerts_table_means_no_url_and_the_default_kinds() -> None:
    config = parse_config("[instances.a]\n")
    assert config.alerts.urls == () and config.alerts.targets() == ()
    assert config.alerts.kinds == DEFAULT_KINDS


def test_a_plain_url_takes_the_tables_kinds_and_a_table_keeps_its_own() -> None:
    config = parse_config('[instances.a]\n[alerts]\nkinds = ["CRASHED"]\nurls = [\n'
                          '  "json://127.0.0.1:1/x",\n'
                          '  { url = "mailto://u:secret@host", kinds = ["SOUND_*"] },\n'
                          '  { url = "ntfys://topic" },\n]\n')
    assert config.alerts.targets() == (
        AlertTarget(url="json://127.0.0.1:1/x", kinds=("CRASHED",)),
        AlertTarget(url="mailto://u:secret@host", kinds=("SOUND_*",)),
        AlertTarget(url="ntfys://topic", kinds=("CRASHED",)))


@pytest.mark.parametrize(("text", "where"), [
    ('[alerts]\nurls = ["hunter2-token"]\n', "alerts.urls"),
    ('[alerts]\nurls = [{ url = "secret-no-scheme" }]\n', "alerts.urls"),
    ('[alerts]\nkinds = ["crashed; rm"]\n', "alerts.kinds"),
    ('[alerts]\nrate_s = -1\n', "alerts.rate_s"),
    ('[alerts]\nurl = ["json://x"]\n', "alerts.url"),
    ('[alerts]\nqueue = 0\n', "alerts.queue"),
])
def test_a_bad_alerts_line_is_a_located_error(text: str, where: str) -> None:
    with pytest.raises(ConfigError, match=where.replace(".", r"\.")) as raised:
        parse_config("[instances.a]\n" + text)
    assert "hunter2" not in str(raised.value) and "secret-no" not in str(raised.value)


@given(st.text(max_size=40))
def test_any_url_text_is_taken_whole_or_refused_without_being_repeated(text: str) -> None:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    try:
        config = parse_config(f'[instances.a]\n[alerts]\nurls = ["{escaped}"]\n')
    except ConfigError as err:
        assert len(text) < 6 or text not in str(err)
    else:
        assert "://" in text and config.alerts.targets()[0].url == text
