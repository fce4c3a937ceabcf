"""`archform promote CONFIG --checkpoint DIR --version V --run-id ID [--approve]`."""

from __future__ import annotations

import importlib.util
import shlex
from pathlib import Path

import typer

from archform.cli._core import echo_err, fail, guarded
from archform.install import extra_hint


def register(app: typer.Typer) -> None:
    """Add the command."""
    app.command("promote")(promote)


def promote(
    config: Path = typer.Argument(..., help="promote.json of a generated Platform."),
    checkpoint: Path = typer.Option(..., "--checkpoint", help="Checkpoint folder to publish."),
    version: str = typer.Option(..., "--version", help="Model version to publish it as."),
    run_id: str = typer.Option(..., "--run-id", help="Training run that produced it."),
    approve: bool = typer.Option(
        False, "--approve", help="Point the fleet at the version (needed for manual approval)."
    ),
    created_at: str | None = typer.Option(
        None,
        "--created-at",
        help="ISO 8601 time with a timezone recorded in the manifest "
        "(default: the newest checkpoint file's mtime).",
    ),
    endpoint_url: str | None = typer.Option(
        None, "--endpoint-url", help="S3-compatible endpoint (default: AWS_ENDPOINT_URL or AWS)."
    ),
) -> None:
    """Publish a checkpoint to the model registry, verify it, and roll the fleet to it."""

    def run() -> None:
        from archform.promote.manifest import check_created_at

        if created_at is not None:
            check_created_at(created_at)  # before anything is read or uploaded
        if importlib.util.find_spec("boto3") is None:
            fail("archform promote needs boto3", extra_hint("promote"))
        from archform.promote import PromoteError, load_config
        from archform.promote import promote as run_promote

        loaded = load_config(config)
        try:
            result = run_promote(
                loaded,
                checkpoint=checkpoint,
                version=version,
                run_id=run_id,
                approve=approve,
                created_at=created_at,
                endpoint_url=endpoint_url,
                log=typer.echo,
            )
        except PromoteError as exc:
            for problem in exc.problems:
                echo_err(f"  {problem}")
            fail(str(exc), "upload again (the same command re-uploads nothing that matches)")
        typer.echo(f"{result.uri} = {result.manifest.checksum} (run {result.manifest.source_run})")
        if not result.rolled:
            finish = [
                "archform",
                "promote",
                str(config),
                "--checkpoint",
                str(checkpoint),
                "--version",
                version,
                "--run-id",
                run_id,
            ]
            if created_at is not None:
                finish += ["--created-at", created_at]
            if endpoint_url is not None:
                finish += ["--endpoint-url", endpoint_url]
            serving = result.previous.version if result.previous else "the blueprint's version"
            typer.echo(f"approval is manual: the fleet still serves {serving}.")
            typer.echo("to roll the fleet to this version, run:")
            typer.echo("  " + shlex.join([*finish, "--approve"]))
            return
        before = result.previous.version if result.previous else "the blueprint's version"
        state = "recorded" if result.changed else "already recorded"
        typer.echo(f"{state}: {result.pointer_uri} serves {version} (was {before})")
        typer.echo(f"copied to {result.release_file}")
        typer.echo(
            "roll the fleet: `archform generate` (it reads that copy; in another folder, "
            "`archform generate --from-registry`), then `pulumi up` in the fleet's pulumi/ "
            "folder; each region stages and verifies the version before its Deployment rolls"
        )

    guarded(run)
