"""The ssh channel's reading of answers, against a peer process that also sends hostile lines.

The peer stands where ``ssh HOST scorch bridge`` would: it reads request lines
and, before each real answer, writes lines no channel may choke on (nested
100,000 deep, not JSON, an id of ``true``, an id nobody asked). The real
sshd test is tests/integration/hosts/test_hosts_ssh.py.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest

from scorch.errors import RoomNotFound
from scorch.hosts.channel import SshChannel

PEER = r'''
import json, sys
for line in sys.stdin:
    request = json.loads(line)
    out = sys.stdout
    out.write('{"id": %d, "result": ' % request["id"] + "[" * 100_000 + "\n")
    out.write("not json\n")
    out.write(json.dumps({"id": True, "result": "true is not 1"}) + "\n")
    out.write(json.dumps({"id": 999, "result": "nobody asked"}) + "\n")
    if request["method"] == "status":
        reply = {"id": request["id"], "error": {"type": "InstanceNotFound",
                                                 "message": "no room 'x'"}}
    else:
        reply = {"id": request["id"], "result": {"echo": request["args"]}}
    out.write(json.dumps(reply) + "\n")
    out.flush()
'''


@pytest.fixture
def channel() -> Iterator[SshChannel]:
    channel = SshChannel([sys.executable, "-c", PEER], "peer")
    yield channel
    channel.close()


def test_hostile_answer_lines_are_skipped_and_the_real_answer_comes_through(
        channel: SshChannel) -> None:
    assert channel.call("ping", {"n": 1}, timeout=10) == {"echo": {"n": 1}}
    with pytest.raises(RoomNotFound, match="no room 'x'"):
        channel.call("status", {"instance": "x"}, timeout=10)
    assert channel.call("ping", {"n": 2}, timeout=10) == {"echo": {"n": 2}}
    assert channel.dead is None
