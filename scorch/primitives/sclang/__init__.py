"""sclang: the interpreter process, its stdin protocol, sessions, results, scorch's classes."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scorch.faces import lazy_face

if TYPE_CHECKING:
    from scorch.primitives.sclang.door import SclangDoor
    from scorch.primitives.sclang.guard import guard_env, guard_path, write_guard
    from scorch.primitives.sclang.interpreter import Sclang
    from scorch.primitives.sclang.launch import (
        CLASSES,
        SCLANG_ENV,
        EarlySclang,
        class_library_conf,
        conf_folder,
        guard_library_conf,
        start_early,
        user_class_paths,
        user_conf_path,
    )
    from scorch.primitives.sclang.pattern_define import new_pattern_code
    from scorch.primitives.sclang.pattern_events import Batch, PatternEvent, parse_events
    from scorch.primitives.sclang.patterns import (
        PatternRecord,
        Silenced,
        parse_gone,
        parse_pattern,
        parse_silenced,
        pattern_key,
        restore_code,
        short,
    )
    from scorch.primitives.sclang.protocol import sc_string
    from scorch.primitives.sclang.result import ExecuteResult, SclangError
    from scorch.primitives.sclang.session import SclangSession

__all__ = [
    "CLASSES",
    "SCLANG_ENV",
    "Batch",
    "EarlySclang",
    "ExecuteResult",
    "PatternEvent",
    "PatternRecord",
    "Sclang",
    "SclangDoor",
    "SclangError",
    "SclangSession",
    "Silenced",
    "class_library_conf",
    "conf_folder",
    "guard_env",
    "guard_library_conf",
    "guard_path",
    "new_pattern_code",
    "parse_events",
    "parse_gone",
    "parse_pattern",
    "parse_silenced",
    "pattern_key",
    "restore_code",
    "sc_string",
    "short",
    "start_early",
    "user_class_paths",
    "user_conf_path",
    "write_guard",
]
__getattr__ = lazy_face(__name__, __file__)
