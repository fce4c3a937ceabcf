"""`archform verify DIR`: run the real validators over a generated tree."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from archform.cli._core import EXIT_FINDINGS, fail, guarded


def register(app: typer.Typer) -> None:
    """Add the command."""
    app.command("verify")(verify)


def verify(
    directory: Path = typer.Argument(..., help="A folder written by `archform generate`."),
    fmt: str = typer.Option("text", "--format", help="text or json"),
    strict: bool = typer.Option(
        False, "--strict", help="Treat skipped checks (missing tools) as failures."
    ),
) -> None:
    """Check generated artifacts with ansible-lint, slurmctld, Pulumi mocks, kubernetes-validate."""
    from archform.verify import verify_tree

    def run() -> int:
        if not directory.is_dir():
            fail(f"{directory} is not a folder", "pass the -o folder of `archform generate`")
        if fmt not in ("text", "json"):
            fail(f"unknown format {fmt!r}", "use text or json")
        results = verify_tree(directory)
        if fmt == "json":
            typer.echo(
                json.dumps(
                    [
                        {
                            "check": r.check,
                            "artifact": r.artifact,
                            "status": r.status,
                            "detail": r.detail,
                        }
                        for r in results
                    ],
                    indent=2,
                )
            )
        else:
            for r in results:
                line = f"{r.status.upper():8} {r.check:24} {r.artifact}"
                typer.echo(line + (f"  {r.detail}" if r.detail else ""))
            counts = {
                s: sum(r.status == s for r in results) for s in ("passed", "failed", "skipped")
            }
            typer.echo(
                f"{counts['passed']} passed, {counts['failed']} failed, {counts['skipped']} skipped"
            )
        bad = any(r.status == "failed" or (strict and r.status == "skipped") for r in results)
        if not results:
            fail(f"nothing to verify in {directory}", "is it an archform output folder?")
        return EXIT_FINDINGS if bad else 0

    code = guarded(run)
    raise typer.Exit(code)
