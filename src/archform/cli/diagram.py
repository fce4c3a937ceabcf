"""`archform diagram BLUEPRINT... --format mermaid|svg|png|dot [-o FILE]`: the architecture."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from archform.cli._core import fail, guarded

FORMATS = ("mermaid", "svg", "png", "dot")
# what an -o file name's suffix says the bytes are
SUFFIX_FORMAT = {".svg": "svg", ".png": "png", ".dot": "dot", ".gv": "dot", ".mmd": "mermaid"}


def register(app: typer.Typer) -> None:
    """Add the command."""
    app.command("diagram")(diagram)


def _write(path: Path, data: bytes) -> None:
    """Atomic write with the usual mode (0644 under umask 022); exit 2 when impossible."""
    if path.is_dir():
        fail(f"{path}: is a folder; -o takes a file name", f"e.g. -o {path / 'diagram.svg'}")
    if path.exists() and not path.is_file():
        fail(f"{path}: is not a regular file; refusing to replace it", "pass a file name")
    from archform.spec.atomic import write_atomic

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, data)
    except OSError as exc:
        fail(f"{path}: cannot write: {exc.strerror or exc}", "choose a writable location")


def diagram(
    files: Annotated[
        list[Path], typer.Argument(help="Blueprint files or folders, loaded together.")
    ],
    output_format: Annotated[
        str | None,
        typer.Option(
            "--format",
            "-f",
            help="mermaid (GitHub renders it), svg or png (laid out by Graphviz `dot`), "
            "or dot (the Graphviz source). Default: from the -o suffix (.svg, .png, .dot, "
            ".gv, .mmd), else mermaid.",
        ),
    ] = None,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write to FILE instead of stdout.")
    ] = None,
) -> None:
    """Draw tiers, regions, node groups, fabric, storage, scheduler and registry."""
    from archform.diagram import build, render, to_dot, to_mermaid
    from archform.spec import load_paths

    def run() -> None:
        implied = SUFFIX_FORMAT.get(output.suffix.lower()) if output is not None else None
        chosen = output_format or implied or "mermaid"
        if chosen not in FORMATS:
            fail(f"unknown format {chosen!r}", f"choose one of {', '.join(FORMATS)}")
        if output is not None and implied is not None and implied != chosen:
            fail(
                f"--format {chosen} would write {chosen} into {output}",
                f"use --format {implied}, or name the file for its format",
            )
        draw(chosen)

    def draw(output_format: str) -> None:
        if output_format == "png" and output is None and sys.stdout.isatty():
            fail("PNG is binary and stdout is a terminal", "write it with -o FILE.png")
        blueprints = load_paths(files)
        graph = build(blueprints)
        if output_format == "mermaid":
            data = to_mermaid(graph).encode("utf-8")
        elif output_format == "dot":
            data = to_dot(graph).encode("utf-8")
        else:
            data = render(graph, "svg" if output_format == "svg" else "png")
        if output is None:
            sys.stdout.buffer.write(data)
            sys.stdout.buffer.flush()
        else:
            _write(output, data)
            typer.echo(f"wrote {output}", err=True)

    guarded(run)
