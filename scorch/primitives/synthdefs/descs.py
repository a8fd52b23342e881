"""The library's SynthDefs as files sclang reads into its ``SynthDescLib``.

scsynth gets the library's compiled bytes by ``/d_recv``, which sclang never
sees: without a SynthDesc a pattern on ``\\acid`` sends only the controls of
``\\default`` and closes a ``gate`` the def may not have. So each room's sclang
reads, at every attach (start, restart, recompile), one directory holding
``NAME.scsyndef`` (the bytes scsynth has) and ``NAME.scmeta`` (the metadata as a
compile string, specs as ControlSpecs) for every SynthDef: ``Scorch.readDescs``.
Each desc's def is a ``ScorchSynthDef`` holding those bytes, so code that sends
the SynthDescLib's defs again (``SynthDescLib.send(s)``) sends them as they are.
Reading the 17 of the library adds 50 to 100 ms to an attach (sclang compiles
each desc's message function); building them from source instead took 420 to
730 ms (both measured in a room on a shared 2-core machine, load 5 to 11).

The directory is named after its content, so it is written once per library
state and never changes under a reading sclang.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path

#: What sclang reads next to each ``.scsyndef``.
META_SUFFIX = ".scmeta"


def write_descs(parent: Path, defs: Mapping[str, tuple[bytes, str]]) -> Path:
    """Write every SynthDef's bytes and metadata under ``parent``; return their directory.

    ``defs``: the compiled bytes and the metadata compile string (``""``: none) by name.
    """
    digest = hashlib.sha256()
    for name in sorted(defs):
        data, metadata = defs[name]
        for part in (name.encode(), data, metadata.encode()):
            digest.update(len(part).to_bytes(8, "little"))
            digest.update(part)
    target = parent / f"descs-{digest.hexdigest()[:16]}"
    if target.is_dir():
        return target
    parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(dir=parent, prefix=".descs-"))
    for name, (data, metadata) in defs.items():
        (work / f"{name}.scsyndef").write_bytes(data)
        (work / f"{name}{META_SUFFIX}").write_text(metadata, encoding="utf-8")
    try:
        os.rename(work, target)
    except OSError:  # another scorch wrote the same content first
        for path in work.iterdir():
            path.unlink()
        work.rmdir()
    return target
