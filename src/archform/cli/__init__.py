"""The archform command line: thin commands over spec, lint, render and deploy.

Heavy libraries (pulumi, ansible) are imported inside the commands that need them, so
`archform --help` and `archform lint` stay fast. This module itself imports nothing heavy:
`main` imports the application inside its own guard, so a Ctrl-C while the commands are
still being imported ends with one line and exit 130, not a traceback.
"""

from __future__ import annotations

import gc
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import typer

EXIT_INTERRUPTED = 130


def main() -> None:
    """Console-script entry point: domain errors become one line on stderr, exit 2."""
    try:
        from archform.cli._app import build
        from archform.cli._core import run

        app = build(sys.argv[1:])
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        sys.exit(EXIT_INTERRUPTED)
    try:
        run(app)
    finally:
        # The process ends here. Moving every object into the collector's permanent generation
        # keeps the interpreter's final collections from walking what start-up built (typer,
        # pydantic, the models): about 20 ms of CPU at the end of `archform lint`
        # (bench/lint_bench.py). atexit handlers, stream flushing and module teardown still run.
        gc.freeze()


def __getattr__(name: str) -> Any:
    """`from archform.cli import app` keeps working; the app is built on first use."""
    if name == "app":
        from archform.cli._app import app

        return app
    raise AttributeError(name)


app: typer.Typer  # resolved lazily by __getattr__

__all__ = ["app", "main"]
