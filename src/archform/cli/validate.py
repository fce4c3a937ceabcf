"""`archform validate FILE...`: load and type-check blueprints."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from archform.cli._core import guarded
from archform.cli._files import blueprint_files

if TYPE_CHECKING:
    from archform.spec import BlueprintSet


def register(app: typer.Typer) -> None:
    """Add the command."""
    app.command("validate")(validate)


def validate(
    files: list[Path] = typer.Argument(..., help="Blueprint files or folders, loaded together."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Print nothing on success."),
    force_exclude: bool = typer.Option(
        False,
        "--force-exclude",
        help="Filter files named on the command line too: skip those matching `exclude` "
        "in [tool.archform] and YAML that is not a blueprint (for pre-commit and CI).",
    ),
) -> None:
    """Validate blueprints: types, catalog facts, references. Exit 2 on the first bad file."""
    from archform.lint import config as cfg
    from archform.spec import load_paths

    def run() -> BlueprintSet:
        source = cfg.discover(files)
        settings = cfg.load_config(source) if source else cfg.LintConfig()
        return load_paths(blueprint_files(files, settings, force_exclude))

    blueprints = guarded(run)
    if not quiet:
        for doc in blueprints.documents:
            read_as = f" (peer format: {doc.peer.title})" if doc.peer is not None else ""
            typer.echo(f"ok: {doc.file}: {doc.kind} {doc.name}{read_as}")
