"""Shared CLI plumbing: the one place domain errors become messages and exit codes."""

from __future__ import annotations

import errno
import math
import os
import sys
import traceback
from collections.abc import Callable
from typing import TYPE_CHECKING, NoReturn, TypeVar

import typer

from archform.spec.errors import SpecError, UsageError

if TYPE_CHECKING:
    from archform.spec.document import BlueprintSet, Document

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 141

T = TypeVar("T")


def fail(message: str, hint: str = "") -> NoReturn:
    """Raise a usage error (exit 2)."""
    raise UsageError(message, hint)


def check_number(option: str, value: float, low: float, high: float, example: str) -> None:
    """Refuse NaN, infinities and values outside [low, high] for a numeric option (exit 2)."""
    if not math.isfinite(value) or not low <= value <= high:
        fail(
            f"{option} {value!r} is out of range",
            f"use a finite number from {low:g} to {high:g}, e.g. {option} {example}",
        )


def select_documents(loaded: BlueprintSet, name: str | None) -> list[Document]:
    """Every document, or only the one named by --name (a usage error when none matches)."""
    docs = list(loaded.documents)
    if name is None:
        return docs
    chosen = [d for d in docs if d.name == name]
    if not chosen:
        fail(f"no document named {name!r}", "names: " + ", ".join(loaded.by_name))
    # A Platform is its two tiers joined by a registry: it comes with the documents it names,
    # so its promote.json finds the fleet's manifests inside the same output folder.
    joined = {
        str(getattr(doc.model, part, ""))
        for doc in chosen
        if doc.kind == "Platform"
        for part in ("training", "inference")
    }
    return [d for d in docs if d.name == name or d.name in joined]


def echo_err(line: str) -> None:
    """One line to stderr."""
    sys.stderr.write(line + "\n")


def guarded(func: Callable[[], T]) -> T:
    """Run `func`, turning domain errors into stderr lines and exit codes."""
    try:
        return func()
    except SpecError as exc:
        for problem in exc.problems:
            echo_err(problem.render())
        raise typer.Exit(EXIT_USAGE) from None
    except UsageError as exc:
        echo_err(exc.render())
        raise typer.Exit(EXIT_USAGE) from None
    except OSError as exc:
        if exc.filename is None:
            raise
        echo_err(path_error(exc).render())
        raise typer.Exit(EXIT_USAGE) from None


def path_error(exc: OSError) -> UsageError:
    """An OSError on a path the user gave (permissions, a folder where a file goes, ...)."""
    reason = exc.strerror or type(exc).__name__
    return UsageError(
        f"{exc.filename}: {reason}", "check the path, its type (file or folder) and permissions"
    )


def run(app: typer.Typer) -> None:
    """Invoke the app; never let a traceback reach a user who made a mistake.

    Typer may use click or its own vendored copy, so its exceptions are recognised by
    shape (exit_code, format_message), not by class.
    """
    try:
        code = app(standalone_mode=False)
        sys.stdout.flush()  # a full disk or closed pipe on stdout surfaces here, not at exit
        if code == EXIT_INTERRUPTED:
            # typer turns Ctrl-C inside a command into exit code 130 without a word; say it
            # as start-up does (no command of archform exits 130 by itself)
            echo_err("interrupted")
    except SpecError as exc:
        for problem in exc.problems:
            echo_err(problem.render())
        sys.exit(EXIT_USAGE)
    except UsageError as exc:
        echo_err(exc.render())
        sys.exit(EXIT_USAGE)
    except KeyboardInterrupt:
        echo_err("interrupted")
        sys.exit(EXIT_INTERRUPTED)
    except SystemExit:
        # click answers EPIPE by wrapping the streams (PacifyFlushWrapper) and exit(1), which
        # reads as "findings": a closed pipe ends as ours does (quiet, 141)
        if type(sys.stdout).__name__.endswith("PacifyFlushWrapper"):
            stream_failed(OSError(errno.EPIPE, os.strerror(errno.EPIPE)))
        raise
    except OSError as exc:
        if exc.filename is None:
            if exc.errno in STREAM_ERRNOS:
                stream_failed(exc)
            _internal(exc)
        echo_err(path_error(exc).render())
        sys.exit(EXIT_USAGE)
    except Exception as exc:
        kind = type(exc).__name__
        exit_code = getattr(exc, "exit_code", None)
        if kind == "Exit" and isinstance(exit_code, int):
            sys.exit(exit_code)
        if kind == "Abort":
            echo_err("aborted")
            sys.exit(EXIT_INTERRUPTED)
        if kind == "NoArgsIsHelpError" and hasattr(exc, "format_message"):
            echo_err(str(exc.format_message()))
            sys.exit(EXIT_USAGE)
        if isinstance(exit_code, int) and hasattr(exc, "format_message"):
            echo_err(f"error: {exc.format_message()} (hint: archform COMMAND --help)")
            sys.exit(EXIT_USAGE)
        _internal(exc)
    sys.exit(code if isinstance(code, int) else EXIT_OK)


# errors of a write to a stream (stdout on a full disk, a closed pipe, a revoked terminal)
STREAM_ERRNOS = frozenset(
    {errno.EPIPE, errno.ENOSPC, errno.EIO, errno.EDQUOT, errno.EFBIG, errno.EBADF}
)


def stream_failed(exc: OSError) -> NoReturn:
    """Standard output could not be written: one line and exit 2, quiet on a closed pipe.

    stdout is pointed at /dev/null first, so the interpreter's own flush at exit finds nothing
    left to write and prints no "Exception ignored" report. A reader that closed the pipe
    (`archform rules | head -1`) asked for no more: that ends quietly with 141 (128 + SIGPIPE),
    the status a Unix tool killed by SIGPIPE has.
    """
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    finally:
        os.close(devnull)
    if exc.errno == errno.EPIPE:
        sys.exit(EXIT_BROKEN_PIPE)
    echo_err(
        f"error: cannot write standard output: {exc.strerror or exc} "
        "(hint: free space on the device or write the output to a file with -o)"
    )
    sys.exit(EXIT_USAGE)


def _internal(exc: BaseException) -> NoReturn:
    if os.environ.get("ARCHFORM_DEBUG"):
        traceback.print_exc()
    echo_err(
        f"internal error: {type(exc).__name__}: {exc} "
        "(hint: this is a bug in archform; rerun with ARCHFORM_DEBUG=1 and report it)"
    )
    sys.exit(EXIT_INTERNAL)
