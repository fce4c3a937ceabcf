"""The typer application (imported by `archform.cli.main`).

`app` has every command registered (help, tests, `from archform.cli import app`). The console
script builds its app with `build(argv)`: when the first argument names a command, only that
command's module is imported and registered (`archform lint` never imports the modules of
generate, plan, verify or deploy); anything else (`--help`, `--version`, a typo) registers
every command, so help listings and "No such command" suggestions are unchanged.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence

import typer

from archform import __version__

# command name -> module under archform.cli; module order is the order of `archform --help`
COMMANDS: dict[str, str] = {
    "validate": "validate",
    "lint": "lint",
    "rules": "rules",
    "rule": "rules",
    "schema": "schema",
    "init": "init",
    "import": "importer",
    "images": "images",
    "generate": "generate",
    "plan": "plan",
    "verify": "verify",
    "estimate": "estimate",
    "diff": "diff",
    "diagram": "diagram",
    "promote": "promote",
    "deploy": "deploy",
}

HELP = "Typed GPU-infrastructure blueprints: validate, lint, generate Pulumi and Ansible."


def _version(value: bool) -> None:
    if value:
        typer.echo(f"archform {__version__}")
        raise typer.Exit(0)


def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Typed GPU-infrastructure blueprints: validate, lint, generate Pulumi and Ansible."""


def build(argv: Sequence[str] = ()) -> typer.Typer:
    """The app for a command line (arguments after the program name)."""
    application = typer.Typer(
        name="archform",
        help=HELP,
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
    )
    application.callback()(_root)
    first = argv[0] if argv else ""
    modules = [COMMANDS[first]] if first in COMMANDS else list(dict.fromkeys(COMMANDS.values()))
    for name in modules:
        importlib.import_module(f"archform.cli.{name}").register(application)
    return application


def __getattr__(name: str) -> typer.Typer:
    """`app`: every command registered, built on first use."""
    if name == "app":
        application = build()
        globals()["app"] = application
        return application
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


app: typer.Typer  # every command; built by __getattr__ on first use

__all__ = ["COMMANDS", "app", "build"]
