"""`archform diagram BLUEPRINT... --format mermaid|svg [-o FILE]`: the architecture as a picture."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Annotated

import typer

from archform.cli._core import fail, guarded

FORMATS = ("mermaid", "svg")


def register(app: typer.Typer) -> None:
    """Add the command."""
    app.command("diagram")(diagram)


def _write(path: Path, text: str) -> None:
    """Atomic write: a temporary file beside the target, then rename (exit 2 when impossible)."""
    if path.is_dir():
        fail(f"{path}: is a folder; -o takes a file name", f"e.g. -o {path / 'diagram.svg'}")
    if path.exists() and not path.is_file():
        fail(f"{path}: is not a regular file; refusing to replace it", "pass a file name")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    except OSError as exc:
        fail(f"{path}: cannot write: {exc.strerror or exc}", "choose a writable location")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
        Path(tmp).replace(path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        fail(f"{path}: cannot write: {exc.strerror or exc}", "choose a writable location")
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def diagram(
    files: Annotated[
        list[Path], typer.Argument(help="Blueprint files or folders, loaded together.")
    ],
    output_format: Annotated[
        str, typer.Option("--format", "-f", help="mermaid (GitHub renders it) or svg.")
    ] = "mermaid",
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write to FILE instead of stdout.")
    ] = None,
) -> None:
    """Draw tiers, regions, node groups, fabric, storage, scheduler and registry."""
    from archform.diagram import build, to_mermaid, to_svg
    from archform.spec import load_paths

    def run() -> None:
        if output_format not in FORMATS:
            fail(f"unknown format {output_format!r}", f"choose one of {', '.join(FORMATS)}")
        blueprints = load_paths(files)
        graph = build(blueprints)
        text = to_mermaid(graph) if output_format == "mermaid" else to_svg(graph)
        if output is None:
            typer.echo(text, nl=False)
        else:
            _write(output, text)
            typer.echo(f"wrote {output}", err=True)

    guarded(run)
