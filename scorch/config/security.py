"""The ``[files]`` and ``[security]`` tables: which folders paths reach, what sclang code may do.

Both bound what comes through scorch's front ends (MCP, the control socket, the
CLI, the page); :mod:`scorch.config.allowed` turns them into folders and sclang's
guard. A guard against mistakes and injected instructions, not a sandbox
(docs/operations.md says what it leaves open).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import AfterValidator, Field, Strict

from scorch.values import StrictModel


def _no_control(path: Path) -> Path:
    if any(ord(c) < 32 or ord(c) == 127 for c in str(path)):
        raise ValueError(f"a folder's path holds a control character: {str(path)!r}")
    return path


class FilesConfig(StrictModel):
    """The ``[files]`` table: folders path arguments and sclang's file writes may reach."""

    allow: tuple[Annotated[Path, AfterValidator(_no_control)], ...] = Field(
        (), description="more folders (absolute, ~, or relative to the config file) that path "
        "arguments read and write and sclang code writes, beyond the state folder's midi/, "
        "recordings/, listening/, renders/ and the [samples] paths; symlinks inside any folder "
        "are followed and must stay inside one")


class SecurityConfig(StrictModel):
    """The ``[security]`` table: what code sent to the rooms' sclang may do."""

    sclang_shell: Annotated[bool, Strict()] = Field(
        False, description="let code sent to sclang through scorch (execute, patterns, "
        "snippets, history, sessions, render) run shell commands (unixCmd, systemCmd, Pipe...), "
        "write files anywhere and change the class library's paths; off: each is refused with "
        "an sclang error")
