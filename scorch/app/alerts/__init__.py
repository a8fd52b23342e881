"""Alerts that leave the machine: the policy (pure) and its sending threads (docs/alerts.md)."""

from __future__ import annotations

from scorch.app.alerts.policy import AlertPolicy, Message, Phase, matches
from scorch.app.alerts.sending import Alerts, scheme

__all__ = ["AlertPolicy", "Alerts", "Message", "Phase", "matches", "scheme"]
