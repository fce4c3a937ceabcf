"""Reading a blueprint file safely: regular files only, a size cap, strict UTF-8.

The cap (MAX_BYTES, 16 MiB) is documented in docs/blueprint.md ("Limits").
"""

from __future__ import annotations

import stat
from pathlib import Path

from archform.spec.errors import Pos, SpecError

MAX_BYTES = 16 * 1024 * 1024


def read_text(path: Path, display: str) -> str:
    """Read a blueprint file: regular files only, size cap, strict UTF-8, no NUL, BOM stripped.

    Devices (/dev/zero), FIFOs and sockets are refused from `stat` before anything is opened,
    so a read can neither run forever nor block; the read itself stops at the cap too, in case
    the file grows while it is read.
    """
    return decode(read_regular(path, display, MAX_BYTES), display)


def read_regular(path: Path, display: str, limit: int) -> bytes:
    """The bytes of a regular file of at most `limit` bytes; anything else is a SpecError."""
    try:
        info = path.stat()
    except FileNotFoundError:
        raise SpecError.at(display, Pos(1, 1), "file not found", "check the path") from None
    except OSError as exc:
        raise SpecError.at(display, Pos(1, 1), f"cannot read file: {exc.strerror}") from None
    if stat.S_ISDIR(info.st_mode):
        raise SpecError.at(display, Pos(1, 1), "is a directory, expected a YAML file")
    if not stat.S_ISREG(info.st_mode):
        raise SpecError.at(
            display,
            Pos(1, 1),
            f"is a {_file_kind(info.st_mode)}, not a regular file; refusing to read it",
            "pass a file saved on disk (write piped input to a file first)",
        )
    if info.st_size > limit:
        raise _too_big(display, info.st_size, limit)
    try:
        with path.open("rb") as handle:
            raw = handle.read(limit + 1)
    except OSError as exc:
        raise SpecError.at(display, Pos(1, 1), f"cannot read file: {exc.strerror}") from None
    if len(raw) > limit:
        raise _too_big(display, len(raw), limit)
    return raw


def _too_big(display: str, size: int, limit: int) -> SpecError:
    return SpecError.at(
        display,
        Pos(1, 1),
        f"file is {size / 1e6:.1f} MB or more; blueprints are limited to "
        f"{limit // 1024 // 1024} MiB",
        "a blueprint describes nodes by count, not one by one; split very large host lists",
    )


def _file_kind(mode: int) -> str:
    kinds = (
        (stat.S_ISFIFO, "FIFO (named pipe)"),
        (stat.S_ISCHR, "character device"),
        (stat.S_ISBLK, "block device"),
        (stat.S_ISSOCK, "socket"),
    )
    return next((word for test, word in kinds if test(mode)), "special file")


def decode(raw: bytes, display: str) -> str:
    """Decode bytes as UTF-8, pointing at the first bad byte when that fails."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        before = raw[: exc.start]
        line = before.count(b"\n") + 1
        column = exc.start - (before.rfind(b"\n") + 1) + 1
        raise SpecError.at(
            display,
            Pos(line, column),
            f"file is not valid UTF-8 (byte 0x{raw[exc.start]:02x})",
            "save the file as UTF-8",
        ) from None
    text = text.removeprefix("\ufeff")
    if "\x00" in text:
        head = text[: text.index("\x00")]
        raise SpecError.at(
            display,
            Pos(head.count("\n") + 1, len(head) - (head.rfind("\n") + 1) + 1),
            "file contains a NUL byte; it looks binary, not YAML",
            "pass the YAML blueprint, or remove the NUL byte",
        )
    if not text.strip() or all(
        not ln.strip() or ln.lstrip().startswith("#") for ln in text.splitlines()
    ):
        raise SpecError.at(
            display, Pos(1, 1), "file is empty", "start from `archform init --preset NAME`"
        )
    return text
