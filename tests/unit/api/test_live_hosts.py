"""The live view's hosts: each with its link's state where the coordinator knows it."""

from __future__ import annotations

from scorch.api.live import HostLive, hosts_of


def test_a_coordinators_status_gives_each_host_its_state_and_why() -> None:
    status = {"hosts": [
        {"name": "stage", "state": "CONNECTED", "reason": None},
        {"name": "foyer", "state": "UNREACHABLE", "reason": "no answer for 3 s"},
        {"name": None, "state": "CONNECTED", "reason": None}]}
    assert hosts_of(status, ["foyer", "stage"]) == [
        HostLive(name="stage", state="CONNECTED"),
        HostLive(name="foyer", state="UNREACHABLE", reason="no answer for 3 s"),
        HostLive(name="(no host)", state="CONNECTED")]


def test_without_links_the_configured_hosts_are_named_with_no_state() -> None:
    assert hosts_of({}, ["b", "a"]) == [HostLive(name="a", state=None),
                                      HostLive(name="b", state=None)]
    assert hosts_of({"hosts": []}, []) == []
