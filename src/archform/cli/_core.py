"""Shared CLI plumbing: the one place domain errors become messages and exit codes."""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Callable
from typing import NoReturn, TypeVar

import click
import typer

from archform.spec.errors import SpecError, UsageError

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3

T = TypeVar("T")


def fail(message: str, hint: str = "") -> NoReturn:
    """Raise a usage error (exit 2)."""
    raise UsageError(message, hint)


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


def run(app: typer.Typer) -> None:
    """Invoke the app; never let a traceback reach a user who made a mistake."""
    try:
        code = app(standalone_mode=False)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.exceptions.Abort:
        echo_err("aborted")
        sys.exit(130)
    except click.ClickException as exc:
        echo_err(f"error: {exc.format_message()} (hint: archform --help)")
        sys.exit(EXIT_USAGE)
    except SpecError as exc:
        for problem in exc.problems:
            echo_err(problem.render())
        sys.exit(EXIT_USAGE)
    except UsageError as exc:
        echo_err(exc.render())
        sys.exit(EXIT_USAGE)
    except KeyboardInterrupt:
        echo_err("interrupted")
        sys.exit(130)
    except Exception as exc:  # an archform bug, not the user's
        if os.environ.get("ARCHFORM_DEBUG"):
            traceback.print_exc()
        echo_err(
            f"internal error: {type(exc).__name__}: {exc} "
            "(hint: this is a bug in archform; rerun with ARCHFORM_DEBUG=1 and report it)"
        )
        sys.exit(EXIT_INTERNAL)
    sys.exit(code if isinstance(code, int) else EXIT_OK)
