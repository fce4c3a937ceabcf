"""Writing one output file atomically, with the mode any other tool's output would have.

`tempfile.mkstemp` creates its file 0600 (private to its maker), which suits a temporary
file but not an output that the team, a web server or CI reads next: after the rename the
output would keep 0600. Every file archform writes therefore ends with `mode & ~umask`
(0644 under the usual umask 022), as `open(path, "w")` would give, so a user who wants
private outputs sets a stricter umask and gets them.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

FILE_MODE = 0o666
"""What `open()` asks for a new file; the umask takes away the rest."""


def umask() -> int:
    """The process's umask (read by setting and restoring it: there is no getter)."""
    current = os.umask(0o022)
    os.umask(current)
    return current


def masked(mode: int) -> int:
    """`mode` as the umask lets it be."""
    return mode & ~umask() & 0o7777


def write_atomic(path: Path, data: bytes, mode: int = FILE_MODE) -> None:
    """Write `data` to a temporary file beside `path`, fsync, set `mode & ~umask`, rename.

    Raises OSError naming `path` (a full disk is `path: No space left on device`); the
    temporary file never survives a failure and the previous `path` stays whole. A `path`
    that is a symlink is written through (its target is replaced, as `open()` would); one that
    is a device or FIFO (`-o /dev/stdout`) is written into directly, never renamed over.
    """
    if path.is_symlink():
        path = path.resolve()
    if path.exists() and not path.is_file() and not path.is_dir():
        try:
            with path.open("wb") as stream:
                stream.write(data)
        except OSError as exc:
            raise OSError(exc.errno, exc.strerror or str(exc), str(path)) from None
        return
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    tmp = Path(name)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        tmp.chmod(masked(mode))
        tmp.replace(path)
    except OSError as exc:
        if exc.filename is None or exc.filename == name:
            raise OSError(exc.errno, exc.strerror or str(exc), str(path)) from None
        raise
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
