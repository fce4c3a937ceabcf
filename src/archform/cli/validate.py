"""`archform validate FILE...`: load and type-check blueprints."""

from __future__ import annotations

from pathlib import Path

import typer

from archform.cli._core import guarded


def register(app: typer.Typer) -> None:
    """Add the command."""
    app.command("validate")(validate)


def validate(
    files: list[Path] = typer.Argument(..., help="Blueprint files or folders, loaded together."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Print nothing on success."),
) -> None:
    """Validate blueprints: types, catalog facts, references. Exit 2 on the first bad file."""
    from archform.spec import load_paths

    blueprints = guarded(lambda: load_paths(files))
    if not quiet:
        for doc in blueprints.documents:
            typer.echo(f"ok: {doc.file}: {doc.kind} {doc.name}")
