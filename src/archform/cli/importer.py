"""`archform import FILE -o blueprint.yaml`: another tool's cluster file as an archform blueprint.

The file is read by its peer reader (spec.peers, detected by content); the blueprint written
is what the reader mapped, before archform's catalog defaults, each value commented with the
peer line:col and key it came from, then the list of keys that did not map. The output is
written atomically; an existing file is replaced only when it is an earlier import output
nobody edited since (its recorded digest still holds), otherwise only with --force.
"""

from __future__ import annotations

from pathlib import Path

import typer

from archform.cli._core import fail, guarded


def register(app: typer.Typer) -> None:
    """Add the command."""
    app.command("import")(import_file)


def import_file(
    file: Path = typer.Argument(
        ..., help="A peer file: an AWS ParallelCluster 3 config, or another format archform reads."
    ),
    output: Path | None = typer.Option(
        None, "--output", "-o", help="Blueprint file to write (default: stdout)."
    ),
    force: bool = typer.Option(
        False, "--force", help="Overwrite an existing file even when it was edited."
    ),
) -> None:
    """Write the archform blueprint a peer file maps to, with where each value came from."""
    from archform.spec import load_paths
    from archform.spec.atomic import write_atomic
    from archform.spec.peers import readers
    from archform.spec.peers.emit import render, untouched

    def run() -> None:
        loaded = load_paths([file])
        peers = [doc for doc in loaded.documents if doc.peer is not None]
        if not peers:
            fail(
                f"{file}: not a file of a format archform imports (it is an archform blueprint, "
                "or no reader recognises it)",
                "formats read: " + ", ".join(readers()),
            )
        text = "\n---\n".join(render(doc.peer, doc.file) for doc in peers if doc.peer)
        if output is None:
            typer.echo(text, nl=False)
            return
        if output.exists() and not force:
            current = output.read_text("utf-8", errors="replace")
            if not untouched(current):
                fail(
                    f"{output} exists and is not an untouched archform import output",
                    "pass --force to overwrite it, or choose another -o",
                )
        output.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(output, text.encode("utf-8"))
        typer.echo(f"wrote {output} (from {file}, {len(peers)} document(s))", err=True)

    guarded(run)
