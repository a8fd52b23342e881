"""A JACK server name claimed by one process is never started by another."""

from __future__ import annotations

import subprocess
import sys

from scorch.primitives.system.jackd import ServerClaim
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
