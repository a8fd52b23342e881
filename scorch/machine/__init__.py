"""What this machine has and lacks for an installation: the doctor's checks and their fixes."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scorch.faces import lazy_face

if TYPE_CHECKING:
    from scorch.machine.doctor import Check, report, run_checks

__all__ = [
    "Check", "report", "run_checks",
]
__getattr__ = lazy_face(__name__, __file__)
