"""The installation as config.toml describes it: rooms, audio, MIDI, watch, schedule, hosts."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scorch.faces import lazy_face

if TYPE_CHECKING:
    from scorch.config.alerts import AlertsConfig, AlertTarget
    from scorch.config.allowed import folders, sclang_guard
    from scorch.config.hosts import HostConfig
    from scorch.config.installation import Config, check_synthdefs, default_state_path, load_config
    from scorch.config.lines import key_lines, located
    from scorch.config.locate import find_config, room_names, user_config
    from scorch.config.osc import OscConfig
    from scorch.config.profiles import Profiles, load_profiles, user_folders
    from scorch.config.reload import ConfigChanges, RoomChanges, config_changes
    from scorch.config.safety import SafetyConfig
    from scorch.config.schedule import call_lines, plan_of
    from scorch.config.starter import write_starter
    from scorch.config.tables import (
        HTTP_HOST,
        HTTP_PORT,
        AudioConfig,
        RoomConfig,
        WatchdogConfig,
        is_loopback,
        parse_listen,
    )
    from scorch.config.tools import PROFILES, Choice, chosen, problems
    from scorch.config.watch import RECALL, WatchConfig

__all__ = [
    "HTTP_HOST",
    "HTTP_PORT",
    "PROFILES",
    "RECALL",
    "AlertTarget",
    "AlertsConfig",
    "AudioConfig",
    "Choice",
    "Config",
    "ConfigChanges",
    "HostConfig",
    "OscConfig",
    "Profiles",
    "RoomChanges",
    "RoomConfig",
    "SafetyConfig",
    "WatchConfig",
    "WatchdogConfig",
    "call_lines",
    "check_synthdefs",
    "chosen",
    "config_changes",
    "default_state_path",
    "find_config",
    "folders",
    "is_loopback",
    "key_lines",
    "load_config",
    "load_profiles",
    "located",
    "parse_listen",
    "plan_of",
    "problems",
    "room_names",
    "sclang_guard",
    "user_config",
    "user_folders",
    "write_starter",
]
__getattr__ = lazy_face(__name__, __file__)
