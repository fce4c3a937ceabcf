"""`archform generate BLUEPRINT -o DIR`: Pulumi and Ansible trees, written atomically."""

from __future__ import annotations

from pathlib import Path

import typer

from archform.cli._core import fail, guarded, select_documents


def register(app: typer.Typer) -> None:
    """Add the command."""
    app.command("generate")(generate)


def generate(
    blueprints: list[Path] = typer.Argument(
        ..., help="Blueprint file(s); references resolve across them."
    ),
    output: Path = typer.Option(..., "--output", "-o", help="Output folder (replaced atomically)."),
    name: str | None = typer.Option(
        None,
        "--name",
        "-n",
        help="Only this document (a Platform with the two it joins; default: every document).",
    ),
    force: bool = typer.Option(False, "--force", help="Overwrite generated files you edited."),
) -> None:
    """Generate infrastructure code. Refuses to overwrite files edited since the last run."""
    from archform.render.generate import generate as run_generate
    from archform.render.writer import EditedFilesError, NotGeneratedDirError
    from archform.spec import load_paths

    def run() -> None:
        loaded = load_paths(blueprints)
        docs = select_documents(loaded, name)
        try:
            report = run_generate(loaded, output, force=force, docs=docs)
        except EditedFilesError as exc:
            fail(str(exc), "keep your edits in the blueprint, or pass --force to discard them")
        except NotGeneratedDirError as exc:
            fail(str(exc), "generate into a new folder")
        typer.echo(
            f"{output}: {len(report.written)} written, {len(report.unchanged)} unchanged, "
            f"{len(report.removed)} removed, {len(report.kept_user_files)} of your files kept"
        )

    guarded(run)
