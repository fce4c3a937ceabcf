"""Point the fleet at a model version: record it as the fleet's served release.

The release file (``release.json`` in the fleet's generated folder, see
`archform.spec.release`) is the one place that says which version the fleet serves.
`archform generate` builds the fleet's Deployments and stage Jobs from it, and the
generated Pulumi program refuses to run when it was generated for another release, so a
later `pulumi up` can never quietly undo a promotion. The file is replaced atomically.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from archform.spec import UsageError
from archform.spec.release import Release, load_release


def check_fleet(release_file: Path) -> Release | None:
    """The fleet's current release (None: the blueprint's version); the folder must exist."""
    if not release_file.parent.is_dir():
        raise UsageError(
            f"{release_file.parent}: the fleet's generated folder was not found",
            "generate the Platform together with its fleet (archform generate FILE -o DIR)",
        )
    return load_release(release_file)


def write_release(release_file: Path, release: Release) -> bool:
    """Record `release` as served; False when it already was."""
    data = release.to_json()
    if release_file.exists() and release_file.read_bytes() == data:
        return False
    fd, name = tempfile.mkstemp(prefix=f".{release_file.name}.", dir=release_file.parent)
    tmp = Path(name)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        tmp.chmod(0o644)
        tmp.replace(release_file)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
    return True
