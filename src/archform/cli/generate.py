"""`archform generate BLUEPRINT -o DIR [--from-registry]`: Pulumi and Ansible trees, atomically."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from archform.cli._core import fail, guarded, select_documents
from archform.install import extra_hint

if TYPE_CHECKING:
    from archform.spec import Document
    from archform.spec.release import Release


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
    from_registry: bool = typer.Option(
        False,
        "--from-registry",
        help="Serve the release each fleet's registry records (archform promote writes it) "
        "and keep a copy in the fleet's folder; needs registry read access.",
    ),
    endpoint_url: str | None = typer.Option(
        None, "--endpoint-url", help="S3-compatible endpoint for --from-registry."
    ),
) -> None:
    """Generate infrastructure code. Refuses to overwrite files edited since the last run."""
    from archform.render.generate import generate as run_generate
    from archform.render.writer import EditedFilesError, NotGeneratedDirError
    from archform.spec import load_paths

    def run() -> None:
        loaded = load_paths(blueprints)
        docs = select_documents(loaded, name)
        releases = _registry_releases(docs, endpoint_url) if from_registry else {}
        try:
            report = run_generate(loaded, output, force=force, docs=docs, releases=releases)
        except EditedFilesError as exc:
            fail(str(exc), "keep your edits in the blueprint, or pass --force to discard them")
        except NotGeneratedDirError as exc:
            fail(str(exc), "generate into a new folder")
        if releases:
            _keep_copies(output, docs, releases)
        if report.waited_for:
            typer.echo(
                f"note: another archform run was writing {output}; this run waited for it "
                "and replaced its output",
                err=True,
            )
        typer.echo(
            f"{output}: {len(report.written)} written, {len(report.unchanged)} unchanged, "
            f"{len(report.removed)} removed, {len(report.kept_user_files)} of your files kept"
        )

    guarded(run)


def _registry_releases(docs: list[Document], endpoint_url: str | None) -> dict[str, Release]:
    """The release each fleet's registry records, by fleet name (printed as read)."""
    if importlib.util.find_spec("boto3") is None:
        fail("archform generate --from-registry needs boto3", extra_hint("promote"))
    from archform.promote.fleet import registry_release
    from archform.spec import InferenceFleet

    found: dict[str, Release] = {}
    for doc in docs:
        if not isinstance(doc.model, InferenceFleet):
            continue
        recorded = registry_release(doc.model, endpoint_url)
        if recorded is None:
            typer.echo(f"{doc.name}: its registry records no releases (not S3); not read")
        elif recorded.release is None:
            typer.echo(f"{doc.name}: {recorded.uri} records no release yet")
        else:
            typer.echo(f"{doc.name}: serves {recorded.release.version} as {recorded.uri} records")
            found[doc.name] = recorded.release
    return found


def _keep_copies(output: Path, docs: list[Document], releases: dict[str, Release]) -> None:
    """Write each fleet's release.json, so a later plain `generate` here serves the same."""
    from archform.promote.fleet import write_release
    from archform.render.generate import doc_prefix
    from archform.spec.release import RELEASE_FILE

    for doc in docs:
        if doc.name in releases:
            write_release(output / doc_prefix(doc, docs) / RELEASE_FILE, releases[doc.name])
