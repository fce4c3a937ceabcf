"""`archform init --preset NAME` (or `--list`): start from a curated reference blueprint."""

from __future__ import annotations

from pathlib import Path

import typer

from archform.cli._core import fail, guarded


def register(app: typer.Typer) -> None:
    """Add the command."""
    app.command("init")(init)


def init(
    preset: str | None = typer.Option(
        None, "--preset", "-p", help="Bundled blueprint name (see --list)."
    ),
    output: Path | None = typer.Option(
        None, "--output", "-o", help="File to write (default: stdout)."
    ),
    force: bool = typer.Option(False, "--force", help="Overwrite an existing file."),
    list_presets: bool = typer.Option(
        False, "--list", help="List the bundled blueprints (name, kinds, what each builds)."
    ),
) -> None:
    """Write one of the bundled reference blueprints."""
    from archform.bundled import preset_summary, presets
    from archform.spec.atomic import write_atomic

    def run() -> None:
        available = presets()
        if list_presets:
            typer.echo(_listing({n: preset_summary(p) for n, p in available.items()}), nl=False)
            return
        if preset is None:
            fail("init needs --preset NAME", "see the names with: archform init --list")
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
        write_atomic(output, text.encode("utf-8"))
        typer.echo(f"wrote {output} (preset {preset})", err=True)

    guarded(run)


def _listing(rows: dict[str, tuple[str, str]]) -> str:
    """One line per preset: name, kinds, first sentence; the columns aligned."""
    name_width = max(map(len, rows))
    kind_width = max(len(kinds) for kinds, _ in rows.values())
    lines = [
        f"{name:<{name_width}}  {kinds:<{kind_width}}  {summary}".rstrip()
        for name, (kinds, summary) in rows.items()
    ]
    return "\n".join(lines) + "\n"
