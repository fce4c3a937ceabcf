"""`archform init --preset NAME`: start from a curated reference blueprint."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import typer

from archform.cli._core import fail, guarded


def register(app: typer.Typer) -> None:
    """Add the command."""
    app.command("init")(init)


def init(
    preset: str = typer.Option(..., "--preset", "-p", help="Bundled blueprint name (see --list)."),
    output: Path | None = typer.Option(
        None, "--output", "-o", help="File to write (default: stdout)."
    ),
    force: bool = typer.Option(False, "--force", help="Overwrite an existing file."),
) -> None:
    """Write one of the bundled reference blueprints."""
    from archform.bundled import presets

    def run() -> None:
        available = presets()
        if preset not in available:
            import difflib

            close = difflib.get_close_matches(preset, list(available), n=1)
            hint = f"did you mean {close[0]!r}?" if close else "presets: " + ", ".join(available)
            fail(f"unknown preset {preset!r}", hint)
        text = available[preset].read_text("utf-8")
        if output is None:
            typer.echo(text, nl=False)
            return
        if output.exists() and not force:
            fail(f"{output} exists", "pass --force to overwrite it, or choose another -o")
        output.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{output.name}.", dir=output.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        Path(tmp).chmod(0o644)
        Path(tmp).replace(output)
        typer.echo(f"wrote {output} (preset {preset})", err=True)

    guarded(run)
