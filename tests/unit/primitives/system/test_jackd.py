"""A JACK server name claimed by one process is never started by another."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

from scorch.primitives.system.jackd import ServerClaim, client_environment
from scorch.primitives.system.process import child_env
from tests.conftest import jack_name

#: Another process that tries the claim and says whether it got it.
OTHER = ("import sys; from scorch.primitives.system.jackd import ServerClaim; "
         "print(ServerClaim(sys.argv[1]).take())")


def other_process_gets(name: str) -> bool:
    done = subprocess.run([sys.executable, "-c", OTHER, name], capture_output=True, text=True,
                          timeout=30, check=True)
    return done.stdout.strip() == "True"


def test_a_claimed_name_is_refused_elsewhere_until_it_is_released() -> None:
    name = jack_name("claim")
    claim = ServerClaim(name)
    assert claim.take() and claim.take()  # taking it again keeps it
    assert not ServerClaim(name).take()  # another claim, even in this process
    assert not other_process_gets(name)
    claim.release()
    assert other_process_gets(name)  # and the other process's ended with it


def test_a_childs_environment_is_copied_whole_while_a_jack_client_opens() -> None:
    """A room's boot copied the environment while the MIDI router put JACK's server name
    in and took it out again: KeyError (seen once in a clean-clone run)."""
    os.environ.pop("JACK_DEFAULT_SERVER", None)
    done = threading.Event()
    failures: list[BaseException] = []

    def open_clients() -> None:
        while not done.is_set():
            with client_environment("scorch-test-env"):
                pass

    def copy() -> None:
        try:
            for _ in range(20_000):
                env = child_env()
                assert env.get("JACK_DEFAULT_SERVER") in (None, "scorch-test-env")
        except BaseException as err:
            failures.append(err)

    opener = threading.Thread(target=open_clients)
    copier = threading.Thread(target=copy)
    opener.start()
    copier.start()
    copier.join(timeout=60)
    done.set()
    opener.join(timeout=10)
    assert not failures, failures
    assert "JACK_DEFAULT_SERVER" not in os.environ  # put back as it was
