"""What the installation allows path arguments and sclang code to reach, from its config.

A path argument reaches only the folders :func:`folders` gives (the state
folder's own, the sample folders, ``[files] allow``), never scorch's own files;
code sent to a room's sclang may run no shell command, write no file outside
those folders and change no class-library path unless ``[security]
sclang_shell`` says so (:func:`sclang_guard`, ``scorch/primitives/sclang/classes/guard/``).
"""

from __future__ import annotations

from pathlib import Path

import platformdirs

from scorch.config.installation import Config
from scorch.primitives.disk import Folders
from scorch.primitives.sclang import (
    CLASSES,
    conf_folder,
    guard_env,
    guard_path,
    user_class_paths,
    write_guard,
)

#: The state folder's own folders that path arguments and sclang's file writes reach.
OWN = ("midi", "recordings", "listening", "renders")


def folders(config: Config) -> Folders:
    """The folders path arguments may reach, and scorch's own files, which they never do."""
    state = config.state_path()
    allowed = [*config.sample_folders(), *(config.resolve_path(p) for p in config.files.allow)]
    return Folders.of([state / name for name in OWN], allowed, protected(config))


def protected(config: Config) -> list[Path]:
    """scorch's own files and SuperCollider's configuration: no path argument, and no file
    sclang code writes, reaches them (a folder that holds them may still be allowed).

    Writing there would change what scorch or sclang run next: the config, the startup
    code, the state (control socket, journal), cached native code, the class library and
    its configuration.
    """
    include, _ = user_class_paths()
    found = [config.state_path(), platformdirs.user_cache_path("scorch"), conf_folder(), CLASSES,
             platformdirs.user_data_path("SuperCollider"),
             platformdirs.user_config_path("SuperCollider"), *(Path(p) for p in include)]
    if config.whole_state is not None:
        found.append(config.whole_state)
    if config.source is not None:
        found.append(config.source)
    found += [config.resolve_path(inst.startup) for inst in config.instances.values()
              if inst.startup is not None]
    return found


def sclang_guard(config: Config) -> dict[str, str]:
    """The environment a room's sclang gets: where its guard reads what is allowed (the file,
    written now with this config's folders and ``[security]``)."""
    path = guard_path(config.source, config.host)
    write_guard(path, config.security.sclang_shell, folders(config))
    return guard_env(config.source, config.host)
