"""The typer application: every command registered (imported by `archform.cli.main`)."""

from __future__ import annotations

import typer

from archform import __version__
from archform.cli import (
    deploy,
    diagram,
    diff,
    estimate,
    generate,
    init,
    lint,
    plan,
    promote,
    rules,
    schema,
    validate,
    verify,
)

app = typer.Typer(
    name="archform",
    help="Typed GPU-infrastructure blueprints: validate, lint, generate Pulumi and Ansible.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"archform {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Typed GPU-infrastructure blueprints: validate, lint, generate Pulumi and Ansible."""


for _module in (
    validate,
    lint,
    rules,
    schema,
    init,
    generate,
    plan,
    verify,
    estimate,
    diff,
    diagram,
    promote,
    deploy,
):
    _module.register(app)


__all__ = ["app"]
