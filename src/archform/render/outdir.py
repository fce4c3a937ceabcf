"""The output folder's guards: what may be written to, one writer at a time, no debris.

- `check_target` refuses `/`, files and other non-directories before anything is touched.
- `locked` takes an advisory `fcntl.flock` on `.<name>.archform-lock` beside the folder (or
  inside it when the parent is not writable, e.g. a mount point under a read-only parent):
  a second `generate` into the same folder waits for the first, up to `LOCK_WAIT_SECONDS`,
  then stops with exit 2. The holder removes the lock file when done (see `locked`).
- `clean_stale` removes `.archform-tmp-*` folders a killed run left behind; it runs under
  the lock, so no live run can own them.
- `OutputDirError` is a UsageError: the CLI prints one line and exits 2.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import math
import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

from archform.spec.errors import UsageError

LOCK_WAIT_SECONDS = 120.0
TMP_MARK = ".archform-tmp-"
LOCK_NAME = ".archform-lock"


class OutputDirError(UsageError):
    """The output location cannot be used (not a folder, read-only, busy)."""


def check_target(out_dir: Path) -> Path:
    """The absolute output folder, or OutputDirError when it can never be one."""
    resolved = out_dir.resolve()
    if resolved == Path(resolved.anchor) or resolved.parent == resolved:
        raise OutputDirError(
            f"{out_dir}: refusing to generate into the file-system root",
            "pass a dedicated folder, e.g. -o out/",
        )
    if resolved.exists() and not resolved.is_dir():
        raise OutputDirError(
            f"{out_dir}: exists and is not a folder; nothing was changed",
            "pass a folder path with -o (it is created when missing)",
        )
    for parent in resolved.parents:
        if parent.exists() and not parent.is_dir():
            raise OutputDirError(
                f"{out_dir}: {parent} is not a folder",
                "pass a folder path with -o",
            )
    return resolved


def os_error(out_dir: Path, exc: OSError) -> OutputDirError:
    """An OSError while writing, as a one-line user error."""
    reason = exc.strerror or str(exc)
    where = f" ({exc.filename})" if exc.filename else ""
    hint = "choose a folder you can write to, or fix its permissions"
    if exc.errno == errno.ENOSPC:
        hint = "free some space on that file system"
    elif exc.errno == errno.EROFS:
        hint = "the file system is mounted read-only; choose another output folder"
    return OutputDirError(f"{out_dir}: cannot write the output: {reason}{where}", hint)


def lock_path(out_dir: Path) -> Path:
    """Where the lock for `out_dir` lives: beside it when the parent is writable, else inside."""
    if os.access(out_dir.parent, os.W_OK) or not out_dir.is_dir():
        return out_dir.parent / f".{out_dir.name}{LOCK_NAME}"
    return out_dir / LOCK_NAME


LOCK_WAIT_ENV = "ARCHFORM_LOCK_WAIT_SECONDS"


def lock_wait() -> float:
    """How long a run waits for another's lock: $ARCHFORM_LOCK_WAIT_SECONDS, else 2 minutes."""
    raw = os.environ.get(LOCK_WAIT_ENV)
    if raw is None or raw == "":
        return LOCK_WAIT_SECONDS
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or not 0 <= value <= 86_400:
        raise OutputDirError(
            f"{LOCK_WAIT_ENV}={raw!r} is not a number of seconds",
            f"unset it (default {LOCK_WAIT_SECONDS:.0f}) or give 0 to 86400",
        )
    return value


@contextlib.contextmanager
def locked(out_dir: Path, wait: float | None = None) -> Iterator[bool]:
    """Hold the advisory lock of `out_dir` for the duration of the block.

    Yields whether another run held it first (this run waited for it, and now replaces what
    that run wrote). `wait` defaults to `lock_wait()`.

    The lock file is removed on the way out, while still locked; a waiter that then gets
    the lock on the removed file notices (its inode is no longer at the path) and retries,
    so exactly one holder exists at any time and no lock file is left behind.
    """
    wait = lock_wait() if wait is None else wait
    path = lock_path(out_dir)
    deadline = time.monotonic() + wait
    waited: list[bool] = []
    fd = _acquire(out_dir, path, deadline, wait, waited)
    try:
        yield bool(waited)
    finally:
        with contextlib.suppress(OSError):
            path.unlink()
        os.close(fd)  # closing releases the flock


def _acquire(out_dir: Path, path: Path, deadline: float, wait: float, waited: list[bool]) -> int:
    while True:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            raise os_error(out_dir, exc) from None
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    waited[:] = [True]
                    if time.monotonic() >= deadline:
                        raise OutputDirError(
                            f"{out_dir}: another archform run is writing this folder "
                            f"(lock {path} held for more than {wait:g} s)",
                            "wait for it to finish, or pick another output folder",
                        ) from None
                    time.sleep(0.05)
            try:
                current = path.stat().st_ino
            except FileNotFoundError:
                current = -1
            if current == os.fstat(fd).st_ino:
                return fd
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)  # the previous holder removed this file: lock the new one


def clean_stale(out_dir: Path) -> list[Path]:
    """Remove temporary folders a killed run left beside or inside `out_dir`."""
    removed: list[Path] = []
    candidates: list[Path] = []
    with contextlib.suppress(OSError):
        prefix = f".{out_dir.name}{TMP_MARK}"
        candidates += [p for p in out_dir.parent.iterdir() if p.name.startswith(prefix)]
    if out_dir.is_dir():
        with contextlib.suppress(OSError):
            candidates += [p for p in out_dir.iterdir() if p.name.startswith(TMP_MARK)]
    for path in candidates:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed


def cannot_rename(exc: OSError) -> bool:
    """A rename of the folder itself failed for a reason a per-file swap avoids."""
    return exc.errno in (errno.EBUSY, errno.EXDEV, errno.EPERM, errno.EACCES, errno.EROFS)
